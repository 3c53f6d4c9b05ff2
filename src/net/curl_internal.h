#pragma once
// What the net layer's libcurl clients share (http_client.cc, event_stream_pool.cc): the
// one-time global init, the process's TLS trust (SetClientTls) applied to a handle,
// request headers as a curl list, and transport errors as Status. Internal to src/net.

#include <curl/curl.h>

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace rota::net::internal {

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using CurlPtr = std::unique_ptr<CURL, CurlDeleter>;
using SlistPtr = std::unique_ptr<curl_slist, SlistDeleter>;

// curl_global_init, once per process.
void GlobalInit();
// How an https:// server is trusted: SetClientTls's pin, else its CA file, else the
// system's CAs.
void ApplyTls(CURL* c);
// "Name: value" lines as a curl list. Errors: a line break in a header (InvalidArgument).
Result<SlistPtr> BuildHeaders(const std::vector<std::string>& headers);
// A failed transfer: InvalidArgument for a bad URL, else Unavailable, naming method and URL.
Status TransportError(CURLcode code, const char* errbuf, const std::string& method, const std::string& url);

}  // namespace rota::net::internal
