#include "accounting/ledger.h"

#include <algorithm>
#include <set>
#include <utility>

#include "accounting/cpu_energy.h"

namespace rota::accounting {
namespace {

bool Covers(const std::vector<uint32_t>& gpus, uint32_t index) {
  return std::find(gpus.begin(), gpus.end(), index) != gpus.end();
}

// The rota user of a process: its Unix user mapped, else "unix:<name>".
std::string ProcessUser(const api::GpuProcess& p, const People& people) {
  std::string unix_user = p.user;
  if (unix_user.empty()) unix_user = p.uid ? "uid:" + std::to_string(*p.uid) : "unknown";
  auto it = people.user_of_unix.find(unix_user);
  return it != people.user_of_unix.end() ? it->second : "unix:" + unix_user;
}

std::string GroupOf(const std::string& user, const People& people) {
  auto it = people.group_of_user.find(user);
  return it != people.group_of_user.end() ? it->second : "";
}

}  // namespace

std::map<std::string, std::string> UsersOfUnixAccounts(
    const std::vector<std::pair<std::string, std::string>>& user_and_unix) {
  std::map<std::string, std::string> out;
  std::set<std::string> shared;
  for (const auto& [user, unix_user] : user_and_unix) {
    auto [it, added] = out.emplace(unix_user, user);
    if (!added && it->second != user) shared.insert(unix_user);
  }
  for (const auto& name : shared) out.erase(name);
  return out;
}

Amounts& Amounts::operator+=(const Amounts& o) {
  gpu_ms += o.gpu_ms;
  busy_ms += o.busy_ms;
  util_ms += o.util_ms;
  energy_mj += o.energy_mj;
  counter_mj += o.counter_mj;
  estimated_mj += o.estimated_mj;
  unmeasured_ms += o.unmeasured_ms;
  idle_mj += o.idle_mj;
  cpu_mj += o.cpu_mj;
  return *this;
}

void Ledger::Restore(const MeterKey& key, const MeterState& state) {
  if (key.second == kCpuMeter) {
    if (state.cpu) cpu_meters_[key.first] = *state.cpu;
    return;
  }
  if (key.second >= api::kMaxGpusPerNode) return;  // no sample names such a GPU
  NodeMeters& meters = meters_[key.first];
  if (meters.size() <= key.second) meters.resize(key.second + 1);
  meters[key.second].state = state;
}

void Ledger::Add(const std::string& node, const api::NodeSample& sample, const NodeFacts& facts,
                 const People& people) {
  NodeMeters& meters = meters_[node];
  for (const auto& gpu : sample.gpus) AddGpu(node, meters, gpu, sample.time_ms, facts, people);
  AddCpu(node, sample.host, sample.time_ms, facts, people);
  for (const auto& [key, amounts] : collected_) Credit(key, amounts);
  collected_.clear();
}

void Ledger::AddCpu(const std::string& node, const api::HostSample& host, int64_t time_ms,
                    const NodeFacts& facts, const People& people) {
  if (!host.cpu_energy_mj) return;  // no RAPL on the node, or an older agent
  CpuMeterState cur;
  cur.time_ms = time_ms;
  cur.energy_mj = *host.cpu_energy_mj;
  cur.busy_usec = host.cpu_busy_usec;
  std::map<std::string, int64_t> job_of;  // task id -> job
  for (const auto& t : host.cpu_tasks) {
    cur.task_usec[t.id] = t.usage_usec;
    job_of[t.id] = t.job_id;
  }
  const MeterKey mk{node, kCpuMeter};
  auto it = cpu_meters_.find(node);
  if (it == cpu_meters_.end()) {
    cpu_meters_[node] = cur;
    pending_.meters[mk] = MeterState{"", {}, cur};
    return;
  }
  if (time_ms <= it->second.time_ms) return;  // a replayed or reordered sample
  const CpuMeterState prev = std::exchange(it->second, cur);
  pending_.meters[mk] = MeterState{"", {}, std::move(cur)};
  const CpuMeterState& now = it->second;
  const int64_t from = prev.time_ms, to = time_ms;
  if (to - from > options_.max_interval_ms) return;  // too long to attribute
  // A counter that went back: the agent restarted (its meter starts from 0).
  if (now.energy_mj < prev.energy_mj) return;
  const uint64_t energy = now.energy_mj - prev.energy_mj;
  // mJ per ms is W.
  if (static_cast<double>(energy) / static_cast<double>(to - from) > options_.max_cpu_watts) return;

  // Without the node's busy time at both ends the tasks' share of the package is
  // unknown: everything is other (rather than charging idle power to the tasks).
  const bool have_busy = prev.busy_usec && now.busy_usec && *now.busy_usec >= *prev.busy_usec;
  const uint64_t busy = have_busy ? *now.busy_usec - *prev.busy_usec : 0;
  std::map<std::string, uint64_t> task_usec;
  for (const auto& [id, usec] : now.task_usec) {
    if (!have_busy) break;
    auto p = prev.task_usec.find(id);
    if (p == prev.task_usec.end() || usec < p->second) continue;  // new, or counter went back
    task_usec[id] = usec - p->second;
  }
  const CpuEnergyShares shares = AttributeCpuEnergy(energy, busy, task_usec);

  // Each job's share, and whose it is.
  struct Share {
    const Holding* holder = nullptr;
    uint64_t mj = 0;
  };
  std::map<int64_t, Share> by_job;  // job 0: other
  by_job[0].mj = shares.other_mj;
  for (const auto& [id, mj] : shares.tasks_mj) {
    const int64_t job = job_of.at(id);
    const Holding* holder = nullptr;
    for (const auto& h : facts.holdings) {
      if (h.job_id == job) {
        holder = &h;
        break;
      }
    }
    Share& share = by_job[holder != nullptr ? job : 0];
    share.holder = holder;
    share.mj += mj;
  }

  // Cut at bucket edges, pro rata to time.
  std::vector<int64_t> cuts{from};
  const int64_t bucket = options_.bucket_ms;
  for (int64_t edge = (from / bucket + 1) * bucket; edge < to; edge += bucket) cuts.push_back(edge);
  cuts.push_back(to);
  const double span = static_cast<double>(to - from);
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    const double part = static_cast<double>(cuts[i + 1] - cuts[i]) / span;
    for (const auto& [job, share] : by_job) {
      if (share.mj == 0) continue;
      Key key;
      key.bucket_ms = cuts[i] / bucket * bucket;
      key.node = node;
      if (share.holder != nullptr) {
        key.job_id = job;
        key.user = share.holder->user;
        key.group = GroupOf(key.user, people);
      }
      Amounts a;
      a.cpu_mj = static_cast<double>(share.mj) * part;
      Collect(key, a);
    }
  }
}

