#include "enforce/ladder.h"

#include <set>
#include <utility>

namespace rota::enforce {
namespace {

using ProcessId = std::pair<uint32_t, int64_t>;  // (pid, start time)

ProcessId IdOf(const OffendingProcess& p) { return {p.pid, p.start_time_ms}; }

std::set<ProcessId> Ids(const std::vector<OffendingProcess>& ps) {
  std::set<ProcessId> out;
  for (const auto& p : ps) out.insert(IdOf(p));
  return out;
}

Action MakeAction(ActionKind kind, const OpenViolation& v, std::vector<OffendingProcess> pids,
                  std::string reason = "") {
  Action a;
  a.kind = kind;
  a.key = v.key;
  a.violation_id = v.id;
  a.opened_ms = v.opened_ms;
  a.offence = v.offence;
  a.pids = std::move(pids);
  a.dry_run = v.offence.settings.dry_run;
  a.reason = std::move(reason);
  return a;
}

ProcessLadder* Find(OpenViolation& v, const OffendingProcess& p) {
  for (auto& l : v.ladder) {
    if (IdOf(l.process) == IdOf(p)) return &l;
  }
  return nullptr;
}

// Why `v`, absent from this sample's offences, resolves.
std::string ResolveReason(const OpenViolation& v, const std::vector<ReservationView>& active,
                          const api::NodeSample& sample) {
  if (v.key.reservation_id != 0) {
    const ReservationView* r = nullptr;
    for (const auto& a : active) {
      if (a.id == v.key.reservation_id && a.node == v.key.node) r = &a;
    }
    if (r == nullptr) return "reservation ended";
    if (r->owner_id != v.offence.reservation_owner_id) return "reservation owner changed";
  }
  for (const auto& g : sample.gpus) {
    if (g.index != v.key.gpu) continue;
    for (const auto& p : g.processes) {
      for (const auto& o : v.offence.processes) {
        if (p.pid == o.pid && p.start_time_ms.value_or(0) == o.start_time_ms) {
          return "no longer a violation";
        }
      }
    }
  }
  bool killed = false, termed = false;
  for (const auto& l : v.ladder) {
    killed = killed || l.kill_ms != 0;
    termed = termed || l.term_ms != 0;
  }
  return killed ? "killed" : termed ? "terminated" : "processes exited";
}

}  // namespace

ViolationKey KeyOf(const Offence& o) { return {o.node, o.gpu, o.uid, o.reservation_id}; }

std::string ToString(const ViolationKey& k) {
  std::string s = k.node + "/gpu " + std::to_string(k.gpu) + " uid " + std::to_string(k.uid);
  if (k.reservation_id != 0) s += " reservation " + std::to_string(k.reservation_id);
  return s;
}

const char* ActionKindName(ActionKind kind) {
  switch (kind) {
    case ActionKind::kOpen:
      return "open";
    case ActionKind::kWarn:
      return "warn";
    case ActionKind::kUpdate:
      return "update";
    case ActionKind::kEmail:
      return "email";
    case ActionKind::kTerm:
      return "term";
    case ActionKind::kKill:
      return "kill";
    case ActionKind::kResolve:
      return "resolve";
  }
  return "unknown";
}

void Enforcer::Step(OpenViolation& v, int64_t now_ms, std::vector<Action>& out) const {
  const EnforcementSettings& s = v.offence.settings;
  const int64_t age = now_ms - v.opened_ms;
  if (!v.emailed && age >= s.grace_email_ms) {
    v.emailed = true;
    out.push_back(MakeAction(ActionKind::kEmail, v, v.offence.processes));
  }
  if (age >= s.grace_term_ms) {
    std::vector<OffendingProcess> targets;
    for (const auto& p : v.offence.processes) {
      ProcessLadder* l = Find(v, p);
      if (l != nullptr && l->term_ms == 0) {
        l->term_ms = now_ms;
        targets.push_back(p);
      }
    }
    if (!targets.empty()) out.push_back(MakeAction(ActionKind::kTerm, v, std::move(targets)));
  }
  std::vector<OffendingProcess> kill;
  for (const auto& p : v.offence.processes) {
    ProcessLadder* l = Find(v, p);
    if (l != nullptr && l->term_ms != 0 && l->kill_ms == 0 &&
        now_ms - l->term_ms >= s.grace_kill_ms) {
      l->kill_ms = now_ms;
      kill.push_back(p);
    }
  }
  if (!kill.empty()) out.push_back(MakeAction(ActionKind::kKill, v, std::move(kill)));
}

std::vector<Action> Enforcer::Observe(const std::string& node, int64_t now_ms,
                                      const std::vector<Offence>& offences,
                                      const std::vector<ReservationView>& active,
                                      const api::NodeSample& sample) {
  std::vector<Action> out;
  std::set<ViolationKey> seen;
  for (const Offence& o : offences) {
    if (o.node != node) continue;
    const ViolationKey key = KeyOf(o);
    if (!seen.insert(key).second) continue;  // Detect never repeats a key
    auto it = open_.find(key);
    if (it != open_.end() && it->second.offence.reservation_owner_id != o.reservation_owner_id) {
      out.push_back(MakeAction(ActionKind::kResolve, it->second, it->second.offence.processes,
                               "reservation owner changed"));
      open_.erase(it);
      it = open_.end();
    }
    if (it == open_.end()) {
      OpenViolation v;
      v.key = key;
      v.offence = o;
      v.opened_ms = now_ms;
      it = open_.emplace(key, std::move(v)).first;
      out.push_back(MakeAction(ActionKind::kOpen, it->second, o.processes));
      out.push_back(MakeAction(ActionKind::kWarn, it->second, o.processes));
    } else {
      const bool changed = Ids(it->second.offence.processes) != Ids(o.processes);
      it->second.offence = o;
      if (changed) out.push_back(MakeAction(ActionKind::kUpdate, it->second, o.processes));
    }
    OpenViolation& v = it->second;
    for (const auto& p : o.processes) {
      if (Find(v, p) == nullptr) v.ladder.push_back({p, 0, 0});
    }
    Step(v, now_ms, out);
  }
  for (auto it = open_.begin(); it != open_.end();) {
    if (it->first.node != node || seen.count(it->first) != 0) {
      ++it;
      continue;
    }
    out.push_back(MakeAction(ActionKind::kResolve, it->second, it->second.offence.processes,
                             ResolveReason(it->second, active, sample)));
    it = open_.erase(it);
  }
  return out;
}

std::vector<Action> Enforcer::NodeLost(const std::string& node) {
  std::vector<Action> out;
  for (auto it = open_.begin(); it != open_.end();) {
    if (it->first.node != node) {
      ++it;
      continue;
    }
    out.push_back(MakeAction(ActionKind::kResolve, it->second, it->second.offence.processes,
                             "node unreachable"));
    it = open_.erase(it);
  }
  return out;
}

bool Enforcer::SetViolationId(const ViolationKey& key, int64_t id) {
  auto it = open_.find(key);
  if (it == open_.end()) return false;
  it->second.id = id;
  return true;
}

void Enforcer::RestoreOpen(std::vector<OpenViolation> open) {
  for (auto& v : open) {
    ViolationKey key = v.key;
    open_[key] = std::move(v);
  }
}

std::vector<OpenViolation> Enforcer::Snapshot() const {
  std::vector<OpenViolation> out;
  out.reserve(open_.size());
  for (const auto& [key, v] : open_) out.push_back(v);
  return out;
}

}  // namespace rota::enforce
