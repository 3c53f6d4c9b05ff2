#pragma once
// The store's SQL layer, the same for every backend: Db is one connection, Stmt
// one statement with its bindings and current row, Transaction a BEGIN ...
// COMMIT guard. The domain stores (accounts.h, jobs.h, ...) write their SQL once
// against it; a backend (sqlite_backend.h, pg_backend.h) implements the two small
// interfaces below. See docs/design-store.md, "Backends".
//
// SQL text: parameters are written ?1, ?2, ... (the PostgreSQL backend rewrites
// them to $1, $2, ...); write SQL that both dialects accept (RETURNING id, ON
// CONFLICT ... DO NOTHING / DO UPDATE, standard functions), and branch on
// Db::dialect() only for what genuinely differs (DDL, PRAGMAs, catalog queries).
//
// Thread safety: a Db and its Stmts must be used by one thread at a time;
// callers serialize.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "common/status.h"

struct sqlite3;

namespace rota::store {

enum class Dialect { kSqlite, kPostgres };
const char* DialectName(Dialect d);

// What a NULL stands for, where the caller knows (a std::optional's type):
// PostgreSQL cannot always infer a parameter's type from the SQL alone
// ("?2 IS NULL OR t < ?2").
enum class SqlType { kUnknown, kInt, kDouble, kText, kBlob };

// One prepared statement of a backend: bindings, execution, the current row.
// Bind indexes are 1-based, column indexes 0-based. Column reads of a NULL give
// 0, 0.0 or an empty string, as SQLite's do.
class SqlStatement {
 public:
  virtual ~SqlStatement() = default;
  virtual void BindInt(int i, int64_t v) = 0;
  virtual void BindDouble(int i, double v) = 0;
  virtual void BindText(int i, std::string_view v) = 0;
  virtual void BindBlob(int i, std::string_view bytes) = 0;
  virtual void BindNull(int i, SqlType type) = 0;
  // Runs the statement on the first call after a Reset (or after the last row
  // was passed), then moves to the next row: true when a row is available.
  virtual Result<bool> Step() = 0;
  // Back to before the first Step, bindings cleared.
  virtual void Reset() = 0;
  virtual int ColumnCount() const = 0;
  virtual bool IsNull(int col) const = 0;
  virtual int64_t Int(int col) const = 0;
  virtual double Double(int col) const = 0;
  virtual std::string Text(int col) const = 0;
  virtual std::string_view Blob(int col) const = 0;
};

// One connection of a backend. Statements it hands out come back through
// Release (reset, for its cache, or deleted).
class SqlConnection {
 public:
  virtual ~SqlConnection() = default;
  virtual Dialect dialect() const = 0;
  // What error messages call the database: a file path, or a URL without password.
  virtual const std::string& name() const = 0;
  virtual Status Exec(const std::string& sql) = 0;
  virtual Result<SqlStatement*> Prepare(const std::string& sql) = 0;
  virtual void Release(SqlStatement* s) = 0;
  virtual int64_t Changes() const = 0;
  // Inside BEGIN ... COMMIT (or a failed transaction not yet rolled back).
  virtual bool InTransaction() const = 0;
  // The statement that begins a write transaction ("BEGIN IMMEDIATE" on SQLite).
  virtual const char* BeginWriteSql() const = 0;
  // The sqlite3 handle on the SQLite backend, else null.
  virtual sqlite3* sqlite() const { return nullptr; }
};

// A statement. Movable, not copyable. REQUIRES: does not outlive its Db. When it
// is destroyed it goes back to its Db (a backend may keep it for the next Prepare
// of the same SQL).
class Stmt {
 public:
  Stmt() = default;
  Stmt(Stmt&& o) noexcept : s_(o.s_), conn_(o.conn_) { o.s_ = nullptr; }
  Stmt& operator=(Stmt&& o) noexcept;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt() { Drop(); }

  // Binders return *this so calls chain; a bind error is reported by Step().
  Stmt& Bind(int i, int64_t v) {
    s_->BindInt(i, v);
    return *this;
  }
  Stmt& Bind(int i, double v) {
    s_->BindDouble(i, v);
    return *this;
  }
  Stmt& Bind(int i, std::string_view v) {
    s_->BindText(i, v);
    return *this;
  }
  // Copied: `bytes` may go away after the call.
  Stmt& BindBlob(int i, std::string_view bytes) {
    s_->BindBlob(i, bytes);
    return *this;
  }
  // A NULL; without `type` PostgreSQL infers the type from the SQL, which it
  // cannot where the parameter is first seen in "?N IS NULL" (bind a std::optional).
  Stmt& BindNull(int i, SqlType type = SqlType::kUnknown) {
    s_->BindNull(i, type);
    return *this;
  }
  template <typename T>
  Stmt& Bind(int i, const std::optional<T>& v) {
    if (v) return BindValue(i, *v);
    if constexpr (std::is_same_v<T, std::string>) {
      return BindNull(i, SqlType::kText);
    } else if constexpr (std::is_floating_point_v<T>) {
      return BindNull(i, SqlType::kDouble);
    } else {
      return BindNull(i, SqlType::kInt);
    }
  }

