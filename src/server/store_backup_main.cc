#include "server/store_backup_main.h"

#include <cstdio>
#include <iostream>

#include "common/clock.h"
#include "server/config.h"
#include "server/store/backup.h"
#include "server/store/store_url.h"

namespace rota::server {
namespace {

// The store URL `rota server` would open with the same flags, variables and file.
Result<std::string> StoreUrlFor(const AdminBackupFlags& flags) {
  ServerConfig config;
  Status st;
  if (!flags.config_file.empty()) st = LoadConfigFile(&config, flags.config_file);
  if (st.ok()) st = ApplyEnv(&config, ProcessEnv());
  if (st.ok() && !flags.data_dir.empty())
    st = ApplySetting(&config, "data_dir", flags.data_dir, "flag");
  if (st.ok() && !flags.store.empty()) st = ApplySetting(&config, "store", flags.store, "flag");
  if (!st.ok()) return st;
  return config.store.empty() ? "sqlite:" + config.data_dir + "/rota.db" : config.store;
}

int Fail(const char* cmd, const Status& st) {
  std::cerr << "rota admin " << cmd << ": " << st.message() << "\n";
  return st.code() == StatusCode::kInvalidArgument || st.code() == StatusCode::kNotFound ? 2 : 1;
}

}  // namespace

int RunAdminBackup(const AdminBackupFlags& flags) {
  auto url = StoreUrlFor(flags);
  if (!url.ok()) return Fail("backup", url.status());
  const int64_t start = RealClock::Get().MonotonicMs();
  auto done = store::BackupStore(*url, flags.file);
  if (!done.ok()) return Fail("backup", done.status());
  std::printf("backed up %s into %s: schema version %lld, %lld bytes (%s), %.1f s\n",
              done->store.c_str(), flags.file.c_str(), static_cast<long long>(done->schema_version),
              static_cast<long long>(done->bytes), done->format.c_str(),
              static_cast<double>(RealClock::Get().MonotonicMs() - start) / 1000.0);
  return 0;
}

int RunAdminRestore(const AdminBackupFlags& flags) {
  auto url = StoreUrlFor(flags);
  if (!url.ok()) return Fail("restore", url.status());
  store::RestoreOptions o;
  o.file = flags.file;
  o.store_url = *url;
  o.overwrite = flags.overwrite;
  auto done = store::RestoreStore(o, RealClock::Get().NowMs());
  if (!done.ok()) return Fail("restore", done.status());
  std::printf("restored %s into %s: schema version %lld", flags.file.c_str(), done->store.c_str(),
              static_cast<long long>(done->backup_version));
  if (done->backup_version != done->schema_version) {
    std::printf(", migrated to %lld", static_cast<long long>(done->schema_version));
  }
  std::printf(". Start rota server on it.\n");
  return 0;
}

}  // namespace rota::server
