#pragma once
// A small RAII wrapper over the sqlite3 C API: Db owns a connection, Stmt owns
// a prepared statement. Errors come back as Status naming the database file
// and SQLite's message ("/data/rota.db: file is not a database").
//
// Thread safety: a Db and its Stmts must be used by one thread at a time (the
// connection is opened with SQLITE_OPEN_NOMUTEX); callers serialize.

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "common/status.h"

namespace rota::store {

// Builds an error Status for SQLite result code `rc` on connection `db` (may be
// null), naming the database file, SQLite's message and `what` (e.g. the SQL).
Status SqliteError(sqlite3* db, int rc, std::string_view what);

class StmtCache;

// A prepared statement. Bind indexes are 1-based; column indexes 0-based.
// Movable, not copyable. REQUIRES: does not outlive its Db. When it is destroyed
// it goes back to its Db's statement cache (reset, bindings cleared) for the next
// Prepare of the same SQL.
class Stmt {
 public:
  Stmt() = default;
  Stmt(Stmt&& o) noexcept : stmt_(o.stmt_), cache_(o.cache_), bind_error_(o.bind_error_) {
    o.stmt_ = nullptr;
  }
  Stmt& operator=(Stmt&& o) noexcept;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt();

  // Binders return *this so calls chain; a bind error is reported by Step().
  Stmt& Bind(int i, int64_t v);
  Stmt& Bind(int i, double v);
  Stmt& Bind(int i, std::string_view v);
  Stmt& BindBlob(int i, std::string_view bytes);  // copied: `bytes` may go away after the call
  Stmt& BindNull(int i);
  template <typename T>
  Stmt& Bind(int i, const std::optional<T>& v) {
    return v ? BindValue(i, *v) : BindNull(i);
  }

  // Runs one step: true when a row is available, false when done.
  Result<bool> Step();
  // Steps until done (for statements returning no rows).
  Status Run();
  // Resets for reuse and clears bindings.
  void Reset();

  int ColumnCount() const { return sqlite3_column_count(stmt_); }
  bool IsNull(int col) const;
  int64_t Int(int col) const;
  double Double(int col) const;
  std::string Text(int col) const;
  // A BLOB column's bytes, valid until the next Step, Reset or column read of `col`.
  std::string_view Blob(int col) const;
  std::optional<int64_t> OptInt(int col) const;
  std::optional<double> OptDouble(int col) const;

 private:
  friend class Db;
  Stmt(sqlite3_stmt* s, StmtCache* cache) : stmt_(s), cache_(cache) {}
  void Drop();  // back to the cache, or finalized
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
  void Check(int rc);

  sqlite3_stmt* stmt_ = nullptr;
  StmtCache* cache_ = nullptr;
  int bind_error_ = SQLITE_OK;
};

// One connection. Movable, not copyable.
class Db {
 public:
  // Opens `path` with `flags` (SQLITE_OPEN_*; NOMUTEX is added). IoError on failure.
  static Result<Db> Open(const std::string& path, int flags);

  Db(Db&& o) noexcept;
  Db& operator=(Db&& o) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();

  // Runs one or more statements without results. A single statement (no ';') is
  // prepared through the statement cache.
  Status Exec(const std::string& sql);
  // A statement for `sql`: a cached one when an earlier Stmt of the same SQL was
  // destroyed, else a new one. Up to kMaxCachedStatements are kept; SQLite
  // re-prepares a kept statement by itself after a schema change.
  Result<Stmt> Prepare(const std::string& sql);
  static constexpr size_t kMaxCachedStatements = 128;
  // Runs a query returning one integer (e.g. "PRAGMA user_version"); NotFound if no row.
  Result<int64_t> QueryInt(const std::string& sql);
  // Runs a query returning one text value (e.g. "PRAGMA journal_mode").
  Result<std::string> QueryText(const std::string& sql);

  // Rows changed by the last INSERT/UPDATE/DELETE.
  int64_t Changes() const { return sqlite3_changes64(db_); }
  // The rowid of the last row inserted.
  int64_t LastInsertRowid() const { return sqlite3_last_insert_rowid(db_); }
  const std::string& path() const { return path_; }
  sqlite3* raw() const { return db_; }

  Status Error(int rc, std::string_view what) const { return SqliteError(db_, rc, what); }

 private:
  Db(sqlite3* db, std::string path);
  sqlite3* db_ = nullptr;
  std::string path_;
  std::unique_ptr<StmtCache> cache_;  // heap: Stmts point to it across moves of the Db
};

// BEGIN ... COMMIT guard: rolls back in the destructor unless Commit() succeeded.
class Transaction {
 public:
  // `begin` is e.g. "BEGIN IMMEDIATE".
  static Result<Transaction> Begin(Db& db, const char* begin = "BEGIN IMMEDIATE");
  Transaction(Transaction&& o) noexcept : db_(o.db_) { o.db_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();
  Status Commit();

 private:
  explicit Transaction(Db* db) : db_(db) {}
  Db* db_;
};

}  // namespace rota::store
