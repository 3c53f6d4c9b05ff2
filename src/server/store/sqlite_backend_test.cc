#include "server/store/sqlite_backend.h"

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

// Prepared statements of the connection (cached idle ones included).
int StatementCount(const Db& db) {
  int n = 0;
  for (sqlite3_stmt* s = sqlite3_next_stmt(db.raw(), nullptr); s; s = sqlite3_next_stmt(db.raw(), s)) ++n;
  return n;
}

TEST(SqliteTest, StatementsAreCachedAndComeBackClean) {
  TempDir dir;
  Db db = OpenDb(dir.path() + "/t.db");
  ASSERT_TRUE(db.Exec("CREATE TABLE t (a INTEGER)").ok());
  const int before = StatementCount(db);  // the CREATE, cached too
  for (int i = 0; i < 10; ++i) {
    auto ins = db.Prepare("INSERT INTO t VALUES (?1)");
    ASSERT_TRUE(ins.ok());
    ASSERT_TRUE(ins->Bind(1, int64_t{i}).Run().ok());
  }
  EXPECT_EQ(StatementCount(db), before + 1);  // one statement, reused 10 times
  {
    // Dropped in the middle of its rows, with a binding set.
    auto sel = db.Prepare("SELECT a FROM t WHERE a >= ?1 ORDER BY a");
    ASSERT_TRUE(sel.ok());
    sel->Bind(1, int64_t{5});
    auto row = sel->Step();
    ASSERT_TRUE(row.ok() && *row);
    EXPECT_EQ(sel->Int(0), 5);
  }
  {
    // Comes back from the start, its binding cleared (NULL: no row matches).
    auto sel = db.Prepare("SELECT a FROM t WHERE a >= ?1 ORDER BY a");
    ASSERT_TRUE(sel.ok());
    auto row = sel->Step();
    ASSERT_TRUE(row.ok());
    EXPECT_FALSE(*row);
    // The same SQL twice at once: two statements.
    auto again = db.Prepare("SELECT a FROM t WHERE a >= ?1 ORDER BY a");
    ASSERT_TRUE(again.ok());
    again->Bind(1, int64_t{9});
    row = again->Step();
    ASSERT_TRUE(row.ok() && *row);
    EXPECT_EQ(again->Int(0), 9);
  }
  EXPECT_EQ(StatementCount(db), before + 3);
  // A schema change: the cached statement is prepared again by SQLite.
  { ASSERT_TRUE(db.Prepare("SELECT * FROM t").ok()); }
  ASSERT_TRUE(db.Exec("ALTER TABLE t ADD COLUMN b TEXT DEFAULT 'x'").ok());
  auto star = db.Prepare("SELECT * FROM t");
  ASSERT_TRUE(star.ok());
  auto row = star->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(star->ColumnCount(), 2);
  EXPECT_EQ(star->Text(1), "x");
}

TEST(SqliteTest, StatementCacheIsBounded) {
  TempDir dir;
  Db db = OpenDb(dir.path() + "/t.db");
  for (size_t i = 0; i < 3 * Db::kMaxCachedStatements; ++i) {
    auto q = db.Prepare("SELECT " + std::to_string(i));
    ASSERT_TRUE(q.ok());
    auto row = q->Step();
    ASSERT_TRUE(row.ok() && *row);
    EXPECT_EQ(q->Int(0), static_cast<int64_t>(i));
  }
  EXPECT_LE(StatementCount(db), static_cast<int>(Db::kMaxCachedStatements));
  // Single statements run by Exec go through the cache too; several do not.
  ASSERT_TRUE(db.Exec("CREATE TABLE u (a INTEGER); CREATE TABLE v (a INTEGER)").ok());
  ASSERT_TRUE(db.Exec("BEGIN").ok());
  ASSERT_TRUE(db.Exec("INSERT INTO u VALUES (1)").ok());
  ASSERT_TRUE(db.Exec("COMMIT").ok());
  auto count = db.QueryInt("SELECT count(*) FROM u");
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 1);
  EXPECT_FALSE(db.Exec("COMMIT").ok());  // no transaction: an error, not a crash
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
