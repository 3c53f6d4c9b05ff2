#include "server/nodes/node_credentials.h"

#include <sodium.h>

#include <cstring>

#include "common/log.h"
#include "server/store/node_credentials.h"

namespace rota::server {
namespace {

constexpr size_t kSecretBytes = 32;

std::string ToHex(const unsigned char* data, size_t n) {
  std::string out(n * 2 + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), data, n);
  out.resize(n * 2);
  return out;
}

}  // namespace

NodeCredentials::NodeCredentials(store::Store* store, const Clock* clock)
    : store_(store), clock_(clock) {}

Status NodeCredentials::Load() {
  std::vector<store::NodeCredentialRow> rows;
  RETURN_IF_ERROR(store_->Read([&](store::Db& db) -> Status {
    ASSIGN_OR_RETURN(rows, store::LoadNodeCredentials(db));
    return Status::Ok();
  }));
  MutexLock lock(&mu_);
  node_by_hash_.clear();
  by_node_.clear();
  hash_by_node_.clear();
  for (auto& r : rows) {
    node_by_hash_[r.secret_hash] = r.node;
    hash_by_node_[r.node] = r.secret_hash;
    by_node_[r.node] = Info{r.node, r.enrolled_ms, r.remote};
  }
  return Status::Ok();
}

bool NodeCredentials::LooksLikeCredential(const std::string& text) {
  const size_t prefix = std::strlen(kNodeCredentialPrefix);
  if (text.size() != prefix + 2 * kSecretBytes || text.compare(0, prefix, kNodeCredentialPrefix) != 0) {
    return false;
  }
  for (size_t i = prefix; i < text.size(); ++i) {
    const char c = text[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string NodeCredentials::Hash(const std::string& credential) {
  unsigned char out[crypto_generichash_BYTES];
  crypto_generichash(out, sizeof out, reinterpret_cast<const unsigned char*>(credential.data()),
                     credential.size(), nullptr, 0);
  return ToHex(out, sizeof out);
}

std::optional<std::string> NodeCredentials::NodeFor(const std::string& credential) const {
  if (!LooksLikeCredential(credential)) return std::nullopt;
  const std::string hash = Hash(credential);
  MutexLock lock(&mu_);
  auto it = node_by_hash_.find(hash);
  if (it == node_by_hash_.end()) return std::nullopt;
  return it->second;
}

bool NodeCredentials::Enrolled(const std::string& node) const {
  MutexLock lock(&mu_);
  return by_node_.count(node) > 0;
}

std::optional<NodeCredentials::Info> NodeCredentials::Get(const std::string& node) const {
  MutexLock lock(&mu_);
  auto it = by_node_.find(node);
  if (it == by_node_.end()) return std::nullopt;
  return it->second;
}

Result<std::string> NodeCredentials::Enrol(const std::string& node, const std::string& remote) {
  MutexLock serial(&write_mu_);
  if (Enrolled(node)) return Status::AlreadyExists("node " + node + " is already enrolled");
  unsigned char secret[kSecretBytes];
  randombytes_buf(secret, sizeof secret);
  const std::string credential = kNodeCredentialPrefix + ToHex(secret, sizeof secret);
  sodium_memzero(secret, sizeof secret);
  store::NodeCredentialRow row{node, Hash(credential), clock_->NowMs(), remote};
  RETURN_IF_ERROR(store_->Write([&](store::Db& db) { return store::InsertNodeCredential(db, row); })
                      .WithContext("enrolling node " + node));
  MutexLock lock(&mu_);
  node_by_hash_[row.secret_hash] = node;
  hash_by_node_[node] = row.secret_hash;
  by_node_[node] = Info{node, row.enrolled_ms, remote};
  return credential;
}

Status NodeCredentials::Revoke(const std::string& node) {
  MutexLock serial(&write_mu_);
  if (!Enrolled(node)) return Status::NotFound("node " + node + " has no credential");
  bool had = false;
  RETURN_IF_ERROR(store_->Write([&](store::Db& db) -> Status {
    ASSIGN_OR_RETURN(had, store::DeleteNodeCredential(db, node));
    return Status::Ok();
  }));
  MutexLock lock(&mu_);
  auto h = hash_by_node_.find(node);
  if (h != hash_by_node_.end()) {
    node_by_hash_.erase(h->second);
    hash_by_node_.erase(h);
  }
  by_node_.erase(node);
  ROTA_LOG(INFO) << "credential of node " << node << " revoked" << (had ? "" : " (it was not stored)");
  return Status::Ok();
}

}  // namespace rota::server
