#pragma once
// SQL of agentless nodes (table ssh_nodes) and the tasks the server started on
// them (table ssh_tasks, so a restarted server follows them again). Called
// inside Store::Write / Store::Read tasks.

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "server/store/sql.h"

namespace rota::store {

struct SshNodeRow {
  std::string name;
  std::string url;
  int64_t gpus = 0;
  std::string gpu_model;
  std::string labels_json = "{}";
  int64_t created_ms = 0;
  std::string host_key;         // "type base64" ssh accepts; "" unpinned (before version 16)
  std::string host_key_source;  // "given", "fingerprint" or "scanned"
  int64_t host_key_ms = 0;      // when it was pinned
};

// Every declared node, by name.
Result<std::vector<SshNodeRow>> LoadSshNodes(Db& db);
// The name's primary key refuses one that exists.
Status InsertSshNode(Db& db, const SshNodeRow& row);
// Pins row.name to row.host_key (with its source and time). NotFound when no
// such node.
Status UpdateSshNodeHostKey(Db& db, const SshNodeRow& row);
// No error when there was none.
Status DeleteSshNode(Db& db, const std::string& name);

struct SshTaskRow {
  std::string id;
  std::string node;
  std::string unix_user;
  int64_t created_ms = 0;
};

Result<std::vector<SshTaskRow>> LoadSshTasks(Db& db);
// Inserts or replaces the task of row.id.
Status PutSshTask(Db& db, const SshTaskRow& row);
// No error when there was none.
Status DeleteSshTask(Db& db, const std::string& id);

}  // namespace rota::store
