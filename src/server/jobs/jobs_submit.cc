// The job service's submission path: a spec checked against the queues, quotas
// and the whole cluster, then stored pending; and the GPUs other users' jobs hold
// (what reservations may not be booked on).
#include <algorithm>
#include <limits>
#include <set>

#include "common/log.h"
#include "common/mutex.h"
#include "server/accounts/accounts.h"
#include "server/jobs/jobs.h"
#include "server/jobs/jobs_rows.h"
#include "server/nodes/cluster_state.h"
#include "server/queues/queues.h"
#include "server/quotas/quotas.h"
#include "server/secrets/secrets.h"

namespace rota::server {
namespace {

using store::Db;

// What placement sees of a node, but for its free GPUs and readiness.
jobs::NodeOffer OfferOf(const NodeView& view) {
  jobs::NodeOffer n;
  n.name = view.info->name;
  n.address = view.info->addresses.empty() ? view.info->hostname : view.info->addresses.front();
  if (n.address.empty()) n.address = n.name;
  n.labels = view.info->labels;
  if (!view.info->gpus.empty()) n.gpu_model = view.info->gpus.front().name;
  n.gpu_models = GpuModelsIfMixed(*view.info);
  n.total_gpus = static_cast<uint32_t>(view.info->gpus.size());
  n.cpus = view.info->cpus * 1000;  // milli-cores (TaskGroup::PlacementMilliCpus)
  n.memory_bytes = view.info->memory_bytes;
  return n;
}

}  // namespace

Status JobService::CheckQuotasCouldEverAdmit(const jobs::JobSpec& spec, const std::string& owner,
                                             const std::vector<std::string>& groups) const {
  if (quotas_ == nullptr) return Status::Ok();
  const uint64_t gpus = spec.GpuCount();
  auto check = [&](const char* kind, const std::string& name) -> Status {
    auto q = quotas_->Get(kind, name);
    if (!q.ok() || q->limits.max_gpus == 0 || gpus <= q->limits.max_gpus) return Status::Ok();
    return Status::InvalidArgument(std::string(kind) + " quota: the job needs " + std::to_string(gpus) +
                                   " GPUs at once; " + kind + " " + name + " may hold " +
                                   std::to_string(q->limits.max_gpus));
  };
  RETURN_IF_ERROR(check("user", owner));
  // The group quotas count a user's primary group: the first of its groups by name.
  if (!groups.empty()) RETURN_IF_ERROR(check("group", *std::min_element(groups.begin(), groups.end())));
  return Status::Ok();
}

std::vector<reserve::Busy> JobService::HeldGpus(const std::string& node, int64_t owner_id,
                                                int64_t from_ms) const {
  std::vector<reserve::Busy> out;
  MutexLock lock(&mu_);
  for (const auto& [id, job] : active_) {
    if (job.owner_id == owner_id || job.spec.preemptible.value_or(false)) continue;
    if (job.state != jobs::JobState::kStarting && job.state != jobs::JobState::kRunning) continue;
    const int64_t end = job.spec.time_limit_ms > 0 ? job.started_ms + job.spec.time_limit_ms
                                                   : std::numeric_limits<int64_t>::max();
    if (end <= from_ms) continue;
    for (const auto& t : job.tasks) {
      if (t.node != node) continue;
      for (uint32_t g : t.gpus) out.push_back(reserve::Busy{g, 0, job.owner, job.started_ms, end, job.id});
    }
  }
  return out;
}

void JobService::set_secrets(Secrets* secrets) {
  secrets_ = secrets;
  launcher_.set_secrets(secrets);
}

Result<jobs::JobSpec> JobService::CheckSubmission(int64_t owner_id, const std::string& owner,
                                                  const jobs::JobSpec& submitted) {
  RETURN_IF_ERROR(jobs::Validate(submitted));
  jobs::JobSpec spec = submitted;
  {
    ASSIGN_OR_RETURN(User user, accounts_->GetUser(owner_id));
    RETURN_IF_ERROR(queues_->Admit(owner, user.groups, user.role == Role::kAdmin, &spec));
    RETURN_IF_ERROR(CheckQuotasCouldEverAdmit(spec, owner, user.groups));
    if (!spec.secrets.empty()) {
      if (secrets_ == nullptr) return Status::Unavailable("this server gives no secrets to jobs");
      RETURN_IF_ERROR(secrets_->CheckUse({owner_id, owner, user.groups}, spec.secrets));
    }
  }
  // A job that could never be placed (on the whole cluster, idle) is refused now,
  // naming why.
  {
    std::vector<jobs::NodeOffer> idle;
    for (const auto& view : cluster_->Nodes()) {
      jobs::NodeOffer n = OfferOf(view);
      n.ready = true;
      for (const auto& g : view.info->gpus) n.free_gpus.push_back(g.index);
      idle.push_back(std::move(n));
    }
    if (idle.empty()) return Status::InvalidArgument("no node has joined the cluster");
    jobs::PlacementOptions o;
    o.ports = {1, 65535};
    auto p = jobs::PlaceJob(spec, idle, o);
    if (!p.ok() && p.status().code() == StatusCode::kInvalidArgument) return p.status();
    // Every task takes a job port of its node's address (nodes of one address
    // share them): more tasks than the addresses the job may use have ports
    // could never run at once.
    const uint64_t range = options_.ports.last >= options_.ports.first
                               ? uint64_t{options_.ports.last} - options_.ports.first + 1
                               : 0;
    std::set<std::string> addresses;
    auto too_many = [&](uint64_t tasks, size_t count, const std::string& whose) {
      return Status::InvalidArgument(
          whose + std::to_string(tasks) + " tasks need a job port each; the " +
          (count == idle.size() ? "cluster has " : "nodes it may use have ") + std::to_string(range * count) +
          " (" + std::to_string(options_.ports.first) + "-" + std::to_string(options_.ports.last) + " on each of " +
          std::to_string(count) + (count == 1 ? " address)" : " addresses)"));
    };
    for (const auto& g : spec.groups) {
      std::set<std::string> own;
      for (const auto& n : idle) {
        if (jobs::CouldEverHold(n, g)) own.insert(n.address.empty() ? n.name : n.address);
      }
      if (uint64_t{g.replicas} > range * own.size()) {
        return too_many(g.replicas, own.size(), spec.groups.size() > 1 ? "its " + g.role + " group's " : "the job's ");
      }
      addresses.insert(own.begin(), own.end());
    }
    if (uint64_t{spec.TaskCount()} > range * addresses.size()) {
      return too_many(spec.TaskCount(), addresses.size(), "the job's ");
    }
  }
  return spec;
}

Result<Job> JobService::Submit(int64_t owner_id, const std::string& owner, const jobs::JobSpec& submitted) {
  ASSIGN_OR_RETURN(jobs::JobSpec spec, CheckSubmission(owner_id, owner, submitted));
  Job job;
  job.owner_id = owner_id;
  job.owner = owner;
  job.spec = spec;
  job.created_ms = job.updated_ms = job.queued_ms = clock_->NowMs();
  job.reason = "submitted";
  store::JobRow row = RowOf(job);
  row.name = spec.name;
  row.spec_json = jobs::ToJson(spec).dump();
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(job.id, store::InsertJob(db, row));
    return Status::Ok();
  }));
  {
    MutexLock lock(&mu_);
    active_[job.id] = job;
    wake_ = dirty_ = true;  // place it now, not at the next tick
    cv_.NotifyAll();
  }
  ROTA_LOG(INFO) << "job " << job.id << " (" << spec.name << ") submitted by " << owner << ": "
                 << spec.TaskCount() << " task(s), " << spec.GpuCount() << " GPU(s)";
  return job;
}

}  // namespace rota::server
