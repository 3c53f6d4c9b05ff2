// rota store migrate (migrate.h): a SQLite store with rows in many tables moves to
// PostgreSQL whole, ids and all; and the refusals, each leaving the target untouched.

#include "server/store/migrate.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>

#include "server/store/accounts.h"
#include "server/store/pg_backend.h"
#include "server/store/pg_test_instance.h"
#include "server/store/schema.h"
#include "server/store/store.h"
#include "server/store/store_test_backend.h"
#include "server/store/store_test_util.h"

namespace rota::store {
namespace {

using testing::Backend;
using testing::MakeNode;
using testing::MakeSample;
using testing::TestStoreLocation;

constexpr int64_t kT0 = testing::kMinuteT0;

class MigrateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ROTA_SKIP_WITHOUT_BACKEND(pg_);
    ROTA_SKIP_WITHOUT_BACKEND(sqlite_);
  }

  // A SQLite store with users, a group, nodes, samples and their minutes; closed.
  void FillSource() {
    auto s = sqlite_.Open({}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE((*s)->UpsertNode(MakeNode("n1", 2), 1).ok());
    ASSERT_TRUE((*s)->UpsertNode(MakeNode("n2", 0), 1).ok());
    std::vector<api::NodeSample> v;
    for (int i = 0; i < 700; ++i) v.push_back(MakeSample(kT0 + i * 1000, 2, i % 100));
    ASSERT_TRUE(testing::AppendSync(**s, "n1", v).ok());
    ASSERT_TRUE(testing::AppendSync(**s, "n2", {MakeSample(kT0, 0, 7)}).ok());
    ASSERT_TRUE((*s)->AggregateMinutes().ok());
    ASSERT_TRUE((*s)->Write([](Db& db) -> Status {
                  for (const char* name : {"alice", "bob", "carol"}) {
                    UserRow u;
                    u.username = name;
                    u.role = "user";
                    u.created_ms = u.updated_ms = 10;
                    RETURN_IF_ERROR(InsertUser(db, u).status());
                  }
                  // A gap in the ids: the target's sequence must go past the largest.
                  RETURN_IF_ERROR(db.Exec("DELETE FROM users WHERE username = 'bob'"));
                  ASSIGN_OR_RETURN(int64_t g, InsertGroup(db, "ml", "the ML team", 10));
                  return db.Exec("INSERT INTO group_members (group_id, user_id) VALUES (" +
                                 std::to_string(g) + ", 1)");
                }).ok());
  }

  // count(*) of every table of a database that migrate copies (not schema_version, leader_lease, servers).
  std::map<std::string, int64_t> Counts(Db& db) {
    std::map<std::string, int64_t> out;
    const std::string list =
        db.dialect() == Dialect::kSqlite
            ? "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            : "SELECT table_name::text FROM information_schema.tables WHERE table_schema = "
              "current_schema()";
    auto names = db.Prepare(list);
    EXPECT_TRUE(names.ok());
    std::vector<std::string> tables;
    while (names.ok() && *names->Step()) tables.push_back(names->Text(0));
    for (const std::string& t : tables) {
      if (t == "schema_version" || t == "leader_lease" || t == "servers") continue;  // not copied
      out[t] = *db.QueryInt("SELECT count(*) FROM " + t);
    }
    return out;
  }

  Result<std::vector<TableCount>> Migrate(bool overwrite = false) {
    return MigrateStore(MigrateOptions{sqlite_.url(), pg_.url(), overwrite}, 1);
  }

  FakeClock clock_{kT0 + 3'600'000};
  TestStoreLocation sqlite_{Backend::kSqlite};
  TestStoreLocation pg_{Backend::kPostgres};
};

TEST_F(MigrateTest, EveryRowOfEveryTableMovesAndTheTargetServesIt) {
  FillSource();
  auto counts = Migrate();
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  auto src = sqlite_.Connect();
  auto dst = pg_.Connect();
  ASSERT_TRUE(src.ok() && dst.ok());
  const auto in_src = Counts(*src);
  EXPECT_EQ(Counts(*dst), in_src);
  // Every table reported, with its count, each after the tables it references.
  std::map<std::string, size_t> pos;
  for (const TableCount& t : *counts) {
    pos[t.table] = pos.size();
    EXPECT_EQ(t.rows, in_src.at(t.table)) << t.table;
  }
  EXPECT_EQ(pos.size(), in_src.size());
  EXPECT_LT(pos["nodes"], pos["gpus"]);
  EXPECT_LT(pos["users"], pos["group_members"]);
  EXPECT_LT(pos["groups"], pos["group_members"]);
  EXPECT_EQ(in_src.at("node_gpu_samples"), 700);
  EXPECT_EQ(*dst->QueryInt("SELECT sum(n) FROM gpu_minutes"), 1400);

  // The store opens on PostgreSQL and answers as it did on SQLite.
  auto pg_store = pg_.Open({}, clock_);
  ASSERT_TRUE(pg_store.ok()) << pg_store.status().ToString();
  auto sq_store = sqlite_.Open({}, clock_);
  ASSERT_TRUE(sq_store.ok()) << sq_store.status().ToString();
  for (int64_t step : {int64_t{1000}, int64_t{60'000}}) {
    auto a = (*sq_store)->GpuHistory("n1", 1, kT0, kT0 + 700'000, step);
    auto b = (*pg_store)->GpuHistory("n1", 1, kT0, kT0 + 700'000, step);
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_EQ(a->points.size(), b->points.size());
    for (size_t i = 0; i < a->points.size(); ++i) {
      EXPECT_EQ(a->points[i].t_ms, b->points[i].t_ms);
      EXPECT_EQ(a->points[i].avg, b->points[i].avg);
      EXPECT_EQ(a->points[i].max, b->points[i].max);
    }
  }
  // Ids go on after the largest copied one (carol was 3; bob's 2 is not reused).
  int64_t dave = 0;
  ASSERT_TRUE((*pg_store)
                  ->Write([&](Db& db) -> Status {
                    UserRow u;
                    u.username = "dave";
                    u.role = "user";
                    ASSIGN_OR_RETURN(dave, InsertUser(db, u));
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_EQ(dave, 4);
}

TEST_F(MigrateTest, ANonEmptyTargetIsRefusedUnlessOverwriteWhichReplacesItsRows) {
  FillSource();
  ASSERT_TRUE(Migrate().ok());
  auto again = Migrate();
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kConflict);
  EXPECT_NE(again.status().message().find("already holds a store"), std::string::npos)
      << again.status().message();
  EXPECT_NE(again.status().message().find("--overwrite"), std::string::npos);
  {  // a row only the target has goes with --overwrite
    auto dst = pg_.Connect();
    ASSERT_TRUE(dst->Exec("INSERT INTO queues VALUES ('extra', '{}', 1, 1)")
                    .ok());
  }
  auto replaced = Migrate(/*overwrite=*/true);
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  auto src = sqlite_.Connect();
  auto dst = pg_.Connect();
  EXPECT_EQ(Counts(*dst), Counts(*src));
}

TEST_F(MigrateTest, ASourceInUseBadUrlsAndMissingFilesAreRefusedWithNothingWritten) {
  FillSource();
  {
    auto running = sqlite_.Open({}, clock_);  // holds rota.lock, as a server does
    ASSERT_TRUE(running.ok());
    auto r = Migrate();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(r.status().message().find("a rota server is running on"), std::string::npos)
        << r.status().message();
  }
  auto swapped = MigrateStore(MigrateOptions{pg_.url(), sqlite_.url(), false}, 1);
  EXPECT_EQ(swapped.status().code(), StatusCode::kInvalidArgument) << swapped.status().ToString();
  auto missing = MigrateStore(MigrateOptions{"sqlite:" + sqlite_.dir() + "/nope.db", pg_.url(), false}, 1);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();

  const auto t0 = std::chrono::steady_clock::now();
  auto unreachable = MigrateStore(
      MigrateOptions{sqlite_.url(), "postgresql://rota:s3cret@127.0.0.1:1/rota", false}, 1);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(unreachable.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(unreachable.status().message().find("s3cret"), std::string::npos);
  // None of these created so much as the schema in the target.
  auto dst = pg_.Connect();
  ASSERT_TRUE(dst.ok());
  EXPECT_EQ(*SchemaVersion(*dst), 0);
}

TEST_F(MigrateTest, ATargetFromANewerRotaOrThatRefusesWritesIsLeftAsItWas) {
  FillSource();
  {
    auto dst = pg_.Connect();
    ASSERT_TRUE(ApplySchema(*dst, 1).ok());
    ASSERT_TRUE(dst->Exec("INSERT INTO schema_version VALUES (99, 0)").ok());
  }
  auto newer = Migrate(/*overwrite=*/true);
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), StatusCode::kConflict);
  EXPECT_NE(newer.status().message().find("newer rota"), std::string::npos)
      << newer.status().message();
  auto dst = pg_.Connect();
  EXPECT_EQ(*dst->QueryInt("SELECT count(*) FROM users"), 0);
  EXPECT_EQ(*dst->QueryInt("SELECT max(version) FROM schema_version"), 99);
}

TEST_F(MigrateTest, ATargetThatRefusesWritesIsRefusedBeforeAnythingIsWritten) {
  FillSource();
  auto server = testing::SharedPgServer();
  ASSERT_TRUE(server.ok());
  const std::string db_name = pg_.url().substr(pg_.url().rfind('/') + 1);
  auto admin = OpenPostgres((*server)->Url("postgres"), "admin");
  ASSERT_TRUE(admin.ok()) << admin.status().ToString();
  ASSERT_TRUE(admin->Exec("ALTER DATABASE " + db_name + " SET default_transaction_read_only = on").ok());
  auto r = Migrate();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("accepts no writes"), std::string::npos)
      << r.status().message();
  auto dst = pg_.Connect();
  ASSERT_TRUE(dst.ok());
  EXPECT_EQ(*SchemaVersion(*dst), 0);
}

}  // namespace
}  // namespace rota::store
