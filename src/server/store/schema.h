#pragma once
// The store's versioned schema. Migration N (1-based) brings a database from
// version N-1 to N; all pending migrations run in one write transaction
// together with the schema_version rows that record them, so a crash or an
// error leaves the database at its old version.
// On PostgreSQL a new database gets a baseline that creates version
// kPgBaselineVersion at once (schema_pg.cc); migrations after it carry a
// PostgreSQL form of their own.

#include <cstdint>
#include <span>

#include "common/status.h"
#include "server/store/sql.h"

namespace rota::store {

// Schema version this code writes and understands.
inline constexpr int64_t kSchemaVersion = 20;
// PRAGMA application_id of a rota store ("ROTA").
inline constexpr int64_t kApplicationId = 0x524F5441;

// The version a new PostgreSQL store starts at (its baseline creates it).
inline constexpr int64_t kPgBaselineVersion = 15;

// One migration: SQL run with Db::Exec (may hold several statements), for
// SQLite and, for versions after kPgBaselineVersion, for PostgreSQL.
struct Migration {
  const char* sql;
  const char* pg_sql = nullptr;
};

// The real migrations; Migrations()[i] creates version i + 1.
std::span<const Migration> Migrations();

// Brings `db` to version migrations.size(), recording each step in
// schema_version(version, applied_ms). Errors:
//  - Conflict when the database is newer than `migrations` (written by a newer rota);
//  - InvalidArgument when the file is a SQLite database of another program, or
//    the PostgreSQL database (schema) holds tables that are not a rota store's;
//  - IoError for SQLite errors (including "file is not a database").
// On PostgreSQL, concurrent calls on one database take turns (an advisory lock).
// REQUIRES: no transaction is open on `db`.
Status ApplySchema(Db& db, int64_t now_ms, std::span<const Migration> migrations = Migrations());

// The version recorded in `db` (0 for an empty database).
Result<int64_t> SchemaVersion(Db& db);

// PostgreSQL (schema_pg.cc): the baseline's SQL, and ApplySchema/SchemaVersion there.
const char* PgBaselineSql();
Status ApplyPgSchema(Db& db, int64_t now_ms, std::span<const Migration> migrations);
Result<int64_t> PgSchemaVersion(Db& db);

}  // namespace rota::store
