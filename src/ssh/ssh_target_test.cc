#include "ssh/ssh_target.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace rota::ssh {
namespace {

TEST(SshTargetTest, ParsesUserHostAndPort) {
  auto t = ParseSshUrl("ssh://alice@gpu-7.lab:2222");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->user, "alice");
  EXPECT_EQ(t->host, "gpu-7.lab");
  EXPECT_EQ(t->port, 2222);
  EXPECT_EQ(t->Url(), "ssh://alice@gpu-7.lab:2222");

  auto d = ParseSshUrl("ssh://root@10.0.0.5");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->port, 22);

  auto v6 = ParseSshUrl("ssh://root@[::1]:22");
  ASSERT_TRUE(v6.ok()) << v6.status().ToString();
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->Url(), "ssh://root@[::1]:22");
}

TEST(SshTargetTest, RefusesBadUrls) {
  // Each is refused with InvalidArgument: other schemes, no user, option
  // injection through user or host, bad ports, paths, shell characters.
  for (const char* bad :
       {"", "http://a@b", "ssh://host", "ssh://@host", "ssh://-oProxyCommand=x@host",
        "ssh://alice@-oProxyCommand=x", "ssh://alice@host:0", "ssh://alice@host:65536",
        "ssh://alice@host:", "ssh://alice@host:22x", "ssh://alice@host/path", "ssh://alice@host?x",
        "ssh://al ice@host", "ssh://alice@ho;st", "ssh://alice@[::1", "ssh://alice@[zz]",
        "ssh://alice@$(reboot)", "ssh://alice@host:123456"}) {
    auto t = ParseSshUrl(bad);
    EXPECT_FALSE(t.ok()) << bad;
    if (!t.ok()) {
      EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument) << bad;
    }
  }
}

TEST(SshTargetTest, ArgvEndsWithHostAndCommandAfterDoubleDash) {
  SshTarget t{"bob", "node1", 2200};
  SshClientOptions o{"/k/id", "/k/known", "/tmp/cm", 3};
  auto argv = SshArgv(t, o, "exec /bin/sh -s");
  ASSERT_GE(argv.size(), 4u);
  EXPECT_EQ(argv[0], "ssh");
  EXPECT_EQ(argv[argv.size() - 1], "exec /bin/sh -s");
  EXPECT_EQ(argv[argv.size() - 2], "node1");
  EXPECT_EQ(argv[argv.size() - 3], "--");
  auto has = [&](const std::string& s) { return std::find(argv.begin(), argv.end(), s) != argv.end(); };
  EXPECT_TRUE(has("BatchMode=yes"));
  EXPECT_TRUE(has("ControlPath=/tmp/cm/%C"));
  EXPECT_TRUE(has("UserKnownHostsFile=/k/known"));
  // Host keys are checked against the pinned one only, never learnt.
  EXPECT_TRUE(has("StrictHostKeyChecking=yes"));
  EXPECT_TRUE(has("GlobalKnownHostsFile=/dev/null"));
  EXPECT_TRUE(has("UpdateHostKeys=no"));
  EXPECT_FALSE(has("StrictHostKeyChecking=accept-new"));
  EXPECT_TRUE(has("2200"));
  auto close = SshCloseArgv(t, o);
  EXPECT_EQ(close.back(), "node1");
  EXPECT_TRUE(std::find(close.begin(), close.end(), "-O") != close.end());
}

}  // namespace
}  // namespace rota::ssh
