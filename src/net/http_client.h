#pragma once
// Blocking HTTP client (libcurl) for the CLI and tests. Thread-safe: every call uses its own
// curl handle. No Boost.

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "net/tls.h"

namespace rota::net {

struct ClientResponse {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names; repeats joined with ", "
};

// How every call of this process trusts https:// servers (pin, CA file, or the system's CAs:
// net/tls.h). The CLI sets it once from --ca-file / --server-pin; the default is the
// system's CAs. Thread-safe; applies to calls started afterwards.
void SetClientTls(const TlsClientConfig& config);

// Performs one request. `headers` are "Name: value" lines. Any HTTP status is a successful
// result (check ClientResponse::status); transport failures (refused, timeout, bad URL) are
// Unavailable (InvalidArgument for a malformed URL) with curl's message naming the URL.
Result<ClientResponse> HttpCall(const std::string& method, const std::string& url,
                                const std::string& body = "",
                                const std::vector<std::string>& headers = {},
                                int timeout_ms = 10000);

// A client that keeps its connection open between calls (HTTP keep-alive), as API
// clients and pipelines do; otherwise as HttpCall. Not thread-safe: one per thread.
class HttpConnection {
 public:
  HttpConnection();
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;
  Result<ClientResponse> Call(const std::string& method, const std::string& url,
                              const std::string& body = "",
                              const std::vector<std::string>& headers = {},
                              int timeout_ms = 10000);

 private:
  void* curl_ = nullptr;  // CURL*, created on the first call
};

// Reads a text/event-stream, calling on_event(event, data) per event ("message" when the event
// has no event: line; multi-line data joined with '\n'; comments ignored) until it returns
// false (-> OK), the server ends the stream (-> OK) or an error occurs. A non-2xx answer
// becomes the Status mapped from its code (StatusFromHttp), with the body. With
// idle_timeout_ms > 0 the stream fails (Unavailable) when nothing (not even a keep-alive
// comment) arrives for that long.
Status ReadEventStream(
    const std::string& url, const std::vector<std::string>& headers,
    std::function<bool(const std::string& event, const std::string& data)> on_event,
    int connect_timeout_ms = 10000, int idle_timeout_ms = 0);

// Parses text/event-stream bytes incrementally (used by ReadEventStream; public for tests).
class EventStreamParser {
 public:
  // Feeds bytes; calls on_event for every completed event. Returns false as soon as on_event
  // does (the rest of the input is dropped).
  bool Feed(std::string_view bytes,
            const std::function<bool(const std::string&, const std::string&)>& on_event);

 private:
  bool HandleLine(std::string_view line,
                  const std::function<bool(const std::string&, const std::string&)>& on_event);
  std::string pending_;  // an incomplete line
  std::string event_;
  std::string data_;
  bool has_data_ = false;
};

}  // namespace rota::net
