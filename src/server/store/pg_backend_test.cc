// The PostgreSQL backend of the SQL layer: placeholder rewriting (no server),
// and bindings, results, errors, transactions and reconnection against the
// test server (pg_test_instance.h).
#include "server/store/pg_backend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "server/store/store_test_backend.h"

namespace rota::store {
namespace {

using testing::Backend;
using testing::TestStoreLocation;

TEST(PgPlaceholdersTest, RewritesNumberedParametersOutsideLiteralsAndComments) {
  auto r = RewritePlaceholders(
      "SELECT ?1, '?2 it''s', \"a?3\", x -- ?4\n FROM t /* ?5 */ WHERE y = ?12 AND z = ?1");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->text,
            "SELECT $1, '?2 it''s', \"a?3\", x -- ?4\n FROM t /* ?5 */ WHERE y = $12 AND z = $1");
  EXPECT_EQ(r->max_param, 12);
  ASSERT_EQ(r->used.size(), 13u);
  EXPECT_TRUE(r->used[1]);
  EXPECT_FALSE(r->used[2]);
  EXPECT_TRUE(r->used[12]);

  auto none = RewritePlaceholders("SELECT 1");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->text, "SELECT 1");
  EXPECT_EQ(none->max_param, 0);
}

// Bad inputs: SQLite's anonymous ? and ?0, which have no PostgreSQL form.
TEST(PgPlaceholdersTest, RefusesParametersWithoutANumber) {
  for (const char* sql : {"SELECT ?", "SELECT ?0", "SELECT a FROM t WHERE b = ? AND c = ?1"}) {
    auto r = RewritePlaceholders(sql);
    ASSERT_FALSE(r.ok()) << sql;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("?1, ?2"), std::string::npos) << r.status().message();
  }
}

// Steps `s`: true when it gave a row; an error fails the test, saying what it was.
::testing::AssertionResult Row(Stmt& s) {
  auto row = s.Step();
  if (!row.ok()) return ::testing::AssertionFailure() << row.status().ToString();
  if (!*row) return ::testing::AssertionFailure() << "no row";
  return ::testing::AssertionSuccess();
}

class PgBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ROTA_SKIP_WITHOUT_BACKEND(loc_);
    auto db = loc_.Connect();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_.emplace(std::move(*db));
  }
  Db& db() { return *db_; }

  TestStoreLocation loc_{Backend::kPostgres};
  std::optional<Db> db_;
};

