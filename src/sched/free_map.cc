#include "sched/free_map.h"

#include <algorithm>
#include <limits>

#include "common/gpu_model.h"

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

const std::string& GpuModel(const Node& n, uint32_t gpu) {
  return ModelOfGpu(n.gpu_models, n.gpu_model, gpu);
}

bool ModelMatches(const Node& n, uint32_t gpu, const std::string& model) {
  return ModelWanted(GpuModel(n, gpu), model);
}

uint32_t FreeMap::FreeFor(size_t n, const TaskDemand& d) const {
  const NodeFree& f = nodes_[n];
  if (f.node->gpu_models.empty() || d.gpu_model.empty()) return f.free_gpus;
  uint32_t k = 0;
  for (uint32_t g = 0; g < f.node->gpus; ++g)
    k += gpu_free_[f.offset + g] && ModelMatches(*f.node, g, d.gpu_model);
  return k;
}

uint32_t UsableGpus(const Node& n, const TaskDemand& d) {
  if (d.gpu_model.empty()) return n.gpus;
  if (n.gpu_models.empty()) return ModelWanted(n.gpu_model, d.gpu_model) ? n.gpus : 0;
  uint32_t k = 0;
  for (uint32_t g = 0; g < n.gpus; ++g) k += ModelMatches(n, g, d.gpu_model);
  return k;
}

bool Eligible(const Node& n, const TaskDemand& d) {
  if (d.gpus_per_task > 0 && !d.gpu_model.empty()) {
    bool any = n.gpu_models.empty() && ModelWanted(n.gpu_model, d.gpu_model);
    for (uint32_t g = 0; g < n.gpu_models.size() && !any; ++g) any = ModelMatches(n, g, d.gpu_model);
    if (!any) return false;
  }
  if (!d.nodes.empty() && std::find(d.nodes.begin(), d.nodes.end(), n.name) == d.nodes.end())
    return false;
  if (std::binary_search(d.not_nodes.begin(), d.not_nodes.end(), n.name)) return false;
  for (const auto& [k, v] : d.labels) {
    auto it = n.labels.find(k);
    if (it == n.labels.end() || it->second != v) return false;
  }
  return true;
}

