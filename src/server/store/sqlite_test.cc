#include "server/store/sqlite.h"

#include <gtest/gtest.h>

#include "server/store/store_test_util.h"

namespace rota::store {
namespace {

using testing::TempDir;

Db OpenDb(const std::string& path) {
  auto db = Db::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  return std::move(db).value();
}

TEST(SqliteTest, BindStepColumnsRoundTrip) {
  TempDir dir;
  Db db = OpenDb(dir.path() + "/t.db");
  ASSERT_TRUE(db.Exec("CREATE TABLE t (a INTEGER, b REAL, c TEXT, d INTEGER)").ok());
  auto ins = db.Prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4)");
  ASSERT_TRUE(ins.ok());
  ASSERT_TRUE(ins->Bind(1, int64_t{1} << 40).Bind(2, 2.5).Bind(3, "x'y").BindNull(4).Run().ok());
  ins->Reset();
  std::optional<uint32_t> some = 7, none;
  ASSERT_TRUE(ins->Bind(1, some).Bind(2, 0.0).Bind(3, "").Bind(4, none).Run().ok());
  EXPECT_EQ(db.Changes(), 1);

  auto sel = db.Prepare("SELECT a, b, c, d FROM t ORDER BY a DESC");
  ASSERT_TRUE(sel.ok());
  auto row = sel->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(sel->Int(0), int64_t{1} << 40);
  EXPECT_DOUBLE_EQ(sel->Double(1), 2.5);
  EXPECT_EQ(sel->Text(2), "x'y");
  EXPECT_TRUE(sel->IsNull(3));
  EXPECT_EQ(sel->OptInt(3), std::nullopt);
  row = sel->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(sel->OptInt(0), 7);
  EXPECT_EQ(sel->OptInt(3), std::nullopt);
  row = sel->Step();
  ASSERT_TRUE(row.ok());
  EXPECT_FALSE(*row);
}

// Bad inputs: invalid SQL, a constraint violation, a bind index out of range,
// a file in a directory that does not exist.
TEST(SqliteTest, ErrorsNameTheFileAndTheProblem) {
  TempDir dir;
  const std::string path = dir.path() + "/t.db";
  Db db = OpenDb(path);
  auto bad = db.Prepare("SELEC nonsense");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kIoError);
  EXPECT_NE(bad.status().message().find(path), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("syntax error"), std::string::npos);

  ASSERT_TRUE(db.Exec("CREATE TABLE u (k INTEGER PRIMARY KEY)").ok());
  ASSERT_TRUE(db.Exec("INSERT INTO u VALUES (1)").ok());
  Status dup = db.Exec("INSERT INTO u VALUES (1)");
  EXPECT_EQ(dup.code(), StatusCode::kConflict) << dup.ToString();

  auto s = db.Prepare("SELECT ?1");
  ASSERT_TRUE(s.ok());
  auto step = s->Bind(5, int64_t{1}).Step();
  ASSERT_FALSE(step.ok());
  EXPECT_NE(step.status().message().find("bind"), std::string::npos);

  auto missing =
      Db::Open(dir.path() + "/no/such/dir/x.db", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot open " + dir.path() + "/no/such/dir/x.db"),
            std::string::npos)
      << missing.status().message();
}

TEST(SqliteTest, TransactionRollsBackUnlessCommitted) {
  TempDir dir;
  Db db = OpenDb(dir.path() + "/t.db");
  ASSERT_TRUE(db.Exec("CREATE TABLE t (a INTEGER)").ok());
  {
    auto tx = Transaction::Begin(db);
    ASSERT_TRUE(tx.ok());
    ASSERT_TRUE(db.Exec("INSERT INTO t VALUES (1)").ok());
  }
  EXPECT_EQ(*db.QueryInt("SELECT count(*) FROM t"), 0);
  {
    auto tx = Transaction::Begin(db);
    ASSERT_TRUE(tx.ok());
    ASSERT_TRUE(db.Exec("INSERT INTO t VALUES (2)").ok());
    ASSERT_TRUE(tx->Commit().ok());
  }
  EXPECT_EQ(*db.QueryInt("SELECT count(*) FROM t"), 1);
  auto none = db.QueryInt("SELECT a FROM t WHERE a = 99");
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace rota::store