TEST_F(PgBackendTest, BindStepColumnsRoundTrip) {
  ASSERT_TRUE(db().Exec("CREATE TABLE t (a BIGINT, b DOUBLE PRECISION, c TEXT, d BIGINT, "
                        "e BYTEA, f BOOLEAN)")
                  .ok());
  auto ins = db().Prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5, ?6 = 1)");
  ASSERT_TRUE(ins.ok());
  const std::string blob("\x00\x01\xff\x7f\\x", 6);
  ASSERT_TRUE(ins->Bind(1, std::numeric_limits<int64_t>::max())
                  .Bind(2, 0.1)
                  .Bind(3, "x'y \"z\" ?1 \xc3\xa9")
                  .BindNull(4)
                  .BindBlob(5, blob)
                  .Bind(6, int64_t{1})
                  .Run()
                  .ok());
  EXPECT_EQ(db().Changes(), 1);
  ins->Reset();
  std::optional<uint32_t> some = 7, none;
  ASSERT_TRUE(ins->Bind(1, std::numeric_limits<int64_t>::min())
                  .Bind(2, -1e300)
                  .Bind(3, "")
                  .Bind(4, some)
                  .BindBlob(5, "")
                  .Bind(6, int64_t{0})
                  .Run()
                  .ok());
  ins->Reset();
  ASSERT_TRUE(ins->Bind(1, int64_t{0}).Bind(2, std::nan("")).Bind(3, "n").Bind(4, none)
                  .BindNull(5).Bind(6, int64_t{0}).Run().ok());

  auto sel = db().Prepare("SELECT a, b, c, d, e, f FROM t ORDER BY a DESC");
  ASSERT_TRUE(sel.ok());
  auto row = sel->Step();
  ASSERT_TRUE(row.ok() && *row) << row.status().ToString();
  EXPECT_EQ(sel->ColumnCount(), 6);
  EXPECT_EQ(sel->Int(0), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(sel->Double(1), 0.1);  // exactly: doubles go and come back in shortest exact form
  EXPECT_EQ(sel->Text(2), "x'y \"z\" ?1 \xc3\xa9");
  EXPECT_TRUE(sel->IsNull(3));
  EXPECT_EQ(sel->Int(3), 0);
  EXPECT_EQ(sel->Blob(4), blob);
  EXPECT_EQ(sel->Int(5), 1);  // a boolean reads as 1/0
  row = sel->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(sel->Int(0), 0);
  EXPECT_TRUE(std::isnan(sel->Double(1)));
  EXPECT_TRUE(sel->IsNull(4));
  EXPECT_EQ(sel->Blob(4), "");
  row = sel->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(sel->Int(0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(sel->Double(1), -1e300);
  EXPECT_EQ(sel->OptInt(3), 7);
  EXPECT_FALSE(sel->IsNull(4));
  EXPECT_EQ(sel->Blob(4), "");
  EXPECT_EQ(sel->Int(5), 0);
  row = sel->Step();
  ASSERT_TRUE(row.ok());
  EXPECT_FALSE(*row);
  // Done, the statement runs again on the next Step (as SQLite's do).
  row = sel->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(sel->Int(0), std::numeric_limits<int64_t>::max());
}

// SQL written for SQLite: parameters compared with integer literals get 64-bit
// values, parameters the SQL does not name may be bound, RETURNING gives ids.
TEST_F(PgBackendTest, SqliteStyleParametersWork) {
  ASSERT_TRUE(db().Exec("CREATE TABLE t (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
                        "ms BIGINT, name TEXT)")
                  .ok());
  auto ins = db().Prepare("INSERT INTO t (ms, name) VALUES (?1, ?2) RETURNING id");
  ASSERT_TRUE(ins.ok());
  EXPECT_EQ(*ins->Bind(1, int64_t{1'700'000'000'000}).Bind(2, "a").RunReturningId(), 1);
  ins->Reset();
  EXPECT_EQ(*ins->Bind(1, int64_t{1'700'000'000'001}).Bind(2, "b").RunReturningId(), 2);
  // ?1 = 0 would make ?1 a 32-bit integer if the server guessed; ?2 is bound but unused.
  auto q = db().Prepare("SELECT count(*) FROM t WHERE (?1 = 0 OR ms >= ?1) AND (?3 = '' OR name = ?3)");
  ASSERT_TRUE(q.ok());
  q->Bind(1, int64_t{1'700'000'000'001}).Bind(2, "unused").Bind(3, "");
  ASSERT_TRUE(Row(*q));
  EXPECT_EQ(q->Int(0), 1);
  q->Reset();
  q->Bind(1, int64_t{0}).BindNull(2).Bind(3, "a");
  ASSERT_TRUE(Row(*q));
  EXPECT_EQ(q->Int(0), 1);
  q->Reset();
  // A NULL where PostgreSQL cannot infer the type from the SQL (IS NULL comes first): a
  // std::optional binds it with its type; a bare BindNull leaves it to the server.
  auto n = db().Prepare("SELECT count(*) FROM t WHERE (?1 IS NULL OR ms < ?1)");
  ASSERT_TRUE(n.ok());
  n->Bind(1, std::optional<int64_t>());
  ASSERT_TRUE(Row(*n));
  EXPECT_EQ(n->Int(0), 2);
  n->Reset();
  n->Bind(1, int64_t{1'700'000'000'001});
  ASSERT_TRUE(Row(*n));
  EXPECT_EQ(n->Int(0), 1);
  n->Reset();
  // Many statements built on the fly: the prepared set is bounded and starts over.
  for (int i = 0; i < 600; ++i) {
    auto s = db().Prepare("SELECT " + std::to_string(i) + " + ?1");
    ASSERT_TRUE(s.ok());
    s->Bind(1, int64_t{1});
    ASSERT_TRUE(Row(*s));
    ASSERT_EQ(s->Int(0), i + 1);
  }
}

// Bad inputs: invalid SQL, a unique violation, an unreachable server with a
// password in its URL.
TEST_F(PgBackendTest, ErrorsNameTheDatabaseAndMapCodes) {
  auto bad = db().Prepare("SELEC nonsense");
  ASSERT_TRUE(bad.ok());  // prepared on the server at its first run
  auto run = bad->Step();
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), StatusCode::kIoError);
  EXPECT_NE(run.status().message().find(loc_.url()), std::string::npos) << run.status().message();
  EXPECT_NE(run.status().message().find("syntax error"), std::string::npos);

  ASSERT_TRUE(db().Exec("CREATE TABLE u (k BIGINT PRIMARY KEY)").ok());
  ASSERT_TRUE(db().Exec("INSERT INTO u VALUES (1)").ok());
  Status dup = db().Exec("INSERT INTO u VALUES (1)");
  EXPECT_EQ(dup.code(), StatusCode::kConflict) << dup.ToString();
  EXPECT_NE(dup.message().find("duplicate key"), std::string::npos) << dup.message();
  auto ins = db().Prepare("INSERT INTO u VALUES (?1)");
  ASSERT_TRUE(ins.ok());
  EXPECT_EQ(ins->Bind(1, int64_t{1}).Run().code(), StatusCode::kConflict);

  auto far = OpenPostgres("postgresql://rota:s3cret@127.0.0.1:1/x", "postgresql://rota@127.0.0.1:1/x");
  ASSERT_FALSE(far.ok());
  EXPECT_EQ(far.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(far.status().message().find("127.0.0.1"), std::string::npos) << far.status().message();
  EXPECT_EQ(far.status().message().find("s3cret"), std::string::npos) << far.status().message();
}

TEST_F(PgBackendTest, TransactionRollsBackUnlessCommittedAndAFailedOneDoesNotCommit) {
  ASSERT_TRUE(db().Exec("CREATE TABLE t (x BIGINT UNIQUE)").ok());
  {
    auto tx = Transaction::Begin(db());
    ASSERT_TRUE(tx.ok());
    EXPECT_TRUE(db().InTransaction());
    ASSERT_TRUE(db().Exec("INSERT INTO t VALUES (1)").ok());
  }
  EXPECT_FALSE(db().InTransaction());
  EXPECT_EQ(*db().QueryInt("SELECT count(*) FROM t"), 0);
  {
    auto tx = Transaction::Begin(db());
    ASSERT_TRUE(tx.ok());
    ASSERT_TRUE(db().Exec("INSERT INTO t VALUES (2)").ok());
    ASSERT_TRUE(tx->Commit().ok());
  }
  EXPECT_EQ(*db().QueryInt("SELECT count(*) FROM t"), 1);
  // A statement failed and nothing rolled back to a savepoint: PostgreSQL's
  // COMMIT rolls back; that is an error, not a silent success.
  {
    auto tx = Transaction::Begin(db());
    ASSERT_TRUE(tx.ok());
    ASSERT_TRUE(db().Exec("INSERT INTO t VALUES (3)").ok());
    EXPECT_FALSE(db().Exec("INSERT INTO t VALUES (2)").ok());
    Status st = tx->Commit();
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("rolled back"), std::string::npos) << st.message();
  }
  EXPECT_EQ(*db().QueryInt("SELECT count(*) FROM t"), 1);
  // Savepoints, as the writer uses them: a failed step rolls back alone.
  auto tx = Transaction::Begin(db());
  ASSERT_TRUE(tx.ok());
  ASSERT_TRUE(db().Exec("SAVEPOINT job").ok());
  EXPECT_FALSE(db().Exec("INSERT INTO t VALUES (2)").ok());
  ASSERT_TRUE(db().Exec("ROLLBACK TO job").ok());
  ASSERT_TRUE(db().Exec("RELEASE job").ok());
  ASSERT_TRUE(db().Exec("INSERT INTO t VALUES (4)").ok());
  ASSERT_TRUE(tx->Commit().ok());
  EXPECT_EQ(*db().QueryInt("SELECT count(*) FROM t"), 2);
}