void Ledger::AddGpu(const std::string& node, NodeMeters& meters, const api::GpuSample& gpu,
                    int64_t time_ms, const NodeFacts& facts, const People& people) {
  if (gpu.failed) return;  // no readings: the next good sample covers the time
  if (gpu.index >= api::kMaxGpusPerNode) return;  // refused by the decoder already
  if (meters.size() <= gpu.index) meters.resize(gpu.index + 1);
  GpuMeter& meter = meters[gpu.index];
  const Reading cur{time_ms, gpu.energy_mj, gpu.power_mw};
  if (!meter.state) {
    meter.state = MeterState{gpu.uuid, cur};
    meter.dirty = true;
    return;
  }
  MeterState& state = *meter.state;
  Reading prev = state.last;
  if (time_ms <= prev.time_ms) return;  // a replayed or reordered sample
  meter.dirty = true;
  // Another GPU in the slot: its counter has nothing to do with the last one.
  if (!gpu.uuid.empty() && !state.uuid.empty() && gpu.uuid != state.uuid) {
    prev.counter_mj.reset();
  }
  const Energy energy = Between(prev, cur, facts.max_gap_ms > 0 ? facts.max_gap_ms : options_.max_gap_ms);
  if (!gpu.uuid.empty() && gpu.uuid != state.uuid) state.uuid = gpu.uuid;
  state.last = cur;
  if (time_ms - prev.time_ms > options_.max_interval_ms) return;  // too long to attribute

  const int64_t from = prev.time_ms, to = time_ms;
  std::vector<int64_t>& cuts = cuts_;
  cuts.assign({from, to});
  const int64_t bucket = options_.bucket_ms;
  const int64_t first_edge = (from / bucket + 1) * bucket;
  for (int64_t edge = first_edge; edge < to; edge += bucket) cuts.push_back(edge);
  auto cut_at = [&](int64_t t) {
    if (t > from && t < to) cuts.push_back(t);
  };
  for (const auto& h : facts.holdings) {
    if (!Covers(h.gpus, gpu.index)) continue;
    cut_at(h.start_ms);
    if (h.end_ms != 0) cut_at(h.end_ms);
  }
  for (const auto& r : facts.reservations) {
    if (!Covers(r.gpus, gpu.index)) continue;
    cut_at(r.start_ms);
    cut_at(r.end_ms);
  }

  const bool busy = !gpu.processes.empty();
  std::vector<std::string> users;  // of the processes, when no job holds the GPU
  for (const auto& p : gpu.processes) users.push_back(ProcessUser(p, people));
  std::sort(users.begin(), users.end());
  users.erase(std::unique(users.begin(), users.end()), users.end());

  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());

  const double span = static_cast<double>(to - from);
  for (auto a = cuts.begin(), b = std::next(a); b != cuts.end(); ++a, ++b) {
    const int64_t mid = *a + (*b - *a) / 2;
    const double len = static_cast<double>(*b - *a);
    const Holding* holder = nullptr;
    for (const auto& h : facts.holdings) {
      if (Covers(h.gpus, gpu.index) && h.start_ms <= mid && (h.end_ms == 0 || mid < h.end_ms)) {
        holder = &h;
        break;
      }
    }
    const ReservedSpan* reserved = nullptr;
    for (const auto& r : facts.reservations) {
      if (Covers(r.gpus, gpu.index) && r.start_ms <= mid && mid < r.end_ms) {
        reserved = &r;
        break;
      }
    }
    const int64_t reservation = reserved != nullptr ? reserved->id : 0;
    Amounts piece;
    piece.gpu_ms = len;
    piece.busy_ms = busy ? len : 0;
    piece.util_ms = gpu.util_gpu_pct ? len * *gpu.util_gpu_pct / 100.0 : 0;
    piece.energy_mj = energy.mj * len / span;
    if (energy.method == Method::kCounter) piece.counter_mj = piece.energy_mj;
    if (energy.method == Method::kEstimated) piece.estimated_mj = piece.energy_mj;
    if (energy.method == Method::kNone) piece.unmeasured_ms = len;
    if (!busy) piece.idle_mj = piece.energy_mj;

    Key key;
    key.bucket_ms = *a / bucket * bucket;
    key.node = node;
    key.reservation_id = reservation;
    if (holder != nullptr) {
      key.job_id = holder->job_id;
      key.user = holder->user;
      key.group = GroupOf(key.user, people);
      Collect(key, piece);
      continue;
    }
    if (users.empty()) {
      if (reserved != nullptr && !reserved->owner.empty()) {  // reserved, left idle: the owner's
        key.user = reserved->owner;
        key.group = GroupOf(key.user, people);
      }
      Collect(key, piece);  // idle
      continue;
    }
    const double share = 1.0 / static_cast<double>(users.size());
    Amounts part;
    part.gpu_ms = piece.gpu_ms * share;
    part.busy_ms = piece.busy_ms * share;
    part.util_ms = piece.util_ms * share;
    part.energy_mj = piece.energy_mj * share;
    part.counter_mj = piece.counter_mj * share;
    part.estimated_mj = piece.estimated_mj * share;
    part.unmeasured_ms = piece.unmeasured_ms * share;
    part.idle_mj = piece.idle_mj * share;
    for (const auto& user : users) {
      key.user = user;
      key.group = GroupOf(user, people);
      Collect(key, part);
    }
  }
}

