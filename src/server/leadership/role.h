#pragma once
// Role: what this server is now (leader or follower, the epoch, the leader's address) and
// the servers it last saw registered, shared by the leadership loop (which sets it),
// /healthz, GET /api/v1/servers and the agent gateway (which asks CheckLeader before each
// command). On SQLite there is one server: Single() is the leader for ever. Thread-safe.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "server/leadership/lease_rule.h"

namespace rota::server::leadership {

struct ServerView {
  std::string id;
  std::string address;
  std::string version;
  bool leader = false;
  int64_t started_ms = 0;
  int64_t last_seen_ms = 0;  // the database's clock at its last renewal
};

class Role {
 public:
  // The only server (SQLite): leader, epoch 0, never stepping down.
  static std::unique_ptr<Role> Single(std::string id, std::string version);
  // One of several servers on PostgreSQL: a follower until SetLeader.
  static std::unique_ptr<Role> Replicated(std::string id, std::string version, LeaseTiming timing);

  const std::string& id() const { return id_; }
  const std::string& version() const { return version_; }
  bool replicated() const { return replicated_; }
  const LeaseTiming& timing() const { return timing_; }

  bool is_leader() const;
  int64_t epoch() const;
  // The leader's URL ("" while none is known); this server's own when it leads.
  std::string leader_address() const;
  // OK while this server may do leader-only work at `now_mono_ms`: it leads and its own
  // deadline (lease_rule.h MustStepDown) has not passed. Unavailable saying who leads.
  Status CheckLeader(int64_t now_mono_ms) const;

  void SetFollowing(std::string leader_address, int64_t epoch);
  void SetLeader(std::string self_address, int64_t epoch, int64_t renewal_sent_mono_ms);
  void Renewed(int64_t renewal_sent_mono_ms);
  void SetServers(std::vector<ServerView> servers);
  // The last registry read (Single: this server alone).
  std::vector<ServerView> Servers() const;

 private:
  Role(std::string id, std::string version, bool replicated, LeaseTiming timing)
      : id_(std::move(id)), version_(std::move(version)), replicated_(replicated), timing_(timing) {}
  const std::string id_;
  const std::string version_;
  const bool replicated_;
  const LeaseTiming timing_;
  mutable Mutex mu_;
  bool leader_ ROTA_GUARDED_BY(mu_) = false;
  int64_t epoch_ ROTA_GUARDED_BY(mu_) = 0;
  std::string leader_address_ ROTA_GUARDED_BY(mu_);
  int64_t renewal_sent_ms_ ROTA_GUARDED_BY(mu_) = 0;
  std::vector<ServerView> servers_ ROTA_GUARDED_BY(mu_);
};

}  // namespace rota::server::leadership
