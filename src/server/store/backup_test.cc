// rota admin backup / restore at the store layer (backup.h): a copy taken while the
// store is written is one snapshot; restore refuses a store in use, a newer backup
// and overwriting without --overwrite, and migrates an older backup. SQLite, and
// PostgreSQL through pg_dump / pg_restore when the test server is there.
#include "server/store/backup.h"

#include <algorithm>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include "common/clock.h"
#include "server/store/schema.h"
#include "server/store/store.h"
#include "server/store/store_test_backend.h"
#include "server/store/store_test_util.h"
#include "server/store/usage.h"

namespace rota::store {
namespace {

using testing::Backend;
using testing::TempDir;
using testing::TestStoreLocation;

template <typename T>
T Or(Result<T> r, T fallback) {
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : fallback;
}

int64_t Count(Db& db, const std::string& what) {
  auto n = db.QueryInt("SELECT count(*) FROM " + what);
  EXPECT_TRUE(n.ok()) << n.status().ToString();
  return n.ok() ? *n : -1;
}

// One write transaction: a usage row and a meter, i.e. one row in each of two tables.
Status WritePair(Store& s, int64_t i) {
  std::map<accounting::Key, accounting::Amounts> rows;
  accounting::Amounts a;
  a.gpu_ms = 1000;
  rows[accounting::Key{i * 3'600'000, "n1", i, "alice", "ml", 0}] = a;
  std::map<accounting::MeterKey, accounting::MeterState> meters;
  accounting::MeterState m;
  m.uuid = "GPU-" + std::to_string(i);
  meters[{"n1", static_cast<uint32_t>(i)}] = m;
  return s.Write([&](Db& db) { return AddUsage(db, rows, meters); });
}

class SqliteBackupTest : public ::testing::Test {
 protected:
  std::string db_path() const { return dir_.path() + "/data/rota.db"; }
  std::string url() const { return "sqlite:" + db_path(); }
  std::unique_ptr<Store> Open() {
    auto s = Store::Open(dir_.path() + "/data", {}, clock_);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }
  FakeClock clock_;
  TempDir dir_;
};

// True while a backup holds its lock: the checkpointer's exclusion cannot be had.
bool BackupInProgress(const std::string& path) { return !BackupExclusion::TryTake(path).held(); }

TEST_F(SqliteBackupTest, ACopyTakenWhileTheStoreIsWrittenIsOneSnapshot) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  for (int64_t i = 0; i < 200; ++i) ASSERT_TRUE(WritePair(*store, i).ok());
  EXPECT_FALSE(BackupInProgress(db_path()));
  std::atomic<bool> stop{false};
  std::atomic<int64_t> written{200};
  std::thread writer([&] {
    while (!stop) {
      if (!WritePair(*store, written).ok()) break;
      ++written;
    }
  });
  const std::string file = dir_.path() + "/backup.db";
  std::vector<int64_t> copied;
  for (int round = 0; round < 5; ++round) {
    auto b = BackupStore(url(), file);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_EQ(b->schema_version, kSchemaVersion);
    EXPECT_EQ(b->format, "sqlite");
    EXPECT_GT(b->bytes, 0);
    auto db = Db::Open(file, SQLITE_OPEN_READONLY);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    // Both rows of every transaction, or neither: one snapshot.
    const int64_t usage = Count(*db, "usage_hourly");
    EXPECT_EQ(usage, Count(*db, "energy_meters")) << "round " << round;
    EXPECT_EQ(Or<std::string>(db->QueryText("PRAGMA journal_mode"), ""), "delete");
    EXPECT_EQ(Or<std::string>(db->QueryText("PRAGMA quick_check"), ""), "ok");
    copied.push_back(usage);
  }
  stop = true;
  writer.join();
  EXPECT_GE(copied.front(), 200);
  EXPECT_LE(copied.back(), written.load());
  EXPECT_GT(written.load(), 200) << "the store was written during the backups";
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "it holds password and token hashes";
  EXPECT_NE(::access((file + "-wal").c_str(), F_OK), 0) << "one self-contained file";
  EXPECT_FALSE(BackupInProgress(db_path()));
}

TEST_F(SqliteBackupTest, TheCheckpointersExclusionAndABackupsLockExcludeEachOther) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_FALSE(BackupInProgress(db_path()));
  int fd = ::open(BackupLockPath(db_path()).c_str(), O_RDONLY | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_SH), 0);  // what a backup holds while it copies
  EXPECT_TRUE(BackupInProgress(db_path()));
  ::close(fd);
  EXPECT_FALSE(BackupInProgress(db_path()));
  // Held by the checkpointer, the exclusion makes a backup wait for it.
  std::atomic<bool> done{false};
  std::thread backup;
  {
    BackupExclusion ex = BackupExclusion::TryTake(db_path());
    ASSERT_TRUE(ex.held());
    backup = std::thread([&] {
      auto b = BackupStore(url(), dir_.path() + "/waited.db");
      EXPECT_TRUE(b.ok()) << b.status().ToString();
      done = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_FALSE(done.load()) << "the backup began under a RESTART checkpoint";
  }
  backup.join();
  EXPECT_TRUE(done.load());
}

// While a backup holds its snapshot, the checkpointer takes no RESTART checkpoint: it
// would wait for the snapshot (busy_timeout) and hold every write back meanwhile.
TEST_F(SqliteBackupTest, WritesDoNotWaitForARunningBackup) {
  StoreOptions o;
  o.wal_autocheckpoint_pages = 1;  // every commit asks for a checkpoint
  o.busy_timeout_ms = 3000;
  auto s = Store::Open(dir_.path() + "/data", o, clock_);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  Store& store = **s;
  for (int64_t i = 0; i < 50; ++i) ASSERT_TRUE(WritePair(store, i).ok());
  // What a backup holds: its lock and one read transaction on the live database.
  int fd = ::open(BackupLockPath(db_path()).c_str(), O_RDONLY | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_SH), 0);
  auto reader = Db::Open(db_path(), SQLITE_OPEN_READWRITE);
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE(reader->Exec("BEGIN").ok());
  ASSERT_GE(Count(*reader, "usage_hourly"), 50);  // the snapshot is taken here
  const int64_t restarts = store.Stats().wal_restarts;
  // A write held up by the snapshot waits out busy_timeout_ms (3 s); an unhindered one,
  // even on a loaded machine, takes milliseconds. The slowest write tells them apart.
  double slowest = 0;
  for (int64_t i = 50; i < 400; ++i) {
    const int64_t start = MonotonicNs();
    ASSERT_TRUE(WritePair(store, i).ok());
    slowest = std::max(slowest, static_cast<double>(MonotonicNs() - start) / 1e9);
  }
  EXPECT_LT(slowest, 2.5) << "a write waited for the backup's snapshot";
  EXPECT_EQ(store.Stats().wal_restarts, restarts);
  ASSERT_TRUE(reader->Exec("COMMIT").ok());
  ::close(fd);
  // Once it is over, the WAL starts over again.
  // (The checkpoint thread runs when it gets the CPU: on a loaded machine that can take
  // seconds, so the wait is bounded by time, not by a number of writes.)
  const int64_t deadline = MonotonicNs() + 20'000'000'000;
  for (int64_t i = 400; MonotonicNs() < deadline && store.Stats().wal_restarts == restarts; ++i) {
    ASSERT_TRUE(WritePair(store, i).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const StoreStats st = store.Stats();
  EXPECT_GT(st.wal_restarts, restarts)
      << "checkpoints " << st.checkpoints << ", failures " << st.checkpoint_failures;
}

TEST_F(SqliteBackupTest, RestorePutsTheCopyBackAndRefusesAStoreInUseOrOverwritingUnasked) {
  const std::string file = dir_.path() + "/backup.db";
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    for (int64_t i = 0; i < 10; ++i) ASSERT_TRUE(WritePair(*store, i).ok());
    ASSERT_TRUE(BackupStore(url(), file).ok());
    for (int64_t i = 10; i < 15; ++i) ASSERT_TRUE(WritePair(*store, i).ok());  // after the backup
    auto busy = RestoreStore({file, url(), true}, 1);
    ASSERT_FALSE(busy.ok());
    EXPECT_EQ(busy.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(busy.status().message().find("a rota server is running on"), std::string::npos)
        << busy.status().message();
  }
  auto unasked = RestoreStore({file, url(), false}, 1);
  ASSERT_FALSE(unasked.ok());
  EXPECT_EQ(unasked.status().code(), StatusCode::kConflict);
  EXPECT_NE(unasked.status().message().find("--overwrite"), std::string::npos);
  {
    auto db = Db::Open(db_path(), SQLITE_OPEN_READONLY);
    ASSERT_TRUE(db.ok());
    EXPECT_EQ(Count(*db, "usage_hourly"), 15) << "left as it was";
  }
  auto done = RestoreStore({file, url(), true}, 1);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->backup_version, kSchemaVersion);
  EXPECT_EQ(done->schema_version, kSchemaVersion);
  auto store = Open();  // as the server opens it
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store
                  ->Read([&](Db& db) {
                    EXPECT_EQ(Count(db, "usage_hourly"), 10);
                    return Status::Ok();
                  })
                  .ok());
  // Into a data dir that does not exist yet (a new machine).
  store.reset();
  const std::string fresh = "sqlite:" + dir_.path() + "/new/rota.db";
  ASSERT_TRUE(RestoreStore({file, fresh, false}, 1).ok());
  struct stat st {};
  ASSERT_EQ(::stat((dir_.path() + "/new/rota.db").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(SqliteBackupTest, ABackupFromANewerRotaIsRefusedAndAnOlderOneIsMigrated) {
  // A backup of schema version 10 (an older rota), with a row of that time.
  const std::string old_file = dir_.path() + "/old.db";
  {
    auto db = Db::Open(old_file, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(ApplySchema(*db, 1, Migrations().first(10)).ok());
    ASSERT_TRUE(db->Exec("INSERT INTO groups (name, created_ms) VALUES ('ml', 1)").ok());
    ASSERT_EQ(Or<int64_t>(SchemaVersion(*db), 0), 10);
  }
  auto migrated = RestoreStore({old_file, url(), false}, 1);
  ASSERT_TRUE(migrated.ok()) << migrated.status().ToString();
  EXPECT_EQ(migrated->backup_version, 10);
  EXPECT_EQ(migrated->schema_version, kSchemaVersion);
  {
    auto db = Db::Open(db_path(), SQLITE_OPEN_READONLY);
    ASSERT_TRUE(db.ok());
    EXPECT_EQ(Or<int64_t>(SchemaVersion(*db), 0), kSchemaVersion);
    EXPECT_EQ(Count(*db, "groups WHERE name = 'ml'"), 1);
  }
  // A backup from a newer rota: refused, the store left as it was.
  const std::string new_file = dir_.path() + "/new.db";
  ASSERT_TRUE(BackupStore(url(), new_file).ok());
  {
    auto db = Db::Open(new_file, SQLITE_OPEN_READWRITE);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->Exec("INSERT INTO schema_version (version, applied_ms) VALUES (" +
                         std::to_string(kSchemaVersion + 1) + ", 1)")
                    .ok());
    ASSERT_TRUE(db->Exec("DELETE FROM groups").ok());
  }
  auto newer = RestoreStore({new_file, url(), true}, 1);
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), StatusCode::kConflict);
  EXPECT_NE(newer.status().message().find("written by a newer rota"), std::string::npos)
      << newer.status().message();
  auto db = Db::Open(db_path(), SQLITE_OPEN_READONLY);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(Count(*db, "groups WHERE name = 'ml'"), 1);
}

TEST_F(SqliteBackupTest, WhatIsNotARotaStoreOrBackupIsRefusedSayingWhat) {
  const std::string junk = dir_.path() + "/junk";
  std::ofstream(junk) << "not a database at all, but long enough to be read as a header\n";
  auto r = RestoreStore({junk, url(), false}, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
  const std::string dump = dir_.path() + "/pg.dump";
  std::ofstream(dump) << "PGDMP\x01\x0e\x00 and the rest";
  auto pg = RestoreStore({dump, url(), false}, 1);
  ASSERT_FALSE(pg.ok());
  EXPECT_NE(pg.status().message().find("--store postgresql://"), std::string::npos)
      << pg.status().message();
  auto missing = RestoreStore({dir_.path() + "/none", url(), false}, 1);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  auto no_store = BackupStore(url(), dir_.path() + "/b.db");
  EXPECT_EQ(no_store.status().code(), StatusCode::kNotFound);
  {
    auto db = Db::Open(dir_.path() + "/other.db", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->Exec("CREATE TABLE t (x)").ok());
  }
  auto other = BackupStore("sqlite:" + dir_.path() + "/other.db", dir_.path() + "/b.db");
  EXPECT_EQ(other.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(::access((dir_.path() + "/b.db").c_str(), F_OK), 0) << "nothing written";
  auto store = Open();
  ASSERT_NE(store, nullptr);
  auto itself = BackupStore(url(), db_path());
  EXPECT_EQ(itself.status().code(), StatusCode::kInvalidArgument);
}

// PostgreSQL: pg_dump and pg_restore (Debian's postgresql-client) round trip.
class PgBackupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ROTA_SKIP_WITHOUT_BACKEND(a_);
    if (::system("command -v pg_dump >/dev/null && command -v pg_restore >/dev/null") != 0) {
      GTEST_SKIP() << "pg_dump / pg_restore are not installed";
    }
  }
  TestStoreLocation a_{Backend::kPostgres};
  TestStoreLocation b_{Backend::kPostgres};
  FakeClock clock_;
  TempDir dir_;
};

TEST_F(PgBackupTest, ADumpRoundTripsAndRestoreRefusesAStoreInUseANewerDumpOrOverwritingUnasked) {
  const std::string file = dir_.path() + "/store.dump";
  {
    auto store = a_.Open({}, clock_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    for (int64_t i = 0; i < 20; ++i) ASSERT_TRUE(WritePair(**store, i).ok());
    auto b = BackupStore(a_.url(), file);  // while the store is open
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_EQ(b->schema_version, kSchemaVersion);
    EXPECT_EQ(b->format, "pg_dump");
    struct stat st {};
    ASSERT_EQ(::stat(file.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }
  auto done = RestoreStore({file, b_.url(), false}, 1);  // an empty database
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->backup_version, kSchemaVersion);
  {
    auto db = b_.Connect();
    ASSERT_TRUE(db.ok());
    EXPECT_EQ(Count(*db, "usage_hourly"), 20);
    EXPECT_EQ(Count(*db, "energy_meters"), 20);
  }
  auto store = b_.Open({}, clock_);  // as a server opens it
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE(WritePair(**store, 100).ok());
  store->reset();

  auto unasked = RestoreStore({file, b_.url(), false}, 1);
  EXPECT_EQ(unasked.status().code(), StatusCode::kConflict) << unasked.status().ToString();
  {
    auto db = b_.Connect();
    ASSERT_TRUE(db.ok());
    // A server leads on it: refused.
    ASSERT_TRUE(db->Exec("UPDATE leader_lease SET holder = 'h', expires_at_ms = "
                         "(extract(epoch from clock_timestamp()) * 1000)::bigint + 60000")
                    .ok());
    auto busy = RestoreStore({file, b_.url(), true}, 1);
    EXPECT_EQ(busy.status().code(), StatusCode::kUnavailable) << busy.status().ToString();
    EXPECT_NE(busy.status().message().find("leads on"), std::string::npos)
        << busy.status().message();
    ASSERT_TRUE(db->Exec("UPDATE leader_lease SET expires_at_ms = 0").ok());
    EXPECT_EQ(Count(*db, "usage_hourly"), 21);
  }
  auto over = RestoreStore({file, b_.url(), true}, 1);
  ASSERT_TRUE(over.ok()) << over.status().ToString();
  {
    auto db = b_.Connect();
    ASSERT_TRUE(db.ok());
    EXPECT_EQ(Count(*db, "usage_hourly"), 20) << "the backup's rows, not the later one";
    // A dump from a newer rota.
    ASSERT_TRUE(db->Exec("INSERT INTO schema_version (version, applied_ms) VALUES (" +
                         std::to_string(kSchemaVersion + 1) + ", 1)")
                    .ok());
  }
  const std::string newer_file = dir_.path() + "/newer.dump";
  ASSERT_TRUE(BackupStore(b_.url(), newer_file).ok());
  auto newer = RestoreStore({newer_file, a_.url(), true}, 1);
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), StatusCode::kConflict);
  EXPECT_NE(newer.status().message().find("written by a newer rota"), std::string::npos);
  auto db = a_.Connect();
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(Count(*db, "usage_hourly"), 20) << "left as it was";
  // A SQLite backup is not restored into PostgreSQL.
  const std::string sqlite_file = dir_.path() + "/s.db";
  std::ofstream(sqlite_file) << std::string("SQLite format 3\0", 16) << "...";
  auto wrong = RestoreStore({sqlite_file, a_.url(), true}, 1);
  EXPECT_NE(wrong.status().message().find("rota store migrate"), std::string::npos)
      << wrong.status().message();
}

// --overwrite is one transaction: a restore that fails half-way (here an event trigger
// refuses the backup's indexes, after its tables were dropped and created again) leaves
// the old store with every row it had.
TEST_F(PgBackupTest, AnOverwriteThatFailsHalfWayLeavesTheOldStoreAsItWas) {
  const std::string file = dir_.path() + "/store.dump";
  {
    auto store = a_.Open({}, clock_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    for (int64_t i = 0; i < 5; ++i) ASSERT_TRUE(WritePair(**store, i).ok());
    ASSERT_TRUE(BackupStore(a_.url(), file).ok());
    for (int64_t i = 5; i < 8; ++i) ASSERT_TRUE(WritePair(**store, i).ok());  // after the backup
  }
  auto db = a_.Connect();
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(db->Exec("CREATE FUNCTION rota_test_refuse() RETURNS event_trigger LANGUAGE plpgsql AS "
                       "$$ BEGIN RAISE EXCEPTION 'injected: no index now'; END $$")
                  .ok());
  ASSERT_TRUE(db->Exec("CREATE EVENT TRIGGER rota_test_no_index ON ddl_command_end "
                       "WHEN TAG IN ('CREATE INDEX') EXECUTE FUNCTION rota_test_refuse()")
                  .ok());
  auto failed = RestoreStore({file, a_.url(), true}, 1);
  ASSERT_TRUE(db->Exec("DROP EVENT TRIGGER rota_test_no_index").ok());
  ASSERT_TRUE(db->Exec("DROP FUNCTION rota_test_refuse()").ok());
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kIoError) << failed.status().ToString();
  EXPECT_NE(failed.status().message().find("the old store is as it was"), std::string::npos)
      << failed.status().message();
  EXPECT_NE(failed.status().message().find("injected: no index now"), std::string::npos)
      << failed.status().message();
  EXPECT_EQ(Count(*db, "usage_hourly"), 8) << "the old store, rows written after the backup too";
  // Run again without the obstacle: the backup's rows.
  auto again = RestoreStore({file, a_.url(), true}, 1);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  auto fresh = a_.Connect();
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(Count(*fresh, "usage_hourly"), 5);
}

}  // namespace
}  // namespace rota::store
