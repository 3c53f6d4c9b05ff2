#pragma once
// Where a task's secrets live on its node (docs/design-secrets.md): one directory
// per task on a tmpfs (never the agent's disk), ROOT/<agent key>.<task id>/, mode
// 0700 and owned by the task's user, each secret a file NAME in it, 0400 and owned
// by that user. ROOT (default /dev/shm/rota-secrets) is the agent's, 0711.
// The task's shim removes the directory when the task ends; the agent removes it
// too when it forgets the task, and sweeps directories of tasks it no longer
// knows after a restart (SweepTaskSecrets).
//
// Thread-compatible: called from the agent's task thread.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/task_protocol.h"
#include "common/status.h"

namespace rota::agent {

inline constexpr const char* kDefaultSecretsRoot = "/dev/shm/rota-secrets";

// The directory of task `id` of the agent keyed `key` (no I/O).
std::string TaskSecretsDir(const std::string& root, const std::string& key, const std::string& id);

// Creates the task's directory with its files. FailedPrecondition-like
// Unavailable when `root`'s file system is not a tmpfs (secrets are never
// written to disk); IoError otherwise. On error nothing is left behind.
Result<std::string> WriteTaskSecrets(const std::string& root, const std::string& key, const std::string& id,
                                     const std::vector<api::TaskSecret>& secrets, std::optional<uint32_t> uid,
                                     std::optional<uint32_t> gid);

// Removes a task's secrets directory (no error when it is gone).
void RemoveTaskSecrets(const std::string& dir);

// Removes every directory of agent `key` under `root` whose task is not in `keep`.
void SweepTaskSecrets(const std::string& root, const std::string& key, const std::set<std::string>& keep);

}  // namespace rota::agent
