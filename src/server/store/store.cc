#include "server/store/store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "api/codec.h"
#include "common/file_util.h"
#include "common/log.h"
#include "common/mutex.h"
#include "server/store/pg_backend.h"
#include "server/store/schema.h"
#include "server/store/sqlite_backend.h"
#include "server/store/store_impl.h"
#include "server/store/store_url.h"

namespace rota::store {
namespace {

Status ValidateOptions(const StoreOptions& o) {
  auto bad = [](const char* field, const std::string& why) {
    return Status::InvalidArgument(std::string("store options: ") + field + ": " + why);
  };
  if (o.raw_retention_ms <= 0) return bad("raw_retention_ms", "must be > 0");
  if (o.agg_retention_ms <= 0) return bad("agg_retention_ms", "must be > 0");
  if (o.max_queued_samples == 0) return bad("max_queued_samples", "must be > 0");
  if (o.max_batch_rows == 0) return bad("max_batch_rows", "must be > 0");
  if (o.max_batch_ms < 0) return bad("max_batch_ms", "must be >= 0");
  if (o.linger_ms < 0 || o.linger_ms > o.max_batch_ms) {
    return bad("linger_ms", "must be between 0 and max_batch_ms");
  }
  if (o.retention_batch_rows == 0) return bad("retention_batch_rows", "must be > 0");
  if (o.busy_timeout_ms < 0) return bad("busy_timeout_ms", "must be >= 0");
  if (o.write_cache_mb < 1 || o.read_cache_mb < 1)
    return bad("write_cache_mb/read_cache_mb", "must be >= 1");
  if (o.wal_autocheckpoint_pages < 1) return bad("wal_autocheckpoint_pages", "must be >= 1");
  return Status::Ok();
}

std::string Octal(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// Makes `path` (a directory, or a file when it exists) no more open than `mode`: group and
// others lose every permission. The store holds password hashes, token MACs and jobs'
// environments (secrets): other local users must not read them. Refuses with a message
// that says what to do when the mode cannot be changed (not the owner, read-only fs).
Status MakePrivate(const std::string& path, mode_t mode, bool is_dir) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT && !is_dir) return Status::Ok();
    return Status::IoError("cannot stat " + path + ": " + std::strerror(errno));
  }
  if ((st.st_mode & 077) == 0) return Status::Ok();
  // A directory anyone may create files in (/tmp, /var/tmp: sticky and world-writable) is
  // shared by every user of the machine: never made private (that would break them all),
  // and no place for the store's files either.
  if (is_dir && (st.st_mode & S_ISVTX) != 0 && (st.st_mode & S_IWOTH) != 0) {
    return Status::PermissionDenied(path + " is a directory every local user shares (mode " + Octal(st.st_mode) +
                                    "): give the store a directory of its own (--data-dir DIR, or "
                                    "store: sqlite:DIR/rota.db)");
  }
  if (::chmod(path.c_str(), mode) != 0) {
    return Status::PermissionDenied(
        path + " is mode " + Octal(st.st_mode) + " (open to other local users) and cannot be made " +
        Octal(mode) + ": " + std::strerror(errno) + "; as its owner run: chmod " +
        (is_dir ? "700 " : "600 ") + path);
  }
  ROTA_LOG(WARNING) << "made " << path << " private: mode " << Octal(st.st_mode) << " -> "
                    << Octal(mode);
  return Status::Ok();
}

// The data directory 0700; rota.db and its -wal and -shm files 0600. A new rota.db is
// created 0600 before SQLite opens it: SQLite gives -wal and -shm the mode of the
// database file.
Status MakeStorePrivate(const std::string& dir, const std::string& db_path, bool create) {
  RETURN_IF_ERROR(MakePrivate(dir, 0700, true));
  if (create) {
    int fd = ::open(db_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return Status::IoError("cannot create " + db_path + ": " + std::strerror(errno));
    ::close(fd);
  }
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    RETURN_IF_ERROR(MakePrivate(db_path + suffix, 0600, false));
  }
  return MakePrivate(dir + "/rota.lock", 0600, false);
}

}  // namespace

Result<std::unique_ptr<LockFile>> LockDir(const std::string& dir) {
  const std::string lock_path = dir + "/rota.lock";
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IoError("cannot open " + lock_path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return Status::Unavailable("store " + dir + " is in use by another rota process (" +
                                 lock_path + " is locked)");
    }
    return Status::IoError("cannot lock " + lock_path + ": " + std::strerror(err));
  }
  return std::make_unique<LockFile>(fd);
}

