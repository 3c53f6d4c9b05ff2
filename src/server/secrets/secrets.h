#pragma once
// Secrets: named values (credentials, tokens) owned by a user or a group, kept
// sealed in the store (secret_box.h) and given to the tasks of jobs that name
// them (docs/design-secrets.md).
//
// Rules:
//  - a name is unique in the cluster (jobs::ValidateSecretName), a value 1..64 KiB;
//  - the owner (the user, or each member of the owning group) uses the secret
//    in jobs and sees it listed; nobody reads a value back through the API;
//  - an admin sees every secret's metadata and may delete any, but cannot use
//    one that is not theirs (not its owner, not in its group);
//  - creating a group's secret needs membership of that group;
//  - every create, delete and use (a task it was given to) is in the security
//    trail (AuditLog auth events "secret_created", "secret_deleted", "secret_used").
//
// Thread-safe: every method goes through store::Store::Read / Write. Blocking.

#include <cstdint>
#include <string>
#include <vector>

#include "api/task_protocol.h"
#include "common/clock.h"
#include "common/status.h"
#include "jobs/secret_ref.h"
#include "server/accounts/auth.h"
#include "server/jobs/launcher.h"
#include "server/secrets/secret_box.h"
#include "server/store/store.h"

namespace rota::server {

class AuditLog;

// A secret's metadata (never its value).
struct SecretInfo {
  std::string name;
  std::string owner;  // the owning user's name ("" when a group owns it)
  std::string group;  // the owning group ("" when a user owns it)
  std::string created_by;
  int64_t created_ms = 0;
  int64_t last_used_ms = 0;  // 0: never
  int64_t size = 0;
  int64_t key_id = 0;
};
api::Json ToJson(const SecretInfo& s);

// Who uses a secret: a user id with its groups.
struct SecretUser {
  int64_t user_id = 0;
  std::string username;
  std::vector<std::string> groups;
};

class Secrets : public SecretSource {
 public:
  // `store`, `audit` (may be null) and `clock` are borrowed and outlive this.
  Secrets(store::Store* store, SecretBox box, AuditLog* audit, const Clock* clock);

  // Re-seals under the keyring's current key every secret sealed under an older
  // one (at server start, after a key was appended: key rotation); returns how
  // many. A secret that does not open is left as it is and named in the log.
  Result<int> ResealUnderCurrentKey();

  // Creates `name` owned by `who` or, when `group` is not "", by that group.
  // InvalidArgument for a bad name or value; PermissionDenied when `who` is
  // not in `group`; NotFound for an unknown group; AlreadyExists for a taken name.
  Result<SecretInfo> Create(const Principal& who, const std::string& name, const std::string& value,
                            const std::string& group, const std::string& remote_addr);
  // The secrets `who` may use, by name; every secret for an admin.
  Result<std::vector<SecretInfo>> List(const Principal& who);
  // Deletes `name`: its owner, a member of its group, or an admin. NotFound for
  // an unknown one or one `who` may not see.
  Status Remove(const Principal& who, const std::string& name, const std::string& remote_addr);
  // OK when `user` may use every secret of `refs` (a job at submit): NotFound
  // naming an unknown secret, PermissionDenied naming one that is not theirs.
  Status CheckUse(const SecretUser& user, const std::vector<jobs::SecretRef>& refs);
  // The values for one task of a job owned by `owner_id`, checked again (a
  // membership may have changed since the submit); each use is recorded with
  // `task_id` and `node`. Errors as CheckUse, naming the secret.
  Result<std::vector<api::TaskSecret>> ForTask(int64_t owner_id, const std::vector<jobs::SecretRef>& refs,
                                               const std::string& task_id, const std::string& node) override;

 private:
  store::Store* const store_;
  const SecretBox box_;
  AuditLog* const audit_;
  const Clock* const clock_;
};

}  // namespace rota::server
