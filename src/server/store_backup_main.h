#pragma once
// `rota admin backup FILE` and `rota admin restore FILE`: a consistent copy of the
// store taken while the server runs, and putting one back under a stopped server
// (server/store/backup.h). Run where the store is, as the server's user or root.
// The store is found as `rota server` finds it: --store, else --data-dir's rota.db,
// from the flags, the ROTA_* variables and the config file (-c).

#include <string>

namespace rota::server {

struct AdminBackupFlags {
  std::string file;
  std::string config_file;
  std::string data_dir;
  std::string store;
  bool overwrite = false;  // restore: replace a store that is there
};

// Exit status: 0 done, 2 bad arguments or a file that is not a rota backup, 1
// otherwise (a server running on the target, a backup from a newer rota, ...).
int RunAdminBackup(const AdminBackupFlags& flags);
int RunAdminRestore(const AdminBackupFlags& flags);

}  // namespace rota::server
