#pragma once
// SQL of node credentials (table node_credentials, schema version 14): one row
// per enrolled node, holding a hash of its secret, never the secret. Called
// inside Store::Write / Store::Read tasks.

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "server/store/sql.h"

namespace rota::store {

struct NodeCredentialRow {
  std::string node;
  std::string secret_hash;  // hex of a hash of the whole credential
  int64_t enrolled_ms = 0;
  std::string remote;  // the address the node enrolled from (for admins)
};

// Every credential, by node name.
Result<std::vector<NodeCredentialRow>> LoadNodeCredentials(Db& db);
// Inserts the node's credential. AlreadyExists when the node has one.
Status InsertNodeCredential(Db& db, const NodeCredentialRow& row);
// Removes the node's credential. Returns whether it had one.
Result<bool> DeleteNodeCredential(Db& db, const std::string& node);

}  // namespace rota::store
