#pragma once
// PowerService: the server's shell around the power planner (src/power). Keeps
// the power policies (store), plans every GPU's limit from them, the cluster's
// GPUs and their load (ClusterState) each tick, sends each node's limits to its
// agent when they change or the agent registers again, and records what the
// agents report (in force, refused and why) in memory and in the power audit log.
//
// Thread-safe. Tick() is called by the server's background loop; OnReport() by
// the agent gateway's network threads; the rest by HTTP handlers.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/codec.h"
#include "api/power_protocol.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "power/plan.h"
#include "power/policy.h"
#include "server/store/power.h"
#include "server/store/store.h"

namespace rota::server {

class AgentGateway;
class ClusterState;

struct PowerOptions {
  // A GPU counts as busy (for budgets) while it has a process or at least this
  // utilisation, and for `busy_hold_ms` after, so that a short pause does not
  // move its share back and forth.
  uint32_t busy_util_pct = 10;
  int64_t busy_hold_ms = 30'000;
};

class PowerService {
 public:
  // All pointers are borrowed and must outlive the service.
  PowerService(store::Store* store, ClusterState* cluster, AgentGateway* gateway, const Clock* clock,
               PowerOptions options = {});

  // Loads the policies.
  Status Start();
  // Plans the limits and sends those that changed. Its cost grows with the GPUs of
  // the cluster (every GPU's facts are read), not with what changed.
  void Tick();
  // How long the server waits between Ticks: 1 s while there are power policies (a
  // budget follows the load), 5 s without any (nothing to plan; a policy's creation
  // plans at once). StateJson reads the cluster itself, so it is never stale.
  int64_t TickIntervalMs() const;
  // An agent's power_report.
  void OnReport(const std::string& node, const api::PowerReportMsg& report);

  std::vector<power::PowerPolicy> Policies() const;
  // Validate `p` against the cluster and the other policies
  // (power::ValidateAgainstCluster), store it, audit it, and re-plan at once.
  Result<power::PowerPolicy> Create(const power::PowerPolicy& p, const std::string& actor);
  Result<power::PowerPolicy> Update(int64_t id, const power::PowerPolicy& p, const std::string& actor);
  Status Delete(int64_t id, const std::string& actor);
  Result<power::PowerPolicy> Get(int64_t id) const;

  // GET /api/v1/power: every GPU with its range, target, what is in force, its
  // draw and whether it is busy (read from the cluster now), and the last outcome;
  // the active budgets and how they are divided.
  api::Json StateJson();
  Result<std::vector<store::PowerEvent>> Events(const store::PowerEventQuery& q);
  // The active budgets as last divided (for metrics).
  std::vector<power::BudgetShare> Budgets() const;

 private:
  struct GpuState {
    std::string uuid;
    std::string model;
    std::optional<uint32_t> power_mw;  // latest reading
    std::optional<power::PowerRange> range;
    std::optional<uint32_t> target_mw;
    std::string reason;
    std::vector<std::string> policies;
    int64_t last_busy_ms = 0;
    bool busy = false;
    // From the agent's reports.
    std::optional<uint32_t> in_force_mw;
    std::string outcome;  // "" until the agent reported
    std::string detail;
    int64_t reported_ms = 0;
  };
  struct NodeSent {
    uint64_t session = 0;
    api::PowerLimitsMsg msg;
  };
  using GpuKey = std::pair<std::string, uint32_t>;

  power::ClusterFacts Facts(int64_t now_ms) ROTA_REQUIRES(mu_);
  void TickLocked() ROTA_REQUIRES(tick_mu_) ROTA_EXCLUDES(mu_);
  // Validates `p` (edited policy `id`, 0 for a new one) against the cluster.
  Status Validate(const power::PowerPolicy& p, int64_t id) ROTA_REQUIRES(tick_mu_) ROTA_EXCLUDES(mu_);
  void Audit(std::vector<store::PowerEvent> events);

  store::Store* const store_;
  ClusterState* const cluster_;
  AgentGateway* const gateway_;
  const Clock* const clock_;
  const PowerOptions options_;

  mutable Mutex mu_;
  std::vector<power::PowerPolicy> policies_ ROTA_GUARDED_BY(mu_);
  std::map<GpuKey, GpuState> gpus_ ROTA_GUARDED_BY(mu_);
  std::map<std::string, NodeSent> sent_ ROTA_GUARDED_BY(mu_);
  std::vector<power::BudgetShare> budgets_ ROTA_GUARDED_BY(mu_);
  int64_t planned_ms_ ROTA_GUARDED_BY(mu_) = 0;
  Mutex tick_mu_ ROTA_ACQUIRED_BEFORE(mu_);  // one Tick or policy edit at a time
};

}  // namespace rota::server
