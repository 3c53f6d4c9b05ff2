#include "server/store/backup.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "common/file_util.h"
#include "server/store/schema.h"
#include "server/store/sqlite_backend.h"
#include "server/store/store_impl.h"
#include "server/store/store_url.h"

namespace rota::store {
namespace {

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

Status Errno(const std::string& what) {
  return Status::IoError(what + ": " + std::strerror(errno));
}

// fsync of a file or directory by path.
Status SyncPath(const std::string& path, bool dir) {
  int fd = ::open(path.c_str(), (dir ? O_RDONLY | O_DIRECTORY : O_RDWR) | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open " + path);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return Status::IoError("cannot fsync " + path + ": " + std::strerror(err));
  return Status::Ok();
}

// Creates `path` empty with mode 0600 (replacing a leftover), owned like `dir` when
// run as root, so a server running as the data dir's owner can open it.
Status CreatePrivate(const std::string& path, const std::string& dir) {
  ::unlink(path.c_str());
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Errno("cannot create " + path);
  struct stat st {};
  if (::geteuid() == 0 && ::stat(dir.c_str(), &st) == 0) (void)::fchown(fd, st.st_uid, st.st_gid);
  ::close(fd);
  return Status::Ok();
}

// Copies every page of `src` into `dst` in one step (one read transaction on `src`).
Status CopyPages(Db& src, Db& dst) {
  sqlite3_backup* b = sqlite3_backup_init(dst.raw(), "main", src.raw(), "main");
  if (b == nullptr) return SqliteError(dst.raw(), sqlite3_errcode(dst.raw()), "backup");
  int rc = SQLITE_OK;
  // BUSY/LOCKED only while another connection holds a lock SQLite could not wait
  // out (e.g. a checkpoint on a rollback-journal file); try again for ~10 s.
  for (int attempt = 0; attempt < 100; ++attempt) {
    rc = sqlite3_backup_step(b, -1);
    if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE) return SqliteError(dst.raw(), rc, "copying " + src.path());
  return Status::Ok();
}

Status QuickCheck(Db& db, const std::string& what) {
  ASSIGN_OR_RETURN(std::string check, db.QueryText("PRAGMA quick_check"));
  if (check != "ok") return Status::IoError(what + " failed its check: " + check);
  return Status::Ok();
}

// Opens a rota SQLite database (a store or a backup) and returns its schema version.
Result<int64_t> RotaVersion(Db& db, const std::string& what) {
  auto app_id = db.QueryInt("PRAGMA application_id");
  if (!app_id.ok()) {
    return Status::InvalidArgument(what + " is not a rota store: " + app_id.status().message());
  }
  if (*app_id != kApplicationId) {
    return Status::InvalidArgument(what +
                                   " is not a rota store (another program's SQLite database)");
  }
  ASSIGN_OR_RETURN(int64_t version, SchemaVersion(db));
  if (version <= 0)
    return Status::InvalidArgument(what + " is not a rota store (no schema version)");
  return version;
}

// The first bytes of a file (its format's magic).
Result<std::string> FileHead(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open " + path);
  char buf[16];
  const ssize_t n = ::read(fd, buf, sizeof(buf));
  ::close(fd);
  if (n < 0) return Errno("cannot read " + path);
  return std::string(buf, static_cast<size_t>(n));
}

// Holds a shared flock on the backup lock file while alive.
class BackupLock {
 public:
  static Result<BackupLock> Take(const std::string& sqlite_path) {
    const std::string path = BackupLockPath(sqlite_path);
    int fd = ::open(path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return Errno("cannot open " + path);
    if (::flock(fd, LOCK_SH) != 0) {
      const int err = errno;
      ::close(fd);
      return Status::IoError("cannot lock " + path + ": " + std::strerror(err));
    }
    return BackupLock(fd);
  }
  BackupLock(BackupLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  BackupLock& operator=(BackupLock&&) = delete;
  ~BackupLock() {
    if (fd_ >= 0) ::close(fd_);
  }

 private:
  explicit BackupLock(int fd) : fd_(fd) {}
  int fd_;
};

Result<BackupResult> BackupSqlite(const StoreUrl& u, const std::string& file) {
  struct stat st {};
  if (::stat(u.sqlite_path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Status::NotFound("no SQLite store at " + u.display + " (" + u.sqlite_path +
                            " is not a file)");
  }
  struct stat fst {};
  if (::stat(file.c_str(), &fst) == 0 && fst.st_dev == st.st_dev && fst.st_ino == st.st_ino) {
    return Status::InvalidArgument(file + " is the store itself: back up into another file");
  }
  ASSIGN_OR_RETURN(Db src, Db::Open(u.sqlite_path, SQLITE_OPEN_READWRITE));  // never CREATE
  RETURN_IF_ERROR(src.Exec("PRAGMA busy_timeout = 5000"));
  RETURN_IF_ERROR(src.Exec("PRAGMA query_only = ON"));
  RETURN_IF_ERROR(RotaVersion(src, u.display).status());

  const std::string dir = DirOf(file);
  const std::string tmp = file + ".tmp-" + std::to_string(::getpid());
  RETURN_IF_ERROR(CreatePrivate(tmp, dir));
  auto fail = [&](Status st) {
    ::unlink(tmp.c_str());
    return st;
  };
  int64_t version = 0;
  {
    auto dst = Db::Open(tmp, SQLITE_OPEN_READWRITE);
    if (!dst.ok()) return fail(dst.status());
    {
      auto lock = BackupLock::Take(u.sqlite_path);
      if (!lock.ok()) return fail(lock.status());
      if (Status st = CopyPages(src, *dst); !st.ok()) return fail(st);
    }
    auto mode = dst->QueryText("PRAGMA journal_mode = DELETE");  // one self-contained file
    if (!mode.ok()) return fail(mode.status());
    if (Status st = QuickCheck(*dst, "the copy of " + u.display); !st.ok()) return fail(st);
    auto v = RotaVersion(*dst, "the copy of " + u.display);
    if (!v.ok()) return fail(v.status());
    version = *v;
  }
  if (Status st = SyncPath(tmp, false); !st.ok()) return fail(st);
  if (::rename(tmp.c_str(), file.c_str()) != 0)
    return fail(Errno("cannot rename " + tmp + " to " + file));
  RETURN_IF_ERROR(SyncPath(dir, true));
  struct stat out {};
  ::stat(file.c_str(), &out);
  return BackupResult{u.display, version, static_cast<int64_t>(out.st_size), "sqlite"};
}

Result<RestoreResult> RestoreSqlite(const RestoreOptions& o, const StoreUrl& u, int64_t now_ms) {
  struct stat st {};
  if (::stat(o.file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Status::NotFound("no backup at " + o.file);
  }
  ASSIGN_OR_RETURN(Db backup, Db::Open(o.file, SQLITE_OPEN_READONLY));
  auto version = RotaVersion(backup, o.file);
  if (!version.ok()) {
    return Status::InvalidArgument(o.file + " is not a rota backup of a SQLite store (" +
                                   version.status().message() + ")");
  }
  if (*version > kSchemaVersion) {
    return Status::Conflict(o.file + " is a backup of schema version " + std::to_string(*version) +
                            ", written by a newer rota (this one knows up to " +
                            std::to_string(kSchemaVersion) +
                            "): restore it with that rota or a newer one");
  }
  RETURN_IF_ERROR(QuickCheck(backup, o.file));

  const std::string dir = DirOf(u.sqlite_path);
  RETURN_IF_ERROR(MakeDirs(dir, 0700));
  // Held to the end: no server starts on the store meanwhile.
  auto lock = LockDir(dir);
  if (!lock.ok()) {
    if (lock.status().code() != StatusCode::kUnavailable) return lock.status();
    return Status::Unavailable("a rota server is running on " + u.display + " (" + dir +
                               "/rota.lock is held): stop it, then restore");
  }
  struct stat tst {};
  if (::stat(u.sqlite_path.c_str(), &tst) == 0 && tst.st_size > 0 && !o.overwrite) {
    return Status::Conflict(u.display + " already holds a store: give --overwrite to replace it " +
                            "with the backup");
  }
  const std::string tmp = u.sqlite_path + ".restore-tmp";
  RETURN_IF_ERROR(CreatePrivate(tmp, dir));
  auto fail = [&](Status s) {
    ::unlink(tmp.c_str());
    return s;
  };
  {
    auto dst = Db::Open(tmp, SQLITE_OPEN_READWRITE);
    if (!dst.ok()) return fail(dst.status());
    if (Status s = CopyPages(backup, *dst); !s.ok()) return fail(s);
    if (Status s = ApplySchema(*dst, now_ms); !s.ok()) {  // an older backup: migrated
      return fail(
          s.WithContext("migrating the backup from schema version " + std::to_string(*version)));
    }
  }
  if (Status s = SyncPath(tmp, false); !s.ok()) return fail(s);
  // The old store's WAL and shared memory belong to the file being replaced.
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    const std::string p = u.sqlite_path + suffix;
    if (::unlink(p.c_str()) != 0 && errno != ENOENT) return fail(Errno("cannot remove " + p));
  }
  if (::rename(tmp.c_str(), u.sqlite_path.c_str()) != 0) {
    return fail(Errno("cannot rename " + tmp + " to " + u.sqlite_path));
  }
  RETURN_IF_ERROR(SyncPath(dir, true));
  return RestoreResult{u.display, *version, kSchemaVersion};
}

}  // namespace

std::string BackupLockPath(const std::string& sqlite_path) { return sqlite_path + ".backup-lock"; }

BackupExclusion BackupExclusion::TryTake(const std::string& sqlite_path) {
  const std::string path = BackupLockPath(sqlite_path);
  // Created when missing: a backup starting meanwhile must find the lock this one holds.
  int fd = ::open(path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return BackupExclusion(-1);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {  // a backup holds its shared lock
    ::close(fd);
    return BackupExclusion(-1);
  }
  return BackupExclusion(fd);
}

BackupExclusion::~BackupExclusion() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

Result<BackupResult> BackupStore(const std::string& store_url, const std::string& file) {
  ASSIGN_OR_RETURN(StoreUrl u, ParseStoreUrl(store_url));
  if (file.empty()) return Status::InvalidArgument("the backup needs a FILE to write");
  if (u.dialect == Dialect::kPostgres) return BackupPostgres(u.pg_url, u.display, file);
  return BackupSqlite(u, file);
}

Result<RestoreResult> RestoreStore(const RestoreOptions& o, int64_t now_ms) {
  ASSIGN_OR_RETURN(StoreUrl u, ParseStoreUrl(o.store_url));
  if (o.file.empty()) return Status::InvalidArgument("the restore needs the backup FILE to read");
  // A backup of the other backend says so, instead of failing to parse.
  if (auto head = FileHead(o.file); head.ok()) {
    if (u.dialect == Dialect::kPostgres && head->rfind("SQLite format 3", 0) == 0) {
      return Status::InvalidArgument(o.file + " is a backup of a SQLite store: restore it into a " +
                                     "sqlite: store, then move that with rota store migrate");
    }
    if (u.dialect == Dialect::kSqlite && head->rfind("PGDMP", 0) == 0) {
      return Status::InvalidArgument(o.file + " is a pg_dump of a PostgreSQL store: restore it " +
                                     "with --store postgresql://...");
    }
  }
  if (u.dialect == Dialect::kPostgres) return RestorePostgres(o, u.pg_url, u.display, now_ms);
  return RestoreSqlite(o, u, now_ms);
}

}  // namespace rota::store
