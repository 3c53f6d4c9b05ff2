#include "net/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>

#include "net/curl_internal.h"
#include "net/http_types.h"

namespace rota::net {

namespace {

std::mutex tls_mu;
TlsClientConfig& DefaultTls() {
  static TlsClientConfig config;
  return config;
}

}  // namespace

namespace internal {

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// How an https:// server is trusted (net/tls.h): the pin alone, or the CA file, or the
// system's CAs (curl's default), names checked in the last two.
void ApplyTls(CURL* c) {
  TlsClientConfig tls;
  {
    std::lock_guard<std::mutex> lock(tls_mu);
    tls = DefaultTls();
  }
  if (!tls.pin.empty()) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    curl_easy_setopt(c, CURLOPT_PINNEDPUBLICKEY, tls.pin.c_str());  // copied by curl
  } else if (!tls.ca_file.empty()) {
    curl_easy_setopt(c, CURLOPT_CAINFO, tls.ca_file.c_str());
  }
}

Result<SlistPtr> BuildHeaders(const std::vector<std::string>& headers) {
  curl_slist* list = nullptr;
  for (const std::string& h : headers) {
    if (h.find_first_of("\r\n") != std::string::npos) {
      curl_slist_free_all(list);
      return Status::InvalidArgument("HTTP header \"" + h.substr(0, 40) +
                                     "\" contains a line break");
    }
    curl_slist* next = curl_slist_append(list, h.c_str());
    if (next == nullptr) {
      curl_slist_free_all(list);
      return Status::Internal("curl_slist_append failed");
    }
    list = next;
  }
  return SlistPtr(list);
}

Status TransportError(CURLcode code, const char* errbuf, const std::string& method,
                      const std::string& url) {
  std::string detail = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(code);
  std::string msg = method + " " + url + ": " + detail;
  if (code == CURLE_URL_MALFORMAT || code == CURLE_UNSUPPORTED_PROTOCOL) {
    return Status::InvalidArgument(msg);
  }
  return Status::Unavailable(msg);
}

}  // namespace internal

namespace {

using internal::ApplyTls;
using internal::BuildHeaders;
using internal::CurlPtr;
using internal::GlobalInit;
using internal::SlistPtr;
using internal::TransportError;

size_t AppendBody(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

size_t CollectHeader(char* data, size_t size, size_t n, void* user) {
  auto* headers = static_cast<std::map<std::string, std::string>*>(user);
  std::string_view line(data, size * n);
  if (line.substr(0, 5) == "HTTP/") {
    headers->clear();  // a new response (after 100 Continue or a redirect)
    return size * n;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * n;
  std::string name(line.substr(0, colon));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
    value.remove_suffix(1);
  }
  auto [it, inserted] = headers->emplace(name, std::string(value));
  if (!inserted) (it->second += ", ").append(value);
  return size * n;
}

}  // namespace

void SetClientTls(const TlsClientConfig& config) {
  std::lock_guard<std::mutex> lock(tls_mu);
  DefaultTls() = config;
}

HttpConnection::HttpConnection() = default;

HttpConnection::~HttpConnection() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

Result<ClientResponse> HttpConnection::Call(const std::string& method, const std::string& url,
                                            const std::string& body,
                                            const std::vector<std::string>& headers,
                                            int timeout_ms) {
  GlobalInit();
  if (curl_ == nullptr) curl_ = curl_easy_init();
  if (curl_ == nullptr) return Status::Internal("curl_easy_init failed");
  CURL* c = static_cast<CURL*>(curl_);
  curl_easy_reset(c);  // options only: an open connection to the same server is kept
  std::vector<std::string> all = headers;
  all.emplace_back("Expect:");  // never wait for 100 Continue
  ASSIGN_OR_RETURN(SlistPtr list, BuildHeaders(all));
  ClientResponse out;
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  ApplyTls(c);
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (method == "HEAD") curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, list.get());
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &out.body);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, CollectHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &out.headers);
  CURLcode rc = curl_easy_perform(c);
  // The header list must outlive the transfer only: curl does not keep it past perform.
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, nullptr);
  if (rc != CURLE_OK) return TransportError(rc, errbuf, method, url);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  out.status = static_cast<int>(status);
  return out;
}

