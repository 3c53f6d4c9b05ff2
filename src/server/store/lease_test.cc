// The leader lease in PostgreSQL (lease.h): taking, renewing, losing it, and the fence
// every leader write transaction runs first, on a real PostgreSQL server.
#include "server/store/lease.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "common/clock.h"
#include "server/store/pg_backend.h"
#include "server/store/store_test_backend.h"

namespace rota::store {
namespace {

using testing::Backend;
using testing::TestStoreLocation;

class LeaseStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ROTA_SKIP_WITHOUT_BACKEND(loc_);
    auto l = LeaseStore::Open(loc_.url(), RealClock::Get());
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    lease_ = std::move(*l);
  }
  void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

  TestStoreLocation loc_{Backend::kPostgres};
  std::unique_ptr<LeaseStore> lease_;
};

TEST_F(LeaseStoreTest, OneServerTakesAnExpiredLeaseAndOnlyItsHolderRenewsIt) {
  auto row = lease_->Read();
  ASSERT_TRUE(row.ok()) << row.status().ToString();
  EXPECT_EQ(row->holder, "");
  EXPECT_EQ(row->epoch, 0);
  EXPECT_GT(row->db_now_ms, 1'600'000'000'000);

  auto a = lease_->TryAcquire(*row, "a", "http://a:1", 400);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(a->has_value());
  EXPECT_EQ(**a, 1);
  // b read the same row: too late, a took it.
  auto b = lease_->TryAcquire(*row, "b", "http://b:1", 400);
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->has_value());
  auto now = lease_->Read();
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(now->holder, "a");
  EXPECT_EQ(now->address, "http://a:1");
  EXPECT_GT(now->expires_at_ms, now->db_now_ms);
  // Unexpired: b cannot take it even with the current row.
  auto b2 = lease_->TryAcquire(*now, "b", "http://b:1", 400);
  ASSERT_TRUE(b2.ok());
  EXPECT_FALSE(b2->has_value());

  EXPECT_TRUE(*lease_->Renew("a", 1, 400));
  EXPECT_FALSE(*lease_->Renew("b", 1, 400));
  EXPECT_FALSE(*lease_->Renew("a", 2, 400));

  SleepMs(500);  // a stops renewing: the lease expires on the database's clock
  EXPECT_FALSE(*lease_->Renew("a", 1, 400)) << "an expired lease is never renewed";
  auto expired = lease_->Read();
  ASSERT_TRUE(expired.ok());
  auto b3 = lease_->TryAcquire(*expired, "b", "http://b:1", 400);
  ASSERT_TRUE(b3.ok());
  ASSERT_TRUE(b3->has_value());
  EXPECT_EQ(**b3, 2);

  ASSERT_TRUE(lease_->Release("b", 2).ok());
  auto released = lease_->Read();
  ASSERT_TRUE(released.ok());
  EXPECT_LE(released->expires_at_ms, released->db_now_ms);
}

TEST_F(LeaseStoreTest, ServersRegisterAndOldRegistrationsAreForgotten) {
  ASSERT_TRUE(lease_->Register(ServerRecord{"s1", "http://s1:1", "0.1.0", 5, 0}).ok());
  ASSERT_TRUE(lease_->Register(ServerRecord{"s2", "http://s2:1", "0.1.0", 6, 0}).ok());
  ASSERT_TRUE(lease_->Register(ServerRecord{"s1", "http://s1:2", "0.1.1", 5, 0}).ok());
  auto list = lease_->ListServers(60'000);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].address, "http://s1:2");
  EXPECT_EQ((*list)[0].version, "0.1.1");
  EXPECT_GT((*list)[0].last_seen_ms, 0);
  SleepMs(50);
  ASSERT_TRUE(lease_->Register(ServerRecord{"s2", "http://s2:1", "0.1.0", 6, 0}).ok());
  auto recent = lease_->ListServers(30);
  ASSERT_TRUE(recent.ok());
  ASSERT_EQ(recent->size(), 1u);
  EXPECT_EQ((*recent)[0].id, "s2");
}

// A store whose writes are fenced by a's lease: they commit while a holds it, and fail,
// writing nothing, once it expired or b took it.
TEST_F(LeaseStoreTest, WritesOfALeaderWhoseLeaseRanOutAreRefused) {
  auto row = lease_->Read();
  ASSERT_TRUE(row.ok());
  auto a = lease_->TryAcquire(*row, "a", "http://a:1", 600);
  ASSERT_TRUE(a.ok() && a->has_value());
  StoreOptions options;
  options.fence = LeaseFence{"a", **a};
  std::atomic<int> fenced{0};
  options.on_fenced = [&](const Status&) { ++fenced; };
  auto store = Store::OpenUrl(loc_.url(), options, RealClock::Get());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto write = [&](int v) {
    return (*store)->Write([v](Db& db) {
      return db.Exec("INSERT INTO auth_events (t_ms, action, address, username, actor, detail) VALUES (" +
                     std::to_string(v) + ", 'test', '', '', '', '')");
    });
  };
  ASSERT_TRUE(write(1).ok());
  EXPECT_EQ(fenced.load(), 0);

  SleepMs(700);  // a's lease expired (nobody took it yet)
  Status late = write(2);
  EXPECT_EQ(late.code(), StatusCode::kUnavailable) << late.ToString();
  EXPECT_NE(late.message().find("no longer holds the leader lease"), std::string::npos) << late.ToString();
  EXPECT_GE(fenced.load(), 1);

  auto expired = lease_->Read();
  ASSERT_TRUE(expired.ok());
  auto b = lease_->TryAcquire(*expired, "b", "http://b:1", 60'000);
  ASSERT_TRUE(b.ok() && b->has_value());
  EXPECT_FALSE(write(3).ok());

  auto db = loc_.Connect();
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(*db->QueryInt("SELECT count(*) FROM auth_events WHERE action = 'test'"), 1);
  EXPECT_EQ(*db->QueryInt("SELECT count(*) FROM auth_events WHERE action = 'test' AND t_ms = 1"), 1);
}

// A leader paused inside a transaction holds the lease row's lock: its write connection's
// session ends after idle_in_transaction_ms, so the lock goes with it.
TEST_F(LeaseStoreTest, ASessionIdleInATransactionEnds) {
  PgConnectOptions options;
  options.idle_in_transaction_ms = 300;
  auto db = OpenPostgres(loc_.url(), "test", options);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ASSERT_TRUE(db->Exec("BEGIN").ok());
  ASSERT_TRUE(db->QueryInt("SELECT epoch FROM leader_lease FOR SHARE").ok());
  SleepMs(600);
  EXPECT_FALSE(db->QueryInt("SELECT 1").ok()) << "the session outlived its idle transaction";
  // The lock went with it: the lease row can be changed at once.
  auto other = loc_.Connect();
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(other->Exec("SET lock_timeout = 1000").ok());
  EXPECT_TRUE(other->Exec("UPDATE leader_lease SET renewed_at_ms = 1").ok());
}

TEST_F(LeaseStoreTest, ASqliteStoreHasNoLease) {
  auto l = LeaseStore::Open("sqlite:" + loc_.dir() + "/rota.db", RealClock::Get());
  EXPECT_EQ(l.status().code(), StatusCode::kInvalidArgument) << l.status().ToString();
}

}  // namespace
}  // namespace rota::store
