#include "net/router.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace rota::net {
namespace {

Handler Reply(const std::string& text) {
  return [text](const HttpRequest& r) {
    std::string params;
    for (const auto& [k, v] : r.path_params) params += k + "=" + v + ";";
    return HttpResponse::Text(200, text + "|" + params);
  };
}

HttpResponse Call(const Router& router, const std::string& method, const std::string& path) {
  HttpRequest req;
  req.method = method;
  req.path = path;
  HttpResponse out;
  router.Dispatch(&req, Responder([&out](HttpResponse r) { out = std::move(r); }));
  return out;
}

// Bad inputs tried: empty, no leading '/', unterminated '{', empty name, bad name characters,
// repeated name, braces mixed with text, '?' and '#'.
TEST(PathPatternTest, RejectsBadPatterns) {
  for (const char* bad : {"", "nodes", "/a/{", "/a/{}", "/a/{b-c}", "/a/{x}/{x}", "/a/x{y}",
                          "/a/{y}x", "/a?b", "/a#b", "/a/}"}) {
    auto p = PathPattern::Parse(bad);
    EXPECT_FALSE(p.ok()) << bad;
    if (!p.ok()) {
      EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
    }
  }
}

TEST(PathPatternTest, MatchesExactlyAndDecodesParams) {
  auto p = PathPattern::Parse("/api/v1/nodes/{name}/gpus/{index}/metrics");
  ASSERT_TRUE(p.ok());
  std::map<std::string, std::string> params;
  std::string error;
  EXPECT_EQ(p->Match("/api/v1/nodes/node%20a%2Fb/gpus/3/metrics", &params, &error),
            PathPattern::MatchResult::kMatch);
  EXPECT_EQ(params["name"], "node a/b");
  EXPECT_EQ(params["index"], "3");
  // Not a prefix match, no trailing slash tolerance, no empty parameter.
  EXPECT_EQ(p->Match("/api/v1/nodes/a/gpus/3/metrics/x", &params, &error),
            PathPattern::MatchResult::kNoMatch);
  EXPECT_EQ(p->Match("/api/v1/nodes/a/gpus/3/metrics/", &params, &error),
            PathPattern::MatchResult::kNoMatch);
  EXPECT_EQ(p->Match("/api/v1/nodes//gpus/3/metrics", &params, &error),
            PathPattern::MatchResult::kNoMatch);
  EXPECT_EQ(p->Match("api/v1/nodes/a/gpus/3/metrics", &params, &error),
            PathPattern::MatchResult::kNoMatch);
  // '+' stays '+' in paths.
  EXPECT_EQ(p->Match("/api/v1/nodes/a+b/gpus/0/metrics", &params, &error),
            PathPattern::MatchResult::kMatch);
  EXPECT_EQ(params["name"], "a+b");
}

// Bad input tried: a bad percent escape inside a parameter segment.
TEST(PathPatternTest, BadEscapeInParamIsReported) {
  auto p = PathPattern::Parse("/nodes/{name}");
  ASSERT_TRUE(p.ok());
  std::string error;
  EXPECT_EQ(p->Match("/nodes/a%zz", nullptr, &error), PathPattern::MatchResult::kBadEscape);
  EXPECT_NE(error.find("a%zz"), std::string::npos) << error;
}

TEST(PathPatternTest, RootPattern) {
  auto p = PathPattern::Parse("/");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->Match("/", nullptr, nullptr), PathPattern::MatchResult::kMatch);
  EXPECT_EQ(p->Match("/x", nullptr, nullptr), PathPattern::MatchResult::kNoMatch);
}

TEST(RouterTest, RoutesByMethodAndPrefersLiterals) {
  Router r;
  ASSERT_TRUE(r.Add("GET", "/nodes/{name}", Reply("get-node")).ok());
  ASSERT_TRUE(r.Add("GET", "/nodes/summary", Reply("summary")).ok());
  ASSERT_TRUE(r.Add("DELETE", "/nodes/{name}", Reply("delete-node")).ok());
  ASSERT_TRUE(r.Add("GET", "/nodes", Reply("list")).ok());
  EXPECT_EQ(Call(r, "GET", "/nodes/a").body, "get-node|name=a;");
  EXPECT_EQ(Call(r, "GET", "/nodes/summary").body, "summary|");
  EXPECT_EQ(Call(r, "DELETE", "/nodes/summary").body, "delete-node|name=summary;");
  EXPECT_EQ(Call(r, "GET", "/nodes").body, "list|");
}

TEST(RouterTest, NotFoundAndMethodNotAllowedWithAllow) {
  Router r;
  ASSERT_TRUE(r.Add("POST", "/jobs", Reply("create")).ok());
  ASSERT_TRUE(r.Add("GET", "/jobs", Reply("list")).ok());
  ASSERT_TRUE(r.Add("DELETE", "/jobs/{id}", Reply("del")).ok());

  HttpResponse nf = Call(r, "GET", "/nope");
  EXPECT_EQ(nf.status, 404);
  EXPECT_EQ(nf.body, R"({"error":{"code":"not_found","message":"no route for /nope"}})");
  EXPECT_EQ(Call(r, "GET", "/jobs/").status, 404);  // trailing slash is another path

  HttpResponse na = Call(r, "PUT", "/jobs");
  EXPECT_EQ(na.status, 405);
  ASSERT_EQ(na.headers.size(), 1u);
  EXPECT_EQ(na.headers[0].first, "Allow");
  EXPECT_EQ(na.headers[0].second, "GET, POST");
  EXPECT_NE(na.body.find("method_not_allowed"), std::string::npos);

  EXPECT_EQ(Call(r, "GET", "/jobs/%zz").status, 400);
}

