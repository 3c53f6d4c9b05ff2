#pragma once
// Private state of Store, shared by store.cc and store_history.cc.

#include <memory>
#include <string>

#include "common/clock.h"
#include "common/mutex.h"
#include "server/store/options.h"
#include "server/store/sql.h"
#include "server/store/store.h"
#include "server/store/writer.h"

namespace rota::store {

// An fd holding the data directory's flock; closing it releases the lock.
struct LockFile {
  explicit LockFile(int f) : fd(f) {}
  LockFile(const LockFile&) = delete;
  LockFile& operator=(const LockFile&) = delete;
  ~LockFile();
  int fd;
};

// Takes an exclusive flock on <dir>/rota.lock (created 0600 if missing): Unavailable
// when another process holds it (a server runs on the store), IoError otherwise.
Result<std::unique_ptr<LockFile>> LockDir(const std::string& dir);

// Members are destroyed bottom-up: the writer drains first, the lock goes last.
struct Store::Impl {
  Impl(const StoreOptions& o, Clock& c, std::unique_ptr<LockFile> l, Db read_db)
      : opt(o), clock(c), lock(std::move(l)), rdb(std::move(read_db)) {}

  // Looks up the internal id of node `name` on the read connection.
  // NotFound if unknown.
  Result<int64_t> ReadNodeId(const std::string& name) ROTA_REQUIRES(read_mu);

  const StoreOptions opt;
  Clock& clock;
  std::string path;
  Dialect dialect = Dialect::kSqlite;
  std::unique_ptr<LockFile> lock;
  Mutex read_mu;
  Db rdb ROTA_GUARDED_BY(read_mu);
  std::unique_ptr<Writer> writer;
};

}  // namespace rota::store
