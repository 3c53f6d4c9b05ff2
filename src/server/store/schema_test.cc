#include "server/store/schema.h"

#include <gtest/gtest.h>

#include <vector>

#include "server/store/sqlite_backend.h"
#include "server/store/ssh_nodes.h"
#include "server/store/store_test_util.h"

namespace rota::store {
namespace {

using testing::TempDir;

class SchemaTest : public ::testing::Test {
 protected:
  Db Open() {
    auto db = Db::Open(dir_.path() + "/rota.db", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return std::move(db).value();
  }
  TempDir dir_;
};

TEST_F(SchemaTest, CreatesCurrentVersionOnceAndIsIdempotent) {
  Db db = Open();
  ASSERT_TRUE(ApplySchema(db, 1000).ok());
  EXPECT_EQ(*SchemaVersion(db), kSchemaVersion);
  EXPECT_EQ(*db.QueryInt("PRAGMA application_id"), kApplicationId);
  EXPECT_EQ(*db.QueryInt("SELECT applied_ms FROM schema_version WHERE version = 1"), 1000);
  ASSERT_TRUE(ApplySchema(db, 2000).ok());
  EXPECT_EQ(*db.QueryInt("SELECT count(*) FROM schema_version"), kSchemaVersion);
  for (const char* table :
       {"nodes", "gpus", "gpu_samples", "node_gpu_samples", "node_samples", "gpu_minutes", "node_minutes"}) {
    EXPECT_EQ(*db.QueryInt(std::string("SELECT count(*) FROM sqlite_schema WHERE name = '") +
                           table + "'"),
              1)
        << table;
  }
}

TEST_F(SchemaTest, UpgradesStepByStep) {
  Db db = Open();
  // A version-1 store (as the first release wrote it) upgrades to the current version.
  std::vector<Migration> v1(Migrations().begin(), Migrations().begin() + 1);
  ASSERT_TRUE(ApplySchema(db, 1, v1).ok());
  EXPECT_EQ(*SchemaVersion(db), 1);
  std::vector<Migration> all(Migrations().begin(), Migrations().end());
  ASSERT_TRUE(ApplySchema(db, 2, all).ok());
  EXPECT_EQ(*SchemaVersion(db), kSchemaVersion);
  EXPECT_EQ(*db.QueryInt("SELECT count(*) FROM reservations"), 0);
  auto next = all;
  next.push_back({"CREATE TABLE extra (x INTEGER)"});
  ASSERT_TRUE(ApplySchema(db, 3, next).ok());
  EXPECT_EQ(*SchemaVersion(db), kSchemaVersion + 1);
  EXPECT_EQ(*db.QueryInt("SELECT count(*) FROM extra"), 0);
}

// A version-8 store with usage rows gains the CPU energy column (0 in old rows) and
// the CPU meters table.
TEST_F(SchemaTest, Version9AddsCpuEnergyToOldUsageRows) {
  Db db = Open();
  std::vector<Migration> v8(Migrations().begin(), Migrations().begin() + 8);
  ASSERT_TRUE(ApplySchema(db, 1, v8).ok());
  ASSERT_TRUE(db.Exec("INSERT INTO usage_hourly (bucket_ms, node, job_id, user, grp, reservation_id, "
                      "gpu_ms, busy_ms, util_ms, energy_mj, counter_mj, estimated_mj, unmeasured_ms) "
                      "VALUES (0, 'n1', 7, 'alice', '', 0, 1000, 1000, 500, 40, 40, 0, 0)")
                  .ok());
  ASSERT_TRUE(ApplySchema(db, 2).ok());
  EXPECT_EQ(*SchemaVersion(db), kSchemaVersion);  // and the versions after it
  EXPECT_EQ(*db.QueryInt("SELECT count(*) FROM usage_hourly WHERE cpu_mj = 0 AND energy_mj = 40"), 1);
  EXPECT_EQ(*db.QueryInt("SELECT count(*) FROM cpu_meters"), 0);
}

// A version-15 store's ssh nodes were learnt on first contact: after version 16 they
// are there, unpinned, until an admin pins them.
TEST_F(SchemaTest, Version16KeepsSshNodesDeclaredBeforeAsUnpinned) {
  Db db = Open();
  std::vector<Migration> v15(Migrations().begin(), Migrations().begin() + 15);
  ASSERT_TRUE(ApplySchema(db, 1, v15).ok());
  ASSERT_TRUE(db.Exec("INSERT INTO ssh_nodes (name, url, gpus, gpu_model, labels_json, created_ms) "
                      "VALUES ('old', 'ssh://root@h:22', 2, 'T', '{}', 5)")
                  .ok());
  ASSERT_TRUE(ApplySchema(db, 2).ok());
  auto rows = LoadSshNodes(db);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].url, "ssh://root@h:22");
  EXPECT_EQ((*rows)[0].host_key, "");
  EXPECT_EQ((*rows)[0].host_key_source, "");

