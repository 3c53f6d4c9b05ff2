#include "server/secrets/secrets.h"

#include <algorithm>
#include <map>

#include <openssl/crypto.h>

#include "common/log.h"
#include "server/audit.h"
#include "server/store/accounts.h"
#include "server/store/secrets.h"

namespace rota::server {
namespace {

using store::Db;
using store::SecretRow;

bool MayUse(const SecretRow& row, int64_t user_id, const std::vector<std::string>& groups) {
  if (row.owner_group.empty()) return row.owner_user_id == user_id;
  return std::find(groups.begin(), groups.end(), row.owner_group) != groups.end();
}

Status CheckValue(const std::string& name, const std::string& value) {
  if (value.empty()) return Status::InvalidArgument("secret '" + name + "': the value is empty");
  if (value.size() > jobs::kMaxSecretBytes) {
    return Status::InvalidArgument("secret '" + name + "': the value is " + std::to_string(value.size()) +
                                   " bytes, more than the " + std::to_string(jobs::kMaxSecretBytes) +
                                   " allowed");
  }
  return Status::Ok();
}

// Usernames by id, for the metadata of `rows`.
Result<std::map<int64_t, std::string>> Usernames(Db& db, const std::vector<SecretRow>& rows) {
  std::map<int64_t, std::string> names;
  for (const auto& r : rows) {
    for (int64_t id : {r.owner_user_id, r.created_by}) {
      if (id == 0 || names.count(id)) continue;
      ASSIGN_OR_RETURN(auto u, store::FindUserById(db, id));
      names[id] = u ? u->username : "user " + std::to_string(id);
    }
  }
  return names;
}

SecretInfo InfoOf(const SecretRow& r, const std::map<int64_t, std::string>& names) {
  auto name_of = [&](int64_t id) {
    auto it = names.find(id);
    return it == names.end() ? std::string() : it->second;
  };
  return {r.name,          r.owner_user_id ? name_of(r.owner_user_id) : "", r.owner_group,
          name_of(r.created_by), r.created_ms, r.last_used_ms, r.size, r.key_id};
}

}  // namespace

api::Json ToJson(const SecretInfo& s) {
  api::Json j{{"name", s.name},         {"owner", s.owner},   {"group", s.group},
              {"created_by", s.created_by}, {"created_ms", s.created_ms}, {"size", s.size},
              {"key_id", s.key_id}};
  j["last_used_ms"] = s.last_used_ms == 0 ? api::Json(nullptr) : api::Json(s.last_used_ms);
  return j;
}

Secrets::Secrets(store::Store* store, SecretBox box, AuditLog* audit, const Clock* clock)
    : store_(store), box_(std::move(box)), audit_(audit), clock_(clock) {}

Result<int> Secrets::ResealUnderCurrentKey() {
  int resealed = 0;
  const int64_t current = box_.current_key_id();
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    resealed = 0;
    ASSIGN_OR_RETURN(auto rows, store::ListSecrets(db));
    for (const auto& meta : rows) {
      if (meta.key_id == current) continue;
      ASSIGN_OR_RETURN(auto row, store::GetSecret(db, meta.name, true));
      if (!row) continue;
      auto value = box_.Open(row->name, {row->key_id, row->sealed});
      if (!value.ok()) {
        ROTA_LOG(WARNING) << "secret '" << row->name << "' stays under key " << row->key_id << ": "
                          << value.status().message();
        continue;
      }
      ASSIGN_OR_RETURN(SealedValue sealed, box_.Seal(row->name, *value));
      OPENSSL_cleanse(value->data(), value->size());
      RETURN_IF_ERROR(store::ResealSecret(db, row->name, sealed.key_id, sealed.sealed_hex));
      ++resealed;
    }
    return Status::Ok();
  }));
  if (resealed > 0) ROTA_LOG(INFO) << "re-sealed " << resealed << " secret(s) under key " << current;
  return resealed;
}

Result<SecretInfo> Secrets::Create(const Principal& who, const std::string& name, const std::string& value,
                                   const std::string& group, const std::string& remote_addr) {
  RETURN_IF_ERROR(jobs::ValidateSecretName(name));
  RETURN_IF_ERROR(CheckValue(name, value));
  if (!group.empty() && std::find(who.groups.begin(), who.groups.end(), group) == who.groups.end()) {
    return Status::PermissionDenied("you are not in group '" + group.substr(0, 80) +
                                    "': only its members create its secrets");
  }
  ASSIGN_OR_RETURN(SealedValue sealed, box_.Seal(name, value));
  SecretRow row;
  row.name = name;
  row.owner_user_id = group.empty() ? who.user_id : 0;
  row.owner_group = group;
  row.created_by = who.user_id;
  row.created_ms = clock_->NowMs();
  row.size = static_cast<int64_t>(value.size());
  row.key_id = sealed.key_id;
  row.sealed = std::move(sealed.sealed_hex);
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    if (!group.empty()) {
      ASSIGN_OR_RETURN(bool exists, store::GroupExists(db, group));
      if (!exists) return Status::NotFound("no group named '" + group + "'");
    }
    ASSIGN_OR_RETURN(auto existing, store::GetSecret(db, name, false));
    if (existing) return Status::AlreadyExists("a secret named '" + name + "' exists");
    return store::InsertSecret(db, row);
  }));
  if (audit_ != nullptr) {
    audit_->RecordAuthEvent({0, row.created_ms, "secret_created", remote_addr, name, who.username,
                             group.empty() ? "owned by " + who.username : "owned by group " + group});
  }
  return InfoOf(row, {{who.user_id, who.username}});
}

