#pragma once
// The store's versioned schema. Migration N (1-based) brings a database from
// version N-1 to N; all pending migrations run in one IMMEDIATE transaction
// together with the schema_version rows that record them, so a crash or an
// error leaves the database at its old version.

#include <cstdint>
#include <span>

#include "common/status.h"
#include "server/store/sqlite.h"

namespace rota::store {

// Schema version this code writes and understands.
inline constexpr int64_t kSchemaVersion = 16;
// PRAGMA application_id of a rota store ("ROTA").
inline constexpr int64_t kApplicationId = 0x524F5441;

// One migration: SQL run with Db::Exec (may hold several statements).
struct Migration {
  const char* sql;
};

// The real migrations; Migrations()[i] creates version i + 1.
std::span<const Migration> Migrations();

// Brings `db` to version migrations.size(), recording each step in
// schema_version(version, applied_ms). Errors:
//  - Conflict when the database is newer than `migrations` (written by a newer rota);
//  - InvalidArgument when the file is a SQLite database of another program;
//  - IoError for SQLite errors (including "file is not a database").
// REQUIRES: no transaction is open on `db`.
Status ApplySchema(Db& db, int64_t now_ms, std::span<const Migration> migrations = Migrations());

// The version recorded in `db` (0 for an empty database).
Result<int64_t> SchemaVersion(Db& db);

}  // namespace rota::store
