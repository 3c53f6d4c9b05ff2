// Reservations: policy CRUD, and the periodic work (finalizing averages of
// ended reservations, idle rules).

#include <algorithm>
#include <cstdio>

#include "common/log.h"
#include "common/strings.h"
#include "common/time_util.h"
#include "server/reservations.h"

namespace rota::server {

using reserve::Policy;
using store::Db;
using store::Stmt;

namespace reservations_internal {

namespace {

Result<Policy> PolicyFromRow(Stmt& s) {
  auto spec = api::ParseJson(s.Text(2));
  if (!spec.ok() || !spec->is_object()) {
    return Status::Internal("policy " + std::to_string(s.Int(0)) + ": stored spec is not JSON");
  }
  (*spec)["name"] = s.Text(1);
  auto p = reserve::PolicyFromJson(*spec);
  if (!p.ok()) return p.status().WithContext("stored policy " + std::to_string(s.Int(0)));
  p->id = s.Int(0);
  p->created_ms = s.Int(3);
  p->updated_ms = s.Int(4);
  return p;
}

}  // namespace

Result<std::vector<Policy>> LoadPolicies(Db& db) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT id, name, spec_json, created_ms, updated_ms FROM "
                                      "policies ORDER BY id"));
  std::vector<Policy> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    ASSIGN_OR_RETURN(Policy p, PolicyFromRow(s));
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace reservations_internal

namespace {

using reservations_internal::LoadPolicies;

Result<Policy> GetPolicyRow(Db& db, int64_t id) {
  ASSIGN_OR_RETURN(auto all, LoadPolicies(db));
  for (auto& p : all) {
    if (p.id == id) return p;
  }
  return Status::NotFound("policy " + std::to_string(id) + " not found");
}

Status CheckNameFree(Db& db, const std::string& name, int64_t self) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT id FROM policies WHERE name = ?1 AND id <> ?2"));
  s.Bind(1, name).Bind(2, self);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (row) {
    return Status::AlreadyExists("a policy named '" + name + "' exists already (policy " +
                                 std::to_string(s.Int(0)) + ")");
  }
  return Status::Ok();
}

}  // namespace

Result<Policy> Reservations::CreatePolicy(const Policy& policy) {
  const int64_t now = clock_->NowMs();
  Policy out;
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    RETURN_IF_ERROR(CheckNameFree(db, policy.name, 0));
    ASSIGN_OR_RETURN(Stmt s, db.Prepare("INSERT INTO policies (name, spec_json, created_ms, "
                                        "updated_ms) VALUES (?1, ?2, ?3, ?3)"));
    RETURN_IF_ERROR(s.Bind(1, policy.name).Bind(2, reserve::PolicySpecJson(policy).dump()).Bind(3, now).Run());
    ASSIGN_OR_RETURN(out, GetPolicyRow(db, sqlite3_last_insert_rowid(db.raw())));
    return Status::Ok();
  }));
  RefreshIdleRules();
  return out;
}

Result<Policy> Reservations::UpdatePolicy(int64_t id, const Policy& policy) {
  const int64_t now = clock_->NowMs();
  Policy out;
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    RETURN_IF_ERROR(GetPolicyRow(db, id).status());
    RETURN_IF_ERROR(CheckNameFree(db, policy.name, id));
    ASSIGN_OR_RETURN(Stmt s, db.Prepare("UPDATE policies SET name = ?2, spec_json = ?3, "
                                        "updated_ms = ?4 WHERE id = ?1"));
    RETURN_IF_ERROR(s.Bind(1, id).Bind(2, policy.name).Bind(3, reserve::PolicySpecJson(policy).dump())
                        .Bind(4, now).Run());
    ASSIGN_OR_RETURN(out, GetPolicyRow(db, id));
    return Status::Ok();
  }));
  RefreshIdleRules();
  return out;
}

Status Reservations::DeletePolicy(int64_t id) {
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Stmt s, db.Prepare("DELETE FROM policies WHERE id = ?1"));
    RETURN_IF_ERROR(s.Bind(1, id).Run());
    if (db.Changes() == 0) return Status::NotFound("policy " + std::to_string(id) + " not found");
    return Status::Ok();
  }));
  RefreshIdleRules();
  return Status::Ok();
}

Result<Policy> Reservations::GetPolicy(int64_t id) {
  Policy out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(out, GetPolicyRow(db, id));
    return Status::Ok();
  }));
  return out;
}

Result<std::vector<Policy>> Reservations::ListPolicies() {
  std::vector<Policy> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(out, LoadPolicies(db));
    return Status::Ok();
  }));
  return out;
}

void Reservations::RefreshIdleRules() {
  std::vector<Policy> policies;
  std::vector<Reservation> rows;
  const auto tracked = tracker_.All();
  Status st = store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(policies, LoadPolicies(db));
    for (const auto& t : tracked) {
      ASSIGN_OR_RETURN(auto r, reservations_internal::Query(db, "WHERE r.id = ?1",
                                                            [&](Stmt& s) { s.Bind(1, t.id); }));
      for (auto& x : r) rows.push_back(std::move(x));
    }
    return Status::Ok();
  });
  if (!st.ok()) {
    ROTA_LOG(WARNING) << "reservations: cannot refresh idle rules: " << st.message();
    return;
  }
  for (const auto& r : rows) {
    if (!r.cancelled_ms) TrackReservation(r, policies);
  }
}

// ---- periodic work ----