void Ledger::Collect(const Key& key, const Amounts& a) {
  for (auto& [k, amounts] : collected_) {
    if (k == key) {
      amounts += a;
      return;
    }
  }
  collected_.emplace_back(key, a);
}

void Ledger::Credit(const Key& key, const Amounts& a) {
  pending_.rows[key] += a;
  by_user_[key.user] += a;
  by_group_[key.group] += a;
  by_node_[key.node] += a;
}

Ledger::Pending Ledger::Take() {
  Pending out = std::exchange(pending_, Pending{});
  for (auto& [node, meters] : meters_) {
    for (size_t i = 0; i < meters.size(); ++i) {
      GpuMeter& m = meters[i];
      if (!m.dirty || !m.state) continue;
      out.meters.emplace(MeterKey{node, static_cast<uint32_t>(i)}, *m.state);
      m.dirty = false;
    }
  }
  return out;
}

void Ledger::PutBack(Pending pending) {
  for (auto& [key, amounts] : pending.rows) pending_.rows[key] += amounts;
  for (auto& [key, meter] : pending.meters) {
    if (key.second == kCpuMeter) {
      // Meters taken since are newer: keep them.
      pending_.meters.emplace(key, std::move(meter));
      continue;
    }
    // The GPU's meter now is the one taken, or newer: the next Take stores it.
    auto it = meters_.find(key.first);
    if (it != meters_.end() && key.second < it->second.size()) it->second[key.second].dirty = true;
  }
}

}  // namespace rota::accounting
