#include "sched/free_map.h"

#include <algorithm>
#include <limits>

#include "common/strings.h"

namespace rota::sched {

FreeMap::FreeMap(const std::vector<Node>& nodes) {
  nodes_.reserve(nodes.size());
  auto index = std::make_shared<std::unordered_map<std::string, size_t>>();
  for (size_t i = 0; i < nodes.size(); ++i) index->emplace(nodes[i].name, i);
  index_ = std::move(index);
  std::unordered_map<std::string, size_t> pools;  // port_pool -> index in slots_
  for (const auto& n : nodes) {
    NodeFree f;
    f.node = &n;
    f.offset = static_cast<uint32_t>(gpu_free_.size());
    gpu_free_.insert(gpu_free_.end(), n.gpus, n.schedulable ? 1 : 0);
    for (uint32_t g : n.unusable_gpus) {
      if (g < n.gpus) gpu_free_[f.offset + g] = 0;
    }
    f.free_gpus =
        static_cast<uint32_t>(std::count(gpu_free_.begin() + f.offset, gpu_free_.end(), 1));
    f.free_cpus = n.cpus;
    f.free_memory = static_cast<int64_t>(n.memory_bytes);
    // A node without a pool has its own slots; the first node of a shared pool
    // brings the pool's.
    f.pool = slots_.size();
    if (!n.port_pool.empty()) f.pool = pools.try_emplace(n.port_pool, slots_.size()).first->second;
    if (f.pool == slots_.size()) slots_.push_back(n.task_slots.value_or(0));
    total_free_ += f.free_gpus;
    nodes_.push_back(std::move(f));
  }
}

std::optional<size_t> FreeMap::Find(const std::string& name) const {
  auto it = index_->find(name);
  if (it == index_->end()) return std::nullopt;
  return it->second;
}

void FreeMap::TakeGpu(size_t n, uint32_t gpu) {
  auto& f = nodes_[n];
  if (gpu >= f.node->gpus || !gpu_free_[f.offset + gpu]) return;
  gpu_free_[f.offset + gpu] = 0;
  --f.free_gpus;
  --total_free_;
}

void FreeMap::Pin(size_t n, uint32_t gpu) {
  if (gpu >= nodes_[n].node->gpus) return;
  if (pinned_.empty()) pinned_.assign(gpu_free_.size(), 0);
  pinned_[nodes_[n].offset + gpu] = 1;
}

bool FreeMap::Givable(size_t n, uint32_t gpu) const {
  const Node& node = *nodes_[n].node;
  if (gpu >= node.gpus || !node.schedulable) return false;
  if (!pinned_.empty() && pinned_[nodes_[n].offset + gpu]) return false;
  return std::find(node.unusable_gpus.begin(), node.unusable_gpus.end(), gpu) ==
         node.unusable_gpus.end();
}

void FreeMap::GiveGpu(size_t n, uint32_t gpu) {
  auto& f = nodes_[n];
  if (!Givable(n, gpu) || gpu_free_[f.offset + gpu]) return;
  gpu_free_[f.offset + gpu] = 1;
  ++f.free_gpus;
  ++total_free_;
}

void FreeMap::Take(const TaskAlloc& t) {
  if (auto n = Find(t.node)) Take(*n, t);
}

void FreeMap::Give(const TaskAlloc& t) {
  if (auto n = Find(t.node)) Give(*n, t);
}

void FreeMap::Take(size_t n, const TaskAlloc& t) {
  for (uint32_t g : t.gpus) TakeGpu(n, g);
  nodes_[n].free_cpus -= t.cpus;
  nodes_[n].free_memory -= static_cast<int64_t>(t.memory_bytes);
  --slots_[nodes_[n].pool];
}

void FreeMap::Give(size_t n, const TaskAlloc& t) {
  for (uint32_t g : t.gpus) GiveGpu(n, g);
  nodes_[n].free_cpus += t.cpus;
  nodes_[n].free_memory += static_cast<int64_t>(t.memory_bytes);
  ++slots_[nodes_[n].pool];
}

bool Eligible(const Node& n, const TaskDemand& d) {
  if (d.gpus_per_task > 0 && !ContainsIgnoringCase(n.gpu_model, d.gpu_model)) return false;
  if (!d.nodes.empty() && std::find(d.nodes.begin(), d.nodes.end(), n.name) == d.nodes.end())
    return false;
  for (const auto& [k, v] : d.labels) {
    auto it = n.labels.find(k);
    if (it == n.labels.end() || it->second != v) return false;
  }
  return true;
}

std::optional<std::vector<TaskAlloc>> PlaceGang(const FreeMap& map,
                                                const std::vector<TaskDemand>& demands, bool spread,
                                                const GpuMask* blocked,
                                                const std::vector<std::vector<uint8_t>>* eligible) {
  uint64_t needed = 0;
  uint32_t min_gpus = std::numeric_limits<uint32_t>::max();  // per task, over the demands
  for (const auto& d : demands) {
    needed += uint64_t{d.tasks} * d.gpus_per_task;
    min_gpus = std::min(min_gpus, d.gpus_per_task);
  }
  if (needed > map.TotalFree()) return std::nullopt;
  // The nodes that can take the smallest task by GPUs, ascending, with their
  // free GPUs, CPUs and memory as this placement goes; task slots per port
  // pool. No other node takes a task.
  struct Left {
    uint32_t node;
    uint32_t avail;
    uint32_t cursor = 0;  // next GPU index to look at when GPUs are handed out
    bool used = false;
    int64_t cpus, memory;
  };
  std::vector<Left> left;
  for (size_t i = 0; i < map.size(); ++i) {
    const auto& f = map.nodes_[i];
    if (f.free_gpus < min_gpus) continue;
    const uint32_t avail = blocked ? map.FreeUnblocked(i, *blocked) : f.free_gpus;
    if (avail < min_gpus) continue;
    left.push_back({static_cast<uint32_t>(i), avail, 0, false, f.free_cpus, f.free_memory});
  }
  std::vector<int64_t> slots = map.slots_;
  constexpr uint64_t kInf = std::numeric_limits<uint32_t>::max();
  // How many tasks of demand di left[k] can take now.
  auto capacity = [&](size_t k, size_t di) -> uint64_t {
    const TaskDemand& d = demands[di];
    const Left& l = left[k];
    if (l.avail < d.gpus_per_task) return 0;
    const auto& f = map.nodes_[l.node];
    if (eligible ? !(*eligible)[di][l.node] : (!f.node->schedulable || !Eligible(*f.node, d)))
      return 0;
    uint64_t cap = d.gpus_per_task > 0 ? l.avail / d.gpus_per_task : kInf;
    if (d.cpus_per_task > 0 && f.node->cpus > 0) {
      cap = std::min<uint64_t>(cap,
                               l.cpus <= 0 ? 0 : static_cast<uint64_t>(l.cpus) / d.cpus_per_task);
    }
    if (d.memory_per_task > 0 && f.node->memory_bytes > 0) {
      cap = std::min<uint64_t>(
          cap, l.memory <= 0 ? 0 : static_cast<uint64_t>(l.memory) / d.memory_per_task);
    }
    if (f.node->task_slots) {
      const int64_t free = slots[f.pool];
      cap = std::min<uint64_t>(cap, free <= 0 ? 0 : static_cast<uint64_t>(free));
    }
    return cap;
  };
  // Demands with more GPUs per task first; output in the caller's order.
  std::vector<size_t> order(demands.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return demands[a].gpus_per_task > demands[b].gpus_per_task;
  });
  // (index in left, tasks) per demand, then GPU indices at the end.
  std::vector<std::vector<std::pair<size_t, uint32_t>>> chosen(demands.size());
  std::vector<uint32_t> candidates;  // indices in left that can take a task of the demand
  const size_t none = left.size();
  for (size_t di : order) {
    const TaskDemand& d = demands[di];
    // What a node can take only shrinks while the demand is placed: the
    // nodes that cannot take a task now are never picked for it.
    candidates.clear();
    for (size_t k = 0; k < left.size(); ++k) {
      if (capacity(k, di) > 0) candidates.push_back(static_cast<uint32_t>(k));
    }
    uint64_t remaining = d.tasks;
    while (remaining > 0) {
      size_t pick = none;
      uint64_t take = 0;
      if (spread) {
        for (size_t k : candidates) {
          if (capacity(k, di) == 0) continue;
          if (pick == none || left[k].avail > left[pick].avail) pick = k;
        }
        take = 1;
      } else {
        // Best fit for the whole rest; else the node holding the most of it.
        size_t best_fit = none, most = none;
        uint64_t most_cap = 0;
        for (size_t k : candidates) {
          const uint64_t cap = capacity(k, di);
          if (cap == 0) continue;
          if (cap >= remaining) {
            if (best_fit == none || left[k].used > left[best_fit].used ||
                (left[k].used == left[best_fit].used && left[k].avail < left[best_fit].avail)) {
              best_fit = k;
            }
          }
          if (cap > most_cap || (cap == most_cap && left[k].used > left[most].used)) {
            most = k;
            most_cap = cap;
          }
        }
        if (best_fit != none) {
          pick = best_fit;
          take = remaining;
        } else {
          pick = most;
          take = most_cap;
        }
      }
      if (pick == none || take == 0) return std::nullopt;
      take = std::min(take, remaining);
      Left& l = left[pick];
      l.avail -= static_cast<uint32_t>(take * d.gpus_per_task);
      l.cpus -= static_cast<int64_t>(take * d.cpus_per_task);
      l.memory -= static_cast<int64_t>(take * d.memory_per_task);
      slots[map.nodes_[l.node].pool] -= static_cast<int64_t>(take);
      l.used = true;
      chosen[di].emplace_back(pick, static_cast<uint32_t>(take));
      remaining -= take;
    }
  }
  // GPU indices: the lowest free ones of each node, in the order tasks were chosen.
  std::vector<TaskAlloc> out;
  for (size_t di = 0; di < demands.size(); ++di) {
    const TaskDemand& d = demands[di];
    for (const auto& [k, tasks] : chosen[di]) {
      const auto& f = map.nodes_[left[k].node];
      for (uint32_t t = 0; t < tasks; ++t) {
        TaskAlloc a;
        a.node = f.node->name;
        a.cpus = d.cpus_per_task;
        a.memory_bytes = d.memory_per_task;
        a.gpus.reserve(d.gpus_per_task);
        uint32_t& c = left[k].cursor;
        while (a.gpus.size() < d.gpus_per_task && c < f.node->gpus) {
          const uint32_t flat = f.offset + c;
          if (map.gpu_free_[flat] && !(blocked && (*blocked)[flat])) a.gpus.push_back(c);
          ++c;
        }
        out.push_back(std::move(a));
      }
    }
  }
  // Tasks come out in demand order but nodes in choice order within a demand;
  // that is the order the caller gets (demand by demand).
  return out;
}

}  // namespace rota::sched
