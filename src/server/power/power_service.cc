#include "server/power/power_service.h"

#include "common/log.h"
#include "common/strings.h"
#include "common/time_util.h"
#include "server/nodes/agent_gateway.h"
#include "server/nodes/cluster_state.h"

namespace rota::server {
namespace {

using api::Json;

bool SameLimits(const api::PowerLimitsMsg& a, const api::PowerLimitsMsg& b) {
  if (a.gpus.size() != b.gpus.size()) return false;
  for (size_t i = 0; i < a.gpus.size(); ++i) {
    if (a.gpus[i].index != b.gpus[i].index || a.gpus[i].uuid != b.gpus[i].uuid ||
        a.gpus[i].limit_mw != b.gpus[i].limit_mw) {
      return false;
    }
  }
  return true;
}

Json Watts(const std::optional<uint32_t>& mw) {
  if (!mw) return nullptr;
  return static_cast<double>(*mw) / 1000.0;
}

Json Watts64(uint64_t mw) { return static_cast<double>(mw) / 1000.0; }

store::PowerEvent PolicyEvent(const char* action, const power::PowerPolicy& p, const std::string& actor,
                              int64_t now_ms) {
  store::PowerEvent e;
  e.t_ms = now_ms;
  e.action = action;
  e.policy = p.name;
  e.actor = actor;
  e.detail = p.Describe() + (p.windows.windows.empty()
                                 ? ""
                                 : " in " + reserve::DescribeWindows(p.windows.windows) + " (" +
                                       p.windows.zone + ")");
  return e;
}

}  // namespace

PowerService::PowerService(store::Store* store, ClusterState* cluster, AgentGateway* gateway,
                           const Clock* clock, PowerOptions options)
    : store_(store), cluster_(cluster), gateway_(gateway), clock_(clock), options_(options) {}

Status PowerService::Start() {
  std::vector<power::PowerPolicy> loaded;
  RETURN_IF_ERROR(store_->Read([&](store::Db& db) -> Status {
    ASSIGN_OR_RETURN(loaded, store::LoadPowerPolicies(db));
    return Status::Ok();
  }));
  MutexLock lock(&mu_);
  policies_ = std::move(loaded);
  return Status::Ok();
}

power::ClusterFacts PowerService::Facts(int64_t now_ms) {
  power::ClusterFacts facts;
  for (const NodeView& v : cluster_->Nodes()) {
    facts.node_labels[v.info->name] = v.info->labels;
    const bool reachable = v.connected && v.state == NodeState::kReady;
    for (const auto& g : v.info->gpus) {
      GpuState& st = gpus_[{v.info->name, g.index}];
      st.uuid = g.uuid;
      st.model = g.name;
      if (g.power_min_mw && g.power_max_mw && g.power_default_mw) {
        st.range = power::PowerRange{*g.power_min_mw, *g.power_max_mw, *g.power_default_mw};
      }
      if (v.latest) {
        for (const auto& s : v.latest->gpus) {
          if (s.index != g.index) continue;
          st.power_mw = s.power_mw;
          if (s.power_limit_mw) st.in_force_mw = s.power_limit_mw;  // read back every sample
          if (!s.processes.empty() || s.util_gpu_pct.value_or(0) >= options_.busy_util_pct) {
            st.last_busy_ms = now_ms;
          }
        }
      }
      st.busy = st.last_busy_ms > 0 && now_ms - st.last_busy_ms < options_.busy_hold_ms;
      power::GpuFacts f;
      f.node = v.info->name;
      f.index = g.index;
      f.uuid = g.uuid;
      f.model = g.name;
      f.range = st.range;
      f.reachable = reachable;
      f.busy = st.busy;
      facts.gpus.push_back(std::move(f));
    }
  }
  return facts;
}

void PowerService::Tick() {
  MutexLock tick(&tick_mu_);
  TickLocked();
}

void PowerService::TickLocked() {
  const int64_t now = clock_->NowMs();
  std::vector<std::pair<std::string, api::PowerLimitsMsg>> to_send;
  {
    MutexLock lock(&mu_);
    power::ClusterFacts facts = Facts(now);
    power::Plan plan = power::PlanLimits(policies_, facts, now);
    budgets_ = plan.budgets;
    planned_ms_ = now;
    std::map<std::string, api::PowerLimitsMsg> per_node;
    for (auto& t : plan.gpus) {
      GpuState& st = gpus_[{t.node, t.index}];
      st.target_mw = t.limit_mw;
      st.reason = t.reason;
      st.policies = t.policies;
      per_node[t.node].gpus.push_back({t.index, t.uuid, t.limit_mw, t.reason.substr(0, 1024)});
    }
    for (auto& [node, msg] : per_node) {
      const uint64_t session = gateway_->SessionOf(node);
      if (session == 0) {
        sent_.erase(node);
        continue;
      }
      NodeSent& sent = sent_[node];
      if (sent.session == session && SameLimits(sent.msg, msg)) continue;
      sent.session = session;
      sent.msg = msg;
      to_send.emplace_back(node, std::move(msg));
    }
  }
  for (auto& [node, msg] : to_send) {
    if (Status st = gateway_->SendPowerLimits(node, msg); !st.ok()) {
      MutexLock lock(&mu_);
      sent_.erase(node);  // try again next tick
    }
  }
}

void PowerService::OnReport(const std::string& node, const api::PowerReportMsg& report) {
  const int64_t now = clock_->NowMs();
  std::vector<store::PowerEvent> events;
  {
    MutexLock lock(&mu_);
    for (const auto& r : report.gpus) {
      GpuState& st = gpus_[{node, r.index}];
      if (r.min_mw && r.max_mw && r.default_mw && *r.min_mw <= *r.max_mw) {
        st.range = power::PowerRange{*r.min_mw, *r.max_mw, *r.default_mw};
      }
      if (r.limit_mw) st.in_force_mw = r.limit_mw;
      st.outcome = api::PowerOutcomeName(r.outcome);
      st.detail = r.detail;
      st.reported_ms = now;
      if (r.outcome == api::PowerOutcome::kUnchanged) continue;
      store::PowerEvent e;
      e.t_ms = now;
      e.action = api::PowerOutcomeName(r.outcome);
      e.node = node;
      e.gpu = r.index;
      e.uuid = r.uuid;
      e.limit_mw = r.limit_mw;
      e.previous_mw = r.previous_mw;
      e.requested_mw = r.requested_mw;
      e.policy = Join(st.policies, ",");
      e.detail = r.detail;
      if (r.outcome == api::PowerOutcome::kRefused || r.outcome == api::PowerOutcome::kError) {
        ROTA_LOG(WARNING) << "node " << node << " GPU " << r.index << ": power limit "
                          << e.action << ": " << r.detail;
      }
      events.push_back(std::move(e));
    }
  }
  Audit(std::move(events));
}

void PowerService::Audit(std::vector<store::PowerEvent> events) {
  if (events.empty()) return;
  store_->WriteAsync(
      [events = std::move(events)](store::Db& db) { return store::AddPowerEvents(db, events); },
      [](Status st) {
        if (!st.ok()) ROTA_LOG(WARNING) << "power audit log: " << st.message();
      });
}

std::vector<power::PowerPolicy> PowerService::Policies() const {
  MutexLock lock(&mu_);
  return policies_;
}

Result<power::PowerPolicy> PowerService::Get(int64_t id) const {
  MutexLock lock(&mu_);
  for (const auto& p : policies_) {
    if (p.id == id) return p;
  }
  return Status::NotFound("no power policy " + std::to_string(id));
}

Status PowerService::Validate(const power::PowerPolicy& p, int64_t id) {
  MutexLock lock(&mu_);
  const int64_t now = clock_->NowMs();
  power::PowerPolicy candidate = p;
  candidate.id = id;
  return power::ValidateAgainstCluster(candidate, policies_, Facts(now), now);
}

Result<power::PowerPolicy> PowerService::Create(const power::PowerPolicy& p, const std::string& actor) {
  MutexLock tick(&tick_mu_);
  RETURN_IF_ERROR(Validate(p, 0));
  const int64_t now = clock_->NowMs();
  power::PowerPolicy out;
  RETURN_IF_ERROR(store_->Write([&](store::Db& db) -> Status {
    ASSIGN_OR_RETURN(out, store::InsertPowerPolicy(db, p, now));
    return store::AddPowerEvents(db, {PolicyEvent("policy_created", out, actor, now)});
  }));
  {
    MutexLock lock(&mu_);
    policies_.push_back(out);
  }
  ROTA_LOG(INFO) << actor << " created power policy " << out.name << " (" << out.Describe() << ")";
  TickLocked();
  return out;
}

Result<power::PowerPolicy> PowerService::Update(int64_t id, const power::PowerPolicy& p,
                                                const std::string& actor) {
  MutexLock tick(&tick_mu_);
  RETURN_IF_ERROR(Get(id).status());
  RETURN_IF_ERROR(Validate(p, id));
  const int64_t now = clock_->NowMs();
  power::PowerPolicy out;
  RETURN_IF_ERROR(store_->Write([&](store::Db& db) -> Status {
    ASSIGN_OR_RETURN(out, store::UpdatePowerPolicy(db, id, p, now));
    return store::AddPowerEvents(db, {PolicyEvent("policy_updated", out, actor, now)});
  }));
  {
    MutexLock lock(&mu_);
    for (auto& q : policies_) {
      if (q.id == id) q = out;
    }
  }
  TickLocked();
  return out;
}

Status PowerService::Delete(int64_t id, const std::string& actor) {
  MutexLock tick(&tick_mu_);
  const int64_t now = clock_->NowMs();
  RETURN_IF_ERROR(store_->Write([&](store::Db& db) -> Status {
    ASSIGN_OR_RETURN(power::PowerPolicy gone, store::DeletePowerPolicy(db, id));
    return store::AddPowerEvents(db, {PolicyEvent("policy_deleted", gone, actor, now)});
  }));
  {
    MutexLock lock(&mu_);
    std::erase_if(policies_, [id](const power::PowerPolicy& q) { return q.id == id; });
  }
  TickLocked();
  return Status::Ok();
}

Result<std::vector<store::PowerEvent>> PowerService::Events(const store::PowerEventQuery& q) {
  std::vector<store::PowerEvent> out;
  RETURN_IF_ERROR(store_->Read([&](store::Db& db) -> Status {
    ASSIGN_OR_RETURN(out, store::ListPowerEvents(db, q));
    return Status::Ok();
  }));
  return out;
}

std::vector<power::BudgetShare> PowerService::Budgets() const {
  MutexLock lock(&mu_);
  return budgets_;
}

int64_t PowerService::TickIntervalMs() const {
  MutexLock lock(&mu_);
  return policies_.empty() ? 5'000 : 1'000;
}

Json PowerService::StateJson() {
  MutexLock lock(&mu_);
  Facts(clock_->NowMs());  // the draw and busy state of now, whenever the last Tick was
  Json gpus = Json::array();
  for (const auto& [key, st] : gpus_) {
    Json g{{"node", key.first},
           {"index", key.second},
           {"uuid", st.uuid},
           {"model", st.model},
           {"min_w", st.range ? Watts(st.range->min_mw) : Json(nullptr)},
           {"max_w", st.range ? Watts(st.range->max_mw) : Json(nullptr)},
           {"default_w", st.range ? Watts(st.range->default_mw) : Json(nullptr)},
           {"target_w", Watts(st.target_mw)},
           {"in_force_w", Watts(st.in_force_mw)},
           {"power_w", Watts(st.power_mw)},
           {"busy", st.busy},
           {"policies", st.policies},
           {"reason", st.reason},
           {"outcome", st.outcome},
           {"detail", st.detail}};
    g["reported"] = st.reported_ms ? Json(FormatRfc3339(st.reported_ms)) : Json(nullptr);
    gpus.push_back(std::move(g));
  }
  Json budgets = Json::array();
  for (const auto& b : budgets_) {
    budgets.push_back(Json{{"policy", b.policy},
                           {"budget_w", Watts64(b.budget_mw)},
                           {"gpus", b.gpus},
                           {"busy", b.busy},
                           {"left_out", b.left_out},
                           {"min_total_w", Watts64(b.min_total_mw)},
                           {"assigned_w", Watts64(b.assigned_mw)},
                           {"feasible", b.feasible}});
  }
  return Json{{"planned", planned_ms_ ? Json(FormatRfc3339(planned_ms_)) : Json(nullptr)},
              {"gpus", std::move(gpus)},
              {"budgets", std::move(budgets)}};
}

}  // namespace rota::server
