#pragma once
// `rota store migrate --from sqlite:PATH --to postgresql://... [--overwrite]`: moves a
// stopped installation's store to PostgreSQL (server/store/migrate.h) and prints
// each table's row count, checked on both sides.

#include <string>

namespace rota::server {

struct StoreMigrateFlags {
  std::string from;
  std::string to;
  bool overwrite = false;
};

// Returns the exit status: 0 when every row was copied and counted, 2 for bad
// arguments (URLs, a source that is not a current rota store), 1 otherwise
// (unreachable or read-only target, a server running on the source, a target
// holding rows, ...). Messages on stderr never hold the target's password.
int RunStoreMigrate(const StoreMigrateFlags& flags);

}  // namespace rota::server
