#include "server/store/migrate.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "server/store/pg_backend.h"
#include "server/store/schema.h"
#include "server/store/sqlite_backend.h"
#include "server/store/store_impl.h"
#include "server/store/store_url.h"

namespace rota::store {
namespace {

// Parameters per INSERT at most (PostgreSQL allows 65,535), and rows.
constexpr size_t kMaxParams = 30'000;
constexpr size_t kMaxRows = 500;

struct Column {
  std::string name;
  SqlType type = SqlType::kText;  // the target's
  bool identity = false;
};

struct Table {
  std::string name;
  std::vector<Column> columns;
  std::set<std::string> references;  // tables it references (itself excluded)
};

std::string Quote(const std::string& ident) { return "\"" + ident + "\""; }

Result<Db> OpenSource(const StoreUrl& u) {
  ASSIGN_OR_RETURN(Db db, Db::Open(u.sqlite_path, SQLITE_OPEN_READWRITE));  // never CREATE
  RETURN_IF_ERROR(db.Exec("PRAGMA query_only = ON"));
  auto not_ours = [&](const std::string& why) {
    return Status::InvalidArgument(u.display + " is not a rota store: " + why);
  };
  auto app_id = db.QueryInt("PRAGMA application_id");
  if (!app_id.ok()) return not_ours(app_id.status().message());
  if (*app_id != kApplicationId) return not_ours("another program's SQLite database");
  ASSIGN_OR_RETURN(int64_t version, SchemaVersion(db));
  if (version > kSchemaVersion) {
    return Status::Conflict(u.display + " has schema version " + std::to_string(version) +
                            ", written by a newer rota (this one knows up to " +
                            std::to_string(kSchemaVersion) + "): migrate with that rota");
  }
  if (version < kSchemaVersion) {
    return Status::InvalidArgument(
        u.display + " has schema version " + std::to_string(version) + " and this rota writes " +
        std::to_string(kSchemaVersion) + ": start this rota's server on it once (it upgrades " +
        "the store), stop it, then migrate");
  }
  return db;
}

// The source's tables, each after the tables it references, with the target's column types.
// Not the target's own: its schema version, and the leader lease and server registry of the
// servers that will run on it (runtime state; SQLite's copies are unused).
Result<std::vector<Table>> Tables(Db& src, Db& dst) {
  std::map<std::string, Table> all;
  ASSIGN_OR_RETURN(Stmt names, src.Prepare("SELECT name FROM sqlite_schema WHERE type = 'table' "
                                           "AND name NOT LIKE 'sqlite_%' AND name NOT IN "
                                           "('schema_version', 'leader_lease', 'servers') "
                                           "ORDER BY name"));
  ASSIGN_OR_RETURN(Stmt cols, src.Prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid"));
  ASSIGN_OR_RETURN(Stmt refs, src.Prepare("SELECT \"table\" FROM pragma_foreign_key_list(?1)"));
  ASSIGN_OR_RETURN(Stmt target,
                   dst.Prepare("SELECT column_name, data_type, is_identity FROM "
                               "information_schema.columns WHERE table_schema = current_schema() "
                               "AND table_name = ?1"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, names.Step());
    if (!row) break;
    Table t;
    t.name = names.Text(0);
    std::map<std::string, Column> dst_cols;
    target.Reset();
    target.Bind(1, t.name);
    while (true) {
      ASSIGN_OR_RETURN(bool c, target.Step());
      if (!c) break;
      const std::string type = target.Text(1);
      Column col{target.Text(0), SqlType::kText, target.Text(2) == "YES"};
      if (type == "bigint" || type == "integer" || type == "smallint") col.type = SqlType::kInt;
      if (type == "double precision" || type == "real" || type == "numeric") {
        col.type = SqlType::kDouble;
      }
      if (type == "bytea") col.type = SqlType::kBlob;
      dst_cols.emplace(col.name, col);
    }
    if (dst_cols.empty()) {
      return Status::Internal("table " + t.name + " of the source has no counterpart in " +
                              dst.path());
    }
    cols.Reset();
    cols.Bind(1, t.name);
    while (true) {
      ASSIGN_OR_RETURN(bool c, cols.Step());
      if (!c) break;
      auto it = dst_cols.find(cols.Text(0));
      if (it == dst_cols.end()) {
        return Status::Internal("column " + t.name + "." + cols.Text(0) +
                                " of the source has no counterpart in " + dst.path());
      }
      t.columns.push_back(it->second);
    }
    refs.Reset();
    refs.Bind(1, t.name);
    while (true) {
      ASSIGN_OR_RETURN(bool r, refs.Step());
      if (!r) break;
      if (refs.Text(0) != t.name) t.references.insert(refs.Text(0));
    }
    all.emplace(t.name, std::move(t));
  }
  // Kahn's algorithm, by name among the tables ready: a stable order.
  std::vector<Table> ordered;
  std::set<std::string> done;
  while (!all.empty()) {
    auto ready = std::find_if(all.begin(), all.end(), [&](const auto& kv) {
      return std::all_of(kv.second.references.begin(), kv.second.references.end(),
                         [&](const std::string& r) { return done.count(r) || !all.count(r); });
    });
    if (ready == all.end()) return Status::Internal("the source's foreign keys form a cycle");
    done.insert(ready->first);
    ordered.push_back(std::move(ready->second));
    all.erase(ready);
  }
  return ordered;
}

std::string InsertSql(const Table& t, size_t rows) {
  std::string sql = "INSERT INTO " + Quote(t.name) + " (";
  for (size_t c = 0; c < t.columns.size(); ++c) sql += (c ? ", " : "") + Quote(t.columns[c].name);
  sql += ") VALUES ";
  int p = 0;
  for (size_t r = 0; r < rows; ++r) {
    sql += r ? ", (" : "(";
    for (size_t c = 0; c < t.columns.size(); ++c) sql += (c ? ", ?" : "?") + std::to_string(++p);
    sql += ")";
  }
  return sql;
}

// One value of a source row, as the target column takes it.
struct Value {
  bool null = false;
  int64_t i = 0;
  double d = 0;
  std::string s;  // text or blob bytes
};

// Copies every row of `t`; returns how many.
Result<int64_t> CopyTable(Db& src, Db& dst, const Table& t) {
  std::string select = "SELECT ";
  for (size_t c = 0; c < t.columns.size(); ++c) select += (c ? ", " : "") + Quote(t.columns[c].name);
  ASSIGN_OR_RETURN(Stmt read, src.Prepare(select + " FROM " + Quote(t.name)));
  const size_t ncols = t.columns.size();
  const size_t batch = std::max<size_t>(1, std::min(kMaxRows, kMaxParams / ncols));
  std::vector<Value> rows;  // row-major, up to `batch` rows
  rows.reserve(batch * ncols);
  int64_t copied = 0;
  std::optional<Stmt> full;
  auto flush = [&]() -> Status {
    const size_t n = rows.size() / ncols;
    if (n == 0) return Status::Ok();
    std::optional<Stmt> short_batch;
    if (n == batch && !full) {
      ASSIGN_OR_RETURN(Stmt f, dst.Prepare(InsertSql(t, batch)));
      full.emplace(std::move(f));
    } else if (n != batch) {
      ASSIGN_OR_RETURN(Stmt f, dst.Prepare(InsertSql(t, n)));
      short_batch.emplace(std::move(f));
    }
    Stmt& s = n == batch ? *full : *short_batch;
    s.Reset();
    for (size_t k = 0; k < rows.size(); ++k) {
      const int i = static_cast<int>(k + 1);
      const Value& v = rows[k];
      const SqlType type = t.columns[k % ncols].type;
      if (v.null) {
        s.BindNull(i, type);
        continue;
      }
      switch (type) {
        case SqlType::kInt: s.Bind(i, v.i); break;
        case SqlType::kDouble: s.Bind(i, v.d); break;
        case SqlType::kBlob: s.BindBlob(i, v.s); break;
        default: s.Bind(i, std::string_view(v.s)); break;
      }
    }
    RETURN_IF_ERROR(s.Run().WithContext("copying " + t.name));
    s.Reset();
    copied += static_cast<int64_t>(n);
    rows.clear();
    return Status::Ok();
  };
  while (true) {
    ASSIGN_OR_RETURN(bool row, read.Step());
    if (!row) break;
    for (size_t c = 0; c < ncols; ++c) {
      const int col = static_cast<int>(c);
      Value v;
      v.null = read.IsNull(col);
      if (!v.null) {
        switch (t.columns[c].type) {
          case SqlType::kInt: v.i = read.Int(col); break;
          case SqlType::kDouble: v.d = read.Double(col); break;
          case SqlType::kBlob: v.s = std::string(read.Blob(col)); break;
          default: v.s = read.Text(col); break;
        }
      }
      rows.push_back(std::move(v));
    }
    if (rows.size() == batch * ncols) RETURN_IF_ERROR(flush());
  }
  RETURN_IF_ERROR(flush());
  // Identity columns continue after the copied ids.
  for (const Column& c : t.columns) {
    if (!c.identity) continue;
    RETURN_IF_ERROR(dst.QueryText("SELECT setval(pg_get_serial_sequence('" + Quote(t.name) +
                                  "', '" + c.name + "'), (SELECT coalesce(max(" + Quote(c.name) +
                                  "), 0) + 1 FROM " + Quote(t.name) + "), false)::text")
                        .status()
                        .WithContext("setting " + t.name + "." + c.name + "'s sequence"));
  }
  return copied;
}

}  // namespace

Result<std::vector<TableCount>> MigrateStore(const MigrateOptions& o, int64_t now_ms) {
  ASSIGN_OR_RETURN(StoreUrl from, ParseStoreUrl(o.from));
  ASSIGN_OR_RETURN(StoreUrl to, ParseStoreUrl(o.to));
  if (from.dialect != Dialect::kSqlite) {
    return Status::InvalidArgument("--from must be a SQLite store (sqlite:PATH), not " +
                                   from.display);
  }
  if (to.dialect != Dialect::kPostgres) {
    return Status::InvalidArgument("--to must be a PostgreSQL store (postgresql://...), not " +
                                   to.display);
  }
  const size_t slash = from.sqlite_path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : from.sqlite_path.substr(0, slash);
  struct stat st {};
  if (::stat(from.sqlite_path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Status::NotFound("no SQLite store at " + from.display + " (" + from.sqlite_path +
                            " is not a file)");
  }
  // Held until the end: no server starts on the source meanwhile.
  auto lock = LockDir(dir);
  if (!lock.ok()) {
    if (lock.status().code() != StatusCode::kUnavailable) return lock.status();
    return Status::Unavailable("a rota server is running on " + from.display + " (" + dir +
                               "/rota.lock is held): stop it, then migrate");
  }
  ASSIGN_OR_RETURN(Db src, OpenSource(from));
  auto dst_or = OpenPostgres(to.pg_url, to.display);
  if (!dst_or.ok()) return dst_or.status();
  Db dst = std::move(*dst_or);
  RETURN_IF_ERROR(RequireWritable(dst));
  RETURN_IF_ERROR(ApplySchema(dst, now_ms));

  ASSIGN_OR_RETURN(std::vector<Table> tables, Tables(src, dst));
  RETURN_IF_ERROR(src.Exec("BEGIN"));  // one snapshot of the source
  ASSIGN_OR_RETURN(auto tx, Transaction::Begin(dst));
  std::string nonempty;
  for (const Table& t : tables) {
    ASSIGN_OR_RETURN(int64_t n, dst.QueryInt("SELECT count(*) FROM " + Quote(t.name)));
    if (n > 0 && nonempty.empty()) nonempty = t.name + ": " + std::to_string(n) + " rows";
  }
  if (!nonempty.empty()) {
    if (!o.overwrite) {
      return Status::Conflict(to.display + " already holds a store (" + nonempty +
                              "); give an empty database, or --overwrite to replace its rows");
    }
    std::string truncate = "TRUNCATE ";
    for (size_t i = 0; i < tables.size(); ++i) truncate += (i ? ", " : "") + Quote(tables[i].name);
    RETURN_IF_ERROR(dst.Exec(truncate + " RESTART IDENTITY"));
  }
  std::vector<TableCount> counts;
  for (const Table& t : tables) {
    ASSIGN_OR_RETURN(int64_t copied, CopyTable(src, dst, t));
    ASSIGN_OR_RETURN(int64_t in_src, src.QueryInt("SELECT count(*) FROM " + Quote(t.name)));
    ASSIGN_OR_RETURN(int64_t in_dst, dst.QueryInt("SELECT count(*) FROM " + Quote(t.name)));
    if (copied != in_src || in_dst != in_src) {
      return Status::Internal("table " + t.name + ": " + std::to_string(in_src) +
                              " rows in the source, " + std::to_string(copied) + " copied, " +
                              std::to_string(in_dst) + " in the target; nothing was committed");
    }
    counts.push_back(TableCount{t.name, in_src});
  }
  RETURN_IF_ERROR(tx.Commit());
  (void)src.Exec("COMMIT");
  return counts;
}

}  // namespace rota::store