void Reservations::Tick(int64_t now_ms) {
  for (const auto& [r, usage] : tracker_.TakeEnded(now_ms)) Finalize(r, usage);
  for (const auto& due : tracker_.DueIdle(now_ms)) HandleIdle(due, now_ms);
}

void Reservations::Finalize(const TrackedReservation& r, const LiveUsage& usage) {
  std::optional<double> gpu, mem;
  if (usage.samples > 0) {
    gpu = usage.avg_util_gpu;
    mem = usage.avg_util_mem;
  } else {
    // Not followed live (e.g. the server restarted): the store's minute aggregates.
    std::vector<std::string> list;
    for (uint32_t g : r.gpus) list.push_back(std::to_string(g));
    Status st = store_->Read([&](Db& db) -> Status {
      ASSIGN_OR_RETURN(Stmt s, db.Prepare(
          "SELECT sum(m.util_gpu_sum), sum(m.util_gpu_n), sum(m.util_mem_sum), sum(m.util_mem_n) "
          "FROM gpu_minutes m JOIN nodes n ON n.id = m.node WHERE n.name = ?1 AND m.gpu IN (" +
          Join(list, ",") + ") AND m.minute_ms >= ?2 AND m.minute_ms < ?3"));
      s.Bind(1, r.node).Bind(2, r.start_ms / 60'000 * 60'000).Bind(3, r.end_ms);
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (row && s.OptInt(1).value_or(0) > 0) gpu = s.Double(0) / static_cast<double>(s.Int(1));
      if (row && s.OptInt(3).value_or(0) > 0) mem = s.Double(2) / static_cast<double>(s.Int(3));
      return Status::Ok();
    });
    if (!st.ok()) ROTA_LOG(WARNING) << "reservation " << r.id << ": " << st.message();
  }
  if (!gpu && !mem) return;
  Status st = store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Stmt s, db.Prepare("UPDATE reservations SET avg_util_gpu = ?2, "
                                        "avg_util_mem = ?3 WHERE id = ?1"));
    return s.Bind(1, r.id).Bind(2, gpu).Bind(3, mem).Run();
  });
  if (!st.ok()) ROTA_LOG(WARNING) << "reservation " << r.id << ": cannot store averages: " << st.message();
}

void Reservations::HandleIdle(const IdleDue& due, int64_t now_ms) {
  IdleNotice notice;
  bool act = false;
  Status st = store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(auto rows, reservations_internal::Query(db, "WHERE r.id = ?1",
                                                             [&](Stmt& s) { s.Bind(1, due.id); }));
    if (rows.empty()) return Status::Ok();
    Reservation r = rows.front();
    if (r.StateAt(now_ms) != reserve::State::kRunning) return Status::Ok();
    if (r.idle_notified_ms && !due.rule.release) return Status::Ok();  // told once already
    act = true;
    ASSIGN_OR_RETURN(Stmt s, db.Prepare("UPDATE reservations SET idle_notified_ms = ?2, "
                                        "end_ms = ?3, updated_ms = ?2 WHERE id = ?1"));
    const int64_t end = due.rule.release ? std::max(now_ms, r.start_ms + 1) : r.end_ms;
    RETURN_IF_ERROR(s.Bind(1, r.id).Bind(2, now_ms).Bind(3, end).Run());
    if (due.rule.release) {
      ASSIGN_OR_RETURN(Stmt g, db.Prepare("UPDATE reservation_gpus SET end_ms = ?2 WHERE "
                                          "reservation_id = ?1"));
      RETURN_IF_ERROR(g.Bind(1, r.id).Bind(2, now_ms).Run());
    }
    ASSIGN_OR_RETURN(Stmt u, db.Prepare("SELECT email FROM users WHERE id = ?1"));
    u.Bind(1, r.owner_id);
    ASSIGN_OR_RETURN(bool row, u.Step());
    notice.owner_email = row ? u.Text(0) : "";
    notice.reservation_id = r.id;
    notice.owner_id = r.owner_id;
    notice.owner = r.owner;
    notice.node = r.node;
    notice.gpus = r.gpus;
    notice.title = r.title;
    notice.end_ms = end;
    return Status::Ok();
  });
  tracker_.MarkNotified(due.id, due.rule.release);
  if (!st.ok()) {
    ROTA_LOG(WARNING) << "reservation " << due.id << ": idle handling failed: " << st.message();
    return;
  }
  if (!act) return;
  notice.policy = due.policy;
  notice.threshold_pct = due.rule.threshold_pct;
  notice.idle_since_ms = due.idle_since_ms;
  notice.avg_util_gpu = due.avg_util_gpu;
  notice.released = due.rule.release;
  char pct[32];
  std::snprintf(pct, sizeof pct, "%g%%", due.rule.threshold_pct);
  notice.reason = "reservation " + std::to_string(notice.reservation_id) + " on " + notice.node +
                  " has used its GPUs below " + pct + " since " + FormatRfc3339(due.idle_since_ms) +
                  " (policy '" + due.policy + "' allows " + reserve::FormatDurationMs(due.rule.after_ms) +
                  ")" + (notice.released ? "; it was released (ended now)" : "");
  ROTA_LOG(INFO) << notice.reason;
  if (notice.released) {
    TrackedReservation t;
    for (const auto& x : tracker_.All()) {
      if (x.id == due.id) t = x;
    }
    t.end_ms = now_ms;
    tracker_.Track(t);  // finalized by the next Tick
    version_.fetch_add(1, std::memory_order_acq_rel);
    if (change_hook_) change_hook_();
  }
  if (idle_hook_) idle_hook_(notice);
}

}  // namespace rota::server
