#pragma once
// rota admin backup / restore: a consistent copy of a store taken while its server
// runs, and putting one back under a stopped server (docs/operations.md, "Backup and
// restore"; docs/design-store.md, "Backup and restore").
//
// Both run where the store is, as a user who may read (backup) or write (restore) it:
// the data dir's permissions (0700, the server's user) are what authorizes them, as
// for pg_dump. The running server is another process and does none of the work.
//
// SQLite (sqlite:PATH): the backup opens the live database beside its server (WAL:
// readers and the writer never wait for each other) and copies every page with
// SQLite's online backup API in one step, i.e. in one read transaction: one
// consistent snapshot, whatever the server commits meanwhile. While it runs it holds
// a shared flock on BackupLockPath(PATH), and the server's checkpointer takes no
// RESTART checkpoint (which would wait for the backup's snapshot and hold the
// server's writes back meanwhile); the WAL grows by what the server writes during
// the copy and is restarted afterwards. The copy is checked (quick_check), made a
// single self-contained file (journal_mode=DELETE) and renamed onto FILE (0600: it
// holds password and token hashes) only when whole.
//
// PostgreSQL (postgresql://...): pg_dump in its custom format (-Fc) of the store's
// schema, from one snapshot (pg_dump's own repeatable-read transaction); the servers
// keep running. Needs Debian's postgresql-client of the server's major version or
// newer on PATH.
//
// The backup records its schema version (the store's schema_version table, copied
// with the rest). Restore reads it first: a backup from a newer rota is refused
// (Conflict) with nothing changed; an older one is migrated to this rota's version
// after it is put back. Restore refuses a store a server is using (Unavailable: on
// SQLite the data dir's rota.lock is held; on PostgreSQL the leader lease is held or
// a server registered within the last kServerSeenMs), and one that already holds a
// store unless `overwrite`.

#include <cstdint>
#include <string>

#include "common/status.h"

namespace rota::store {

struct BackupResult {
  std::string store;           // the store, without password
  int64_t schema_version = 0;  // of the copy
  int64_t bytes = 0;           // size of FILE
  std::string format;          // "sqlite" or "pg_dump"
};

// Backs the store `store_url` (a store URL, store_url.h) up into `file`, replacing it
// atomically. Errors: InvalidArgument (bad URL; not a rota store; `file` is the store
// itself), NotFound (no SQLite database there), Unavailable (a PostgreSQL server
// cannot be reached; pg_dump is missing), IoError (writing `file`, a failed copy
// check, pg_dump failed: its message).
Result<BackupResult> BackupStore(const std::string& store_url, const std::string& file);

struct RestoreOptions {
  std::string file;        // a backup made by BackupStore
  std::string store_url;   // where to put it back
  bool overwrite = false;  // replace a store that is there
};

struct RestoreResult {
  std::string store;
  int64_t backup_version = 0;  // the schema version the backup recorded
  int64_t schema_version = 0;  // the store's now (this rota's)
};

// Errors: NotFound (no such file), InvalidArgument (not a rota backup, or a damaged
// one; bad URL), Conflict (a backup from a newer rota; the target holds a store and
// !overwrite), Unavailable (a server runs on the target), IoError.
Result<RestoreResult> RestoreStore(const RestoreOptions& options, int64_t now_ms);

// The file a SQLite backup holds a shared flock on while it copies `sqlite_path`.
std::string BackupLockPath(const std::string& sqlite_path);
// Held by the server's checkpointer around a RESTART checkpoint (which would wait for a
// backup's read transaction and hold every write back meanwhile): an exclusive flock on
// BackupLockPath, taken without waiting. While one is held no backup starts (a backup
// waits for its shared lock); TryTake fails (held() false) while a backup is copying.
class BackupExclusion {
 public:
  static BackupExclusion TryTake(const std::string& sqlite_path);
  static BackupExclusion None() { return BackupExclusion(-1); }  // not held
  BackupExclusion(BackupExclusion&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  BackupExclusion& operator=(BackupExclusion&&) = delete;
  BackupExclusion(const BackupExclusion&) = delete;
  ~BackupExclusion();
  bool held() const { return fd_ >= 0; }

 private:
  explicit BackupExclusion(int fd) : fd_(fd) {}
  int fd_;
};

// A PostgreSQL server that registered within this long counts as running (a running
// server renews its registration at least every 2 s; a stopped one's ages out).
inline constexpr int64_t kServerSeenMs = 10'000;

// backup_pg.cc: the PostgreSQL forms.
Result<BackupResult> BackupPostgres(const std::string& pg_url, const std::string& display,
                                    const std::string& file);
Result<RestoreResult> RestorePostgres(const RestoreOptions& options, const std::string& pg_url,
                                      const std::string& display, int64_t now_ms);

}  // namespace rota::store
