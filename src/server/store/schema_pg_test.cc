// The schema on PostgreSQL (schema_pg.cc): the baseline, versions, refusals,
// and that it matches what SQLite's migrations build, table by table.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <thread>
#include <vector>

#include "server/store/schema.h"
#include "server/store/sqlite_backend.h"
#include "server/store/store_test_backend.h"
#include "server/store/store_test_util.h"

namespace rota::store {
namespace {

using testing::Backend;
using testing::TestStoreLocation;

// A schema as both backends can describe it. Types in PostgreSQL's names.
struct Column {
  std::string name, type, dflt;
  bool not_null = false;
  bool operator==(const Column&) const = default;
};
struct Schema {
  std::map<std::string, std::vector<Column>> tables;        // columns in order
  std::map<std::string, std::vector<std::string>> primary;  // table -> key columns, in order
  std::set<std::string> unique;                             // "table(col,col)"
  std::set<std::string> indexes;                            // CREATE INDEX names
};

Result<std::vector<std::string>> Texts(Db& db, const std::string& sql, const std::string& arg = "") {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(sql));
  if (!arg.empty()) s.Bind(1, arg);
  std::vector<std::string> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(s.Text(0));
  }
  return out;
}

std::string SqliteType(std::string t) {
  if (t == "INTEGER") return "bigint";
  if (t == "REAL") return "double precision";
  if (t == "TEXT") return "text";
  if (t == "BLOB") return "bytea";
  return "?" + t;
}

Result<Schema> DescribeSqlite(Db& db) {
  Schema out;
  ASSIGN_OR_RETURN(auto tables, Texts(db, "SELECT name FROM sqlite_schema WHERE type = 'table' "
                                          "AND name NOT LIKE 'sqlite_%'"));
  for (const std::string& t : tables) {
    ASSIGN_OR_RETURN(Stmt c, db.Prepare("SELECT name, type, \"notnull\", coalesce(dflt_value, ''), "
                                        "pk FROM pragma_table_info(?1) ORDER BY cid"));
    c.Bind(1, t);
    std::map<int64_t, std::string> pk;
    while (true) {
      ASSIGN_OR_RETURN(bool row, c.Step());
      if (!row) break;
      const bool in_pk = c.Int(4) > 0;
      out.tables[t].push_back({c.Text(0), SqliteType(c.Text(1)), c.Text(3), c.Int(2) != 0 || in_pk});
      if (in_pk) pk[c.Int(4)] = c.Text(0);
    }
    for (const auto& [i, col] : pk) out.primary[t].push_back(col);
    ASSIGN_OR_RETURN(auto uniques, Texts(db, "SELECT name FROM pragma_index_list(?1) WHERE "
                                             "origin = 'u'", t));
    for (const std::string& idx : uniques) {
      ASSIGN_OR_RETURN(auto cols, Texts(db, "SELECT name FROM pragma_index_info(?1) ORDER BY seqno",
                                        idx));
      std::string key = t + "(";
      for (size_t i = 0; i < cols.size(); ++i) key += (i ? "," : "") + cols[i];
      out.unique.insert(key + ")");
    }
  }
  ASSIGN_OR_RETURN(auto idx, Texts(db, "SELECT name FROM sqlite_schema WHERE type = 'index' AND "
                                       "sql IS NOT NULL"));
  out.indexes.insert(idx.begin(), idx.end());
  return out;
}

