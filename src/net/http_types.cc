#include "net/http_types.h"

#include <atomic>
#include <cstdio>

#include "common/strings.h"

namespace rota::net {

const std::string& HttpRequest::Header(const std::string& lower_name) const {
  static const std::string kEmpty;
  auto it = headers.find(lower_name);
  return it == headers.end() ? kEmpty : it->second;
}

std::string HttpRequest::Query(const std::string& key, const std::string& fallback) const {
  auto it = query.find(key);
  return it == query.end() ? fallback : it->second;
}

const std::string& HttpRequest::Param(const std::string& name) const {
  static const std::string kEmpty;
  auto it = path_params.find(name);
  return it == path_params.end() ? kEmpty : it->second;
}

struct Responder::State {
  explicit State(std::function<void(HttpResponse)> d) : deliver(std::move(d)) {}
  ~State() {
    if (!done.exchange(true) && deliver) {
      deliver(HttpResponse::Error(500, "the server dropped the request"));
    }
  }
  std::function<void(HttpResponse)> deliver;
  std::atomic<bool> done{false};
};

Responder::Responder(std::function<void(HttpResponse)> deliver)
    : state_(std::make_shared<State>(std::move(deliver))) {}

void Responder::operator()(HttpResponse response) const {
  if (state_->done.exchange(true)) return;
  state_->deliver(std::move(response));
}

bool Responder::answered() const { return state_->done.load(); }

HttpResponse HttpResponse::Json(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

HttpResponse HttpResponse::Text(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(body);
  return r;
}

HttpResponse HttpResponse::Error(int status, const std::string& message) {
  return Json(status, "{\"error\":{\"code\":\"" + JsonEscape(HttpErrorCode(status)) +
                          "\",\"message\":\"" + JsonEscape(message) + "\"}}");
}

HttpResponse HttpResponse::FromStatus(const Status& status) {
  return Error(HttpStatusFor(status.code()), status.message());
}

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
      return 409;
    case StatusCode::kConflict:
      return 409;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kIoError:
      return 500;
    case StatusCode::kUnimplemented:
      return 501;
    case StatusCode::kInternal:
      return 500;
    case StatusCode::kDeadlineExceeded:
      return 504;
  }
  return 500;
}

StatusCode StatusCodeForHttp(int s) {
  if (s >= 200 && s < 300) return StatusCode::kOk;
  if (s < 400) return StatusCode::kUnavailable;  // 1xx, 3xx: not what a caller can use
  switch (s) {
    case 408:
      return StatusCode::kUnavailable;
    case 400:
      return StatusCode::kInvalidArgument;
    case 401:
      return StatusCode::kUnauthenticated;
    case 403:
      return StatusCode::kPermissionDenied;
    case 404:
      return StatusCode::kNotFound;
    case 409:
      return StatusCode::kConflict;
    case 413:
      return StatusCode::kResourceExhausted;
    case 429:
      return StatusCode::kResourceExhausted;
    case 431:
      return StatusCode::kResourceExhausted;
    case 500:
      return StatusCode::kInternal;
    case 501:
      return StatusCode::kUnimplemented;
    case 504:
      return StatusCode::kDeadlineExceeded;
    default:
      break;
  }
  if (s >= 500) return StatusCode::kUnavailable;
  return StatusCode::kInvalidArgument;
}

Status MakeStatus(StatusCode code, std::string m) {
  switch (code) {
    case StatusCode::kOk:
      return Status::Ok();
    case StatusCode::kInvalidArgument:
      return Status::InvalidArgument(std::move(m));
    case StatusCode::kNotFound:
      return Status::NotFound(std::move(m));
    case StatusCode::kAlreadyExists:
      return Status::AlreadyExists(std::move(m));
    case StatusCode::kConflict:
      return Status::Conflict(std::move(m));
    case StatusCode::kUnauthenticated:
      return Status::Unauthenticated(std::move(m));
    case StatusCode::kPermissionDenied:
      return Status::PermissionDenied(std::move(m));
    case StatusCode::kResourceExhausted:
      return Status::ResourceExhausted(std::move(m));
    case StatusCode::kUnavailable:
      return Status::Unavailable(std::move(m));
    case StatusCode::kIoError:
      return Status::IoError(std::move(m));
    case StatusCode::kUnimplemented:
      return Status::Unimplemented(std::move(m));
    case StatusCode::kInternal:
      return Status::Internal(std::move(m));
    case StatusCode::kDeadlineExceeded:
      return Status::DeadlineExceeded(std::move(m));
  }
  return Status::Internal(std::move(m));
}

Status StatusFromHttp(int http_status, const std::string& context, const std::string& body) {
  StatusCode code = StatusCodeForHttp(http_status);
  if (code == StatusCode::kOk || http_status < 200) code = StatusCode::kUnavailable;
  std::string message = context + ": HTTP " + std::to_string(http_status);
  if (!body.empty()) {
    message += ": " + body.substr(0, 512);
    if (body.size() > 512) message += "...";
  }
  return MakeStatus(code, std::move(message));
}

std::string HttpErrorCode(int s) {
  switch (s) {
    case 405:
      return "method_not_allowed";
    case 408:
      return "request_timeout";
    case 413:
      return "payload_too_large";
    case 426:
      return "upgrade_required";
    case 431:
      return "header_too_large";
    default:
      return StatusCodeName(StatusCodeForHttp(s));
  }
}

const char* HttpReason(int s) {
  switch (s) {
    case 100:
      return "Continue";
    case 101:
      return "Switching Protocols";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 413:
      return "Payload Too Large";
    case 426:
      return "Upgrade Required";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    default:
      return "Unknown";
  }
}


std::string JsonEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      // Valid UTF-8 as it is; any other byte as U+FFFD (the answer stays valid JSON).
      const size_t n = Utf8SequenceLength(text, i);
      if (n == 0) {
        out += "\\ufffd";
      } else {
        out.append(text, i, n);
        i += n - 1;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace rota::net
