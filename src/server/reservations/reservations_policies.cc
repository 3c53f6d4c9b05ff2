// Reservations: policy CRUD, and the periodic work (finalizing averages of
// ended reservations, idle rules).

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "common/log.h"
#include "common/strings.h"
#include "common/time_util.h"
#include "server/reservations/reservations.h"
#include "server/store/accounts.h"
#include "server/store/reservations.h"

namespace rota::server {

using reserve::Policy;
using store::Db;

Result<Policy> Reservations::CreatePolicy(const Policy& policy) {
  const int64_t now = clock_->NowMs();
  Policy out;
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(out, store::InsertReservationPolicy(db, policy, now));
    return Status::Ok();
  }));
  RefreshIdleRules();
  return out;
}

Result<Policy> Reservations::UpdatePolicy(int64_t id, const Policy& policy) {
  const int64_t now = clock_->NowMs();
  Policy out;
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(out, store::UpdateReservationPolicy(db, id, policy, now));
    return Status::Ok();
  }));
  RefreshIdleRules();
  return out;
}

Status Reservations::DeletePolicy(int64_t id) {
  RETURN_IF_ERROR(store_->Write([&](Db& db) { return store::DeleteReservationPolicy(db, id); }));
  RefreshIdleRules();
  return Status::Ok();
}

Result<Policy> Reservations::GetPolicy(int64_t id) {
  Policy out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(out, store::GetReservationPolicy(db, id));
    return Status::Ok();
  }));
  return out;
}

Result<std::vector<Policy>> Reservations::ListPolicies() {
  std::vector<Policy> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(out, store::LoadReservationPolicies(db));
    return Status::Ok();
  }));
  return out;
}

void Reservations::RefreshIdleRules() {
  std::vector<Policy> policies;
  std::vector<Reservation> rows;
  const auto tracked = tracker_.All();
  Status st = store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(policies, store::LoadReservationPolicies(db));
    for (const auto& t : tracked) {
      auto r = store::GetReservation(db, t.id);
      if (r.ok()) rows.push_back(std::move(*r));
      else if (r.status().code() != StatusCode::kNotFound) return r.status();
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
    Status st = store_->Read([&](Db& db) -> Status {
      ASSIGN_OR_RETURN(std::tie(gpu, mem), store::GpuUtilFromMinutes(db, r.node, r.gpus, r.start_ms, r.end_ms));
      return Status::Ok();
    });
    if (!st.ok()) ROTA_LOG(WARNING) << "reservation " << r.id << ": " << st.message();
  }
  if (!gpu && !mem) return;
  Status st = store_->Write([&](Db& db) { return store::StoreReservationAverages(db, r.id, gpu, mem); });
  if (!st.ok()) ROTA_LOG(WARNING) << "reservation " << r.id << ": cannot store averages: " << st.message();
}

void Reservations::HandleIdle(const IdleDue& due, int64_t now_ms) {
  IdleNotice notice;
  bool act = false;
  Status st = store_->Write([&](Db& db) -> Status {
    auto found = store::GetReservation(db, due.id);
    if (!found.ok()) return found.status().code() == StatusCode::kNotFound ? Status::Ok() : found.status();
    const Reservation& r = *found;
    if (r.StateAt(now_ms) != reserve::State::kRunning) return Status::Ok();
    if (r.idle_notified_ms && !due.rule.release) return Status::Ok();  // told once already
    act = true;
    const int64_t end = due.rule.release ? std::max(now_ms, r.start_ms + 1) : r.end_ms;
    RETURN_IF_ERROR(store::MarkReservationIdle(db, r.id, now_ms, end, due.rule.release));
    ASSIGN_OR_RETURN(notice.owner_email, store::UserEmail(db, r.owner_id));
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
