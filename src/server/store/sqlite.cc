#include "server/store/sqlite.h"

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rota::store {

// Idle prepared statements of one connection, by SQL text.
class StmtCache {
 public:
  ~StmtCache() { Clear(); }
  sqlite3_stmt* Take(const std::string& sql) {
    auto it = idle_.find(sql);
    if (it == idle_.end() || it->second.empty()) return nullptr;
    sqlite3_stmt* s = it->second.back();
    it->second.pop_back();
    --size_;
    return s;
  }
  void Put(sqlite3_stmt* s) {
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    const char* sql = sqlite3_sql(s);
    if (sql == nullptr) {
      sqlite3_finalize(s);
      return;
    }
    if (size_ >= Db::kMaxCachedStatements) Clear();  // SQL built on the fly: start over
    idle_[sql].push_back(s);
    ++size_;
  }

 private:
  void Clear() {
    for (auto& [text, list] : idle_) {
      for (sqlite3_stmt* st : list) sqlite3_finalize(st);
    }
    idle_.clear();
    size_ = 0;
  }

  std::unordered_map<std::string, std::vector<sqlite3_stmt*>> idle_;
  size_t size_ = 0;
};

// ---- Stmt ----

void Stmt::Drop() {
  if (stmt_ == nullptr) return;
  if (cache_) {
    cache_->Put(stmt_);
  } else {
    sqlite3_finalize(stmt_);
  }
  stmt_ = nullptr;
}

Stmt& Stmt::operator=(Stmt&& o) noexcept {
  if (this != &o) {
    Drop();
    stmt_ = o.stmt_;
    cache_ = o.cache_;
    bind_error_ = o.bind_error_;
    o.stmt_ = nullptr;
  }
  return *this;
}

Stmt::~Stmt() { Drop(); }

void Stmt::Check(int rc) {
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
}

Stmt& Stmt::Bind(int i, int64_t v) {
  Check(sqlite3_bind_int64(stmt_, i, v));
  return *this;
}

Stmt& Stmt::Bind(int i, double v) {
  Check(sqlite3_bind_double(stmt_, i, v));
  return *this;
}

Stmt& Stmt::Bind(int i, std::string_view v) {
  Check(sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Stmt& Stmt::BindBlob(int i, std::string_view bytes) {
  Check(sqlite3_bind_blob64(stmt_, i, bytes.data(), bytes.size(), SQLITE_TRANSIENT));
  return *this;
}

Stmt& Stmt::BindNull(int i) {
  Check(sqlite3_bind_null(stmt_, i));
  return *this;
}

Result<bool> Stmt::Step() {
  if (bind_error_ != SQLITE_OK) {
    int rc = bind_error_;
    bind_error_ = SQLITE_OK;
    return SqliteError(sqlite3_db_handle(stmt_), rc, std::string("bind in ") + sqlite3_sql(stmt_));
  }
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  Status st = SqliteError(sqlite3_db_handle(stmt_), rc, sqlite3_sql(stmt_));
  sqlite3_reset(stmt_);
  return st;
}

Status Stmt::Run() {
  while (true) {
    ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status::Ok();
  }
}

void Stmt::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_error_ = SQLITE_OK;
}

bool Stmt::IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
int64_t Stmt::Int(int col) const { return sqlite3_column_int64(stmt_, col); }
double Stmt::Double(int col) const { return sqlite3_column_double(stmt_, col); }

std::string Stmt::Text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  if (!p) return {};
  return std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

std::string_view Stmt::Blob(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  if (!p) return {};
  return {static_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col))};
}

std::optional<int64_t> Stmt::OptInt(int col) const {
  if (IsNull(col)) return std::nullopt;
  return Int(col);
}

std::optional<double> Stmt::OptDouble(int col) const {
  if (IsNull(col)) return std::nullopt;
  return Double(col);
}

// ---- Db ----

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
  return Db(raw, path);
}

Db::Db(sqlite3* db, std::string path)
    : db_(db), path_(std::move(path)), cache_(std::make_unique<StmtCache>()) {}

Db::Db(Db&& o) noexcept : db_(o.db_), path_(std::move(o.path_)), cache_(std::move(o.cache_)) {
  o.db_ = nullptr;
}

Db& Db::operator=(Db&& o) noexcept {
  if (this != &o) {
    cache_.reset();  // its statements belong to the connection closed next
    if (db_) sqlite3_close_v2(db_);
    db_ = o.db_;
    path_ = std::move(o.path_);
    cache_ = std::move(o.cache_);
    o.db_ = nullptr;
  }
  return *this;
}

Db::~Db() {
  cache_.reset();
  if (db_) sqlite3_close_v2(db_);
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

Status Db::Exec(const std::string& sql) {
  if (sql.find(';') == std::string::npos) {
    ASSIGN_OR_RETURN(Stmt s, Prepare(sql));
    return s.Run();
  }
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (err) sqlite3_free(err);
  if (rc != SQLITE_OK) return Error(rc, sql);
  return Status::Ok();
}

Result<Stmt> Db::Prepare(const std::string& sql) {
  if (sqlite3_stmt* cached = cache_->Take(sql)) return Stmt(cached, cache_.get());
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &s, nullptr);
  if (rc != SQLITE_OK) return Error(rc, sql);
  if (s == nullptr) return Status::Internal("empty SQL statement: " + sql);
  return Stmt(s, cache_.get());
}

Result<int64_t> Db::QueryInt(const std::string& sql) {
  ASSIGN_OR_RETURN(Stmt s, Prepare(sql));
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Status::NotFound(path_ + ": no row from: " + sql);
  return s.Int(0);
}

Result<std::string> Db::QueryText(const std::string& sql) {
  ASSIGN_OR_RETURN(Stmt s, Prepare(sql));
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Status::NotFound(path_ + ": no row from: " + sql);
  return s.Text(0);
}

// ---- Transaction ----

Result<Transaction> Transaction::Begin(Db& db, const char* begin) {
  RETURN_IF_ERROR(db.Exec(begin));
  return Transaction(&db);
}

Transaction::~Transaction() {
  if (db_ && !sqlite3_get_autocommit(db_->raw())) (void)db_->Exec("ROLLBACK");
}

Status Transaction::Commit() {
  Status st = db_->Exec("COMMIT");
  if (!st.ok()) return st;
  db_ = nullptr;
  return Status::Ok();
}

}  // namespace rota::store
