#include "jobs/secret_ref.h"

#include <set>

namespace rota::jobs {
namespace {

bool NameChar(char c, bool first) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return !first && (c == '.' || c == '_' || c == '-');
}

bool ValidEnvName(const std::string& v) {
  if (v.empty() || v.size() > 128) return false;
  for (size_t i = 0; i < v.size(); ++i) {
    char c = v[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string SecretRef::ToString() const {
  if (!env.empty()) return name + ":" + env;
  if (!path.empty()) return name + ":" + path;
  return name;
}

Status ValidateSecretName(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 64;
  for (size_t i = 0; ok && i < name.size(); ++i) ok = NameChar(name[i], i == 0);
  if (!ok) {
    return Status::InvalidArgument("secret name '" + name.substr(0, 80) +
                                   "' must be 1..64 of [A-Za-z0-9._-], starting with a letter or digit");
  }
  return Status::Ok();
}

Result<SecretRef> ParseSecretRef(const std::string& text) {
  SecretRef r;
  const size_t colon = text.find(':');
  r.name = text.substr(0, colon);
  RETURN_IF_ERROR(ValidateSecretName(r.name));
  if (colon == std::string::npos) return r;
  const std::string target = text.substr(colon + 1);
  if (!target.empty() && target[0] == '/') {
    bool ok = target.size() <= 4096 && target.size() > 1 && target.back() != '/' &&
              target.find("//") == std::string::npos && target.find('\0') == std::string::npos;
    for (size_t p = 0; ok && p != std::string::npos; p = target.find('/', p + 1)) {
      const size_t end = target.find('/', p + 1);
      const std::string part = target.substr(p + 1, end == std::string::npos ? std::string::npos : end - p - 1);
      ok = part != "." && part != "..";
    }
    if (!ok) {
      return Status::InvalidArgument("secret '" + r.name + "': '" + target.substr(0, 200) +
                                     "' must be a normalised absolute file path (no '.', '..', '//')");
    }
    r.path = target;
    return r;
  }
  if (!ValidEnvName(target)) {
    return Status::InvalidArgument("secret '" + r.name + "': '" + target.substr(0, 200) +
                                   "' is neither an environment variable name ([A-Za-z_][A-Za-z0-9_]*) "
                                   "nor an absolute path");
  }
  r.env = target;
  return r;
}

Status ValidateSecretRefs(const std::vector<SecretRef>& refs) {
  if (refs.size() > kMaxJobSecrets) {
    return Status::InvalidArgument("job.secrets: at most " + std::to_string(kMaxJobSecrets) + " secrets");
  }
  std::set<std::string> names, vars;
  for (const auto& r : refs) {
    RETURN_IF_ERROR(ValidateSecretName(r.name).WithContext("job.secrets"));
    if (!names.insert(r.name).second) {
      return Status::InvalidArgument("job.secrets: secret '" + r.name + "' is named twice");
    }
    if (!r.env.empty()) {
      if (r.env.rfind("ROTA_", 0) == 0) {
        return Status::InvalidArgument("job.secrets: '" + r.env + "': ROTA_ variables are rota's own");
      }
      if (!vars.insert(r.env).second) {
        return Status::InvalidArgument("job.secrets: variable '" + r.env + "' is set by two secrets");
      }
    }
    if (!r.path.empty()) {
      return Status::InvalidArgument("job.secrets: secret '" + r.name + "' at " + r.path +
                                     ": a path is for container tasks, which rota does not run yet; "
                                     "host tasks find it at $ROTA_SECRETS_DIR/" + r.name +
                                     " (or ask for a variable: " + r.name + ":VAR)");
    }
  }
  return Status::Ok();
}

}  // namespace rota::jobs
