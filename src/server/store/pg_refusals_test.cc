// PostgreSQL stores that cannot be written (issue 42's bad input): a server whose
// sessions are read-only (default_transaction_read_only, as on a standby) is
// refused at open with nothing written; a database that turns read-only under a
// running store fails its writes whole, without a crash, and they work again once
// it is writable; a database that does not exist is refused fast, saying so.

#include <gtest/gtest.h>

#include <chrono>

#include "server/store/pg_backend.h"
#include "server/store/pg_test_instance.h"
#include "server/store/schema.h"
#include "server/store/store.h"
#include "server/store/store_test_backend.h"
#include "server/store/store_test_util.h"

namespace rota::store {
namespace {

using testing::Backend;

class PgRefusalsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ROTA_SKIP_WITHOUT_BACKEND(pg_);
    auto server = testing::SharedPgServer();
    ASSERT_TRUE(server.ok());
    server_ = *server;
    db_name_ = pg_.url().substr(pg_.url().rfind('/') + 1);
  }
  // Runs `sql` as the superuser on the server's maintenance database.
  void Admin(const std::string& sql) {
    auto admin = OpenPostgres(server_->Url("postgres"), "admin");
    ASSERT_TRUE(admin.ok()) << admin.status().ToString();
    Status st = admin->Exec(sql);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  void SetReadOnly(bool on) {
    Admin("ALTER DATABASE " + db_name_ + (on ? " SET default_transaction_read_only = on" :
                                               " RESET default_transaction_read_only"));
  }
  // Ends every session on the test's database: the store reconnects, and its new
  // sessions take the database's settings.
  void DropSessions() {
    Admin("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '" +
          db_name_ + "' AND pid <> pg_backend_pid()");
  }
  int64_t Query(const std::string& sql) {
    auto db = pg_.Connect();
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    if (!db.ok()) return -1;
    auto v = db->QueryInt(sql);
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    return v.ok() ? *v : -1;
  }

  testing::TestStoreLocation pg_{Backend::kPostgres};
  testing::PgTestServer* server_ = nullptr;
  std::string db_name_;
  FakeClock clock_{testing::kMinuteT0};
};

TEST_F(PgRefusalsTest, AReadOnlyDatabaseIsRefusedAtOpenWithNothingWritten) {
  SetReadOnly(true);
  auto s = pg_.Open({}, clock_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(s.status().message().find("accepts no writes"), std::string::npos)
      << s.status().message();
  EXPECT_NE(s.status().message().find("nothing was written"), std::string::npos);
  EXPECT_EQ(Query("SELECT count(*) FROM information_schema.tables WHERE table_schema = "
                  "current_schema()"),
            0);
  // A store that exists and became read-only: refused too, its rows unchanged.
  SetReadOnly(false);
  {
    auto ok = pg_.Open({}, clock_);
    ASSERT_TRUE(ok.ok()) << ok.status().ToString();
    ASSERT_TRUE((*ok)->UpsertNode(testing::MakeNode("n1"), 1).ok());
  }
  SetReadOnly(true);
  auto again = pg_.Open({}, clock_);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("accepts no writes"), std::string::npos);
  EXPECT_EQ(Query("SELECT count(*) FROM nodes"), 1);
}

TEST_F(PgRefusalsTest, WritesFailWholeWhileTheDatabaseIsReadOnlyAndWorkAfterwards) {
  auto s = pg_.Open({}, clock_);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  Store& store = **s;
  ASSERT_TRUE(store.UpsertNode(testing::MakeNode("n1"), 1).ok());
  SetReadOnly(true);
  DropSessions();
  // Two rows in one write: neither is stored. The first try may meet the dropped
  // connection (Unavailable too); the next meets the read-only session.
  auto two_rows = [](Db& db) -> Status {
    RETURN_IF_ERROR(db.Exec("INSERT INTO queues VALUES ('a', '{}', 1, 1)"));
    return db.Exec("INSERT INTO queues VALUES ('b', '{}', 1, 1)");
  };
  for (int i = 0; i < 2; ++i) {
    Status st = store.Write(two_rows);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  }
  Status last = store.Write(two_rows);
  EXPECT_NE(last.message().find("read-only"), std::string::npos) << last.ToString();
  Status samples = testing::AppendSync(store, "n1", {testing::MakeSample(testing::kMinuteT0)});
  EXPECT_EQ(samples.code(), StatusCode::kUnavailable) << samples.ToString();
  EXPECT_EQ(Query("SELECT count(*) FROM queues"), 0);
  EXPECT_EQ(Query("SELECT count(*) FROM node_gpu_samples"), 0);

  SetReadOnly(false);
  DropSessions();
  Status st;
  for (int i = 0; i < 3; ++i) {  // the first may meet the dropped connection
    st = store.Write(two_rows);
    if (st.ok()) break;
  }
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Query("SELECT count(*) FROM queues"), 2);
  EXPECT_TRUE(testing::AppendSync(store, "n1", {testing::MakeSample(testing::kMinuteT0)}).ok());
}

TEST_F(PgRefusalsTest, AMissingDatabaseOrUserIsRefusedFastSayingWhy) {
  const std::string base = server_->Url("postgres");
  const std::string prefix = base.substr(0, base.rfind('/'));
  for (const std::string& url :
       {prefix + "/no_such_db", "postgresql://nobody_here@" + prefix.substr(prefix.find('@') + 1) +
                                    "/postgres"}) {
    const auto t0 = std::chrono::steady_clock::now();
    auto s = Store::OpenUrl(url, {}, clock_);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
    ASSERT_FALSE(s.ok()) << url;
    EXPECT_EQ(s.status().code(), StatusCode::kUnavailable) << s.status().ToString();
    EXPECT_NE(s.status().message().find("cannot connect to the store"), std::string::npos)
        << s.status().message();
    EXPECT_NE(s.status().message().find("does not exist"), std::string::npos)
        << s.status().message();
  }
  auto bad = Store::OpenUrl("postgresql://h/db?nonsense=1", {}, clock_);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument) << bad.status().ToString();
}

}  // namespace
}  // namespace rota::store
