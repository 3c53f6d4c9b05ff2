// The job service's scheduling pass: what it knows -> sched::Snapshot ->
// sched::Schedule -> starts, preemptions and wait reasons applied.
// See docs/design-sched.md ("The live server").
#include <algorithm>

#include "common/log.h"
#include "common/mutex.h"
#include "common/time_util.h"
#include "sched/order.h"
#include "sched/scheduler.h"
#include "server/accounts/accounts.h"
#include "server/jobs/jobs.h"
#include "server/jobs/jobs_rows.h"
#include "server/queues/queues.h"
#include "server/quotas/quotas.h"
#include "server/reservations/reservations.h"
#include "server/scheduling/snapshot_builder.h"

namespace rota::server {
namespace {

// Where other tasks reach this node's tasks.
std::string AddressOf(const NodeView& view) {
  if (!view.info->addresses.empty()) return view.info->addresses.front();
  return view.info->hostname.empty() ? view.info->name : view.info->hostname;
}

// Users' and groups' cached facts are fetched again after this long.
constexpr int64_t kPassCacheMs = 2000;
constexpr int64_t kPeriodUsageMs = 60'000;  // how often ended jobs' quota usage is read
constexpr int64_t kSaveUsageMs = 60'000;    // how often fair-share usage is stored
constexpr double kMsPerHour = 3'600'000.0;

}  // namespace

void JobService::RefreshPassCache(int64_t now_ms) {
  PassCache& c = pass_cache_;
  c.refreshed_ms = now_ms;
  if (reservations_ != nullptr) {
    auto r = reservations_->Overlapping(now_ms, now_ms + options_.reservation_horizon_ms);
    if (r.ok()) {
      c.reservations = std::move(*r);
    } else {
      ROTA_LOG(WARNING) << "scheduler: cannot read reservations: " << r.status().message();
    }
  }
  if (auto groups = accounts_->PrimaryGroups(); groups.ok()) {
    c.group_of = std::move(*groups);
  } else {
    ROTA_LOG(WARNING) << "scheduler: cannot read users' groups: " << groups.status().message();
  }
  if (auto m = accounts_->QueueMembership(); m.ok()) {
    c.membership = std::move(*m);
    c.membership_read = true;
  } else {
    ROTA_LOG(WARNING) << "scheduler: cannot read users' groups and roles: " << m.status().message();
  }
  if (auto disabled = accounts_->DisabledUsers(); disabled.ok()) {
    c.disabled = std::move(*disabled);
  } else {
    ROTA_LOG(WARNING) << "scheduler: cannot read disabled accounts: " << disabled.status().message();
  }
  ForgetRemappedAccounts();
  RefreshEndedUsage(now_ms);
}

void JobService::RefreshEndedUsage(int64_t now_ms) {
  PassCache& c = pass_cache_;
  if (c.ended_usage_ms >= 0 && now_ms - c.ended_usage_ms < kPeriodUsageMs) return;
  c.ended_usage_ms = now_ms;
  // The ended jobs not yet dropped from active_ ended at or after the first of them.
  int64_t first_end = INT64_MAX;
  for (const auto& [id, job] : active_) {
    if (job.Final()) first_end = std::min(first_end, job.ended_ms.value_or(0));
  }
  store::EndedUsage ended;
  Status st = store_->Read([&](store::Db& db) -> Status {
    ASSIGN_OR_RETURN(ended, store::EndedUsageSince(db, now_ms - options_.quota_period_ms, first_end));
    return Status::Ok();
  });
  if (!st.ok()) {
    ROTA_LOG(WARNING) << "scheduler: cannot read quota usage: " << st.message();
    return;
  }
  c.ended_gpu_ms = std::move(ended.gpu_ms_by_owner);
  c.ended_read = std::move(ended.recent_ids);
}

void JobService::PeriodGpuHours(int64_t now_ms, std::map<std::string, double>* user,
                                std::map<std::string, double>* group) const {
  std::map<std::string, double> user_ms = pass_cache_.ended_gpu_ms;
  for (const auto& [id, job] : active_) {
    // An ended job still here (its end not known committed) counts unless the last
    // read of ended jobs has it.
    if (job.Final() && pass_cache_.ended_read.count(id)) continue;
    user_ms[job.owner] += job.attained_gpu_ms + (job.run_open ? scheduling::CurrentRunGpuMs(job, now_ms) : 0);
  }
  for (const auto& [owner, ms] : user_ms) {
    const double hours = ms / kMsPerHour;
    (*user)[owner] = hours;
    auto g = pass_cache_.group_of.find(owner);
    if (g != pass_cache_.group_of.end() && !g->second.empty()) (*group)[g->second] += hours;
  }
}

void JobService::SaveUsage(int64_t now_ms, bool wait) {
  usage_saved_ms_ = now_ms;
  store::FairShareUsage usage{usage_.user, usage_.group, now_ms};
  auto save = [usage](store::Db& db) { return store::SaveFairShareUsage(db, usage); };
  if (wait) {
    if (Status st = store_->Write(save); !st.ok()) ROTA_LOG(WARNING) << "jobs: cannot store fair-share usage: " << st.message();
    return;
  }
  store_->WriteAsync(save, [](Status st) {
    if (!st.ok()) ROTA_LOG(WARNING) << "jobs: cannot store fair-share usage: " << st.message();
  });
}

JobService::Usage JobService::UsageNow() {
  const int64_t now = clock_->NowMs();
  MutexLock lock(&mu_);
  RefreshEndedUsage(now);
  Usage u;
  const int64_t dt = std::max<int64_t>(0, now - usage_at_ms_);
  for (auto [from, to] : {std::pair{&usage_.user, &u.user_fairshare}, std::pair{&usage_.group, &u.group_fairshare}}) {
    for (const auto& [name, ms] : sched::Decayed(*from, dt, options_.fairshare_half_life_ms)) (*to)[name] = ms / kMsPerHour;
  }
  PeriodGpuHours(now, &u.user_period, &u.group_period);
  return u;
}

void JobService::ForgetRemappedAccounts() {
  for (auto owner = no_account_.begin(); owner != no_account_.end();) {
    auto user = accounts_->FindUser(owner->first);
    auto& nodes = owner->second;
    for (auto it = nodes.begin(); it != nodes.end();) {
      const bool remapped = user.ok() && user->UnixUserOn(it->first) != it->second.unix_user;
      it = remapped ? nodes.erase(it) : std::next(it);
    }
    owner = nodes.empty() ? no_account_.erase(owner) : std::next(owner);
  }
}

std::map<std::string, std::vector<std::string>> JobService::NodesWithoutAccount(int64_t now_ms) {
  std::map<std::string, std::vector<std::string>> out;
  for (auto owner = no_account_.begin(); owner != no_account_.end();) {
    auto& nodes = owner->second;
    for (auto it = nodes.begin(); it != nodes.end();) {
      if (it->second.until_ms <= now_ms) {
        it = nodes.erase(it);
      } else {
        out[owner->first].push_back(it->first);  // map order: ascending
        ++it;
      }
    }
    owner = nodes.empty() ? no_account_.erase(owner) : std::next(owner);
  }
  return out;
}

void JobService::SchedulePass(int64_t now_ms, bool full) {
  dirty_ = false;
  if (active_.empty()) return;
  const int64_t pass_begin_ns = MonotonicNs();
  if (full || reread_ || now_ms - pass_cache_.refreshed_ms > kPassCacheMs) {
    RefreshPassCache(now_ms);
    reread_ = false;
  }

  // Fair share: everyone's usage decays, and what ran since the last pass is
  // added (sched::AdvanceUsage, as in rota simulate).
  const int64_t dt = usage_at_ms_ > 0 ? std::max<int64_t>(0, now_ms - usage_at_ms_) : 0;
  usage_at_ms_ = now_ms;

  scheduling::SchedulingInput in;
  in.now_ms = now_ms;
  in.policy = options_.policy;
  in.nodes = cluster_->Nodes();
  in.jobs = &active_;
  in.reservations = pass_cache_.reservations;
  in.queues = queues_->ForScheduler();
  in.group_of = pass_cache_.group_of;
  in.released_ms = released_ms_;
  in.held_owners = &pass_cache_.disabled;
  // Until read once (a store error), a queue admits its jobs as at their submission.
  in.membership = pass_cache_.membership_read ? &pass_cache_.membership : nullptr;
  if (!no_account_.empty()) in.nodes_without_account = NodesWithoutAccount(now_ms);
  for (const auto& [node, tasks] : orphans_) {
    auto& gpus = in.unconfirmed_gpus[node];
    for (const auto& [task, orphan] : tasks) gpus.insert(gpus.end(), orphan.gpus.begin(), orphan.gpus.end());
  }
  // Every task takes one job port of its node's address: when they are all
  // taken no more tasks start there (a job waits for the pass after a task
  // ends, not for a retry). Nodes with one address (simulated nodes on one
  // host) share its ports.
  std::map<std::string, std::string> address;  // node -> where its tasks are reached
  for (const auto& v : in.nodes) address[v.info->name] = AddressOf(v);
  {
    const uint32_t range = options_.ports.last >= options_.ports.first
                               ? uint32_t{options_.ports.last} - options_.ports.first + 1
                               : 0;
    for (const auto& v : in.nodes) {
      const std::string& address_of = address[v.info->name];
      uint32_t foreign = 0;
      if (auto f = foreign_ports_.find(address_of); f != foreign_ports_.end()) {
        for (const auto& [port, until_ms] : f->second) foreign += until_ms > now_ms ? 1 : 0;
      }
      in.job_ports[v.info->name] = {range > foreign ? range - foreign : 0, address_of};
    }
  }
  const scheduling::JobGpus job_gpus = scheduling::JobGpusByNode(active_);
  in.job_gpus = &job_gpus;

  // Array members beyond their array's cap stay out of the snapshot: they
  // cost the scheduler nothing, and wait with one reason per array.
  const std::set<int64_t> capped = HoldArrayMembers(now_ms);
  in.held_jobs = &capped;

  size_t pending = 0;
  std::vector<sched::UsageHolder> holders;
  for (const auto& [id, job] : active_) {
    if (scheduling::Schedulable(job) && !capped.count(id)) ++pending;
    if (dt == 0 || !scheduling::HoldsResources(job)) continue;
    double gpus = 0;
    for (const auto& t : job.tasks) gpus += static_cast<double>(t.gpus.size());
    auto g = pass_cache_.group_of.find(job.owner);
    holders.push_back(sched::UsageHolder{job.owner, g == pass_cache_.group_of.end() ? "" : g->second, gpus});
  }
  sched::AdvanceUsage(&usage_, dt, options_.fairshare_half_life_ms, holders);
  in.fairshare.user_usage = usage_.user;
  in.fairshare.group_usage = usage_.group;
  if (now_ms - usage_saved_ms_ >= kSaveUsageMs) SaveUsage(now_ms, /*wait=*/false);
  if (quotas_ != nullptr) {
    QuotaView q = quotas_->ForScheduler();
    in.fairshare.user_shares = std::move(q.user_shares);
    in.fairshare.group_shares = std::move(q.group_shares);
    in.user_quotas = std::move(q.user_quotas);
    in.group_quotas = std::move(q.group_quotas);
    PeriodGpuHours(now_ms, &in.user_period_gpu_hours, &in.group_period_gpu_hours);
  }

  // Reservations whose owner has left their GPUs idle long enough
  // (sched::TrackReservationUse; whether the owner uses them now is read here).
  if (options_.reservation_idle_ms > 0) {
    std::map<std::string, const NodeView*> views;
    for (const auto& v : in.nodes) views[v.info->name] = &v;
    static const scheduling::NodeJobGpus kNone;
    std::vector<sched::ReservationUse> running;
    for (const auto& r : in.reservations) {
      if (r.start_ms > now_ms || r.end_ms <= now_ms) continue;
      auto v = views.find(r.node);
      auto jg = job_gpus.find(r.node);
      const bool used = v != views.end() && scheduling::OwnerUses(*v->second, r.gpus,
                                                                  jg == job_gpus.end() ? kNone : jg->second, r.owner);
      running.push_back(sched::ReservationUse{r.id, r.start_ms, r.end_ms, used});
    }
    reservation_used_ms_ = sched::TrackReservationUse(running, reservation_used_ms_, started_at_ms_, now_ms,
                                                      options_.reservation_idle_ms, &in.idle_reservations);
  }
  // Nothing to start, and nothing a reservation could preempt: no pass.
  if (pending == 0 && in.reservations.empty()) return;
  // JobServiceOptions::explain_every_pass_up_to.
  if (!full && pending > options_.explain_every_pass_up_to) in.policy.explain = false;

  const sched::Snapshot snapshot = scheduling::BuildSnapshot(in);
  const int64_t decide_begin_ns = MonotonicNs();
  const sched::Decisions d = sched::Schedule(snapshot);
  const int64_t act_begin_ns = MonotonicNs();

  uint64_t preempted = 0, launched = 0;
  for (const auto& p : d.preemptions) {
    auto it = active_.find(p.id);
    if (it == active_.end() || it->second.Stopping()) continue;
    it->second.moving = p.move;
    Preempt(it->second, p.reason, now_ms);
    ++preempted;
  }
  // The owner took these back: not idle again until reservation_idle passes.
  for (int64_t id : d.reclaimed) reservation_used_ms_[id] = now_ms;
  std::map<std::string, std::set<uint16_t>> busy_ports;
  if (!d.starts.empty()) busy_ports = BusyPorts(now_ms);
  std::map<int64_t, Result<User>> owners;  // read once per pass
  for (const auto& st : d.starts) {
    auto it = active_.find(st.id);
    if (it == active_.end()) continue;
    Job& job = it->second;
    job.wait_reason.clear();
    job.position = 0;
    job.estimated_start_ms = 0;
    // Start.tasks come in the spec's group order, tasks in order within each.
    std::vector<jobs::PlacedTask> placed;
    size_t k = 0;
    for (const auto& g : job.spec.groups) {
      for (uint32_t i = 0; i < g.replicas && k < st.tasks.size(); ++i, ++k) {
        jobs::PlacedTask t;
        t.role = g.role;
        t.index = i;
        t.node = st.tasks[k].node;
        t.address = address.count(t.node) ? address[t.node] : t.node;
        t.gpus = st.tasks[k].gpus;
        placed.push_back(std::move(t));
      }
    }
    Status ports = jobs::AssignPorts(placed, options_.ports, busy_ports);
    if (!ports.ok()) {
      job.retry_at_ms = now_ms + 1000;
      job.wait_reason = ports.message();
      continue;
    }
    Launch(job, placed, now_ms, owners);
    ++launched;
  }
  // Positions in the queue as it is after this pass (the jobs it started have
  // left it): the next pass may be a while away, as a start alone triggers none.
  std::vector<uint32_t> ranks;
  ranks.reserve(d.waits.size());
  for (const auto& w : d.waits) ranks.push_back(w.position);
  std::sort(ranks.begin(), ranks.end());
  if (!pass_cache_.disabled.empty()) {  // one walk, however many accounts are disabled
    for (auto& [id, job] : active_) {
      if (!scheduling::Schedulable(job) || !pass_cache_.disabled.count(job.owner)) continue;
      job.wait_reason = "its owner's account is disabled";
      job.estimated_start_ms = 0;
      job.position = 0;
    }
  }
  for (const auto& w : d.waits) {
    auto it = active_.find(w.id);
    if (it == active_.end()) continue;
    it->second.wait_reason = w.reason;
    it->second.estimated_start_ms = w.estimated_start_ms;
    it->second.position =
        static_cast<uint32_t>(std::lower_bound(ranks.begin(), ranks.end(), w.position) - ranks.begin()) + 1;
  }
  scheduling::PassRecord record;
  record.explained = in.policy.explain;
  record.pending = snapshot.pending.size();
  record.running = snapshot.running.size();
  record.starts = launched;
  record.preemptions = preempted;
  record.snapshot_s = static_cast<double>(decide_begin_ns - pass_begin_ns) / 1e9;
  record.decide_s = static_cast<double>(act_begin_ns - decide_begin_ns) / 1e9;
  record.act_s = static_cast<double>(MonotonicNs() - act_begin_ns) / 1e9;
  pass_metrics_.Observe(record);
}

void JobService::Preempt(Job& job, const std::string& reason, int64_t now_ms) {
  ++job.preemptions;
  job.lost_gpu_ms += scheduling::CurrentRunGpuMs(job, now_ms);
  const std::string notice = "preempted at " + FormatRfc3339(now_ms) + ": " + reason +
                             "; SIGKILL follows in " + std::to_string(options_.stop_grace_ms / 1000) +
                             " s; the job is requeued";
  ROTA_LOG(INFO) << "job " << job.id << ": preempted (" << reason << ")";
  StopGang(job, StopTo::kRequeue, "preempted: " + reason + "; requeued", now_ms, notice);
}

void JobService::CloseRun(Job& job, int64_t now_ms) {
  if (!job.run_open) return;
  job.run_open = false;
  job.attained_gpu_ms += scheduling::CurrentRunGpuMs(job, now_ms);
  for (const auto& t : job.tasks) {
    for (uint32_t g : t.gpus) released_ms_[{t.node, g}] = now_ms;
    closed_holdings_.emplace_back(t.node, accounting::Holding{job.id, job.owner, t.gpus, job.started_ms, now_ms});
  }
  holdings_version_.fetch_add(1, std::memory_order_release);
  constexpr int64_t kKeepClosedMs = 3'600'000;  // agents replay samples up to about an hour late
  while (!closed_holdings_.empty() && (closed_holdings_.front().second.end_ms < now_ms - kKeepClosedMs ||
                                       closed_holdings_.size() > 65'536)) {
    closed_holdings_.pop_front();
  }
}

JobService::QueueCounts JobService::CountsIn(const std::string& queue) const {
  MutexLock lock(&mu_);
  QueueCounts n;
  for (const auto& [id, job] : active_) {
    if (job.Final() || job.spec.QueueName() != queue) continue;
    ++n.unfinished;
    if (job.state == jobs::JobState::kPending) ++n.pending;
  }
  return n;
}

size_t JobService::VisitQueue(const std::string& queue, size_t offset, size_t limit,
                              const std::function<void(const Job&)>& visit) const {
  std::vector<const Job*> pending;
  MutexLock lock(&mu_);
  for (const auto& [id, job] : active_) {
    if (job.state != jobs::JobState::kPending || job.Final()) continue;
    if (!queue.empty() && job.spec.QueueName() != queue) continue;
    pending.push_back(&job);
  }
  std::sort(pending.begin(), pending.end(), [](const Job* a, const Job* b) {
    const uint32_t pa = a->position == 0 ? UINT32_MAX : a->position, pb = b->position == 0 ? UINT32_MAX : b->position;
    return pa != pb ? pa < pb : a->id < b->id;
  });
  for (size_t i = offset, n = 0; i < pending.size() && n < limit; ++i, ++n) visit(*pending[i]);
  return pending.size();
}

}  // namespace rota::server
