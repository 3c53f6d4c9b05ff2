#include <gtest/gtest.h>

#include "agent/agent.h"

namespace rota::agent {
namespace {

TEST(AgentUrlTest, BuildsWebSocketUrl) {
  EXPECT_EQ(*AgentConnectUrl("http://10.0.0.1:8080"), "ws://10.0.0.1:8080/api/v1/agent/connect");
  EXPECT_EQ(*AgentConnectUrl("https://rota.lab/"), "wss://rota.lab/api/v1/agent/connect");
  EXPECT_EQ(*AgentConnectUrl("ws://h:1"), "ws://h:1/api/v1/agent/connect");
}

// Bad inputs tried: no scheme, other schemes, scheme only, empty.
TEST(AgentUrlTest, RejectsBadUrls) {
  for (const char* bad : {"10.0.0.1:8080", "ftp://x", "http://", "", "file:///etc/passwd"}) {
    EXPECT_FALSE(AgentConnectUrl(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace rota::agent

namespace rota::agent {
namespace {

TEST(AgentUrlTest, SeveralServersSeparatedByCommas) {
  auto urls = AgentConnectUrls("http://a:1, https://b:2,,ws://c:3");
  ASSERT_TRUE(urls.ok()) << urls.status().ToString();
  EXPECT_EQ(*urls, (std::vector<std::string>{"ws://a:1/api/v1/agent/connect", "wss://b:2/api/v1/agent/connect",
                                              "ws://c:3/api/v1/agent/connect"}));
  EXPECT_FALSE(AgentConnectUrls("http://a:1,ftp://b").ok());
  EXPECT_FALSE(AgentConnectUrls(" , ").ok());
}

}  // namespace
}  // namespace rota::agent