// Bad inputs tried: duplicate method+shape (also with another parameter name), empty method,
// missing handler, bad pattern.
TEST(RouterTest, RejectsConflictingAndBadRoutes) {
  Router r;
  ASSERT_TRUE(r.Add("GET", "/a/{x}", Reply("1")).ok());
  EXPECT_EQ(r.Add("GET", "/a/{x}", Reply("2")).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(r.Add("GET", "/a/{y}", Reply("2")).code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(r.Add("POST", "/a/{y}", Reply("3")).ok());
  EXPECT_TRUE(r.Add("GET", "/a/b", Reply("4")).ok());
  EXPECT_EQ(r.Add("", "/b", Reply("5")).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.Add("GET", "/b", nullptr).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.Add("GET", "b", Reply("6")).code(), StatusCode::kInvalidArgument);
}

TEST(HttpTypesTest, ErrorBodyEscapesAndStatusMappings) {
  HttpResponse e = HttpResponse::Error(400, "bad \"x\"\n\x01");
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.content_type, "application/json");
  EXPECT_EQ(e.body,
            "{\"error\":{\"code\":\"invalid_argument\",\"message\":\"bad \\\"x\\\"\\n\\u0001\"}}");
  // Bytes that are not UTF-8 (a malformed body echoed in a parse error) become
  // U+FFFD; well-formed UTF-8 stays as it is.
  EXPECT_EQ(JsonEscape("last read: '\xff'; caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82"),
            "last read: '\\ufffd'; caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82");
  EXPECT_EQ(JsonEscape("\xc0\xaf \xed\xa0\x80 \xe2\x82 \xf5"),  // overlong, surrogate, cut, > U+10FFFF
            "\\ufffd\\ufffd \\ufffd\\ufffd\\ufffd \\ufffd\\ufffd \\ufffd");
  EXPECT_EQ(HttpResponse::FromStatus(Status::NotFound("node x")).status, 404);
  EXPECT_EQ(HttpStatusFor(StatusCode::kUnauthenticated), 401);
  EXPECT_EQ(HttpStatusFor(StatusCode::kConflict), 409);
  EXPECT_EQ(HttpStatusFor(StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(StatusCodeForHttp(204), StatusCode::kOk);
  EXPECT_EQ(StatusCodeForHttp(401), StatusCode::kUnauthenticated);
  EXPECT_EQ(StatusCodeForHttp(503), StatusCode::kUnavailable);
  EXPECT_EQ(StatusCodeForHttp(302), StatusCode::kUnavailable);
  EXPECT_EQ(HttpErrorCode(413), "payload_too_large");
  Status s = StatusFromHttp(401, "GET /x", "{\"error\":1}");
  EXPECT_EQ(s.code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(s.message(), "GET /x: HTTP 401: {\"error\":1}");
  EXPECT_EQ(StatusFromHttp(200, "x", "").code(), StatusCode::kUnavailable);
}


// A handler may keep its Responder and answer later; the first answer wins, and a Responder
// dropped unanswered answers 500 so no request is left hanging.
TEST(ResponderTest, FirstAnswerWinsAndADroppedOneAnswers500) {
  std::vector<int> got;
  {
    Responder r([&got](HttpResponse res) { got.push_back(res.status); });
    Responder copy = r;
    EXPECT_FALSE(r.answered());
    copy(HttpResponse::Text(201, "x"));
    r(HttpResponse::Text(202, "y"));
    EXPECT_TRUE(r.answered());
  }
  { Responder dropped([&got](HttpResponse res) { got.push_back(res.status); }); }
  EXPECT_EQ(got, (std::vector<int>{201, 500}));
}

TEST(RouterTest, AsyncHandlerAnswersLater) {
  Router router;
  Responder* kept = nullptr;
  std::optional<Responder> later;
  ASSERT_TRUE(router
                  .AddAsync("GET", "/slow/{id}",
                            [&later](const HttpRequest& req, Responder respond) {
                              EXPECT_EQ(req.Param("id"), "7");
                              later = std::move(respond);
                            })
                  .ok());
  HttpRequest req;
  req.method = "GET";
  req.path = "/slow/7";
  std::optional<HttpResponse> out;
  router.Dispatch(&req, Responder([&out](HttpResponse r) { out = std::move(r); }));
  EXPECT_FALSE(out.has_value());
  ASSERT_TRUE(later.has_value());
  kept = &*later;
  (*kept)(HttpResponse::Text(200, "done"));
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->body, "done");
}

}  // namespace
}  // namespace rota::net