Result<Schema> DescribePostgres(Db& db) {
  Schema out;
  ASSIGN_OR_RETURN(auto tables, Texts(db, "SELECT table_name FROM information_schema.tables WHERE "
                                          "table_schema = current_schema() AND "
                                          "table_type = 'BASE TABLE'"));
  for (const std::string& t : tables) {
    ASSIGN_OR_RETURN(Stmt c, db.Prepare("SELECT column_name, data_type, is_nullable = 'NO', "
                                        "coalesce(column_default, '') FROM information_schema.columns "
                                        "WHERE table_schema = current_schema() AND table_name = ?1 "
                                        "ORDER BY ordinal_position"));
    c.Bind(1, t);
    while (true) {
      ASSIGN_OR_RETURN(bool row, c.Step());
      if (!row) break;
      std::string dflt = c.Text(3);
      if (const size_t cast = dflt.find("::"); cast != std::string::npos) dflt.resize(cast);
      out.tables[t].push_back({c.Text(0), c.Text(1), dflt, c.Int(2) != 0});
    }
    const std::string keys =
        "SELECT string_agg(a.attname, ',' ORDER BY k.i) FROM pg_constraint c "
        "CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, i) "
        "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum "
        "WHERE c.conrelid = (?1)::regclass AND c.contype = ";
    ASSIGN_OR_RETURN(auto pk, Texts(db, keys + "'p' GROUP BY c.oid", t));
    for (const std::string& cols : pk) {
      size_t start = 0;
      while (true) {
        const size_t comma = cols.find(',', start);
        out.primary[t].push_back(cols.substr(start, comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    }
    ASSIGN_OR_RETURN(auto uniques, Texts(db, keys + "'u' GROUP BY c.oid", t));
    for (const std::string& cols : uniques) out.unique.insert(t + "(" + cols + ")");
  }
  ASSIGN_OR_RETURN(auto idx, Texts(db, "SELECT indexname FROM pg_indexes i WHERE schemaname = "
                                       "current_schema() AND NOT EXISTS (SELECT 1 FROM "
                                       "pg_constraint c WHERE c.conname = i.indexname)"));
  out.indexes.insert(idx.begin(), idx.end());
  return out;
}

TEST(SchemaMigrationsTest, EveryMigrationAfterTheBaselineHasAPostgresForm) {
  ASSERT_GE(static_cast<int64_t>(Migrations().size()), kPgBaselineVersion);
  for (size_t v = static_cast<size_t>(kPgBaselineVersion) + 1; v <= Migrations().size(); ++v) {
    EXPECT_NE(Migrations()[v - 1].pg_sql, nullptr) << "migration " << v;
  }
}

class SchemaPgTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ROTA_SKIP_WITHOUT_BACKEND(pg_);
    auto db = pg_.Connect();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_.emplace(std::move(*db));
  }
  Db& db() { return *db_; }
  int64_t Tables() {
    return *db().QueryInt("SELECT count(*) FROM information_schema.tables WHERE "
                          "table_schema = current_schema()");
  }

  TestStoreLocation pg_{Backend::kPostgres};
  std::optional<Db> db_;
};

// The test the issue asks for: the two schemas have the same tables and
// columns (in order, with types, NOT NULL and defaults), keys and indexes.
TEST_F(SchemaPgTest, BothBackendsHaveTheSameTablesColumnsKeysAndIndexes) {
  ASSERT_TRUE(ApplySchema(db(), 1).ok());
  TestStoreLocation lite(Backend::kSqlite);
  auto sdb = lite.Connect();
  ASSERT_TRUE(sdb.ok());
  ASSERT_TRUE(ApplySchema(*sdb, 1).ok());
  auto s = DescribeSqlite(*sdb);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto p = DescribePostgres(db());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_GT(s->tables.size(), 30u);
  std::set<std::string> s_names, p_names;
  for (const auto& [t, cols] : s->tables) s_names.insert(t);
  for (const auto& [t, cols] : p->tables) p_names.insert(t);
  EXPECT_EQ(s_names, p_names);
  for (const auto& [t, cols] : s->tables) {
    if (!p->tables.count(t)) continue;
    const auto& pcols = p->tables.at(t);
    ASSERT_EQ(cols.size(), pcols.size()) << t;
    for (size_t i = 0; i < cols.size(); ++i) {
      EXPECT_EQ(cols[i].name, pcols[i].name) << t;
      EXPECT_EQ(cols[i].type, pcols[i].type) << t << "." << cols[i].name;
      EXPECT_EQ(cols[i].not_null, pcols[i].not_null) << t << "." << cols[i].name;
      EXPECT_EQ(cols[i].dflt, pcols[i].dflt) << t << "." << cols[i].name;
    }
    EXPECT_EQ(s->primary[t], p->primary[t]) << t;
  }
  EXPECT_EQ(s->unique, p->unique);
  EXPECT_EQ(s->indexes, p->indexes);
}

TEST_F(SchemaPgTest, BaselineCreatesCurrentVersionOnceAndIsIdempotent) {
  ASSERT_TRUE(ApplySchema(db(), 1000).ok());
  EXPECT_EQ(*SchemaVersion(db()), kSchemaVersion);
  EXPECT_EQ(*db().QueryInt("SELECT applied_ms FROM schema_version WHERE version = " +
                           std::to_string(kPgBaselineVersion)),
            1000);
  const int64_t tables = Tables();
  ASSERT_TRUE(ApplySchema(db(), 2000).ok());
  EXPECT_EQ(Tables(), tables);
  EXPECT_EQ(*db().QueryInt("SELECT count(*) FROM schema_version"),
            kSchemaVersion - kPgBaselineVersion + 1);
  // A migration after the baseline runs in its PostgreSQL form.
  std::vector<Migration> next(Migrations().begin(), Migrations().end());
  next.push_back({"CREATE TABLE extra (x INTEGER)", "CREATE TABLE extra (x BIGINT)"});
  ASSERT_TRUE(ApplySchema(db(), 3, next).ok());
  EXPECT_EQ(*SchemaVersion(db()), kSchemaVersion + 1);
  EXPECT_EQ(*db().QueryInt("SELECT count(*) FROM extra"), 0);
}

// Servers starting together on a new database: one creates it, the other
// finds it created.
TEST_F(SchemaPgTest, ConcurrentOpensOfANewDatabaseTakeTurns) {
  auto other = pg_.Connect();
  ASSERT_TRUE(other.ok());
  Status a, b;
  std::thread t([&] { b = ApplySchema(*other, 1); });
  a = ApplySchema(db(), 1);
  t.join();
  EXPECT_TRUE(a.ok()) << a.ToString();
  EXPECT_TRUE(b.ok()) << b.ToString();
  EXPECT_EQ(*SchemaVersion(db()), kSchemaVersion);
}

// Bad input: a migration whose second statement fails.
TEST_F(SchemaPgTest, FailedMigrationLeavesOldVersionAndNoPartialChanges) {
  ASSERT_TRUE(ApplySchema(db(), 1).ok());
  std::vector<Migration> broken(Migrations().begin(), Migrations().end());
  broken.push_back({"", "CREATE TABLE half (x BIGINT); CREATE TABLE oops ("});
  Status st = ApplySchema(db(), 2, broken);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("schema migration to version " + std::to_string(kSchemaVersion + 1)),
            std::string::npos)
      << st.message();
  EXPECT_EQ(*SchemaVersion(db()), kSchemaVersion);
  EXPECT_EQ(*db().QueryInt("SELECT count(*) FROM information_schema.tables WHERE "
                           "table_name = 'half'"),
            0);
}

