#include "server/accounts/login_throttle.h"

#include <gtest/gtest.h>

namespace rota::server {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000;

// Admits and fails one attempt; returns the decision.
LoginThrottle::Decision FailOnce(LoginThrottle& t, const std::string& addr, const std::string& user,
                                 int64_t now) {
  auto d = t.Admit(addr, user, now);
  if (d.allowed) t.Failed(addr, user, now);
  return d;
}

TEST(LoginThrottleTest, FailedLoginsAreUnlimitedRegression_FifthFailureClosesTheAddress) {
  LoginThrottle t;
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(FailOnce(t, "10.0.0.1", "user" + std::to_string(i), kT0).allowed) << i;
  }
  auto d = t.Admit("10.0.0.1", "someone-else", kT0);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.scope, ThrottleScope::kAddress);
  EXPECT_EQ(d.retry_after_ms, 1'000);
  EXPECT_TRUE(d.first_refusal);
  d = t.Admit("10.0.0.1", "someone-else", kT0 + 400);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.retry_after_ms, 600);
  EXPECT_FALSE(d.first_refusal);  // one audit entry per closing
  // Another address is not concerned.
  EXPECT_TRUE(t.Admit("10.0.0.2", "someone-else", kT0).allowed);
}

TEST(LoginThrottleTest, WaitDoublesWithEachFailureUpToTheCap) {
  LoginThrottleOptions o;
  o.address.max_wait_ms = 8'000;
  LoginThrottle t(o);
  int64_t now = kT0;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(FailOnce(t, "a", "u" + std::to_string(i), now).allowed);
  const int64_t want[] = {2'000, 4'000, 8'000, 8'000, 8'000};
  int64_t wait = 1'000;
  for (int64_t w : want) {
    now += wait;  // the key opens exactly then
    ASSERT_TRUE(FailOnce(t, "a", "x" + std::to_string(w) + std::to_string(now), now).allowed);
    auto d = t.Admit("a", "y", now);
    ASSERT_FALSE(d.allowed);
    EXPECT_EQ(d.retry_after_ms, w);
    wait = w;
  }
}

TEST(LoginThrottleTest, AccountIsThrottledAcrossAddresses) {
  LoginThrottle t;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(FailOnce(t, "10.0.0." + std::to_string(i), "alice", kT0).allowed);
  }
  auto d = t.Admit("10.9.9.9", "alice", kT0);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.scope, ThrottleScope::kAccount);
  EXPECT_TRUE(t.Admit("10.9.9.9", "bob", kT0).allowed);
}

TEST(LoginThrottleTest, ConcurrentAttemptsCannotPassTheBoundTogether) {
  LoginThrottle t;
  int admitted = 0;
  for (int i = 0; i < 200; ++i) admitted += t.Admit("10.0.0.1", "u" + std::to_string(i), kT0).allowed;
  EXPECT_EQ(admitted, 5);  // the free attempts, all in flight at once
}

TEST(LoginThrottleTest, SuccessClearsTheAccountButNotTheAddress) {
  LoginThrottle t;
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(FailOnce(t, "a", "alice", kT0).allowed);
  ASSERT_TRUE(t.Admit("a", "alice", kT0).allowed);
  t.Succeeded("a", "alice", kT0);
  // alice's count starts again; the address used 4 of its 5 free failures.
  ASSERT_TRUE(FailOnce(t, "b", "alice", kT0).allowed);
  ASSERT_TRUE(FailOnce(t, "a", "mallory", kT0).allowed);
  EXPECT_FALSE(t.Admit("a", "carol", kT0).allowed);
  EXPECT_TRUE(t.Admit("b", "alice", kT0).allowed);
}

TEST(LoginThrottleTest, AbandonedAttemptsDoNotCount) {
  LoginThrottle t;
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(t.Admit("a", "alice", kT0).allowed) << i;
    t.Abandoned("a", "alice");
  }
}

TEST(LoginThrottleTest, QuietKeysAreForgotten) {
  LoginThrottle t;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(FailOnce(t, "a", "u" + std::to_string(i), kT0).allowed);
  EXPECT_FALSE(t.Admit("a", "z", kT0 + 1'000 - 1).allowed);
  // After the wait the next failure waits twice as long...
  ASSERT_TRUE(FailOnce(t, "a", "z", kT0 + 1'000).allowed);
  EXPECT_EQ(t.Admit("a", "z", kT0 + 1'000).retry_after_ms, 2'000);
  // ... but an hour without failures starts afresh.
  const int64_t later = kT0 + 1'000 + 60 * 60'000;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(FailOnce(t, "a", "v" + std::to_string(i), later).allowed);
}

TEST(LoginThrottleTest, TrackedAddressesAreCapped) {
  LoginThrottleOptions o;
  o.address.max_keys = 100;
  o.account.max_keys = 50;
  LoginThrottle t(o);
  for (int i = 0; i < 10'000; ++i) {
    FailOnce(t, "addr" + std::to_string(i), "user" + std::to_string(i), kT0 + i);
  }
  EXPECT_LE(t.tracked(ThrottleScope::kAddress), 100u);
  EXPECT_LE(t.tracked(ThrottleScope::kAccount), 50u);
  // The most recent keys are the ones kept.
  for (int i = 0; i < 4; ++i) FailOnce(t, "addr9999", "w" + std::to_string(i), kT0 + 10'000);
  EXPECT_FALSE(t.Admit("addr9999", "w", kT0 + 10'000).allowed);
}

TEST(LoginThrottleTest, AddressKeyDropsThePortAndGroupsAnIpv6Slash64) {
  struct Case {
    const char* remote;
    const char* key;
  } cases[] = {
      {"127.0.0.1:53412", "127.0.0.1"},
      {"[::1]:80", "::/64"},
      {"[2001:db8:1:2::5]:443", "2001:db8:1:2::/64"},
      {"[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:1", "2001:db8:1:2::/64"},
      {"[::ffff:10.1.2.3]:9", "10.1.2.3"},
      {"unknown", "unknown"},
  };
  for (const auto& c : cases) EXPECT_EQ(LoginThrottle::AddressKey(c.remote), c.key) << c.remote;
}

}  // namespace
}  // namespace rota::server
