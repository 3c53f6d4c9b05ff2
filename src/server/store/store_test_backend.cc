#include "server/store/store_test_backend.h"

#include <stdlib.h>

#include <filesystem>

#include "server/store/pg_backend.h"
#include "server/store/pg_test_instance.h"
#include "server/store/sqlite_backend.h"

namespace rota::store::testing {

TestStoreLocation::TestStoreLocation(Backend b) : backend_(b) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "rota_store_XXXXXX").string();
  char* p = ::mkdtemp(tmpl.data());
  dir_ = p ? p : "";
  if (b == Backend::kSqlite) {
    url_ = "sqlite:" + dir_ + "/rota.db";
    return;
  }
  auto server = SharedPgServer();
  if (!server.ok()) {
    unavailable_ = "no PostgreSQL server for the tests: " + server.status().message();
    return;
  }
  auto db = (*server)->CreateDatabase();
  if (!db.ok()) {
    unavailable_ = "cannot create a test database: " + db.status().ToString();
    return;
  }
  database_ = *db;
  url_ = (*server)->Url(database_);
}

TestStoreLocation::~TestStoreLocation() {
  if (!database_.empty()) {
    if (auto server = SharedPgServer(); server.ok()) (void)(*server)->DropDatabase(database_);
  }
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

Result<std::unique_ptr<Store>> TestStoreLocation::Open(const StoreOptions& options,
                                                       Clock& clock) const {
  if (!unavailable_.empty()) return Status::Unavailable(unavailable_);
  if (backend_ == Backend::kSqlite) return Store::Open(dir_, options, clock);
  return Store::OpenUrl(url_, options, clock);
}

Result<Db> TestStoreLocation::Connect() const {
  if (!unavailable_.empty()) return Status::Unavailable(unavailable_);
  if (backend_ == Backend::kSqlite) {
    ASSIGN_OR_RETURN(Db db, Db::Open(dir_ + "/rota.db", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE));
    RETURN_IF_ERROR(db.Exec("PRAGMA foreign_keys = ON"));  // as the store's connections
    return db;
  }
  return OpenPostgres(url_, url_);
}

}  // namespace rota::store::testing
