#pragma once
// A job's reference to a secret (docs/design-secrets.md): a name, never a value.
// Written "NAME" (a file NAME in $ROTA_SECRETS_DIR), "NAME:ENV_VAR" (also the
// value in that variable) or "NAME:/abs/path" (a path inside a container task;
// refused for host tasks until containers exist). Pure values and rules.

#include <string>
#include <vector>

#include "common/status.h"

namespace rota::jobs {

inline constexpr size_t kMaxJobSecrets = 32;
inline constexpr size_t kMaxSecretBytes = 64 * 1024;

struct SecretRef {
  std::string name;  // [A-Za-z0-9][A-Za-z0-9._-]{0,63}
  std::string env;   // "" or [A-Za-z_][A-Za-z0-9_]{0,127}
  std::string path;  // "" or absolute, normalised, <= 4096 bytes

  bool operator==(const SecretRef&) const = default;
  // Back to the written form.
  std::string ToString() const;
};

// InvalidArgument naming the name's rule.
Status ValidateSecretName(const std::string& name);
// "NAME[:ENV_VAR|:/abs/path]". InvalidArgument naming what is wrong.
Result<SecretRef> ParseSecretRef(const std::string& text);
// At most kMaxJobSecrets, names distinct, env vars distinct and not ROTA_*.
Status ValidateSecretRefs(const std::vector<SecretRef>& refs);

}  // namespace rota::jobs