// The server ends the connection (a restart, a failover): outside a transaction
// the next statement reconnects; inside one, statements fail until ROLLBACK.
TEST_F(PgBackendTest, ALostConnectionIsRestoredOutsideATransaction) {
  auto other = loc_.Connect();
  ASSERT_TRUE(other.ok());
  auto kill = [&] {
    const int64_t pid = *db().QueryInt("SELECT pg_backend_pid()");
    ASSERT_TRUE(other->Exec("SELECT pg_terminate_backend(" + std::to_string(pid) + ")").ok());
  };
  ASSERT_TRUE(db().Exec("CREATE TABLE t (x BIGINT)").ok());
  auto ins = db().Prepare("INSERT INTO t VALUES (?1)");
  ASSERT_TRUE(ins.ok());
  ASSERT_TRUE(ins->Bind(1, int64_t{1}).Run().ok());
  kill();
  // The first statement after the kill finds out (libpq cannot know before).
  ins->Reset();
  Status first = ins->Bind(1, int64_t{2}).Run();
  if (!first.ok()) {
    EXPECT_EQ(first.code(), StatusCode::kUnavailable) << first.ToString();
    ins->Reset();
    ASSERT_TRUE(ins->Bind(1, int64_t{2}).Run().ok());  // reconnected, prepared again
  }
  EXPECT_EQ(*db().QueryInt("SELECT count(*) FROM t"), 2);

  ASSERT_TRUE(db().Begin().ok());
  ASSERT_TRUE(db().Exec("INSERT INTO t VALUES (3)").ok());
  kill();
  EXPECT_FALSE(db().Exec("INSERT INTO t VALUES (4)").ok());
  Status again = db().Exec("INSERT INTO t VALUES (5)");
  EXPECT_EQ(again.code(), StatusCode::kUnavailable) << again.ToString();
  EXPECT_TRUE(db().InTransaction());
  ASSERT_TRUE(db().Exec("ROLLBACK").ok());
  EXPECT_FALSE(db().InTransaction());
  EXPECT_EQ(*db().QueryInt("SELECT count(*) FROM t"), 2);
}

