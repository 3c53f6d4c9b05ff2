#pragma once
// NodeCredentials: each agent's own secret, bound to its node's name.
//
// An agent enrols once: it connects with the cluster's join token and registers a
// name that has no credential yet; the server then issues a credential
// ("rotanode_" + 64 hex digits, 256 random bits) for that name, sends it to the
// agent (api::EnrolledMsg), and the agent keeps it (0600, its state dir) and
// presents it on every later connection instead of the join token. A credential
// opens a session for its own node only: it cannot register, report, or answer
// for another node. The join token cannot register a name that is enrolled, so
// whoever holds it (or root on another node) can no longer take an enrolled
// node's place; once every node is enrolled the join token can be rotated.
// Revoke deletes a node's credential: its agent must enrol again (with the join
// token), as after a reinstall.
//
// Only a hash of each credential is stored (store/node_credentials.h): a high-
// entropy secret needs no slow hash, and the database alone cannot open a
// session. Lookups are served from memory (loaded by Load), so accepting a
// connection does no I/O on the network thread.
//
// Thread-safe.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "server/store/store.h"

namespace rota::server {

inline constexpr char kNodeCredentialPrefix[] = "rotanode_";

class NodeCredentials {
 public:
  // Borrowed; they must outlive this.
  NodeCredentials(store::Store* store, const Clock* clock);

  // Reads the stored credentials. Call before agents connect.
  Status Load() ROTA_EXCLUDES(mu_);

  // True when `text` has the form of a node credential (not whether it is valid).
  static bool LooksLikeCredential(const std::string& text);
  // The node `credential` belongs to; nullopt when it is unknown or revoked.
  std::optional<std::string> NodeFor(const std::string& credential) const ROTA_EXCLUDES(mu_);
  bool Enrolled(const std::string& node) const ROTA_EXCLUDES(mu_);

  // Issues and stores a new credential for `node`, enrolling from `remote`;
  // returns it (the only time it exists outside the agent). AlreadyExists when the
  // node is enrolled; the store's error when it cannot be written (nothing is
  // issued then).
  Result<std::string> Enrol(const std::string& node, const std::string& remote) ROTA_EXCLUDES(mu_);
  // Deletes the node's credential. NotFound when it has none.
  Status Revoke(const std::string& node) ROTA_EXCLUDES(mu_);

  struct Info {
    std::string node;
    int64_t enrolled_ms = 0;
    std::string remote;
  };
  std::optional<Info> Get(const std::string& node) const ROTA_EXCLUDES(mu_);

 private:
  static std::string Hash(const std::string& credential);

  store::Store* const store_;
  const Clock* const clock_;
  mutable Mutex mu_;
  Mutex write_mu_ ROTA_ACQUIRED_BEFORE(mu_);  // serialises Enrol and Revoke
  std::map<std::string, std::string> node_by_hash_ ROTA_GUARDED_BY(mu_);
  std::map<std::string, Info> by_node_ ROTA_GUARDED_BY(mu_);
  std::map<std::string, std::string> hash_by_node_ ROTA_GUARDED_BY(mu_);
};

}  // namespace rota::server
