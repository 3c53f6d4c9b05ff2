#include "net/url.h"

#include <gtest/gtest.h>

namespace rota::net {
namespace {

TEST(PercentDecodeTest, DecodesEscapesAndPlus) {
  EXPECT_EQ(PercentDecode("a%20b%2Fc", false), "a b/c");
  EXPECT_EQ(PercentDecode("a+b", false), "a+b");
  EXPECT_EQ(PercentDecode("a+b", true), "a b");
  EXPECT_EQ(PercentDecode("%e2%82%AC", false), "\xe2\x82\xac");
  EXPECT_EQ(PercentDecode("", false), "");
}

// Bad inputs tried: lone '%', one hex digit, non-hex digits, an escape at the very end, an
// encoded NUL; bytes that are not UTF-8 (a lone continuation byte, 0xFF, an overlong '/', a
// surrogate, a truncated sequence), raw or escaped.
TEST(PercentDecodeTest, RejectsBadEscapesAndWhatIsNotUtf8) {
  for (const char* bad : {"%", "abc%", "%4", "a%4", "%zz", "%g1", "%1g", "x%00y", "%FF", "a%80",
                          "%C0%AF", "%ED%A0%80", "%E2%82", "x\xff"}) {
    EXPECT_FALSE(PercentDecode(bad, true).has_value()) << bad;
  }
}

TEST(PercentEncodeTest, RoundTrips) {
  std::string raw = "node a/b?c=d&e+f~_.-\xe2\x82\xac";
  std::string enc = PercentEncode(raw);
  EXPECT_EQ(enc.find_first_of(" /?=&+"), std::string::npos) << enc;
  EXPECT_EQ(PercentDecode(enc, false), raw);
  EXPECT_EQ(PercentEncode("Az09-._~"), "Az09-._~");
}

TEST(ParseQueryTest, ParsesPairsFlagsAndRepeats) {
  auto q = ParseQuery("a=1&b=x%20y&flag&&c=&a=2&d=p+q");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->at("a"), "2");
  EXPECT_EQ(q->at("b"), "x y");
  EXPECT_EQ(q->at("flag"), "");
  EXPECT_EQ(q->at("c"), "");
  EXPECT_EQ(q->at("d"), "p q");
  EXPECT_EQ(q->size(), 5u);
  EXPECT_TRUE(ParseQuery("")->empty());
}

// Bad inputs tried: a bad escape in a value, in a key.
TEST(ParseQueryTest, RejectsBadEscapesNamingTheKey) {
  auto q = ParseQuery("ok=1&limit=%zz");
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(q.status().message().find("limit"), std::string::npos) << q.status().message();
  EXPECT_FALSE(ParseQuery("%4=1").ok());
}

TEST(ParseUrlTest, ParsesParts) {
  auto u = ParseUrl("ws://127.0.0.1:8080/api/v1/agent?x=1");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->scheme, "ws");
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, 8080);
  EXPECT_EQ(u->target, "/api/v1/agent?x=1");

  u = ParseUrl("HTTP://node-a");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->scheme, "http");
  EXPECT_EQ(u->port, 80);
  EXPECT_EQ(u->target, "/");

  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.1.2.3"));
  EXPECT_TRUE(IsLoopbackHost("[::1]"));
  EXPECT_FALSE(IsLoopbackHost("127.0.0.1.evil.example"));
  EXPECT_FALSE(IsLoopbackHost("10.0.0.1"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("gpu-head"));
  u = ParseUrl("wss://[::1]:9443?q");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, 9443);
  EXPECT_EQ(u->target, "/?q");
}

// Bad inputs tried: no scheme, unknown scheme, empty host, empty port, port 0, port too big,
// non-numeric port, user-info, fragment, unterminated IPv6, junk after IPv6.
TEST(ParseUrlTest, RejectsBadUrlsNamingThem) {
  for (const char* bad : {"127.0.0.1:80/x", "ftp://host/", "ws://", "ws://:80/", "ws://host:/",
                          "ws://host:0/", "ws://host:65536/", "ws://host:123456/", "ws://host:8x/",
                          "ws://user@host/", "ws://host/#frag", "ws://[::1/", "ws://[::1]x/"}) {
    auto u = ParseUrl(bad);
    ASSERT_FALSE(u.ok()) << bad;
    EXPECT_EQ(u.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(u.status().message().find(bad), std::string::npos) << u.status().message();
  }
}

}  // namespace
}  // namespace rota::net