TEST_F(PgBackendTest, ReadOnlySessionsRefuseWrites) {
  ASSERT_TRUE(db().Exec("CREATE TABLE t (x BIGINT)").ok());
  PgConnectOptions ro;
  ro.read_only = true;
  auto r = OpenPostgres(loc_.url(), loc_.url(), ro);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r->QueryInt("SELECT count(*) FROM t"), 0);
  Status st = r->Exec("INSERT INTO t VALUES (1)");
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("read-only"), std::string::npos) << st.message();
}

// A URL that asks for the read-write server (target_session_attrs=read-write, as one
// naming a primary and its standbys does) still gives a reading connection, read-only,
// and a reconnected one is read-only again.
TEST_F(PgBackendTest, ReadOnlySessionsOnAUrlAskingForTheReadWriteServer) {
  ASSERT_TRUE(db().Exec("CREATE TABLE t (x BIGINT)").ok());
  PgConnectOptions ro;
  ro.read_only = true;
  const std::string url = loc_.url() + (loc_.url().find('?') == std::string::npos ? "?" : "&") +
                          "target_session_attrs=read-write";
  auto r = OpenPostgres(url, url, ro);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->Exec("INSERT INTO t VALUES (1)").code(), StatusCode::kUnavailable);
  const int64_t pid = *r->QueryInt("SELECT pg_backend_pid()");
  ASSERT_TRUE(db().Exec("SELECT pg_terminate_backend(" + std::to_string(pid) + ")").ok());
  (void)r->QueryInt("SELECT 1");  // finds the connection gone (and may reconnect)
  auto again = r->QueryInt("SELECT pg_backend_pid()");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_NE(*again, pid);
  Status st = r->Exec("INSERT INTO t VALUES (2)");
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("read-only"), std::string::npos) << st.message();
  EXPECT_EQ(*db().QueryInt("SELECT count(*) FROM t"), 0);
}

}  // namespace
}  // namespace rota::store
