#pragma once
// `rota store check --store URL [--json]`: the store's integrity (server/store/check.h),
// read in one snapshot, nothing written; a running server may stay up.

#include <string>

namespace rota::server {

struct StoreCheckFlags {
  std::string store;  // sqlite:PATH or postgresql://...; "" -> ROTA_STORE
  bool json = false;
};

// Exit status: 0 consistent, 3 problems found (each printed), 2 bad arguments (a bad URL,
// not a rota store), 1 the store could not be read (unreachable, missing file, newer rota).
int RunStoreCheck(const StoreCheckFlags& flags);

}  // namespace rota::server
