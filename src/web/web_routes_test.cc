#include "web/web_routes.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "net/http_client.h"
#include "net/http_server.h"

namespace rota::web {
namespace {

std::string HeaderOf(const net::HttpResponse& r, const std::string& name) {
  for (const auto& [n, v] : r.headers) {
    if (n == name) return v;
  }
  return "";
}

net::HttpRequest Get(std::vector<std::pair<std::string, std::string>> headers = {}) {
  net::HttpRequest req;
  req.method = "GET";
  for (auto& [n, v] : headers) req.headers[n] = v;
  return req;
}

const WebAsset kIndex{"index.html", "<!doctype html><title>rota</title>", "GZ-INDEX"};
const WebAsset kScript{"assets/index-1a2b3c.js", "console.log(1)", "GZ-JS"};
const WebAsset kIcon{"favicon.svg", "<svg/>", ""};

TEST(ContentTypeForTest, KnownAndUnknownExtensions) {
  struct Case {
    std::string path, type;
  } cases[] = {
      {"index.html", "text/html; charset=utf-8"},
      {"assets/a-1.js", "text/javascript; charset=utf-8"},
      {"assets/a-1.css", "text/css; charset=utf-8"},
      {"favicon.svg", "image/svg+xml"},
      {"logo.png", "image/png"},
      {"font.woff2", "font/woff2"},
      {"x.bin", "application/octet-stream"},
      {"html", "application/octet-stream"},
  };
  for (const Case& c : cases) EXPECT_EQ(ContentTypeFor(c.path), c.type) << c.path;
}

TEST(ServeAssetTest, IndexIsRevalidatedAndCarriesTheSecurityHeaders) {
  net::HttpResponse r = ServeAsset(kIndex, Get());
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, kIndex.body);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(HeaderOf(r, "Cache-Control"), "no-cache");
  EXPECT_EQ(HeaderOf(r, "Content-Security-Policy"), std::string(kContentSecurityPolicy));
  EXPECT_NE(HeaderOf(r, "Content-Security-Policy").find("script-src 'self'"), std::string::npos);
  EXPECT_EQ(HeaderOf(r, "X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(HeaderOf(r, "Vary"), "Accept-Encoding");
  EXPECT_EQ(HeaderOf(r, "Content-Encoding"), "");
  const std::string etag = HeaderOf(r, "ETag");
  ASSERT_EQ(etag.size(), 18u) << etag;

  // The same validator answers 304 with no body; another one gets the file.
  EXPECT_EQ(ServeAsset(kIndex, Get({{"if-none-match", etag}})).status, 304);
  EXPECT_EQ(ServeAsset(kIndex, Get({{"if-none-match", "\"x\", W/" + etag}})).status, 304);
  net::HttpResponse other = ServeAsset(kIndex, Get({{"if-none-match", "\"0000\""}}));
  EXPECT_EQ(other.status, 200);
  EXPECT_EQ(other.body, kIndex.body);
  // A different file has a different validator.
  WebAsset changed = kIndex;
  changed.body = "<!doctype html><title>rota 2</title>";
  EXPECT_NE(HeaderOf(ServeAsset(changed, Get()), "ETag"), etag);
}

TEST(ServeAssetTest, HashedAssetsAreImmutable) {
  net::HttpResponse r = ServeAsset(kScript, Get());
  EXPECT_EQ(HeaderOf(r, "Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_EQ(HeaderOf(r, "ETag"), "");
  EXPECT_EQ(r.content_type, "text/javascript; charset=utf-8");
}

TEST(ServeAssetTest, GzipOnlyWhenAcceptedAndAvailable) {
  struct Case {
    std::string accept;
    bool gzip;
  } cases[] = {
      {"", false},
      {"gzip", true},
      {"gzip, deflate, br", true},
      {"br;q=1.0, gzip;q=0.5", true},
      {"*", true},
      {"gzip;q=0", false},
      {"gzip;q=0.000, br", false},
      {"deflate", false},
      {"gzipx", false},
  };
  for (const Case& c : cases) {
    net::HttpResponse r = ServeAsset(kScript, Get({{"accept-encoding", c.accept}}));
    EXPECT_EQ(r.body, c.gzip ? kScript.gzip : kScript.body) << c.accept;
    EXPECT_EQ(HeaderOf(r, "Content-Encoding"), c.gzip ? "gzip" : "") << c.accept;
  }
  // No compressed copy: the file as is, whatever the client accepts.
  net::HttpResponse r = ServeAsset(kIcon, Get({{"accept-encoding", "gzip"}}));
  EXPECT_EQ(r.body, kIcon.body);
  EXPECT_EQ(HeaderOf(r, "Content-Encoding"), "");
}

TEST(RegisterWebRoutesTest, ServesEveryFileOverHttpAndRefusesATableWithoutIndex) {
  const std::vector<WebAsset> assets = {kIndex, kScript, kIcon};
  net::HttpServer server;
  ASSERT_TRUE(RegisterWebRoutes(server, assets).ok());
  auto port = server.Start();
  ASSERT_TRUE(port.ok()) << port.status().ToString();
  const std::string base = "http://127.0.0.1:" + std::to_string(*port);
  struct Case {
    std::string path;
    int status;
    std::string body;
  } cases[] = {
      {"/", 200, std::string(kIndex.body)},
      {"/index.html", 200, std::string(kIndex.body)},
      {"/assets/index-1a2b3c.js", 200, std::string(kScript.body)},
      {"/favicon.svg", 200, std::string(kIcon.body)},
      {"/assets/missing.js", 404, ""},
      {"/assets/", 404, ""},
  };
  for (const Case& c : cases) {
    auto r = net::HttpCall("GET", base + c.path);
    ASSERT_TRUE(r.ok()) << c.path << ": " << r.status().ToString();
    EXPECT_EQ(r->status, c.status) << c.path;
    if (c.status == 200) {
      EXPECT_EQ(r->body, c.body) << c.path;
    }
  }
  auto gz = net::HttpCall("GET", base + "/", "", {"Accept-Encoding: gzip"});
  ASSERT_TRUE(gz.ok()) << gz.status().ToString();
  EXPECT_EQ(gz->headers["content-encoding"], "gzip");
  EXPECT_EQ(gz->body, kIndex.gzip);
  EXPECT_NE(gz->headers["content-security-policy"].find("default-src 'none'"), std::string::npos);
  server.Stop();

  net::HttpServer other;
  const std::vector<WebAsset> no_index = {kScript};
  Status s = RegisterWebRoutes(other, no_index);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("index.html"), std::string::npos) << s.ToString();
}

TEST(EmbeddedAssetsTest, TheBuiltUiHasAnIndexThatLoadsOnlyItsOwnFiles) {
  std::span<const WebAsset> assets = EmbeddedAssets();
  const WebAsset* index = nullptr;
  for (const WebAsset& a : assets) {
    if (a.path == "index.html") index = &a;
    EXPECT_FALSE(a.path.empty());
    EXPECT_NE(a.path.front(), '/') << a.path;
    EXPECT_LE(a.gzip.size(), a.body.size()) << a.path;
  }
  ASSERT_NE(index, nullptr);
  // No inline script or style: the CSP forbids them.
  EXPECT_EQ(index->body.find("<script>"), std::string_view::npos);
  EXPECT_EQ(index->body.find("<style"), std::string_view::npos);
  // Nothing from elsewhere (a data: URL may name the SVG namespace; that loads nothing).
  for (const char* external : {"src=\"http", "href=\"http", "src=\"//", "href=\"//"}) {
    EXPECT_EQ(index->body.find(external), std::string_view::npos) << external;
  }
}

}  // namespace
}  // namespace rota::web
