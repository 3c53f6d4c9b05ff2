#include "web/web_routes.h"

#include <cstdint>
#include <cstdio>

#include "net/http_server.h"

namespace rota::web {
namespace {

constexpr std::string_view kImmutablePrefix = "assets/";

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// True when an Accept-Encoding value admits gzip ("gzip", "gzip;q=0.5", "*"), not "gzip;q=0".
bool AcceptsGzip(std::string_view header) {
  while (!header.empty()) {
    size_t comma = header.find(',');
    std::string_view item = Trim(header.substr(0, comma));
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    size_t semi = item.find(';');
    std::string_view name = Trim(item.substr(0, semi));
    if (name != "gzip" && name != "x-gzip" && name != "*") continue;
    if (semi == std::string_view::npos) return true;
    std::string_view params = Trim(item.substr(semi + 1));
    if (params.substr(0, 2) == "q=" || params.substr(0, 2) == "Q=") {
      std::string_view q = params.substr(2);
      // q=0, q=0.0, q=0.000 refuse; anything else admits.
      bool zero = !q.empty() && q.front() == '0';
      for (size_t i = 1; zero && i < q.size(); ++i) zero = q[i] == '.' || q[i] == '0';
      if (zero) continue;
    }
    return true;
  }
  return false;
}

// A strong validator for a file's bytes (FNV-1a, 64 bits).
std::string ETagFor(std::string_view body) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : body) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[24];
  std::snprintf(buf, sizeof buf, "\"%016llx\"", static_cast<unsigned long long>(h));
  return buf;
}

bool ETagMatches(std::string_view if_none_match, const std::string& etag) {
  while (!if_none_match.empty()) {
    size_t comma = if_none_match.find(',');
    std::string_view item = Trim(if_none_match.substr(0, comma));
    if_none_match = comma == std::string_view::npos ? std::string_view()
                                                    : if_none_match.substr(comma + 1);
    if (item.substr(0, 2) == "W/") item.remove_prefix(2);  // weak comparison (RFC 9110 13.1.2)
    if (item == "*" || item == etag) return true;
  }
  return false;
}

}  // namespace

std::string_view ContentTypeFor(std::string_view path) {
  struct Type {
    std::string_view ext, type;
  };
  static constexpr Type kTypes[] = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".webmanifest", "application/manifest+json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".woff2", "font/woff2"},
      {".txt", "text/plain; charset=utf-8"},
  };
  for (const Type& t : kTypes) {
    if (EndsWith(path, t.ext)) return t.type;
  }
  return "application/octet-stream";
}

net::HttpResponse ServeAsset(const WebAsset& asset, const net::HttpRequest& request) {
  net::HttpResponse r;
  r.content_type = std::string(ContentTypeFor(asset.path));
  r.headers = {{"Content-Security-Policy", std::string(kContentSecurityPolicy)},
               {"X-Content-Type-Options", "nosniff"},
               {"Referrer-Policy", "no-referrer"},
               {"X-Frame-Options", "DENY"},
               {"Vary", "Accept-Encoding"}};
  const bool immutable = asset.path.substr(0, kImmutablePrefix.size()) == kImmutablePrefix;
  if (immutable) {
    r.headers.emplace_back("Cache-Control", "public, max-age=31536000, immutable");
  } else {
    std::string etag = ETagFor(asset.body);
    r.headers.emplace_back("Cache-Control", "no-cache");
    r.headers.emplace_back("ETag", etag);
    if (ETagMatches(request.Header("if-none-match"), etag)) {
      r.status = 304;
      return r;
    }
  }
  if (!asset.gzip.empty() && AcceptsGzip(request.Header("accept-encoding"))) {
    r.headers.emplace_back("Content-Encoding", "gzip");
    r.body = std::string(asset.gzip);
  } else {
    r.body = std::string(asset.body);
  }
  return r;
}

Status RegisterWebRoutes(net::HttpServer& http, std::span<const WebAsset> assets) {
  const WebAsset* index = nullptr;
  for (const WebAsset& a : assets) {
    if (a.path == "index.html") index = &a;
  }
  if (index == nullptr) return Status::InvalidArgument("web UI: no index.html among the assets");
  RETURN_IF_ERROR(http.Route("GET", "/", [index](const net::HttpRequest& req) {
    return ServeAsset(*index, req);
  }));
  for (const WebAsset& a : assets) {
    const WebAsset* asset = &a;
    Status s = http.Route("GET", "/" + std::string(a.path), [asset](const net::HttpRequest& req) {
      return ServeAsset(*asset, req);
    });
    if (!s.ok()) return s.WithContext("web UI file '" + std::string(a.path) + "'");
  }
  return Status::Ok();
}

}  // namespace rota::web
