#pragma once
// The PostgreSQL backend of the store's SQL layer (sql.h), over libpq.
//
// - SQL keeps SQLite's ?N placeholders; each distinct statement text is
//   rewritten once to $N (outside string literals, quoted identifiers and
//   comments) and the rewrite is cached.
// - A statement is prepared on the server (PQprepare) at its first execution,
//   once per connection and per parameter types, and run with PQexecPrepared
//   afterwards. Parameter types come from the bindings: an integer is int8, a
//   double float8, a blob bytea (sent binary); text and NULL leave the type to
//   the server, which infers it from where the parameter is used.
// - Results are read whole (every row of a statement in memory) in text form;
//   Int() reads booleans as 1/0, Blob() decodes bytea.
// - A connection found broken outside a transaction is reset (reconnected,
//   statements prepared again) before the next statement; inside a transaction
//   every statement fails with Unavailable until ROLLBACK.
//
// Errors name the database by its URL without password and map SQLSTATE
// classes: integrity violations (23) Conflict, serialization failures and
// deadlocks (40001, 40P01), connection errors (08), shutdowns (57P) and writes
// refused by a read-only server (25006) Unavailable, insufficient resources
// (53) ResourceExhausted, the rest IoError.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "server/store/sql.h"

namespace rota::store {

struct PgConnectOptions {
  // Sessions of this connection only read (SET SESSION CHARACTERISTICS AS
  // TRANSACTION READ ONLY, again after each reconnect).
  bool read_only = false;
  // Connection timeout when the URL sets none.
  int connect_timeout_s = 10;
  // > 0: the server ends a session idle inside a transaction this long
  // (idle_in_transaction_session_timeout; kept across reconnections).
  int64_t idle_in_transaction_ms = 0;
};

// Connects to the libpq URL or connection string `url`; `display` is how
// messages name it (no password). Unavailable when the server cannot be
// reached or refuses the connection, naming `display` and libpq's reason.
Result<Db> OpenPostgres(const std::string& url, const std::string& display,
                        const PgConnectOptions& options = {});

// `sql` with ?N placeholders rewritten to $N outside literals, quoted
// identifiers and comments. InvalidArgument for a bare ? (no number).
struct PgSql {
  std::string text;
  int max_param = 0;       // highest N used
  std::vector<bool> used;  // used[N] for N in 1..max_param
};
Result<PgSql> RewritePlaceholders(std::string_view sql);

}  // namespace rota::store

namespace rota::store {

// Unavailable, saying what to do, when the server `db` is connected to accepts no
// writes: a standby (hot standby, pg_is_in_recovery) or a session whose
// transactions are read-only (default_transaction_read_only). Checked before
// anything is written, so such a server is refused with nothing changed.
Status RequireWritable(Db& db);

}  // namespace rota::store