  // Runs one step: true when a row is available, false when done.
  Result<bool> Step() { return s_->Step(); }
  // Steps until done (for statements returning no rows).
  Status Run();
  // For INSERT ... RETURNING id: runs the statement and returns the first
  // column of its row (Internal when it returned none).
  Result<int64_t> RunReturningId();
  // Resets for reuse and clears bindings.
  void Reset() { s_->Reset(); }

  int ColumnCount() const { return s_->ColumnCount(); }
  bool IsNull(int col) const { return s_->IsNull(col); }
  int64_t Int(int col) const { return s_->Int(col); }
  double Double(int col) const { return s_->Double(col); }
  std::string Text(int col) const { return s_->Text(col); }
  // A BLOB column's bytes, valid until the next Step, Reset or column read of `col`.
  std::string_view Blob(int col) const { return s_->Blob(col); }
  std::optional<int64_t> OptInt(int col) const;
  std::optional<double> OptDouble(int col) const;

 private:
  friend class Db;
  Stmt(SqlStatement* s, SqlConnection* conn) : s_(s), conn_(conn) {}
  void Drop();
  template <typename T>
  Stmt& BindValue(int i, T v) {
    if constexpr (std::is_same_v<T, std::string>) {
      return Bind(i, std::string_view(v));
    } else if constexpr (std::is_floating_point_v<T>) {
      return Bind(i, static_cast<double>(v));
    } else {
      return Bind(i, static_cast<int64_t>(v));
    }
  }

  SqlStatement* s_ = nullptr;
  SqlConnection* conn_ = nullptr;
};

// One connection. Movable, not copyable.
class Db {
 public:
  // Opens the SQLite database `path` with `flags` (SQLITE_OPEN_*; NOMUTEX is
  // added). IoError on failure. (sqlite_backend.cc; the PostgreSQL backend opens
  // with OpenPostgres, pg_backend.h.)
  static Result<Db> Open(const std::string& path, int flags);
  explicit Db(std::unique_ptr<SqlConnection> conn) : conn_(std::move(conn)) {}

  Db(Db&& o) noexcept = default;
  Db& operator=(Db&& o) noexcept = default;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db() = default;

  Dialect dialect() const { return conn_->dialect(); }
  // Runs one or more statements without results or parameters.
  Status Exec(const std::string& sql) { return conn_->Exec(sql); }
  // A statement for `sql`. SQLite keeps up to kMaxCachedStatements of them by
  // SQL text when their Stmt is destroyed and hands them out again; PostgreSQL
  // keeps the server-side prepared statements per connection.
  Result<Stmt> Prepare(const std::string& sql);
  static constexpr size_t kMaxCachedStatements = 128;
  // Runs a query returning one integer (e.g. "SELECT count(*) ..."); NotFound if no row.
  Result<int64_t> QueryInt(const std::string& sql);
  // Runs a query returning one text value.
  Result<std::string> QueryText(const std::string& sql);
  // Begins a write transaction: BEGIN IMMEDIATE on SQLite (takes the write lock
  // now), BEGIN on PostgreSQL.
  Status Begin() { return conn_->Exec(conn_->BeginWriteSql()); }
  bool InTransaction() const { return conn_->InTransaction(); }

  // Rows changed by the last INSERT/UPDATE/DELETE.
  int64_t Changes() const { return conn_->Changes(); }
  // The database file, or the URL (without password) of a PostgreSQL database.
  const std::string& path() const { return conn_->name(); }
  // The sqlite3 handle on SQLite (WAL hooks, checkpoints), else null.
  sqlite3* raw() const { return conn_->sqlite(); }

 private:
  std::unique_ptr<SqlConnection> conn_;  // heap: Stmts point to it across moves of the Db
};

// BEGIN ... COMMIT guard: rolls back in the destructor unless Commit() succeeded.
class Transaction {
 public:
  // A write transaction (Db::Begin).
  static Result<Transaction> Begin(Db& db);
  Transaction(Transaction&& o) noexcept : db_(o.db_) { o.db_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();
  Status Commit();

 private:
  explicit Transaction(Db* db) : db_(db) {}
  Db* db_;
};

}  // namespace rota::store
