#include "server/enforcement/enforcement_binding.h"

#include <algorithm>
#include <chrono>

#include "common/log.h"
#include "common/mutex.h"
#include "notify/notifier.h"
#include "notify/templates.h"
#include "server/accounts/accounts.h"
#include "server/nodes/agent_gateway.h"
#include "server/reservations/reservations.h"

namespace rota::server {
namespace {

using enforce::EnforcementSettings;

std::vector<reserve::NodeGpu> GpusOf(const ClusterState& cluster, const std::string& node,
                                     const std::vector<uint32_t>& indices) {
  std::vector<reserve::NodeGpu> out;
  auto view = cluster.Node(node);
  for (uint32_t index : indices) {
    reserve::NodeGpu g{index, "", ""};
    if (view) {
      for (const auto& info : view->info->gpus) {
        if (info.index == index) g = reserve::NodeGpu{index, info.uuid, info.name};
      }
    }
    out.push_back(std::move(g));
  }
  return out;
}

// The lowest-id policy with an enforcement section that targets one of `gpus`
// and covers `owner`; null when none does.
const reserve::Policy* PolicyInForce(const std::vector<reserve::Policy>& policies,
                                     const EnforcementOwner& owner, const std::string& node,
                                     const std::vector<reserve::NodeGpu>& gpus) {
  const reserve::Policy* best = nullptr;
  for (const auto& p : policies) {
    if (p.enforcement.empty() || !p.Covers(owner.username, owner.groups)) continue;
    const bool targets = std::any_of(gpus.begin(), gpus.end(), [&](const reserve::NodeGpu& g) {
      return p.Targets(node, g.model);
    });
    if (targets && (best == nullptr || p.id < best->id)) best = &p;
  }
  return best;
}

api::CommandMsg ToWire(const CommandRequest& r) {
  api::CommandMsg m;
  m.action = r.action == "warn" ? api::CommandAction::kWarn : api::CommandAction::kSignal;
  m.uid = r.uid;
  m.user = r.user;
  m.message = r.message;
  m.signal = r.signal == "KILL" ? api::CommandSignal::kKill : api::CommandSignal::kTerm;
  for (const auto& t : r.targets) m.targets.push_back(api::CommandTarget{t.pid, t.start_time_ms, t.gpu});
  return m;
}

CommandOutcome FromWire(const Result<api::CommandResultMsg>& r) {
  CommandOutcome out;
  if (!r.ok()) {
    out.error = r.status().message();
    return out;
  }
  out.ok = r->error.empty();
  out.error = r->error;
  out.terminals = r->terminals;
  for (const auto& t : r->outcomes) {
    out.pids.push_back(PidOutcome{t.pid, api::TargetOutcomeName(t.outcome), t.detail});
  }
  return out;
}

std::optional<UserContact> Contact(const Result<User>& u) {
  if (!u.ok()) return std::nullopt;
  return UserContact{u->id, u->username, u->email};
}

notify::Email RenderViolation(const EmailRequest& e, const std::string& server_url) {
  notify::ViolationNotice n;
  n.node = e.node;
  n.gpu_index = e.gpu;
  n.gpu_uuid = e.gpu_uuid;
  n.offender_user = e.offender_username.empty() ? e.unix_user
                                                : e.unix_user + " (" + e.offender_username + ")";
  if (n.offender_user.empty()) n.offender_user = "uid " + std::to_string(e.uid);
  for (const auto& p : e.processes) n.processes.emplace_back(p.pid, p.command);
  n.reservation_title = e.reservation_title;
  n.reservation_owner = e.reservation_owner;
  n.reservation_start_ms = e.reservation_start_ms;
  n.reservation_end_ms = e.reservation_end_ms;
  n.next_action = "stop the processes (SIGTERM, then SIGKILL after " +
                  std::to_string(e.kill_after_ms / 1000) + " s)";
  n.next_action_ms = e.term_at_ms;
  n.server_url = server_url;
  n.violation_id = e.violation_id;
  return e.kind == "violation_offender" ? notify::RenderViolationForOffender(n)
                                        : notify::RenderViolationForOwner(n);
}

}  // namespace

std::function<void(EmailRequest, std::function<void(EmailDelivery)>)> MakeMailHook(
    notify::Notifier* notifier, const std::string& server_url) {
  return [notifier, server_url](EmailRequest e, std::function<void(EmailDelivery)> done) {
    notify::Email mail = RenderViolation(e, server_url);
    mail.to = e.to;
    notifier->Enqueue(std::move(mail), [done = std::move(done)](const notify::DeliveryReport& r) {
      EmailDelivery d{r.outcome, r.detail};
      if (!r.rate_limited.empty() && r.outcome != "rate_limited") {
        std::string limited;
        for (const auto& a : r.rate_limited) limited += (limited.empty() ? "" : ", ") + a;
        d.detail += std::string(d.detail.empty() ? "" : "; ") + "rate-limited: " + limited;
      }
      if (done) done(std::move(d));
    });
  };
}

Result<PolicyEnforcement> ParsePolicyEnforcement(const api::Json& j,
                                                 const EnforcementSettings& defaults) {
  if (!j.is_object()) return Status::InvalidArgument("enforcement: must be a JSON object");
  PolicyEnforcement out;
  api::Json settings = j;
  if (j.contains("owner_limits")) {
    auto limits = enforce::ParseOwnerLimits(j["owner_limits"]);
    if (!limits.ok()) return limits.status().WithContext("enforcement.owner_limits");
    out.owner_limits = *limits;
    settings.erase("owner_limits");
  }
  auto parsed = enforce::ParseEnforcementSettings(settings, defaults);
  if (!parsed.ok()) return parsed.status().WithContext("enforcement");
  out.settings = *parsed;
  return out;
}

Result<EnforcementSettings> DefaultEnforcementSettings(const ServerConfig& config) {
  EnforcementSettings s;
  s.mode = config.enforcement_mode;
  s.dry_run = config.enforcement_dry_run;
  s.grace_email_ms = config.grace_email_ms;
  s.grace_term_ms = config.grace_term_ms;
  s.grace_kill_ms = config.grace_kill_ms;
  s.exempt_users = config.exempt_users;
  s.exempt_commands = config.exempt_commands;
  s.min_uid = config.enforcement_min_uid;
  Status st = enforce::ValidateEnforcementSettings(s);
  if (!st.ok()) return st.WithContext("enforcement configuration");
  return s;
}

Result<EnforcementSettings> EnforcementSettingsFor(const std::vector<reserve::Policy>& policies,
                                                   const EnforcementOwner& owner,
                                                   const std::string& node,
                                                   const std::vector<reserve::NodeGpu>& gpus,
                                                   const api::Json& overrides,
                                                   const EnforcementSettings& defaults) {
  PolicyEnforcement in_force{defaults, {}};
  std::string policy_name;
  if (const reserve::Policy* p = PolicyInForce(policies, owner, node, gpus)) {
    auto parsed = ParsePolicyEnforcement(p->enforcement, defaults);
    if (!parsed.ok()) return parsed.status().WithContext("policy '" + p->name + "'");
    in_force = *parsed;
    policy_name = p->name;
  }
  if (overrides.is_null() || (overrides.is_object() && overrides.empty())) return in_force.settings;
  enforce::OwnerLimits limits = in_force.owner_limits;
  if (owner.admin) {
    limits = enforce::OwnerLimits{0, enforce::kMaxGraceMs, 0, enforce::kMaxGraceMs, 0,
                                  enforce::kMaxGraceMs, true, true};
  }
  auto applied = enforce::ApplyOwnerOverrides(in_force.settings, overrides, limits);
  if (!applied.ok() && applied.status().code() == StatusCode::kPermissionDenied &&
      !policy_name.empty()) {
    return applied.status().WithContext("policy '" + policy_name + "'");
  }
  if (!applied.ok()) return applied.status().WithContext("enforcement");
  return applied;
}

std::function<Status(const reserve::Requester&, const std::string&,
                     const std::vector<reserve::NodeGpu>&, const api::Json&,
                     const std::vector<reserve::Policy>&)>
MakeEnforcementCheck(const EnforcementSettings& defaults) {
  return [defaults](const reserve::Requester& who, const std::string& node,
                    const std::vector<reserve::NodeGpu>& gpus, const api::Json& overrides,
                    const std::vector<reserve::Policy>& policies) -> Status {
    EnforcementOwner owner{who.username, who.groups, who.admin};
    return EnforcementSettingsFor(policies, owner, node, gpus, overrides, defaults).status();
  };
}

EnforcementHooks MakeEnforcementHooks(const EnforcementDeps& deps) {
  EnforcementHooks h;
  h.active_reservations = [deps](const std::string& node, int64_t now_ms) {
    std::vector<enforce::ReservationView> views;
    auto active = deps.reservations->ActiveOn(node, now_ms);
    if (!active.ok()) {
      ROTA_LOG(WARNING) << "enforcement: reservations on " << node << ": "
                        << active.status().message();
      return views;
    }
    if (active->empty()) return views;
    auto policies = deps.reservations->ListPolicies();
    if (!policies.ok()) {
      ROTA_LOG(WARNING) << "enforcement: policies: " << policies.status().message();
      policies = std::vector<reserve::Policy>{};
    }
    for (const auto& r : *active) {
      auto user = deps.accounts->GetUser(r.owner_id);
      enforce::ReservationView v;
      v.id = r.id;
      v.owner_id = r.owner_id;
      v.owner_username = r.owner;
      v.title = r.title;
      v.node = r.node;
      v.gpus = r.gpus;
      v.start_ms = r.start_ms;
      v.end_ms = r.end_ms;
      EnforcementOwner owner{r.owner, {}, false};
      if (user.ok()) {
        v.owner_unix_user = user->disabled ? "" : user->UnixUserOn(node);
        owner.groups = user->groups;
        owner.admin = user->role == Role::kAdmin;
      }
      const auto gpus = GpusOf(*deps.cluster, node, r.gpus);
      auto settings = EnforcementSettingsFor(*policies, owner, node, gpus, r.enforcement, deps.defaults);
      if (!settings.ok()) {
        // A policy changed after the reservation was made: its overrides no
        // longer fit. Enforce the policy's own settings.
        ROTA_LOG(WARNING) << "enforcement: reservation " << r.id << ": "
                          << settings.status().message() << "; its overrides are ignored";
        settings = EnforcementSettingsFor(*policies, owner, node, gpus, api::Json::object(),
                                          deps.defaults);
      }
      v.settings = settings.ok() ? *settings : deps.defaults;
      views.push_back(std::move(v));
    }
    return views;
  };
  h.node_default = [deps](const std::string&) { return deps.defaults; };
  h.find_user_by_unix = [deps](const std::string& node, const std::string& unix_user) {
    return Contact(deps.accounts->FindByUnixUser(node, unix_user));
  };
  h.get_user = [deps](int64_t id) { return Contact(deps.accounts->GetUser(id)); };
  h.admin_emails = [deps] {
    std::vector<std::string> out;
    auto users = deps.accounts->ListUsers();
    if (!users.ok()) return out;
    for (const auto& u : *users) {
      if (u.role == Role::kAdmin && !u.disabled && !u.email.empty()) out.push_back(u.email);
    }
    return out;
  };
  h.send_command = [deps](const std::string& node, const CommandRequest& request,
                          std::function<void(CommandOutcome)> done) {
    deps.gateway->SendCommand(node, ToWire(request),
                              [done = std::move(done)](Result<api::CommandResultMsg> r) {
                                done(FromWire(r));
                              });
  };
  if (deps.notifier == nullptr) return h;  // mail disabled: the audit log says so
  h.send_email = MakeMailHook(deps.notifier, deps.server_url);
  return h;
}

notify::Email IdleEmail(const IdleNotice& n, const std::string& server_url) {
  notify::IdleReservationNotice m;
  m.reservation_id = n.reservation_id;
  m.title = n.title;
  m.owner = n.owner;
  m.node = n.node;
  m.gpus = n.gpus;
  m.idle_since_ms = n.idle_since_ms;
  m.avg_util = n.avg_util_gpu;
  // will_release_ms stays 0: a notice names no release time, although a
  // releasing rule with a longer wait (of another policy) may still follow.
  m.released_ms = n.released ? n.end_ms : 0;
  m.server_url = server_url;
  return notify::RenderIdleReservation(m);
}

std::function<void(const IdleNotice&)> MakeIdleMailer(const EnforcementDeps& deps) {
  return [deps](const IdleNotice& n) {
    ROTA_LOG(INFO) << "reservation " << n.reservation_id << " of " << n.owner << ": " << n.reason;
    if (deps.notifier == nullptr || n.owner_email.empty()) return;
    notify::Email mail = IdleEmail(n, deps.server_url);
    mail.to = {n.owner_email};
    deps.notifier->Enqueue(std::move(mail));
  };
}

// ---- EnforcementRunner ----

EnforcementRunner::EnforcementRunner(EnforcementService* service, ClusterState* cluster)
    : service_(service), cluster_(cluster) {
  worker_ = std::thread([this] { Run(); });
  listener_ = cluster_->AddListener([this](const std::string& event, const NodeView& view) {
    MutexLock lock(&mu_);
    if (event == "sample" && view.latest) {
      pending_[view.info->name] = view.latest;
    } else if (event == "node" && view.state == NodeState::kUnreachable) {
      pending_.erase(view.info->name);
      lost_.insert(view.info->name);
    } else {
      return;
    }
    cv_.NotifyAll();
  });
}

EnforcementRunner::~EnforcementRunner() {
  cluster_->RemoveListener(listener_);
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.NotifyAll();
  worker_.join();
}

void EnforcementRunner::Run() {
  MutexLock lock(&mu_);
  while (true) {
    cv_.Wait(&mu_, [&]() ROTA_REQUIRES(mu_) {
      return stopping_ || !pending_.empty() || !lost_.empty();
    });
    if (stopping_) return;
    auto samples = std::move(pending_);
    auto lost = std::move(lost_);
    pending_.clear();
    lost_.clear();
    busy_ = true;
    lock.Unlock();
    for (const auto& node : lost) service_->OnNodeLost(node);
    for (const auto& [node, sample] : samples) service_->OnSample(node, *sample);
    lock.Lock();
    busy_ = false;
    cv_.NotifyAll();
  }
}

bool EnforcementRunner::Drain(int64_t timeout_ms) {
  MutexLock lock(&mu_);
  return cv_.WaitFor(&mu_, std::chrono::milliseconds(timeout_ms), [&]() ROTA_REQUIRES(mu_) {
    return stopping_ || (!busy_ && pending_.empty() && lost_.empty());
  });
}

}  // namespace rota::server
