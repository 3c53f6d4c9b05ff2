#pragma once
// Serves the embedded web UI: "/" (index.html) and every other file at "/<path>".
//
// Headers, chosen for a single-page app whose bundles carry content hashes in their names:
// - Content-Type from the file's extension (ContentTypeFor);
// - Cache-Control: files under "assets/" (hashed names) are immutable for a year; anything
//   else (index.html) is "no-cache" with an ETag, so a new build is picked up at once and an
//   unchanged one costs a 304;
// - Content-Encoding: gzip when the client accepts it and a compressed copy exists
//   (Vary: Accept-Encoding either way);
// - a strict Content-Security-Policy (kContentSecurityPolicy) on every answer, plus
//   X-Content-Type-Options, Referrer-Policy and X-Frame-Options.
// The UI talks to the server through the public API only; nothing here reads state.

#include <span>
#include <string>
#include <string_view>

#include "common/status.h"
#include "net/http_types.h"
#include "web/assets.h"

namespace rota::net {
class HttpServer;
}

namespace rota::web {

inline constexpr std::string_view kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'";

// "text/javascript; charset=utf-8" for "assets/index-1a2b.js"; application/octet-stream for
// unknown extensions.
std::string_view ContentTypeFor(std::string_view path);

// The answer to a GET of `asset` (If-None-Match and Accept-Encoding are honoured).
net::HttpResponse ServeAsset(const WebAsset& asset, const net::HttpRequest& request);

// Registers GET "/" (index.html) and GET "/<path>" for each asset. `assets` must outlive
// the server. Errors: no index.html among the assets, a path the router cannot hold, a
// route that is already taken.
Status RegisterWebRoutes(net::HttpServer& http, std::span<const WebAsset> assets);

}  // namespace rota::web