  SshNodeRow pinned = (*rows)[0];
  pinned.host_key = "ssh-ed25519 AAAA";
  pinned.host_key_source = "scanned";
  pinned.host_key_ms = 9;
  ASSERT_TRUE(UpdateSshNodeHostKey(db, pinned).ok());
  SshNodeRow fresh{"new", "ssh://u@h2:22", 0, "", "{}", 6, "ssh-rsa BBBB", "given", 6};
  ASSERT_TRUE(InsertSshNode(db, fresh).ok());
  rows = LoadSshNodes(db);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].host_key, "ssh-rsa BBBB");  // "new" sorts first
  EXPECT_EQ((*rows)[0].host_key_source, "given");
  EXPECT_EQ((*rows)[1].host_key, "ssh-ed25519 AAAA");
  EXPECT_EQ((*rows)[1].host_key_source, "scanned");
  EXPECT_EQ((*rows)[1].host_key_ms, 9);
  pinned.name = "nope";
  EXPECT_EQ(UpdateSshNodeHostKey(db, pinned).code(), StatusCode::kNotFound);
}

// Bad input: a migration whose second statement fails.
TEST_F(SchemaTest, FailedMigrationLeavesOldVersionAndNoPartialChanges) {
  Db db = Open();
  ASSERT_TRUE(ApplySchema(db, 1).ok());
  std::vector<Migration> broken(Migrations().begin(), Migrations().end());
  broken.push_back({"CREATE TABLE half (x INTEGER); CREATE TABLE oops ("});
  Status st = ApplySchema(db, 2, broken);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("schema migration to version " + std::to_string(kSchemaVersion + 1)),
            std::string::npos)
      << st.message();
  EXPECT_EQ(*SchemaVersion(db), kSchemaVersion);
  EXPECT_EQ(*db.QueryInt("SELECT count(*) FROM sqlite_schema WHERE name = 'half'"), 0);
}

// Bad input: a database written by a newer rota.
TEST_F(SchemaTest, RefusesNewerVersion) {
  Db db = Open();
  ASSERT_TRUE(ApplySchema(db, 1).ok());
  const std::string newer = std::to_string(kSchemaVersion + 1);
  ASSERT_TRUE(db.Exec("INSERT INTO schema_version VALUES (" + newer + ", 5)").ok());
  Status st = ApplySchema(db, 2);
  EXPECT_EQ(st.code(), StatusCode::kConflict);
  EXPECT_NE(st.message().find("schema version " + newer), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("supports up to version " + std::to_string(kSchemaVersion)),
            std::string::npos)
      << st.message();
  EXPECT_EQ(*SchemaVersion(db), kSchemaVersion + 1);
}

// Bad inputs: a SQLite database with foreign tables; one with another application_id.
TEST_F(SchemaTest, RefusesDatabasesOfOtherPrograms) {
  {
    Db db = Open();
    ASSERT_TRUE(db.Exec("CREATE TABLE customers (id INTEGER)").ok());
    Status st = ApplySchema(db, 1);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("not a rota store"), std::string::npos) << st.message();
    EXPECT_EQ(*db.QueryInt("SELECT count(*) FROM sqlite_schema WHERE name = 'nodes'"), 0);
    ASSERT_TRUE(db.Exec("DROP TABLE customers").ok());
    ASSERT_TRUE(db.Exec("PRAGMA application_id = 1234").ok());
    st = ApplySchema(db, 1);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("application_id 0x000004d2"), std::string::npos) << st.message();
  }
}

}  // namespace
}  // namespace rota::store
