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
