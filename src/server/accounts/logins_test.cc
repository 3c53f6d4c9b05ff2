#include "server/accounts/logins.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "common/clock.h"
#include "server/audit.h"
#include "server/store/store_test_util.h"

namespace rota::server {
namespace {

class LoginsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::Store::Open(dir_.path(), store::StoreOptions{}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    accounts_ = std::make_unique<Accounts>(store_.get(), std::string(64, 'k'), "min");
    audit_ = std::make_unique<AuditLog>(store_.get());
    UserPatch p;
    p.username = "alice";
    p.password = "password-alice";
    ASSERT_TRUE(accounts_->CreateUser(p, clock_.NowMs()).ok());
  }

  struct Seen {
    Logins::Outcome outcome;
    std::thread::id thread;
  };
  // Runs one check and waits for its outcome.
  Seen Check(Logins& logins, const std::string& addr, const std::string& user,
             const std::string& password) {
    std::promise<Seen> p;
    logins.CheckPassword(addr, user, password, [&p](Logins::Outcome o) {
      p.set_value(Seen{std::move(o), std::this_thread::get_id()});
    });
    return p.get_future().get();
  }

  store::testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Accounts> accounts_;
  std::unique_ptr<AuditLog> audit_;
};

// Finding (issue 41): argon2id ran on the HTTP network threads.
TEST_F(LoginsTest, Argon2idRunsOnTheNetworkThreadsFixed_ChecksRunOnThePool) {
  Logins logins(accounts_.get(), audit_.get(), &clock_);
  Seen ok = Check(logins, "127.0.0.1:5000", "alice", "password-alice");
  ASSERT_TRUE(ok.outcome.user.ok()) << ok.outcome.user.status().ToString();
  EXPECT_EQ(ok.outcome.user->username, "alice");
  EXPECT_NE(ok.thread, std::this_thread::get_id());
  Seen bad = Check(logins, "127.0.0.1:5000", "alice", "wrong");
  EXPECT_EQ(bad.outcome.user.status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(bad.outcome.retry_after_ms, 0);
  EXPECT_NE(bad.thread, std::this_thread::get_id());
  EXPECT_EQ(logins.counters().failed, 1);
}

TEST_F(LoginsTest, FullHashingQueueIsUnavailableWithRetryAfter) {
  LoginsOptions o;
  o.hash_threads = 1;
  o.hash_queue = 1;
  Logins logins(accounts_.get(), audit_.get(), &clock_, o);
  // Hold the one thread, fill the one queue slot.
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::promise<void> started;
  ASSERT_TRUE(logins.RunHashing([&] {
    started.set_value();
    gate.wait();
  }).ok());
  started.get_future().wait();
  std::promise<Logins::Outcome> queued;
  logins.CheckPassword("10.0.0.1:1", "alice", "password-alice",
                       [&](Logins::Outcome out) { queued.set_value(std::move(out)); });
  Seen busy = Check(logins, "10.0.0.2:1", "alice", "password-alice");
  EXPECT_EQ(busy.outcome.user.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(busy.outcome.retry_after_ms, Logins::kBusyRetryMs);
  EXPECT_EQ(busy.thread, std::this_thread::get_id());  // refused at once
  EXPECT_EQ(logins.RunHashing([] {}).code(), StatusCode::kUnavailable);
  EXPECT_EQ(logins.counters().busy, 2);
  release.set_value();
  EXPECT_TRUE(queued.get_future().get().user.ok());
  // The refused attempt did not count against the address.
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(Check(logins, "10.0.0.2:1", "nobody", "x").outcome.retry_after_ms, 0) << i;
  }
}

// Finding (issue 41): failed logins were unlimited.
TEST_F(LoginsTest, FailedLoginsAreUnlimitedFixed_429WithRetryAfterAndOneAuditEntry) {
  Logins logins(accounts_.get(), audit_.get(), &clock_);
  for (int i = 0; i < 5; ++i) {
    Seen s = Check(logins, "10.1.1.1:4000", "user" + std::to_string(i), "wrong");
    ASSERT_EQ(s.outcome.user.status().code(), StatusCode::kUnauthenticated) << i;
  }
  Seen throttled = Check(logins, "10.1.1.1:4001", "alice", "password-alice");
  EXPECT_EQ(throttled.outcome.user.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(throttled.outcome.retry_after_ms, 1'000);
  EXPECT_NE(throttled.outcome.user.status().message().find("too many failed sign-ins from 10.1.1.1"),
            std::string::npos)
      << throttled.outcome.user.status().message();
  EXPECT_EQ(throttled.thread, std::this_thread::get_id());  // no hash was spent on it
  Seen again = Check(logins, "10.1.1.1:4002", "alice", "password-alice");
  EXPECT_EQ(again.outcome.user.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(logins.counters().throttled_address, 2);
  // Once the wait is over the right password works.
  clock_.AdvanceMs(1'000);
  EXPECT_TRUE(Check(logins, "10.1.1.1:4003", "alice", "password-alice").outcome.user.ok());
  ASSERT_TRUE(store_->Flush().ok());
  auto trail = audit_->ListAuthEvents(0, 100);
  ASSERT_TRUE(trail.ok()) << trail.status().ToString();
  ASSERT_EQ(trail->size(), 1u);  // one entry per closing, not per refusal
  EXPECT_EQ((*trail)[0].action, "login_throttled");
  EXPECT_EQ((*trail)[0].address, "10.1.1.1");
  EXPECT_EQ((*trail)[0].username, "alice");
  EXPECT_EQ((*trail)[0].detail, "by address for 1 s");
}

TEST_F(LoginsTest, AccountIsThrottledFromEveryAddress) {
  Logins logins(accounts_.get(), audit_.get(), &clock_);
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(Check(logins, "10.2.0." + std::to_string(i) + ":1", "alice", "wrong")
                  .outcome.user.status().code(),
              StatusCode::kUnauthenticated);
  }
  Seen s = Check(logins, "10.3.0.1:1", "alice", "password-alice");
  EXPECT_EQ(s.outcome.user.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.outcome.user.status().message().find("for this account"), std::string::npos);
  EXPECT_EQ(logins.counters().throttled_account, 1);
}

}  // namespace
}  // namespace rota::server
