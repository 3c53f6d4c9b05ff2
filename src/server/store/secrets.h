#pragma once
// SQL of secrets (table secrets, schema v18): values sealed by the secret
// service (server/secrets/secret_box.h), never plaintext. Rules (names, owners,
// who may use what) are the service's (server/secrets/secrets.h). Called inside
// Store::Write / Store::Read tasks.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "server/store/sql.h"

namespace rota::store {

struct SecretRow {
  std::string name;           // unique
  int64_t owner_user_id = 0;  // 0 when a group owns it
  std::string owner_group;    // "" when a user owns it
  int64_t created_by = 0;     // user id
  int64_t created_ms = 0;
  int64_t last_used_ms = 0;   // 0: never
  int64_t size = 0;           // plaintext bytes
  int64_t key_id = 0;
  std::string sealed;         // read only by GetSecret(…, with_value = true)
};

// The name's primary key refuses one that exists (AlreadyExists).
Status InsertSecret(Db& db, const SecretRow& row);
// nullopt when there is none; `sealed` filled only `with_value`.
Result<std::optional<SecretRow>> GetSecret(Db& db, const std::string& name, bool with_value);
// Every secret by name, without values.
Result<std::vector<SecretRow>> ListSecrets(Db& db);
// False when there was none.
Result<bool> DeleteSecret(Db& db, const std::string& name);
// Replaces the sealed value and its key id (key rotation). No error when gone.
Status ResealSecret(Db& db, const std::string& name, int64_t key_id, const std::string& sealed);
// Sets last_used_ms (no error when the secret is gone).
Status TouchSecret(Db& db, const std::string& name, int64_t now_ms);

}  // namespace rota::store
