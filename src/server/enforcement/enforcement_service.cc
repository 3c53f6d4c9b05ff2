#include "server/enforcement/enforcement_service.h"

#include <algorithm>
#include <set>
#include <utility>

#include "common/log.h"
#include "common/mutex.h"
#include "common/time_util.h"

namespace rota::server {

using enforce::Action;
using enforce::ActionKind;
using enforce::OffendingProcess;

// Shared with pending callbacks: they record only while the service lives.
struct EnforcementService::Life {
  Mutex mu;
  bool alive ROTA_GUARDED_BY(mu) = true;
};

namespace {

std::string PidList(const std::vector<OffendingProcess>& ps) {
  std::string s;
  for (const auto& p : ps) s += (s.empty() ? "" : ", ") + std::to_string(p.pid);
  return s;
}

std::vector<EventPid> EventPids(const std::vector<OffendingProcess>& ps) {
  std::vector<EventPid> out;
  for (const auto& p : ps) out.push_back({p.pid, p.start_time_ms, "", ""});
  return out;
}

std::string Seconds(int64_t ms) {
  if (ms % 60'000 == 0 && ms >= 60'000) return std::to_string(ms / 60'000) + " min";
  return std::to_string(ms / 1000) + " s";
}

std::string Who(const enforce::Offence& o) {
  return o.unix_user.empty() ? "uid " + std::to_string(o.uid) : o.unix_user;
}

void AddUnique(std::vector<std::string>& to, const std::string& address) {
  if (!address.empty() && std::find(to.begin(), to.end(), address) == to.end())
    to.push_back(address);
}

}  // namespace

std::string WarningMessage(const Action& a) {
  const enforce::Offence& o = a.offence;
  const auto& s = o.settings;
  std::string m = "rota: your processes " + PidList(a.pids) + " use GPU " + std::to_string(o.gpu) +
                  " of " + o.node;
  if (o.reservation_id != 0) {
    m += ", reserved by " + o.reservation_owner_username + " until " +
         FormatRfc3339(o.reservation_end_ms) + " (reservation " + std::to_string(o.reservation_id) +
         (o.reservation_title.empty() ? "" : " '" + o.reservation_title + "'") + ")";
  } else {
    m += " without a reservation (this node requires one)";
  }
  m += ". Stop them now: they will be sent SIGTERM at " +
       FormatRfc3339(a.opened_ms + s.grace_term_ms) + " and SIGKILL " + Seconds(s.grace_kill_ms) +
       " later.";
  return m;
}

EnforcementService::EnforcementService(AuditLog* audit, EnforcementHooks hooks, const Clock& clock,
                                       EnforcementOptions options)
    : audit_(audit),
      hooks_(std::move(hooks)),
      clock_(clock),
      options_(options),
      life_(std::make_shared<Life>()) {}

EnforcementService::~EnforcementService() {
  MutexLock lock(&life_->mu);
  life_->alive = false;
}

Status EnforcementService::Recover() {
  ASSIGN_OR_RETURN(std::vector<ViolationRecord> open, audit_->ListOpen());
  std::vector<enforce::OpenViolation> restored;
  for (const ViolationRecord& r : open) {
    enforce::OpenViolation v;
    v.key = {r.node, r.gpu, r.uid.value_or(0), r.reservation_id};
    v.id = r.id;
    v.opened_ms = r.opened_ms;
    enforce::Offence& o = v.offence;
    o.node = r.node;
    o.gpu = r.gpu;
    o.gpu_uuid = r.gpu_uuid;
    o.uid = r.uid.value_or(0);
    o.unix_user = r.unix_user;
    o.reservation_id = r.reservation_id;
    o.reservation_owner_id = r.reservation_owner_id;
    o.reservation_owner_username = r.reservation_owner;
    o.settings.mode = r.mode;
    o.settings.dry_run = r.dry_run;
    // The current processes: those named by the latest open/update event.
    std::set<std::pair<uint32_t, int64_t>> current;
    for (const auto& e : r.events) {
      if (e.action != "open" && e.action != "update") continue;
      current.clear();
      for (const auto& p : e.pids) current.insert({p.pid, p.start_time_ms});
    }
    for (const auto& p : r.processes) {
      enforce::ProcessLadder l{p, 0, 0};
      for (const auto& e : r.events) {
        for (const auto& ep : e.pids) {
          if (ep.pid != p.pid || ep.start_time_ms != p.start_time_ms) continue;
          if (e.action == "term" && l.term_ms == 0) l.term_ms = e.t_ms;
          if (e.action == "kill" && l.kill_ms == 0) l.kill_ms = e.t_ms;
        }
      }
      v.ladder.push_back(l);
      if (current.count({p.pid, p.start_time_ms}) != 0) o.processes.push_back(p);
    }
    for (const auto& e : r.events) v.emailed = v.emailed || e.action == "email";
    restored.push_back(std::move(v));
  }
  MutexLock lock(&mu_);
  enforcer_.RestoreOpen(std::move(restored));
  ROTA_LOG(INFO) << "enforcement: " << open.size() << " open violation(s) restored";
  return Status::Ok();
}

void EnforcementService::OnSample(const std::string& node, const api::NodeSample& sample) {
  const int64_t now = clock_.NowMs();
  if (options_.max_sample_age_ms > 0 && sample.time_ms < now - options_.max_sample_age_ms) return;
  {
    MutexLock lock(&mu_);
    auto it = last_sample_.find(node);
    if (it != last_sample_.end() && sample.time_ms <= it->second) return;
  }
  std::vector<enforce::ReservationView> active;
  if (hooks_.active_reservations) active = hooks_.active_reservations(node, now);
  std::vector<enforce::JobAllocationView> jobs;
  if (hooks_.active_jobs) jobs = hooks_.active_jobs(node, now);
  const enforce::EnforcementSettings defaults =
      hooks_.node_default ? hooks_.node_default(node) : enforce::EnforcementSettings{};
  std::vector<enforce::Offence> offences = enforce::Detect(node, sample, active, jobs, defaults);

  std::vector<Action> actions;
  {
    MutexLock lock(&mu_);
    int64_t& last = last_sample_[node];
    if (sample.time_ms <= last && last != 0) return;  // a newer sample was judged meanwhile
    last = sample.time_ms;
    actions = enforcer_.Observe(node, now, offences, active, sample);
    AssignIds(actions, now);
  }
  for (const Action& a : actions) Perform(node, a, now);
}

void EnforcementService::OnNodeLost(const std::string& node) {
  const int64_t now = clock_.NowMs();
  std::vector<Action> actions;
  {
    MutexLock lock(&mu_);
    actions = enforcer_.NodeLost(node);
    last_sample_.erase(node);
  }
  for (const Action& a : actions) Perform(node, a, now);
}

std::vector<enforce::OpenViolation> EnforcementService::OpenViolations() const {
  MutexLock lock(&mu_);
  return enforcer_.Snapshot();
}

// Records violations that have no audit id yet (new ones,
// and ones whose recording failed before) and stamps the ids on the actions.
void EnforcementService::AssignIds(std::vector<Action>& actions, int64_t now_ms) {
  std::map<enforce::ViolationKey, int64_t> assigned;
  for (Action& a : actions) {
    if (a.violation_id != 0 || a.kind == ActionKind::kResolve) continue;
    auto it = assigned.find(a.key);
    if (it == assigned.end()) {
      std::optional<int64_t> user_id;
      if (hooks_.find_user_by_unix && !a.offence.unix_user.empty()) {
        if (auto u = hooks_.find_user_by_unix(a.offence.node, a.offence.unix_user)) user_id = u->id;
      }
      auto id =
          audit_->OpenViolation(a.offence, a.offence.settings.mode, a.dry_run, now_ms, user_id);
      if (!id.ok()) {
        ROTA_LOG(ERROR) << "enforcement: cannot record violation " << enforce::ToString(a.key)
                        << ": " << id.status().message();
        it = assigned.emplace(a.key, 0).first;
      } else {
        enforcer_.SetViolationId(a.key, *id);
        it = assigned.emplace(a.key, *id).first;
      }
    }
    a.violation_id = it->second;
  }
}

void EnforcementService::Record(int64_t id, int64_t t_ms, const std::string& action,
                                const std::string& outcome, const std::string& detail,
                                const std::vector<EventPid>& pids) {
  Status st = audit_->AddEvent(id, t_ms, action, outcome, detail, pids);
  if (!st.ok()) {
    ROTA_LOG(ERROR) << "enforcement: cannot record " << action << " of violation " << id << ": "
                    << st.message();
  }
}

void EnforcementService::Perform(const std::string& node, const Action& a, int64_t now_ms) {
  if (a.violation_id == 0) {
    // Not in the audit log: act on nothing we could not record.
    ROTA_LOG(WARNING) << "enforcement: " << enforce::ActionKindName(a.kind)
                      << " of unrecorded violation " << enforce::ToString(a.key) << " skipped";
    return;
  }
  switch (a.kind) {
    case ActionKind::kOpen:
      return;  // recorded by AssignIds
    case ActionKind::kWarn:
      return Warn(node, a, now_ms);
    case ActionKind::kUpdate: {
      Status st = audit_->UpdateProcesses(a.violation_id, now_ms, a.pids);
      if (!st.ok()) ROTA_LOG(ERROR) << "enforcement: " << st.message();
      return;
    }
    case ActionKind::kEmail:
      return Email(a, now_ms);
    case ActionKind::kTerm:
    case ActionKind::kKill:
      return Signal(node, a, now_ms);
    case ActionKind::kResolve: {
      Status st = audit_->Resolve(a.violation_id, now_ms, a.reason);
      if (!st.ok()) ROTA_LOG(ERROR) << "enforcement: " << st.message();
      return;
    }
  }
}

void EnforcementService::Warn(const std::string& node, const Action& a, int64_t now_ms) {
  const std::string message = WarningMessage(a);
  if (a.dry_run) {
    return Record(a.violation_id, now_ms, "warn", "dry_run",
                  "dry-run: would write to " + Who(a.offence) + "'s terminals: " + message,
                  EventPids(a.pids));
  }
  Record(a.violation_id, now_ms, "warn", "sent", message, EventPids(a.pids));
  if (!hooks_.send_command) {
    return Record(a.violation_id, now_ms, "warn_result", "failed", "no agent link configured");
  }
  CommandRequest req;
  req.action = "warn";
  req.uid = a.offence.uid;
  req.user = a.offence.unix_user;
  req.message = message;
  req.violation_id = a.violation_id;
  for (const auto& p : a.pids) req.targets.push_back({p.pid, p.start_time_ms, a.offence.gpu});
  const int64_t id = a.violation_id;
  hooks_.send_command(node, req, [this, life = life_, id](CommandOutcome out) {
    MutexLock lock(&life->mu);
    if (!life->alive) return;
    std::string detail;
    if (!out.ok) {
      detail = out.error;
    } else if (out.terminals.empty()) {
      detail = "no terminal of the user on the node";
    } else {
      detail = "written to " + std::to_string(out.terminals.size()) + " terminal(s): ";
      for (size_t i = 0; i < out.terminals.size(); ++i)
        detail += (i ? ", " : "") + out.terminals[i];
    }
    Record(id, clock_.NowMs(), "warn_result", out.ok ? "ok" : "failed", detail);
  });
}

void EnforcementService::Signal(const std::string& node, const Action& a, int64_t now_ms) {
  const bool term = a.kind == ActionKind::kTerm;
  const std::string action = term ? "term" : "kill";
  const std::string sig = term ? "SIGTERM" : "SIGKILL";
  // Detect never charges these uids; a second check before anything is sent.
  if (a.offence.uid < a.offence.settings.min_uid) {
    return Record(a.violation_id, now_ms, action, "refused",
                  "uid " + std::to_string(a.offence.uid) + " is below enforcement_min_uid " +
                      std::to_string(a.offence.settings.min_uid) +
                      " (root or a system account): never signalled",
                  EventPids(a.pids));
  }
  if (a.dry_run) {
    return Record(a.violation_id, now_ms, action, "dry_run",
                  "dry-run: would " + sig + " pids " + PidList(a.pids), EventPids(a.pids));
  }
  Record(a.violation_id, now_ms, action, "sent", sig + " pids " + PidList(a.pids),
         EventPids(a.pids));
  if (!hooks_.send_command) {
    return Record(a.violation_id, now_ms, action + "_result", "failed", "no agent link configured");
  }
  CommandRequest req;
  req.action = "signal";
  req.uid = a.offence.uid;
  req.user = a.offence.unix_user;
  req.signal = term ? "TERM" : "KILL";
  req.violation_id = a.violation_id;
  for (const auto& p : a.pids) req.targets.push_back({p.pid, p.start_time_ms, a.offence.gpu});
  const int64_t id = a.violation_id;
  std::vector<OffendingProcess> targets = a.pids;
  hooks_.send_command(node, req, [this, life = life_, id, action, targets](CommandOutcome out) {
    MutexLock lock(&life->mu);
    if (!life->alive) return;
    std::vector<EventPid> pids;
    size_t failed = 0;
    for (const auto& t : targets) {
      EventPid ep{t.pid, t.start_time_ms, out.ok ? "no report" : "failed", out.ok ? "" : out.error};
      for (const auto& r : out.pids) {
        if (r.pid == t.pid) ep = {t.pid, t.start_time_ms, r.outcome, r.detail};
      }
      // The process got the signal, was gone already, or is not the one we meant
      // (pid reused): nothing more to do for it. Anything else failed.
      if (ep.outcome != "signalled" && ep.outcome != "gone" && ep.outcome != "mismatch") ++failed;
      pids.push_back(std::move(ep));
    }
    std::string outcome = !out.ok                    ? "failed"
                          : failed == 0              ? "ok"
                          : failed == targets.size() ? "failed"
                                                     : "partial";
    std::string detail;
    for (const auto& p : pids) {
      detail += (detail.empty() ? "" : "; ") + std::to_string(p.pid) + ": " + p.outcome +
                (p.detail.empty() ? "" : " (" + p.detail + ")");
    }
    if (!out.ok && !out.error.empty()) detail = out.error;
    Record(id, clock_.NowMs(), action + "_result", outcome, detail, pids);
  });
}

void EnforcementService::Email(const Action& a, int64_t now_ms) {
  const enforce::Offence& o = a.offence;
  std::optional<UserContact> offender, owner;
  if (hooks_.find_user_by_unix && !o.unix_user.empty())
    offender = hooks_.find_user_by_unix(o.node, o.unix_user);
  if (hooks_.get_user && o.reservation_owner_id != 0)
    owner = hooks_.get_user(o.reservation_owner_id);
  std::vector<std::string> admins =
      hooks_.admin_emails ? hooks_.admin_emails() : std::vector<std::string>{};

  EmailRequest base;
  base.violation_id = a.violation_id;
  base.node = o.node;
  base.gpu = o.gpu;
  base.gpu_uuid = o.gpu_uuid;
  base.uid = o.uid;
  base.unix_user = o.unix_user;
  base.offender_username = offender ? offender->username : "";
  base.reservation_id = o.reservation_id;
  base.reservation_title = o.reservation_title;
  base.reservation_owner = o.reservation_owner_username;
  base.reservation_start_ms = o.reservation_start_ms;
  base.reservation_end_ms = o.reservation_end_ms;
  base.processes = a.pids;
  base.opened_ms = a.opened_ms;
  base.term_at_ms = a.opened_ms + o.settings.grace_term_ms;
  base.kill_after_ms = o.settings.grace_kill_ms;
  base.mode = o.settings.mode;

  EmailRequest to_offender = base, to_owner = base;
  to_offender.kind = "violation_offender";
  to_owner.kind = "violation_owner";
  if (offender) AddUnique(to_offender.to, offender->email);
  if (owner) AddUnique(to_owner.to, owner->email);
  for (const auto& admin : admins) {
    if (std::find(to_offender.to.begin(), to_offender.to.end(), admin) == to_offender.to.end()) {
      AddUnique(to_owner.to, admin);
    }
  }
  std::string detail;
  if (!to_offender.to.empty()) detail = "offender: " + to_offender.to.front();
  if (!to_owner.to.empty()) {
    detail += std::string(detail.empty() ? "" : "; ") + "owner and admins: ";
    for (size_t i = 0; i < to_owner.to.size(); ++i) detail += (i ? ", " : "") + to_owner.to[i];
  }
  if (detail.empty()) {
    return Record(a.violation_id, now_ms, "email", "skipped",
                  "no email address known for the offender, the owner or the admins");
  }
  if (a.dry_run)
    return Record(a.violation_id, now_ms, "email", "dry_run", "dry-run: would email " + detail);
  if (!hooks_.send_email) {
    return Record(a.violation_id, now_ms, "email", "skipped",
                  "mail is disabled (no smtp_url configured); would email " + detail);
  }
  // Recorded before sending: a delivery report may come back at once.
  Record(a.violation_id, now_ms, "email", "queued", detail);
  for (EmailRequest* mail : {&to_offender, &to_owner}) {
    if (mail->to.empty()) continue;
    std::string to;
    for (size_t i = 0; i < mail->to.size(); ++i) to += (i ? ", " : "") + mail->to[i];
    const int64_t id = a.violation_id;
    hooks_.send_email(std::move(*mail), [this, life = life_, id, to](EmailDelivery d) {
      MutexLock lock(&life->mu);
      if (!life->alive) return;
      Record(id, clock_.NowMs(), "email_result", d.outcome,
             "to " + to + (d.detail.empty() ? "" : ": " + d.detail));
    });
  }
}

}  // namespace rota::server