namespace {

// Hands out the GPUs of one task of `d` from `pool` (GPUs of `node` still
// usable, ascending) onto `out`: the lowest of the demand's model; for a demand
// naming none, the lowest of one model with enough (the first by lowest index
// that no later demand of the gang asks for, `wanted_later(model)`, else the
// first), else the lowest. REQUIRES: the pool holds enough (PlaceGang counted).
template <typename WantedLater>
void HandOut(const Node& node, const TaskDemand& d, const WantedLater& wanted_later,
             std::vector<uint32_t>& pool, std::vector<uint32_t>& out) {
  const std::string* same = nullptr;  // a task naming no model: one model with enough
  if (d.gpu_model.empty()) {
    const std::string* wanted = nullptr;  // the first with enough that a later demand asks for
    for (uint32_t g : pool) {
      const std::string& m = GpuModel(node, g);
      const auto n = std::count_if(pool.begin(), pool.end(),
                                   [&](uint32_t x) { return GpuModel(node, x) == m; });
      if (n < static_cast<ptrdiff_t>(d.gpus_per_task)) continue;
      if (!wanted_later(m)) {
        same = &m;
        break;
      }
      if (wanted == nullptr) wanted = &m;
    }
    if (same == nullptr) same = wanted;
  }
  auto usable = [&](uint32_t g) {
    if (!d.gpu_model.empty()) return ModelMatches(node, g, d.gpu_model);
    return same == nullptr || GpuModel(node, g) == *same;
  };
  uint32_t taken = 0;
  auto keep = pool.begin();
  for (auto it = pool.begin(); it != pool.end(); ++it) {
    if (taken < d.gpus_per_task && usable(*it)) {
      out.push_back(*it);
      ++taken;
    } else {
      *keep++ = *it;
    }
  }
  pool.erase(keep, pool.end());
}

}  // namespace

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
  // Nodes of mixed models hand their GPUs out as tasks are chosen: the usable
  // GPUs not handed out yet (ascending) of left[k] are mixed[pool_of[k]];
  // pool_of[k] is kNoPool on other nodes.
  constexpr uint32_t kNoPool = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> pool_of;
  std::vector<std::vector<uint32_t>> mixed;
  left.reserve(map.size());
  pool_of.reserve(map.size());
  for (size_t i = 0; i < map.size(); ++i) {
    const auto& f = map.nodes_[i];
    if (f.free_gpus < min_gpus) continue;
    const uint32_t avail = blocked ? map.FreeUnblocked(i, *blocked) : f.free_gpus;
    if (avail < min_gpus) continue;
    left.push_back({static_cast<uint32_t>(i), avail, 0, false, f.free_cpus, f.free_memory});
    pool_of.push_back(kNoPool);
    if (!f.node->gpu_models.empty()) {
      pool_of.back() = static_cast<uint32_t>(mixed.size());
      auto& pool = mixed.emplace_back();
      for (uint32_t g = 0; g < f.node->gpus; ++g) {
        const uint32_t flat = f.offset + g;
        if (map.gpu_free_[flat] && !(blocked && (*blocked)[flat])) pool.push_back(g);
      }
    }
  }
  // GPUs of the mixed-model pool of left[k] a task of d may use.
  auto matching = [&](size_t k, const TaskDemand& d) -> uint32_t {
    const Node& node = *map.nodes_[left[k].node].node;
    uint32_t n = 0;
    for (uint32_t g : mixed[pool_of[k]]) n += ModelMatches(node, g, d.gpu_model);
    return n;
  };
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
    uint64_t cap = d.gpus_per_task == 0 ? kInf
                   : pool_of[k] != kNoPool && !d.gpu_model.empty() ? matching(k, d) / d.gpus_per_task
                                                          : l.avail / d.gpus_per_task;
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
  // Tasks taken from a node per demand, GPU indices at the end (but from a
  // mixed-model pool, handed out at once into `handed` from `begin`).
  struct Chosen {
    uint32_t k;  // index in left
    uint32_t tasks;
    uint32_t begin = 0;
  };
  std::vector<std::vector<Chosen>> chosen(demands.size());
  std::vector<uint32_t> handed;
  std::vector<uint32_t> candidates;  // indices in left that can take a task of the demand
  const size_t none = left.size();
  size_t placing = 0;  // position in `order` of the demand being placed
  // Whether a demand placed after the current one asks for GPUs of `model`.
  auto wanted_later = [&](const std::string& model) {
    for (size_t i = placing + 1; i < order.size(); ++i) {
      const std::string& w = demands[order[i]].gpu_model;
      if (!w.empty() && ModelWanted(model, w)) return true;
    }
    return false;
  };
  for (; placing < order.size(); ++placing) {
    const size_t di = order[placing];
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
        // A node the job does not use yet, the emptiest; else the emptiest.
        for (size_t k : candidates) {
          if (capacity(k, di) == 0) continue;
          if (pick == none || left[k].used < left[pick].used ||
              (left[k].used == left[pick].used && left[k].avail > left[pick].avail)) {
            pick = k;
          }
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
      chosen[di].push_back({static_cast<uint32_t>(pick), static_cast<uint32_t>(take),
                            static_cast<uint32_t>(handed.size())});
      if (pool_of[pick] != kNoPool) {
        for (uint64_t t = 0; t < take; ++t) {
          HandOut(*map.nodes_[l.node].node, d, wanted_later, mixed[pool_of[pick]], handed);
        }
      }
      remaining -= take;
    }
  }
  // GPU indices: the lowest free ones of each node, in the order tasks were chosen.
  std::vector<TaskAlloc> out;
  for (size_t di = 0; di < demands.size(); ++di) {
    const TaskDemand& d = demands[di];
    for (const auto& [k, tasks, begin] : chosen[di]) {
      const auto& f = map.nodes_[left[k].node];
      for (uint32_t t = 0; t < tasks; ++t) {
        TaskAlloc a;
        a.node = f.node->name;
        a.cpus = d.cpus_per_task;
        a.memory_bytes = d.memory_per_task;
        if (pool_of[k] != kNoPool) {
          const auto from = handed.begin() + static_cast<ptrdiff_t>(begin + size_t{t} * d.gpus_per_task);
          a.gpus.assign(from, from + d.gpus_per_task);
          std::sort(a.gpus.begin(), a.gpus.end());
          out.push_back(std::move(a));
          continue;
        }
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
