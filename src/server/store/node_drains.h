#pragma once
// SQL of node drains (table node_drains, schema version 13): the nodes an admin
// took out of scheduling, with why, by whom and since when. Called inside
// Store::Write / Store::Read tasks.

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "server/store/sql.h"

namespace rota::store {

struct NodeDrainRow {
  std::string node;
  std::string reason;  // may be empty
  std::string by;      // the admin's username
  int64_t since_ms = 0;
};

// Every drain, by node name.
Result<std::vector<NodeDrainRow>> LoadNodeDrains(Db& db);
// Inserts or replaces the node's drain.
Status PutNodeDrain(Db& db, const NodeDrainRow& row);
// Removes the node's drain; no error when it had none.
Status DeleteNodeDrain(Db& db, const std::string& node);

}  // namespace rota::store
