#pragma once
// rota store migrate: moves an installation from SQLite to PostgreSQL with every
// row (docs/design-store.md, "Moving a store to PostgreSQL").
//
//  - The source is a SQLite store (sqlite:PATH) at this rota's schema version,
//    read in one read transaction (one snapshot); it is never written. Its
//    directory's rota.lock is taken first: a server running on it is refused.
//  - The target is a PostgreSQL store URL: connected, checked writable, its schema
//    created (or checked: not a rota store, or a newer one, is refused untouched).
//  - Every table but schema_version, leader_lease and servers (the target's own) is
//    copied in foreign-key order (a table after the tables it references), in one PostgreSQL transaction; identity columns'
//    sequences are moved past the copied ids; then each table's rows are counted on
//    both sides in that transaction, and only equal counts commit. An error at any
//    point leaves the target as it was (its new empty schema aside).
//  - A target that already holds rows is refused unless `overwrite`, which empties
//    its tables in the same transaction.

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace rota::store {

struct MigrateOptions {
  std::string from;        // sqlite:PATH
  std::string to;          // postgresql://... (may hold a password: never printed)
  bool overwrite = false;  // replace the rows of a target that has some
};

struct TableCount {
  std::string table;
  int64_t rows = 0;  // the same in the source and the target
};

// Copies; returns the tables in the order copied with their row counts. Errors:
// InvalidArgument (bad URLs, a source that is not a rota SQLite store or is at an
// older schema version: start this rota's server on it once first), NotFound (no
// such file), Unavailable (a server runs on the source; the target is unreachable
// or read-only), Conflict (the target holds rows, or either side is from a newer
// rota), Internal (counts differ; nothing committed). Messages name both stores
// without passwords.
Result<std::vector<TableCount>> MigrateStore(const MigrateOptions& options, int64_t now_ms);

}  // namespace rota::store