namespace {

Status Configure(Db& db, const StoreOptions& opt, bool writer) {
  RETURN_IF_ERROR(db.Exec("PRAGMA busy_timeout = " + std::to_string(opt.busy_timeout_ms)));
  if (writer) {
    // The first statement that reads the file: "file is not a database" shows up here.
    ASSIGN_OR_RETURN(std::string mode, db.QueryText("PRAGMA journal_mode = WAL"));
    if (mode != "wal") {
      return Status::IoError(db.path() + ": cannot switch to WAL mode (journal_mode is " + mode +
                             ")");
    }
  }
  RETURN_IF_ERROR(
      db.Exec(std::string("PRAGMA synchronous = ") + (opt.sync_full ? "FULL" : "NORMAL")));
  RETURN_IF_ERROR(db.Exec("PRAGMA foreign_keys = ON"));
  RETURN_IF_ERROR(
      db.Exec("PRAGMA cache_size = -" +
              std::to_string((writer ? opt.write_cache_mb : opt.read_cache_mb) * 1024)));
  // The writer checkpoints on a thread of its own (writer.h), not in its COMMITs.
  if (!writer) RETURN_IF_ERROR(db.Exec("PRAGMA query_only = ON"));
  return Status::Ok();
}

Result<StoredNode> ReadNodeRow(Stmt& s) {
  const std::string name = s.Text(0);
  auto bad = [&](const Status& st) {
    return Status::IoError("store: node " + name + ": stored info is unreadable: " + st.message());
  };
  auto json = api::ParseJson(s.Text(1));
  if (!json.ok()) return bad(json.status());
  auto info = api::NodeInfoFromJson(*json);
  if (!info.ok()) return bad(info.status());
  StoredNode n;
  n.info = std::move(*info);
  n.first_seen_ms = s.Int(2);
  n.last_seen_ms = s.Int(3);
  return n;
}

constexpr const char* kSelectNodes =
    "SELECT name, info_json, first_seen_ms, last_seen_ms FROM nodes";

}  // namespace

LockFile::~LockFile() {
  if (fd >= 0) ::close(fd);
}

