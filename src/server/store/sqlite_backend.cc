#include "server/store/sqlite_backend.h"

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rota::store {
namespace {

class SqliteStatement final : public SqlStatement {
 public:
  explicit SqliteStatement(sqlite3_stmt* s) : s_(s) {}
  ~SqliteStatement() override { sqlite3_finalize(s_); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  sqlite3_stmt* raw() const { return s_; }

  void BindInt(int i, int64_t v) override { Check(sqlite3_bind_int64(s_, i, v)); }
  void BindDouble(int i, double v) override { Check(sqlite3_bind_double(s_, i, v)); }
  void BindText(int i, std::string_view v) override {
    Check(sqlite3_bind_text64(s_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  void BindBlob(int i, std::string_view bytes) override {
    Check(sqlite3_bind_blob64(s_, i, bytes.data(), bytes.size(), SQLITE_TRANSIENT));
  }
  void BindNull(int i, SqlType) override { Check(sqlite3_bind_null(s_, i)); }

  Result<bool> Step() override {
    if (bind_error_ != SQLITE_OK) {
      int rc = bind_error_;
      bind_error_ = SQLITE_OK;
      return SqliteError(sqlite3_db_handle(s_), rc, std::string("bind in ") + sqlite3_sql(s_));
    }
    int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    Status st = SqliteError(sqlite3_db_handle(s_), rc, sqlite3_sql(s_));
    sqlite3_reset(s_);
    return st;
  }

  void Reset() override {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
    bind_error_ = SQLITE_OK;
  }

  int ColumnCount() const override { return sqlite3_column_count(s_); }
  bool IsNull(int col) const override { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
  int64_t Int(int col) const override { return sqlite3_column_int64(s_, col); }
  double Double(int col) const override { return sqlite3_column_double(s_, col); }
  std::string Text(int col) const override {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, col));
    if (!p) return {};
    return std::string(p, static_cast<size_t>(sqlite3_column_bytes(s_, col)));
  }
  std::string_view Blob(int col) const override {
    const void* p = sqlite3_column_blob(s_, col);
    if (!p) return {};
    return {static_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(s_, col))};
  }

 private:
  void Check(int rc) {
    if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  }

  sqlite3_stmt* s_;
  int bind_error_ = SQLITE_OK;
};

class SqliteConnection final : public SqlConnection {
 public:
  SqliteConnection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  ~SqliteConnection() override {
    ClearCache();  // its statements belong to the connection closed next
    sqlite3_close_v2(db_);
  }
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  Dialect dialect() const override { return Dialect::kSqlite; }
  const std::string& name() const override { return path_; }
  sqlite3* sqlite() const override { return db_; }
  int64_t Changes() const override { return sqlite3_changes64(db_); }
  bool InTransaction() const override { return !sqlite3_get_autocommit(db_); }
  const char* BeginWriteSql() const override { return "BEGIN IMMEDIATE"; }

  Status Exec(const std::string& sql) override {
    if (sql.find(';') == std::string::npos) {  // one statement: through the cache
      ASSIGN_OR_RETURN(SqlStatement * s, Prepare(sql));
      Status st = Status::Ok();
      while (st.ok()) {
        auto row = s->Step();
        if (!row.ok()) st = row.status();
        if (!row.ok() || !*row) break;
      }
      Release(s);
      return st;
    }
    char* err = nullptr;
    int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
    if (err) sqlite3_free(err);
    if (rc != SQLITE_OK) return SqliteError(db_, rc, sql);
    return Status::Ok();
  }

  Result<SqlStatement*> Prepare(const std::string& sql) override {
    auto it = idle_.find(sql);
    if (it != idle_.end() && !it->second.empty()) {
      SqliteStatement* s = it->second.back();
      it->second.pop_back();
      --idle_count_;
      return s;
    }
    sqlite3_stmt* s = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()),
                                SQLITE_PREPARE_PERSISTENT, &s, nullptr);
    if (rc != SQLITE_OK) return SqliteError(db_, rc, sql);
    if (s == nullptr) return Status::Internal("empty SQL statement: " + sql);
    return new SqliteStatement(s);
  }

  // Keeps the statement, reset and with its bindings cleared, for the next
  // Prepare of its SQL; SQLite re-prepares a kept statement by itself after a
  // schema change.
  void Release(SqlStatement* base) override {
    auto* s = static_cast<SqliteStatement*>(base);
    s->Reset();
    const char* sql = sqlite3_sql(s->raw());
    if (sql == nullptr) {
      delete s;
      return;
    }
    if (idle_count_ >= Db::kMaxCachedStatements) ClearCache();  // SQL built on the fly: start over
    idle_[sql].push_back(s);
    ++idle_count_;
  }

 private:
  void ClearCache() {
    for (auto& [text, list] : idle_) {
      for (SqliteStatement* s : list) delete s;
    }
    idle_.clear();
    idle_count_ = 0;
  }

  sqlite3* db_;
  std::string path_;
  std::unordered_map<std::string, std::vector<SqliteStatement*>> idle_;
  size_t idle_count_ = 0;
};

}  // namespace

Result<Db> Db::Open(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg =
        "cannot open " + path + ": " + (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc));
    sqlite3_close_v2(raw);
    return Status::IoError(msg);
  }
  sqlite3_extended_result_codes(raw, 1);
  return Db(std::make_unique<SqliteConnection>(raw, path));
}

Status SqliteError(sqlite3* db, int rc, std::string_view what) {
  const char* file = db ? sqlite3_db_filename(db, "main") : nullptr;
  std::string msg = std::string(file && *file ? file : "sqlite") + ": " + sqlite3_errstr(rc);
  const char* detail = db ? sqlite3_errmsg(db) : nullptr;
  if (detail && std::string_view(detail) != sqlite3_errstr(rc))
    msg += std::string(" (") + detail + ")";
  if (!what.empty()) msg += " in: " + std::string(what.substr(0, 200));
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Unavailable(msg);
    case SQLITE_CONSTRAINT:
      return Status::Conflict(msg);
    case SQLITE_FULL:
      return Status::ResourceExhausted(msg);
    default:
      return Status::IoError(msg);
  }
}

}  // namespace rota::store