Result<ClientResponse> HttpCall(const std::string& method, const std::string& url,
                                const std::string& body, const std::vector<std::string>& headers,
                                int timeout_ms) {
  HttpConnection once;
  return once.Call(method, url, body, headers, timeout_ms);
}

bool EventStreamParser::Feed(
    std::string_view bytes,
    const std::function<bool(const std::string&, const std::string&)>& on_event) {
  pending_.append(bytes);
  size_t start = 0;
  while (true) {
    size_t end = pending_.find_first_of("\r\n", start);
    if (end == std::string::npos) break;
    // "\r\n" counts as one line break; a lone '\r' at the end may still be followed by '\n'.
    if (pending_[end] == '\r' && end + 1 == pending_.size()) break;
    std::string_view line(pending_.data() + start, end - start);
    size_t next = end + 1;
    if (pending_[end] == '\r' && pending_[end + 1] == '\n') ++next;
    if (!HandleLine(line, on_event)) {
      pending_.clear();
      return false;
    }
    start = next;
  }
  pending_.erase(0, start);
  return true;
}

bool EventStreamParser::HandleLine(
    std::string_view line,
    const std::function<bool(const std::string&, const std::string&)>& on_event) {
  if (line.empty()) {  // dispatch
    bool keep_going = true;
    if (has_data_) keep_going = on_event(event_.empty() ? "message" : event_, data_);
    event_.clear();
    data_.clear();
    has_data_ = false;
    return keep_going;
  }
  if (line[0] == ':') return true;  // comment (keep-alive)
  size_t colon = line.find(':');
  std::string_view field = line.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
  if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  if (field == "event") {
    event_ = std::string(value);
  } else if (field == "data") {
    if (has_data_) data_ += '\n';
    data_ += value;
    has_data_ = true;
  }  // id, retry and unknown fields are ignored
  return true;
}

namespace {

struct StreamContext {
  CURL* curl = nullptr;
  EventStreamParser parser;
  std::function<bool(const std::string&, const std::string&)> on_event;
  bool stopped_by_caller = false;
  bool checked_status = false;
  long status = 0;
  std::string error_body;
};

size_t OnStreamBytes(char* data, size_t size, size_t n, void* user) {
  auto* ctx = static_cast<StreamContext*>(user);
  size_t total = size * n;
  if (!ctx->checked_status) {
    ctx->checked_status = true;
    curl_easy_getinfo(ctx->curl, CURLINFO_RESPONSE_CODE, &ctx->status);
  }
  if (ctx->status < 200 || ctx->status >= 300) {
    if (ctx->error_body.size() < 4096) ctx->error_body.append(data, total);
    return total;
  }
  if (!ctx->parser.Feed(std::string_view(data, total), ctx->on_event)) {
    ctx->stopped_by_caller = true;
    return 0;  // aborts the transfer
  }
  return total;
}

}  // namespace

Status ReadEventStream(const std::string& url, const std::vector<std::string>& headers,
                       std::function<bool(const std::string&, const std::string&)> on_event,
                       int connect_timeout_ms, int idle_timeout_ms) {
  GlobalInit();
  CurlPtr curl(curl_easy_init());
  if (!curl) return Status::Internal("curl_easy_init failed");
  std::vector<std::string> all = headers;
  all.emplace_back("Accept: text/event-stream");
  ASSIGN_OR_RETURN(SlistPtr list, BuildHeaders(all));
  StreamContext ctx;
  ctx.curl = curl.get();
  ctx.on_event = std::move(on_event);
  char errbuf[CURL_ERROR_SIZE] = {0};
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  ApplyTls(c);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, list.get());
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect_timeout_ms));
  if (idle_timeout_ms > 0) {
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME,
                     static_cast<long>(std::max(1, (idle_timeout_ms + 999) / 1000)));
  }
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnStreamBytes);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &ctx);
  CURLcode rc = curl_easy_perform(c);
  if (ctx.stopped_by_caller) return Status::Ok();
  if (rc != CURLE_OK) return TransportError(rc, errbuf, "GET", url);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  if (status < 200 || status >= 300) {
    return StatusFromHttp(static_cast<int>(status), "GET " + url, ctx.error_body);
  }
  return Status::Ok();
}

}  // namespace rota::net