Result<int64_t> Store::Impl::ReadNodeId(const std::string& name) {
  ASSIGN_OR_RETURN(Stmt s, rdb.Prepare("SELECT id FROM nodes WHERE name = ?1"));
  s.Bind(1, name);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Status::NotFound("node " + name + " not found");
  return s.Int(0);
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::Open(const std::string& data_dir, const StoreOptions& options,
                                           Clock& clock) {
  return OpenSqlite(data_dir, data_dir + "/rota.db", options, clock);
}

Result<std::unique_ptr<Store>> Store::OpenUrl(const std::string& url, const StoreOptions& options,
                                              Clock& clock) {
  ASSIGN_OR_RETURN(StoreUrl u, ParseStoreUrl(url));
  if (u.dialect == Dialect::kSqlite) {
    const size_t slash = u.sqlite_path.rfind('/');
    const std::string dir = slash == std::string::npos ? "."
                            : slash == 0               ? "/"
                                                       : u.sqlite_path.substr(0, slash);
    return OpenSqlite(dir, u.sqlite_path, options, clock);
  }
  RETURN_IF_ERROR(ValidateOptions(options));
  auto fail = [](const Status& st) { return st.WithContext("cannot open store"); };
  PgConnectOptions writer_options;
  // A leader paused inside a transaction must not hold the lease row's lock for long
  // (lease.h, CheckFence).
  if (options.fence) writer_options.idle_in_transaction_ms = options.idle_in_transaction_ms;
  auto wdb = OpenPostgres(u.pg_url, u.display, writer_options);
  if (!wdb.ok()) return fail(wdb.status());
  if (Status st = RequireWritable(*wdb); !st.ok()) return fail(st);
  if (Status st = ApplySchema(*wdb, clock.NowMs()); !st.ok()) return fail(st);
  PgConnectOptions read_only;
  read_only.read_only = true;
  auto rdb = OpenPostgres(u.pg_url, u.display, read_only);
  if (!rdb.ok()) return fail(rdb.status());
  auto impl = std::make_unique<Impl>(options, clock, nullptr, std::move(*rdb));
  impl->path = u.display;
  impl->dialect = Dialect::kPostgres;
  auto writer = Writer::Start(std::move(*wdb), options, clock);
  if (!writer.ok()) return fail(writer.status());
  impl->writer = std::move(*writer);
  return std::unique_ptr<Store>(new Store(std::move(impl)));
}

Result<std::unique_ptr<Store>> Store::OpenSqlite(const std::string& data_dir,
                                                 const std::string& path,
                                                 const StoreOptions& options, Clock& clock) {
  RETURN_IF_ERROR(ValidateOptions(options));
  RETURN_IF_ERROR(MakeDirs(data_dir, 0700));
  auto fail = [](const Status& st) { return st.WithContext("cannot open store"); };
  if (Status st = MakePrivate(data_dir, 0700, true); !st.ok()) return fail(st);
  ASSIGN_OR_RETURN(std::unique_ptr<LockFile> lock, LockDir(data_dir));
  if (Status st = MakeStorePrivate(data_dir, path, true); !st.ok()) return fail(st);

  auto wdb = Db::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (!wdb.ok()) return fail(wdb.status());
  if (Status st = Configure(*wdb, options, true); !st.ok()) return fail(st);
  if (Status st = ApplySchema(*wdb, clock.NowMs()); !st.ok()) return fail(st);

  auto rdb = Db::Open(path, SQLITE_OPEN_READWRITE);
  if (!rdb.ok()) return fail(rdb.status());
  if (Status st = Configure(*rdb, options, false); !st.ok()) return fail(st);
  // The -wal and -shm files exist now.
  if (Status st = MakeStorePrivate(data_dir, path, false); !st.ok()) return fail(st);

  auto impl = std::make_unique<Impl>(options, clock, std::move(lock), std::move(*rdb));
  impl->path = path;
  auto writer = Writer::Start(std::move(*wdb), options, clock);
  if (!writer.ok()) return fail(writer.status());
  impl->writer = std::move(*writer);
  return std::unique_ptr<Store>(new Store(std::move(impl)));
}

const std::string& Store::path() const { return impl_->path; }
Dialect Store::dialect() const { return impl_->dialect; }

StoreStats Store::Stats() const {
  StoreStats s;
  impl_->writer->FillStats(&s);
  return s;
}

Status Store::UpsertNode(const api::NodeInfo& info, int64_t now_ms) {
  // Store exactly what the codec can read back.
  const api::Json json = api::ToJson(info);
  auto check = api::NodeInfoFromJson(json);
  if (!check.ok()) return check.status().WithContext("node info");
  std::string text;
  try {
    text = json.dump(-1, ' ', false, api::Json::error_handler_t::replace);
  } catch (const std::exception& e) {
    return Status::InvalidArgument(std::string("node info: cannot encode: ") + e.what());
  }
  return impl_->writer->Run([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(
        Stmt up,
        db.Prepare("INSERT INTO nodes (name, node_id, info_json, first_seen_ms, last_seen_ms) "
                   "VALUES (?1, ?2, ?3, ?4, ?4) ON CONFLICT (name) DO UPDATE SET "
                   "node_id = excluded.node_id, info_json = excluded.info_json, "
                   "last_seen_ms = CASE WHEN excluded.last_seen_ms > nodes.last_seen_ms THEN "
                   "excluded.last_seen_ms ELSE nodes.last_seen_ms END RETURNING id"));
    up.Bind(1, info.name).Bind(2, info.node_id).Bind(3, text).Bind(4, now_ms);
    ASSIGN_OR_RETURN(bool row, up.Step());
    if (!row) return Status::Internal("upsert of node " + info.name + " returned no id");
    const int64_t id = up.Int(0);
    RETURN_IF_ERROR(up.Run());  // finish the statement
    ASSIGN_OR_RETURN(Stmt del, db.Prepare("DELETE FROM gpus WHERE node = ?1"));
    RETURN_IF_ERROR(del.Bind(1, id).Run());
    ASSIGN_OR_RETURN(
        Stmt ins, db.Prepare("INSERT INTO gpus (node, idx, uuid, name, pci_bus_id, memory_total) "
                             "VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
    for (const api::GpuInfo& g : info.gpus) {
      ins.Reset();
      ins.Bind(1, id)
          .Bind(2, static_cast<int64_t>(g.index))
          .Bind(3, g.uuid)
          .Bind(4, g.name)
          .Bind(5, g.pci_bus_id)
          .Bind(6, g.memory_total_bytes);
      Status st = ins.Run();
      if (!st.ok())
        return st.WithContext("node " + info.name + " gpus[" + std::to_string(g.index) + "]");
    }
    return Status::Ok();
  });
}

Result<std::vector<StoredNode>> Store::ListNodes() {
  MutexLock lk(&impl_->read_mu);
  ASSIGN_OR_RETURN(Stmt s, impl_->rdb.Prepare(std::string(kSelectNodes) + " ORDER BY name"));
  std::vector<StoredNode> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    ASSIGN_OR_RETURN(StoredNode n, ReadNodeRow(s));
    out.push_back(std::move(n));
  }
  return out;
}

Result<StoredNode> Store::GetNode(const std::string& name) {
  MutexLock lk(&impl_->read_mu);
  ASSIGN_OR_RETURN(Stmt s, impl_->rdb.Prepare(std::string(kSelectNodes) + " WHERE name = ?1"));
  s.Bind(1, name);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Status::NotFound("node " + name + " not found");
  return ReadNodeRow(s);
}

void Store::Append(const std::string& node, std::vector<api::NodeSample> samples, Done done) {
  Append(node, std::make_shared<const std::vector<api::NodeSample>>(std::move(samples)), std::move(done));
}

void Store::Append(const std::string& node, api::SampleBatch samples, Done done) {
  impl_->writer->Append(node, std::move(samples), std::move(done));
}

Status Store::Flush() { return impl_->writer->Flush(); }
Status Store::AggregateMinutes() { return impl_->writer->AggregateMinutes(); }

Status Store::Write(const DbTask& task) {
  if (!task) return Status::InvalidArgument("store: empty write task");
  return impl_->writer->Run(task);
}

void Store::WriteAsync(DbTask task, std::function<void(Status)> done) {
  if (!task) {
    if (done) done(Status::InvalidArgument("store: empty write task"));
    return;
  }
  impl_->writer->RunAsync(std::move(task), std::move(done));
}

Status Store::Read(const DbTask& task) {
  MutexLock lock(&impl_->read_mu);
  return task(impl_->rdb);
}

Status Store::RunRetention(int64_t now_ms) { return impl_->writer->RunRetention(now_ms); }

}  // namespace rota::store