Result<std::vector<SecretInfo>> Secrets::List(const Principal& who) {
  std::vector<SecretInfo> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(auto rows, store::ListSecrets(db));
    std::vector<SecretRow> shown;
    for (auto& r : rows) {
      if (who.admin() || MayUse(r, who.user_id, who.groups)) shown.push_back(std::move(r));
    }
    ASSIGN_OR_RETURN(auto names, Usernames(db, shown));
    for (const auto& r : shown) out.push_back(InfoOf(r, names));
    return Status::Ok();
  }));
  return out;
}

Status Secrets::Remove(const Principal& who, const std::string& name, const std::string& remote_addr) {
  RETURN_IF_ERROR(jobs::ValidateSecretName(name));
  std::string owner;
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(auto row, store::GetSecret(db, name, false));
    if (!row || !(who.admin() || MayUse(*row, who.user_id, who.groups))) {
      return Status::NotFound("no secret named '" + name + "'");
    }
    owner = row->owner_group.empty() ? "user " + std::to_string(row->owner_user_id) : "group " + row->owner_group;
    ASSIGN_OR_RETURN(bool deleted, store::DeleteSecret(db, name));
    if (!deleted) return Status::NotFound("no secret named '" + name + "'");
    return Status::Ok();
  }));
  if (audit_ != nullptr) {
    audit_->RecordAuthEvent({0, clock_->NowMs(), "secret_deleted", remote_addr, name, who.username,
                             "owned by " + owner});
  }
  return Status::Ok();
}

Status Secrets::CheckUse(const SecretUser& user, const std::vector<jobs::SecretRef>& refs) {
  if (refs.empty()) return Status::Ok();
  return store_->Read([&](Db& db) -> Status {
    for (const auto& ref : refs) {
      ASSIGN_OR_RETURN(auto row, store::GetSecret(db, ref.name, false));
      if (!row) return Status::NotFound("no secret named '" + ref.name + "'");
      if (!MayUse(*row, user.user_id, user.groups)) {
        return Status::PermissionDenied("secret '" + ref.name + "' is not " + user.username +
                                        "'s (only its owner, or its group's members, use it)");
      }
    }
    return Status::Ok();
  });
}

Result<std::vector<api::TaskSecret>> Secrets::ForTask(int64_t owner_id, const std::vector<jobs::SecretRef>& refs,
                                                      const std::string& task_id, const std::string& node) {
  std::vector<api::TaskSecret> out;
  if (refs.empty()) return out;
  std::vector<SecretRow> rows;
  std::string username;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(auto user, store::FindUserById(db, owner_id));
    if (!user) return Status::NotFound("the job's owner (user " + std::to_string(owner_id) + ") is gone");
    username = user->username;
    for (const auto& ref : refs) {
      ASSIGN_OR_RETURN(auto row, store::GetSecret(db, ref.name, true));
      if (!row) return Status::NotFound("no secret named '" + ref.name + "' (deleted since the submit?)");
      if (!MayUse(*row, owner_id, user->groups)) {
        return Status::PermissionDenied("secret '" + ref.name + "' is not " + username + "'s any more");
      }
      rows.push_back(std::move(*row));
    }
    return Status::Ok();
  }));
  const int64_t now = clock_->NowMs();
  for (size_t i = 0; i < refs.size(); ++i) {
    ASSIGN_OR_RETURN(std::string value, box_.Open(refs[i].name, {rows[i].key_id, rows[i].sealed}));
    out.push_back({refs[i].name, std::move(value), refs[i].env});
    if (audit_ != nullptr) {
      audit_->RecordAuthEvent({0, now, "secret_used", "", refs[i].name, username,
                               "task " + task_id + " on " + node +
                                   (refs[i].env.empty() ? "" : " (also as $" + refs[i].env + ")")});
    }
  }
  store_->WriteAsync(
      [names = refs, now](Db& db) -> Status {
        for (const auto& r : names) RETURN_IF_ERROR(store::TouchSecret(db, r.name, now));
        return Status::Ok();
      },
      [](Status) {});
  return out;
}

}  // namespace rota::server
