// rota admin backup / restore on a PostgreSQL store: pg_dump's custom format, and
// pg_restore (backup.h; docs/design-store.md, "Backup and restore").

#include <fcntl.h>
#include <libpq-fe.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <vector>

#include "common/run_command.h"
#include "server/store/backup.h"
#include "server/store/pg_backend.h"
#include "server/store/schema.h"
#include "server/store/store_url.h"

namespace rota::store {
namespace {

constexpr int kToolTimeoutMs = 12 * 3600 * 1000;  // pg_dump / pg_restore of a large store

// The libpq URL as a conninfo string without its password, and the password.
struct Conninfo {
  std::string text;
  std::string password;
};

Result<Conninfo> SplitPassword(const std::string& url, const std::string& display) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(url.c_str(), &err);
  if (opts == nullptr) {
    std::string why = err ? err : "out of memory";
    PQfreemem(err);
    return Status::InvalidArgument(display + ": " + HideUrlIn(why, url));
  }
  Conninfo c;
  for (PQconninfoOption* o = opts; o->keyword != nullptr; ++o) {
    if (o->val == nullptr || *o->val == '\0') continue;
    if (std::strcmp(o->keyword, "password") == 0) {
      c.password = o->val;
      continue;
    }
    std::string v;
    for (const char* p = o->val; *p; ++p) {
      if (*p == '\\' || *p == '\'') v += '\\';
      v += *p;
    }
    c.text += std::string(c.text.empty() ? "" : " ") + o->keyword + "='" + v + "'";
  }
  PQconninfoFree(opts);
  return c;
}

// Runs a PostgreSQL client program with the password in PGPASSWORD (never in argv,
// which other users can read), restoring the variable afterwards.
// REQUIRES: no other thread reads or writes the environment meanwhile.
Result<CommandOutput> RunPgTool(const std::vector<std::string>& argv, const std::string& password,
                                const std::string& url) {
  std::optional<std::string> saved;
  if (const char* old = std::getenv("PGPASSWORD")) saved = old;
  if (!password.empty()) ::setenv("PGPASSWORD", password.c_str(), 1);
  RunOptions ro;
  ro.timeout_ms = kToolTimeoutMs;
  auto out = RunCommand(argv, ro);
  if (!password.empty()) {
    if (saved)
      ::setenv("PGPASSWORD", saved->c_str(), 1);
    else
      ::unsetenv("PGPASSWORD");
  }
  if (!out.ok()) {
    if (out.status().code() == StatusCode::kUnavailable) {
      return Status::Unavailable(argv[0] + " cannot be started (" + out.status().message() +
                                 "): install Debian's postgresql-client");
    }
    return out.status();
  }
  out->err = HideUrlIn(out->err, url);
  return out;
}

std::string FirstLines(const std::string& text) {
  std::string t = text.substr(0, 2000);
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t;
}

// What a dump says of itself: the schema its tables are in and the highest
// version in its schema_version table.
struct DumpInfo {
  std::string schema;
  int64_t version = 0;
};

Result<DumpInfo> ReadDump(const std::string& file) {
  auto out =
      RunPgTool({"pg_restore", "--data-only", "--table=schema_version", "--file=-", file}, "", "");
  if (!out.ok()) return out.status();
  if (out->exit_code != 0) {
    return Status::InvalidArgument(file + " is not a pg_dump archive: " + FirstLines(out->err));
  }
  DumpInfo d;
  std::istringstream in(out->out);
  std::string line;
  bool rows = false;
  while (std::getline(in, line)) {
    if (!rows) {
      const size_t at = line.find(".schema_version (");
      if (line.rfind("COPY ", 0) == 0 && at != std::string::npos) {
        d.schema = line.substr(5, at - 5);
        if (d.schema.size() >= 2 && d.schema.front() == '"')
          d.schema = d.schema.substr(1, d.schema.size() - 2);
        rows = true;
      }
      continue;
    }
    if (line == "\\.") break;
    const std::string first = line.substr(0, line.find('\t'));
    char* end = nullptr;
    const long long v = std::strtoll(first.c_str(), &end, 10);
    if (end != first.c_str() && v > d.version) d.version = v;
  }
  if (d.version <= 0) {
    return Status::InvalidArgument(file +
                                   " is not a backup of a rota store (no schema version in it)");
  }
  return d;
}

Status Errno(const std::string& what) {
  return Status::IoError(what + ": " + std::strerror(errno));
}

std::string Quote(const std::string& ident) { return "\"" + ident + "\""; }

// A file of this process's own in the temporary directory ($TMPDIR, else /tmp), mode 0600,
// removed when it goes.
class TempFile {
 public:
  static Result<TempFile> Create(const std::string& kind) {
    const char* dir = std::getenv("TMPDIR");
    std::string path = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/rota_restore_" + kind + "_XXXXXX";
    int fd = ::mkstemp(path.data());
    if (fd < 0) return Errno("cannot create a file like " + path);
    return TempFile(std::move(path), fd);
  }
  TempFile(TempFile&& o) noexcept : path_(std::move(o.path_)), fd_(o.fd_) { o.fd_ = -1; o.path_.clear(); }
  TempFile& operator=(TempFile&&) = delete;
  TempFile(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  const std::string& path() const { return path_; }
  int fd() const { return fd_; }

 private:
  TempFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_;
};

Result<std::vector<std::string>> TablesOf(Db& db) {
  std::vector<std::string> out;
  ASSIGN_OR_RETURN(Stmt s,
                   db.Prepare("SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
                              "ORDER BY tablename"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(s.Text(0));
  }
  return out;
}

// Unavailable when a server uses the store: its leader lease holds, or one
// registered within kServerSeenMs (both on the database's clock).
Status RefuseInUse(Db& db, const std::vector<std::string>& tables, const std::string& display) {
  auto has = [&](const char* t) {
    for (const auto& n : tables) {
      if (n == t) return true;
    }
    return false;
  };
  const std::string now = "(extract(epoch from clock_timestamp()) * 1000)::bigint";
  if (has("leader_lease")) {
    ASSIGN_OR_RETURN(int64_t leading,
                     db.QueryInt("SELECT count(*) FROM leader_lease WHERE expires_at_ms > " + now));
    if (leading > 0) {
      return Status::Unavailable(
          "a rota server leads on " + display +
          " (its leader lease holds): stop every server on it, then restore");
    }
  }
  if (has("servers")) {
    ASSIGN_OR_RETURN(int64_t seen,
                     db.QueryInt("SELECT count(*) FROM servers WHERE last_seen_ms > " + now +
                                 " - " + std::to_string(kServerSeenMs)));
    if (seen > 0) {
      return Status::Unavailable("a rota server runs on " + display + " (registered in the last " +
                                 std::to_string(kServerSeenMs / 1000) +
                                 " s): stop every server on it and wait as long, then restore");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<BackupResult> BackupPostgres(const std::string& pg_url, const std::string& display,
                                    const std::string& file) {
  ASSIGN_OR_RETURN(Conninfo conn, SplitPassword(pg_url, display));
  std::string schema;
  {
    ASSIGN_OR_RETURN(Db db, OpenPostgres(pg_url, display));
    ASSIGN_OR_RETURN(int64_t version, SchemaVersion(db));
    if (version <= 0) return Status::InvalidArgument(display + " holds no rota store");
    ASSIGN_OR_RETURN(schema, db.QueryText("SELECT current_schema()::text"));
  }
  const std::string tmp = file + ".tmp-" + std::to_string(::getpid());
  ::unlink(tmp.c_str());
  int fd =
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);  // pg_dump keeps the mode
  if (fd < 0) return Errno("cannot create " + tmp);
  ::close(fd);
  auto fail = [&](Status st) {
    ::unlink(tmp.c_str());
    return st;
  };
  // One snapshot: pg_dump reads every table in one repeatable-read transaction.
  auto out = RunPgTool({"pg_dump", "--format=custom", "--schema=" + Quote(schema), "--file=" + tmp,
                        "--dbname=" + conn.text},
                       conn.password, pg_url);
  if (!out.ok()) return fail(out.status());
  if (out->exit_code != 0)
    return fail(Status::IoError("pg_dump of " + display + " failed: " + FirstLines(out->err)));
  auto dump = ReadDump(tmp);  // the version the backup records, read back from it
  if (!dump.ok())
    return fail(Status::IoError("the dump of " + display +
                                " does not read back: " + dump.status().message()));
  if (::rename(tmp.c_str(), file.c_str()) != 0)
    return fail(Errno("cannot rename " + tmp + " to " + file));
  struct stat st {};
  ::stat(file.c_str(), &st);
  return BackupResult{display, dump->version, static_cast<int64_t>(st.st_size), "pg_dump"};
}

Result<RestoreResult> RestorePostgres(const RestoreOptions& o, const std::string& pg_url,
                                      const std::string& display, int64_t now_ms) {
  struct stat st {};
  if (::stat(o.file.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return Status::NotFound("no backup at " + o.file);
  ASSIGN_OR_RETURN(DumpInfo dump, ReadDump(o.file));
  if (dump.version > kSchemaVersion) {
    return Status::Conflict(
        o.file + " is a backup of schema version " + std::to_string(dump.version) +
        ", written by a newer rota (this one knows up to " + std::to_string(kSchemaVersion) +
        "): restore it with that rota or a newer one");
  }
  ASSIGN_OR_RETURN(Conninfo conn, SplitPassword(pg_url, display));
  std::string drop;  // the old store's tables, dropped in the restore's transaction
  {
    ASSIGN_OR_RETURN(Db db, OpenPostgres(pg_url, display));
    RETURN_IF_ERROR(RequireWritable(db));
    ASSIGN_OR_RETURN(std::string schema, db.QueryText("SELECT current_schema()::text"));
    if (schema != dump.schema) {
      return Status::InvalidArgument(o.file + " holds a store of schema " + dump.schema + " and " +
                                     display + " keeps its store in schema " + schema +
                                     ": restore into a database whose "
                                     "search_path names " +
                                     dump.schema);
    }
    ASSIGN_OR_RETURN(std::vector<std::string> tables, TablesOf(db));
    if (!tables.empty()) {
      bool rota = false;
      for (const auto& t : tables) rota = rota || t == "schema_version";
      if (!rota) {
        return Status::InvalidArgument(display + " holds tables that are not a rota store's (" +
                                       tables[0] +
                                       ", ...): restore into an empty database or a rota store");
      }
      RETURN_IF_ERROR(RefuseInUse(db, tables, display));
      if (!o.overwrite) {
        return Status::Conflict(display +
                                " already holds a store: stop every server on it and give " +
                                "--overwrite to replace it with the backup");
      }
      drop = "DROP TABLE ";
      for (size_t i = 0; i < tables.size(); ++i) drop += (i ? ", " : "") + Quote(tables[i]);
      drop += " CASCADE";
    }
  }
  // Every entry of the archive but its schema's own (CREATE SCHEMA, its comment):
  // the schema is the target's.
  auto list = RunPgTool({"pg_restore", "--list", o.file}, "", "");
  if (!list.ok()) return list.status();
  if (list->exit_code != 0)
    return Status::IoError("pg_restore --list failed: " + FirstLines(list->err));
  std::string entries;
  std::istringstream in(list->out);
  for (std::string line; std::getline(in, line);) {
    if (line.find(" SCHEMA - ") != std::string::npos ||
        line.find(" COMMENT - SCHEMA ") != std::string::npos) {
      continue;
    }
    entries += line + "\n";
  }
  ASSIGN_OR_RETURN(TempFile list_file, TempFile::Create("list"));
  if (::write(list_file.fd(), entries.data(), entries.size()) != static_cast<ssize_t>(entries.size())) {
    return Status::IoError("cannot write " + list_file.path());
  }
  // The backup as SQL (pg_restore's script: DDL, then COPY blocks), then run by psql in ONE
  // transaction after the old store's DROP: whatever fails rolls everything back, so an
  // --overwrite that fails leaves the old store as it was.
  ASSIGN_OR_RETURN(TempFile script, TempFile::Create("sql"));
  auto sql = RunPgTool({"pg_restore", "--no-owner", "--no-privileges", "--use-list=" + list_file.path(),
                        "--file=" + script.path(), o.file},
                       "", "");
  if (!sql.ok()) return sql.status();
  if (sql->exit_code != 0) return Status::IoError("pg_restore of " + o.file + " failed: " + FirstLines(sql->err));
  std::vector<std::string> psql = {"psql", "--no-psqlrc", "--quiet", "--output=/dev/null",
                                   "--set=ON_ERROR_STOP=1", "--single-transaction"};
  if (!drop.empty()) psql.push_back("--command=" + drop);
  psql.push_back("--file=" + script.path());
  psql.push_back("--dbname=" + conn.text);
  auto out = RunPgTool(psql, conn.password, pg_url);
  if (!out.ok()) return out.status();
  if (out->exit_code != 0) {
    return Status::IoError("restoring into " + display + " failed, nothing changed" +
                           (drop.empty() ? "" : " (the old store is as it was)") + ": " + FirstLines(out->err));
  }
  // A new connection: the tables it knew are gone. An older backup is migrated here.
  ASSIGN_OR_RETURN(Db db, OpenPostgres(pg_url, display));
  RETURN_IF_ERROR(
      ApplySchema(db, now_ms)
          .WithContext("migrating the backup from schema version " + std::to_string(dump.version)));
  // The registry of the servers that ran at the time of the backup is theirs, not the restored
  // store's.
  RETURN_IF_ERROR(db.Exec("DELETE FROM servers"));
  return RestoreResult{display, dump.version, kSchemaVersion};
}

}  // namespace rota::store
