#pragma once
// The SQLite backend of the store's SQL layer (sql.h): a connection opened with
// SQLITE_OPEN_NOMUTEX (callers serialize), a cache of prepared statements by SQL
// text. Errors come back as Status naming the database file and SQLite's
// message ("/data/rota.db: file is not a database"). Db::Open (sql.h) opens one.

#include <sqlite3.h>

#include <string_view>

#include "common/status.h"
#include "server/store/sql.h"

namespace rota::store {

// Builds an error Status for SQLite result code `rc` on connection `db` (may be
// null), naming the database file, SQLite's message and `what` (e.g. the SQL):
// Unavailable for BUSY/LOCKED, Conflict for constraint violations,
// ResourceExhausted for a full disk, IoError otherwise.
Status SqliteError(sqlite3* db, int rc, std::string_view what);

}  // namespace rota::store
