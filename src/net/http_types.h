#pragma once
// Plain value types shared by the HTTP server, its router and its users. No Boost here.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace rota::net {

// One parsed HTTP request as a handler sees it.
struct HttpRequest {
  std::string method;  // "GET", "POST", ... (as sent, case-sensitive per RFC 9110)
  std::string target;  // raw request target: "/api/v1/nodes?limit=5"
  std::string path;    // target before '?', not decoded: "/api/v1/nodes"
  std::map<std::string, std::string> query;    // percent-decoded, '+' = space; last wins
  std::map<std::string, std::string> headers;  // lower-case names; repeats joined with ", "
  std::string body;
  std::string remote_addr;                         // "127.0.0.1:53412"
  std::map<std::string, std::string> path_params;  // "{name}" -> percent-decoded segment

  // Returns the header value (name in lower case) or "" when absent.
  const std::string& Header(const std::string& lower_name) const;
  // Returns the query value or `fallback` when absent.
  std::string Query(const std::string& key, const std::string& fallback = "") const;
  // Returns the path parameter or "" when absent.
  const std::string& Param(const std::string& name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Extra headers (e.g. {"Allow", "GET, POST"}). Content-Type and Content-Length are set by the
  // server from the fields above.
  std::vector<std::pair<std::string, std::string>> headers;

  static HttpResponse Json(int status, std::string body);
  static HttpResponse Text(int status, std::string body);  // text/plain; charset=utf-8
  // {"error":{"code":"not_found","message":"..."}} with code = HttpErrorCode(status).
  static HttpResponse Error(int status, const std::string& message);
  // Error(HttpStatusFor(status.code()), status.message()). REQUIRES: !status.ok().
  static HttpResponse FromStatus(const Status& status);
};

using Handler = std::function<HttpResponse(const HttpRequest&)>;

// Answers one request, once, from any thread: what a handler that cannot answer at once
// (it waits on an agent, a worker pool, a timer) keeps and calls when the answer is there.
// Copies share one answer: the first call wins, later calls are ignored. When the last copy
// is destroyed without a call, the request is answered 500 ("the server dropped the
// request"), so a lost callback cannot leave a client hanging. Thread-safe.
class Responder {
 public:
  // `deliver` receives the answer exactly once (the first call, or the 500 above).
  explicit Responder(std::function<void(HttpResponse)> deliver);
  void operator()(HttpResponse response) const;
  bool answered() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// A handler that answers through `respond`, now or later. It must not block: it returns
// at once and calls `respond` from wherever the answer arrives. The request reference is
// valid only during the call: copy what a later answer needs.
using AsyncHandler = std::function<void(const HttpRequest&, Responder respond)>;

// The one mapping from rota::StatusCode to an HTTP status (kNotFound -> 404, ...).
int HttpStatusFor(StatusCode code);
// The one mapping back, used by clients: 2xx -> kOk; 1xx, 3xx, 408 -> kUnavailable;
// 400 -> kInvalidArgument, 401 -> kUnauthenticated, 403 -> kPermissionDenied, 404 -> kNotFound,
// 409 -> kConflict, 413/429/431 -> kResourceExhausted, other 4xx -> kInvalidArgument;
// 500 -> kInternal, 501 -> kUnimplemented, other 5xx -> kUnavailable.
StatusCode StatusCodeForHttp(int http_status);
// A Status with `code` and `message` (kOk -> OK).
Status MakeStatus(StatusCode code, std::string message);
// Status for an HTTP error answer: code from StatusCodeForHttp (2xx/3xx -> kUnavailable, as a
// non-success was expected), message "<context>: HTTP <status>: <body cut to 512 bytes>".
Status StatusFromHttp(int http_status, const std::string& context, const std::string& body);
// Machine-readable error code for an HTTP status, as used in Error() bodies: the StatusCodeName
// of StatusCodeForHttp(), except 405 -> "method_not_allowed", 408 -> "request_timeout",
// 426 -> "upgrade_required", 431 -> "header_too_large", 413 -> "payload_too_large".
std::string HttpErrorCode(int http_status);
// Standard reason phrase ("Not Found"), "Unknown" for unknown codes.
const char* HttpReason(int http_status);

// Escapes `text` as the inside of a JSON string (quotes, backslash, control
// characters); bytes that are not well-formed UTF-8 become U+FFFD.
std::string JsonEscape(const std::string& text);

}  // namespace rota::net