// Bad input: a database written by a newer rota.
TEST_F(SchemaPgTest, RefusesNewerVersion) {
  ASSERT_TRUE(ApplySchema(db(), 1).ok());
  const std::string newer = std::to_string(kSchemaVersion + 1);
  ASSERT_TRUE(db().Exec("INSERT INTO schema_version VALUES (" + newer + ", 5)").ok());
  Status st = ApplySchema(db(), 2);
  EXPECT_EQ(st.code(), StatusCode::kConflict);
  EXPECT_NE(st.message().find(pg_.url() + " has schema version " + newer), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("the database was not changed"), std::string::npos);
  EXPECT_EQ(*SchemaVersion(db()), kSchemaVersion + 1);
}

// Bad inputs: a database with tables of another program; one whose
// schema_version is not a rota store's.
TEST_F(SchemaPgTest, RefusesDatabasesOfOtherPrograms) {
  ASSERT_TRUE(db().Exec("CREATE TABLE customers (id BIGINT)").ok());
  Status st = ApplySchema(db(), 1);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("not a rota store"), std::string::npos) << st.message();
  EXPECT_EQ(Tables(), 1);
  ASSERT_TRUE(db().Exec("DROP TABLE customers; CREATE TABLE schema_version (version BIGINT, "
                        "applied_ms BIGINT); INSERT INTO schema_version VALUES (3, 0)")
                  .ok());
  st = ApplySchema(db(), 1);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("not a rota store"), std::string::npos) << st.message();
}

// An extension's views in the schema (pg_stat_statements, as pg_auto_failover
// installs it) do not make the database another program's.
TEST_F(SchemaPgTest, ExtensionsViewsInTheSchemaAreNotAnotherProgramsTables) {
  Status ext = db().Exec("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  if (!ext.ok()) GTEST_SKIP() << "pg_stat_statements is not available: " << ext.ToString();
  ASSERT_GT(Tables(), 0);  // its views
  ASSERT_TRUE(ApplySchema(db(), 1).ok());
  EXPECT_EQ(*SchemaVersion(db()), kSchemaVersion);
}

}  // namespace
}  // namespace rota::store
