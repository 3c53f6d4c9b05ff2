#include "server/store/pg_backend.h"

#include <libpq-fe.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <utility>

#include "server/store/store_url.h"

namespace rota::store {
namespace {

// Type OIDs (pg_type.dat); libpq has no header for them.
constexpr Oid kBoolOid = 16;
constexpr Oid kByteaOid = 17;
constexpr Oid kInt8Oid = 20;
constexpr Oid kTextOid = 25;
constexpr Oid kFloat8Oid = 701;

// Prepared statements kept per connection before they are all deallocated
// (statement texts built on the fly would otherwise grow the set forever).
constexpr size_t kMaxPrepared = 512;
// Rewritten statement texts kept per connection.
constexpr size_t kMaxRewrites = 1024;

// One line: libpq's messages end in newlines and indent hints with tabs.
std::string OneLine(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\n' || c == '\t' || c == '\r') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

Status FromSqlState(const char* state, const std::string& msg) {
  const std::string_view s = state ? state : "";
  if (s.substr(0, 2) == "23") return Status::Conflict(msg);
  if (s == "40001" || s == "40P01" || s == "25006" || s.substr(0, 2) == "08" ||
      s.substr(0, 3) == "57P") {
    return Status::Unavailable(msg);
  }
  if (s.substr(0, 2) == "53") return Status::ResourceExhausted(msg);
  return Status::IoError(msg);
}

std::string FormatDouble(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class PgConnection;

class PgStatement final : public SqlStatement {
 public:
  PgStatement(PgConnection* conn, std::shared_ptr<const PgSql> sql)
      : conn_(conn), sql_(std::move(sql)) {}
  ~PgStatement() override { Clear(); }
  PgStatement(const PgStatement&) = delete;
  PgStatement& operator=(const PgStatement&) = delete;

  void BindInt(int i, int64_t v) override { Set(i, kInt8Oid, std::to_string(v), 0); }
  void BindDouble(int i, double v) override { Set(i, kFloat8Oid, FormatDouble(v), 0); }
  void BindText(int i, std::string_view v) override { Set(i, 0, std::string(v), 0); }
  void BindBlob(int i, std::string_view bytes) override {
    Set(i, kByteaOid, std::string(bytes), 1);
  }
  void BindNull(int i, SqlType type) override {
    Oid oid = 0;
    switch (type) {
      case SqlType::kInt: oid = kInt8Oid; break;
      case SqlType::kDouble: oid = kFloat8Oid; break;
      case SqlType::kText: oid = kTextOid; break;
      case SqlType::kBlob: oid = kByteaOid; break;
      case SqlType::kUnknown: break;
    }
    if (Param* p = At(i)) *p = Param{oid, true, false, {}, 0};
  }

  Result<bool> Step() override;
  void Reset() override {
    Clear();
    params_.clear();
    bind_error_.clear();
  }

  int ColumnCount() const override { return result_ ? PQnfields(result_) : 0; }
  bool IsNull(int col) const override {
    return !Valid(col) || PQgetisnull(result_, row_, col) != 0;
  }
  int64_t Int(int col) const override {
    if (IsNull(col)) return 0;
    const char* v = PQgetvalue(result_, row_, col);
    if (PQftype(result_, col) == kBoolOid) return v[0] == 't' ? 1 : 0;
    return std::strtoll(v, nullptr, 10);
  }
  double Double(int col) const override {
    if (IsNull(col)) return 0;
    return std::strtod(PQgetvalue(result_, row_, col), nullptr);
  }
  std::string Text(int col) const override {
    if (IsNull(col)) return {};
    return std::string(PQgetvalue(result_, row_, col),
                       static_cast<size_t>(PQgetlength(result_, row_, col)));
  }
  std::string_view Blob(int col) const override;

  const PgSql& sql() const { return *sql_; }

 private:
  struct Param {
    Oid type = 0;
    bool set = false;  // bound (NULL or a value)
    bool has_value = false;
    std::string value;
    int format = 0;  // 0 text, 1 binary
  };

  Param* At(int i) {
    if (i < 1 || i > 32766) {
      if (bind_error_.empty()) bind_error_ = "parameter index " + std::to_string(i) + " out of range";
      return nullptr;
    }
    if (params_.size() < static_cast<size_t>(i)) params_.resize(static_cast<size_t>(i));
    return &params_[static_cast<size_t>(i - 1)];
  }
  void Set(int i, Oid type, std::string value, int format) {
    if (Param* p = At(i)) *p = Param{type, true, true, std::move(value), format};
  }
  bool Valid(int col) const {
    return result_ != nullptr && row_ >= 0 && row_ < rows_ && col >= 0 && col < PQnfields(result_);
  }
  void Clear() {
    if (result_) PQclear(result_);
    result_ = nullptr;
    row_ = -1;
    rows_ = 0;
  }
  Status Execute();

  PgConnection* conn_;
  std::shared_ptr<const PgSql> sql_;
  std::vector<Param> params_;
  std::string bind_error_;
  PGresult* result_ = nullptr;
  int row_ = -1;
  int rows_ = 0;
  mutable std::string blob_;  // the last Blob() read, decoded
};

class PgConnection final : public SqlConnection {
 public:
  // `setup`: SQL run on every new session (the first and each after a reconnect).
  PgConnection(PGconn* conn, std::string display, std::string setup)
      : conn_(conn), name_(std::move(display)), setup_(std::move(setup)) {}
  ~PgConnection() override { PQfinish(conn_); }
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  Dialect dialect() const override { return Dialect::kPostgres; }
  const std::string& name() const override { return name_; }
  int64_t Changes() const override { return changes_; }
  bool InTransaction() const override {
    const PGTransactionStatusType s = PQtransactionStatus(conn_);
    if (s == PQTRANS_UNKNOWN) return in_tx_ || lost_in_tx_;  // connection lost: as last seen
    return s == PQTRANS_INTRANS || s == PQTRANS_INERROR || s == PQTRANS_ACTIVE;
  }
  const char* BeginWriteSql() const override { return "BEGIN"; }

  Status Exec(const std::string& sql) override {
    const bool rollback = sql == "ROLLBACK";
    if (Status st = Ready(rollback); !st.ok()) return rollback && lost_in_tx_ ? Reconnect() : st;
    PGresult* res = PQexec(conn_, sql.c_str());
    Status st = Check(res, sql);
    // COMMIT of a transaction that had failed rolls it back and says so in its tag.
    if (st.ok() && sql == "COMMIT" && std::strcmp(PQcmdStatus(res), "ROLLBACK") == 0) {
      st = Status::IoError(name_ + ": COMMIT rolled back a failed transaction");
    }
    PQclear(res);
    Track();
    return st;
  }

  Result<SqlStatement*> Prepare(const std::string& sql) override {
    auto it = rewrites_.find(sql);
    if (it == rewrites_.end()) {
      ASSIGN_OR_RETURN(PgSql rewritten, RewritePlaceholders(sql));
      if (rewrites_.size() >= kMaxRewrites) rewrites_.clear();
      it = rewrites_.emplace(sql, std::make_shared<const PgSql>(std::move(rewritten))).first;
    }
    return new PgStatement(this, it->second);
  }
  void Release(SqlStatement* s) override { delete s; }

  // Ready for a statement: Unavailable when the connection was lost inside a
  // transaction (until ROLLBACK), else reconnected if it was lost.
  Status Ready(bool rollback = false) {
    if (PQstatus(conn_) == CONNECTION_OK) return Status::Ok();
    if (in_tx_ || lost_in_tx_) {
      lost_in_tx_ = true;
      in_tx_ = false;
      return Status::Unavailable(name_ + ": connection lost inside a transaction" +
                                 (rollback ? "" : " (roll back to go on)"));
    }
    return Reconnect();
  }

  // Runs the prepared form of `sql` for `types`, preparing it first if needed.
  PGresult* ExecPrepared(const PgSql& sql, const std::vector<Oid>& types,
                         const std::vector<const char*>& values, const std::vector<int>& lengths,
                         const std::vector<int>& formats, Status* error) {
    std::string key = sql.text;
    key += '\0';
    for (Oid t : types) key += std::to_string(t) + ",";
    auto it = prepared_.find(key);
    if (it == prepared_.end()) {
      if (prepared_.size() >= kMaxPrepared && PQtransactionStatus(conn_) != PQTRANS_INERROR) {
        PGresult* r = PQexec(conn_, "DEALLOCATE ALL");
        if (PQresultStatus(r) == PGRES_COMMAND_OK) prepared_.clear();
        PQclear(r);
      }
      std::string stmt_name = "r" + std::to_string(++next_id_);
      PGresult* r = PQprepare(conn_, stmt_name.c_str(), sql.text.c_str(),
                              static_cast<int>(types.size()), types.data());
      *error = Check(r, sql.text);
      PQclear(r);
      if (!error->ok()) {
        Track();
        return nullptr;
      }
      it = prepared_.emplace(std::move(key), std::move(stmt_name)).first;
    }
    PGresult* res = PQexecPrepared(conn_, it->second.c_str(), static_cast<int>(values.size()),
                                   values.data(), lengths.data(), formats.data(), 0);
    *error = Check(res, sql.text);
    Track();
    if (!error->ok()) {
      PQclear(res);
      return nullptr;
    }
    return res;
  }

 private:
  Status Check(PGresult* res, std::string_view what) {
    const ExecStatusType s = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK || s == PGRES_EMPTY_QUERY) {
      NoteChanges(res);
      return Status::Ok();
    }
    const char* state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
    std::string detail = res ? PQresultErrorMessage(res) : "";
    if (detail.empty()) detail = PQerrorMessage(conn_);
    std::string msg = name_ + ": " + OneLine(detail);
    if (!what.empty()) msg += " in: " + std::string(what.substr(0, 200));
    if (PQstatus(conn_) != CONNECTION_OK) return Status::Unavailable(msg);
    return FromSqlState(state, msg);
  }

  // Rows changed, from the command tag of an INSERT, UPDATE or DELETE (SELECTs
  // leave the count alone, as in SQLite).
  void NoteChanges(PGresult* res) {
    const char* cmd = PQcmdStatus(res);
    if (std::strncmp(cmd, "INSERT", 6) == 0 || std::strncmp(cmd, "UPDATE", 6) == 0 ||
        std::strncmp(cmd, "DELETE", 6) == 0 || std::strncmp(cmd, "MERGE", 5) == 0) {
      changes_ = std::strtoll(PQcmdTuples(res), nullptr, 10);
    }
  }

  void Track() {
    const PGTransactionStatusType s = PQtransactionStatus(conn_);
    if (s != PQTRANS_UNKNOWN) in_tx_ = s == PQTRANS_INTRANS || s == PQTRANS_INERROR;
  }

  Status Reconnect() {
    PQreset(conn_);
    prepared_.clear();
    in_tx_ = lost_in_tx_ = false;
    if (PQstatus(conn_) != CONNECTION_OK) {
      return Status::Unavailable(name_ + ": connection lost and not restored: " +
                                 OneLine(PQerrorMessage(conn_)));
    }
    return SetUpSession();
  }

 public:
  Status SetUpSession() {
    if (setup_.empty()) return Status::Ok();
    PGresult* r = PQexec(conn_, setup_.c_str());
    const bool ok = r != nullptr && PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!ok) return Status::Unavailable(name_ + ": " + OneLine(PQerrorMessage(conn_)));
    return Status::Ok();
  }

 private:

  PGconn* conn_;
  std::string name_;
  std::string setup_;
  int64_t changes_ = 0;
  bool in_tx_ = false;       // as last seen
  bool lost_in_tx_ = false;  // the connection broke inside a transaction; ROLLBACK reconnects
  std::unordered_map<std::string, std::shared_ptr<const PgSql>> rewrites_;
  std::unordered_map<std::string, std::string> prepared_;  // text + types -> statement name
  uint64_t next_id_ = 0;
};

Status PgStatement::Execute() {
  Clear();
  if (!bind_error_.empty()) {
    std::string e = std::move(bind_error_);
    bind_error_.clear();
    return Status::InvalidArgument(conn_->name() + ": " + e + " in: " + sql_->text.substr(0, 200));
  }
  RETURN_IF_ERROR(conn_->Ready());
  const size_t n = std::max(params_.size(), static_cast<size_t>(sql_->max_param));
  std::vector<Oid> types(n, 0);
  std::vector<const char*> values(n, nullptr);
  std::vector<int> lengths(n, 0), formats(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const bool used = i + 1 < sql_->used.size() && sql_->used[i + 1];
    const Param* p = i < params_.size() ? &params_[i] : nullptr;
    if (p && p->has_value) {
      values[i] = p->value.data();
      lengths[i] = static_cast<int>(p->value.size());
      formats[i] = p->format;
    }
    if (p) types[i] = p->type;  // a NULL's type when known (std::optional), else inferred
    // A parameter the SQL does not use needs a type of its own (SQLite accepts
    // bound parameters that the statement never names).
    if (types[i] == 0 && !used) types[i] = kTextOid;
  }
  Status st = Status::Ok();
  result_ = conn_->ExecPrepared(*sql_, types, values, lengths, formats, &st);
  if (!st.ok()) return st;
  rows_ = PQresultStatus(result_) == PGRES_TUPLES_OK ? PQntuples(result_) : 0;
  return Status::Ok();
}

Result<bool> PgStatement::Step() {
  if (result_ == nullptr) {
    RETURN_IF_ERROR(Execute());
    row_ = 0;
  } else {
    ++row_;
  }
  if (row_ < rows_) return true;
  Clear();  // done: the next Step runs the statement again
  return false;
}

std::string_view PgStatement::Blob(int col) const {
  if (IsNull(col)) return {};
  const char* v = PQgetvalue(result_, row_, col);
  const auto len = static_cast<size_t>(PQgetlength(result_, row_, col));
  if (PQftype(result_, col) != kByteaOid || len < 2 || v[0] != '\\' || v[1] != 'x') {
    return {v, len};
  }
  blob_.clear();
  blob_.reserve((len - 2) / 2);
  for (size_t i = 2; i + 1 < len; i += 2) {
    const int hi = HexValue(v[i]), lo = HexValue(v[i + 1]);
    if (hi < 0 || lo < 0) break;
    blob_ += static_cast<char>(hi * 16 + lo);
  }
  return blob_;
}

}  // namespace

Result<PgSql> RewritePlaceholders(std::string_view sql) {
  PgSql out;
  out.text.reserve(sql.size() + 8);
  out.used.assign(1, false);
  size_t i = 0;
  auto copy_until = [&](std::string_view end) {
    const size_t j = sql.find(end, i);
    const size_t stop = j == std::string_view::npos ? sql.size() : j + end.size();
    out.text.append(sql.substr(i, stop - i));
    i = stop;
  };
  while (i < sql.size()) {
    const char c = sql[i];
    if (c == '\'' || c == '"') {  // a literal or quoted identifier; '' and "" escape themselves
      const char q = c;
      out.text += sql[i++];
      while (i < sql.size()) {
        out.text += sql[i];
        if (sql[i++] == q) {
          if (i < sql.size() && sql[i] == q) {
            out.text += sql[i++];
            continue;
          }
          break;
        }
      }
    } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      copy_until("\n");
    } else if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      copy_until("*/");
    } else if (c == '?') {
      size_t j = i + 1;
      int n = 0;
      while (j < sql.size() && sql[j] >= '0' && sql[j] <= '9' && n < 100000) {
        n = n * 10 + (sql[j] - '0');
        ++j;
      }
      if (j == i + 1 || n == 0) {
        return Status::InvalidArgument("SQL for PostgreSQL: parameter without a number (use ?1, "
                                       "?2, ...) at offset " + std::to_string(i) + " in: " +
                                       std::string(sql.substr(0, 200)));
      }
      out.text += '$';
      out.text.append(sql.substr(i + 1, j - i - 1));
      if (n > out.max_param) {
        out.max_param = n;
        out.used.resize(static_cast<size_t>(n) + 1, false);
      }
      out.used[static_cast<size_t>(n)] = true;
      i = j;
    } else {
      out.text += sql[i++];
    }
  }
  return out;
}

