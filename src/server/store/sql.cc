#include "server/store/sql.h"

namespace rota::store {

const char* DialectName(Dialect d) { return d == Dialect::kSqlite ? "sqlite" : "postgresql"; }

// ---- Stmt ----

void Stmt::Drop() {
  if (s_ == nullptr) return;
  conn_->Release(s_);
  s_ = nullptr;
}

Stmt& Stmt::operator=(Stmt&& o) noexcept {
  if (this != &o) {
    Drop();
    s_ = o.s_;
    conn_ = o.conn_;
    o.s_ = nullptr;
  }
  return *this;
}

Status Stmt::Run() {
  while (true) {
    ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status::Ok();
  }
}

Result<int64_t> Stmt::RunReturningId() {
  ASSIGN_OR_RETURN(bool row, Step());
  if (!row) return Status::Internal(conn_->name() + ": INSERT ... RETURNING returned no row");
  const int64_t id = Int(0);
  RETURN_IF_ERROR(Run());  // finish the statement
  return id;
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

Result<Stmt> Db::Prepare(const std::string& sql) {
  ASSIGN_OR_RETURN(SqlStatement * s, conn_->Prepare(sql));
  return Stmt(s, conn_.get());
}

Result<int64_t> Db::QueryInt(const std::string& sql) {
  ASSIGN_OR_RETURN(Stmt s, Prepare(sql));
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Status::NotFound(path() + ": no row from: " + sql);
  const int64_t v = s.Int(0);
  s.Reset();
  return v;
}

Result<std::string> Db::QueryText(const std::string& sql) {
  ASSIGN_OR_RETURN(Stmt s, Prepare(sql));
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Status::NotFound(path() + ": no row from: " + sql);
  std::string v = s.Text(0);
  s.Reset();
  return v;
}

// ---- Transaction ----

Result<Transaction> Transaction::Begin(Db& db) {
  RETURN_IF_ERROR(db.Begin());
  return Transaction(&db);
}

Transaction::~Transaction() {
  if (db_ && db_->InTransaction()) (void)db_->Exec("ROLLBACK");
}

Status Transaction::Commit() {
  Status st = db_->Exec("COMMIT");
  if (!st.ok()) return st;
  db_ = nullptr;
  return Status::Ok();
}

}  // namespace rota::store