Result<Db> OpenPostgres(const std::string& url, const std::string& display,
                        const PgConnectOptions& options) {
  // Defaults first: the URL's own settings override them (expand_dbname); then
  // what rota needs whatever the URL says. A reading connection is made read-only
  // after it is established, not by its startup options: libpq's
  // target_session_attrs=read-write (how a URL follows a promoted primary) would
  // take a session started read-only for a standby's and refuse every host.
  std::string session;
  if (options.idle_in_transaction_ms > 0) {
    session = "-c idle_in_transaction_session_timeout=" + std::to_string(options.idle_in_transaction_ms);
  }
  std::string url_options;
  {
    char* err = nullptr;
    PQconninfoOption* parsed = PQconninfoParse(url.c_str(), &err);
    if (parsed == nullptr) {
      std::string why = err ? HideUrlIn(OneLine(err), url) : "cannot parse";
      PQfreemem(err);
      return Status::InvalidArgument("store URL " + display + ": " + why);
    }
    for (PQconninfoOption* o = parsed; o->keyword; ++o) {
      if (std::strcmp(o->keyword, "options") == 0 && o->val) url_options = o->val;
    }
    PQconninfoFree(parsed);
  }
  if (!url_options.empty()) session = url_options + (session.empty() ? "" : " " + session);
  const std::string timeout = std::to_string(options.connect_timeout_s);
  std::vector<const char*> keys = {"connect_timeout", "fallback_application_name", "dbname",
                                   "client_encoding"};
  std::vector<const char*> values = {timeout.c_str(), "rota", url.c_str(), "UTF8"};
  if (!session.empty()) {
    keys.push_back("options");
    values.push_back(session.c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* conn = PQconnectdbParams(keys.data(), values.data(), 1);
  if (conn == nullptr) return Status::ResourceExhausted("libpq: out of memory");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string why = HideUrlIn(OneLine(PQerrorMessage(conn)), url);
    PQfinish(conn);
    return Status::Unavailable("cannot connect to the store " + display + ": " + why);
  }
  auto pg = std::make_unique<PgConnection>(
      conn, display, options.read_only ? "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY" : "");
  if (Status st = pg->SetUpSession(); !st.ok()) return st.WithContext("cannot set up the store session");
  return Db(std::move(pg));
}

Status RequireWritable(Db& db) {
  ASSIGN_OR_RETURN(int64_t standby, db.QueryInt("SELECT pg_is_in_recovery()::int"));
  if (standby != 0) {
    return Status::Unavailable(db.path() + " is a standby (read-only replica) and accepts no "
                               "writes: point the store URL at the primary, or list every host "
                               "with target_session_attrs=read-write (nothing was written)");
  }
  ASSIGN_OR_RETURN(int64_t read_only,
                   db.QueryInt("SELECT (current_setting('transaction_read_only') = 'on')::int"));
  if (read_only != 0) {
    return Status::Unavailable(db.path() + " accepts no writes: transactions are read-only "
                               "(default_transaction_read_only is on for this user, database or "
                               "server); rota needs a writable database (nothing was written)");
  }
  return Status::Ok();
}

}  // namespace rota::store
