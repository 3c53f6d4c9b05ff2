#include "jobs/placement.h"

#include <algorithm>

#include "common/gpu_model.h"
#include "common/strings.h"

namespace rota::jobs {
namespace {

bool LabelsMatch(const NodeOffer& n, const TaskGroup& g) {
  for (const auto& [k, v] : g.node_labels) {
    auto it = n.labels.find(k);
    if (it == n.labels.end() || it->second != v) return false;
  }
  return true;
}

// Whether a task of `g` may use GPU `gpu` of `n` (by its model).
bool ModelFits(const NodeOffer& n, const TaskGroup& g, uint32_t gpu) {
  return ModelWanted(ModelOfGpu(n.gpu_models, n.gpu_model, gpu), g.gpu_model);
}

// GPUs of `n` among `gpus` a task of `g` may use.
std::vector<uint32_t> Usable(const NodeOffer& n, const TaskGroup& g, const std::vector<uint32_t>& gpus) {
  if (g.gpu_model.empty()) return gpus;
  std::vector<uint32_t> out;
  for (uint32_t gpu : gpus) {
    if (ModelFits(n, g, gpu)) out.push_back(gpu);
  }
  return out;
}

// GPUs of `n`, busy or not, a task of `g` may use.
uint32_t UsableTotal(const NodeOffer& n, const TaskGroup& g) {
  if (g.gpu_model.empty()) return n.total_gpus;
  if (n.gpu_models.empty()) return ModelWanted(n.gpu_model, g.gpu_model) ? n.total_gpus : 0;
  uint32_t k = 0;
  for (uint32_t gpu = 0; gpu < n.gpu_models.size(); ++gpu) k += ModelFits(n, g, gpu);
  return k;
}

bool Allowed(const NodeOffer& n, const TaskGroup& g) {
  if (!g.nodes.empty() && std::find(g.nodes.begin(), g.nodes.end(), n.name) == g.nodes.end()) {
    return false;
  }
  if (g.gpus_per_task > 0 && UsableTotal(n, g) == 0) return false;
  return LabelsMatch(n, g);
}

// Could a task of `g` ever run on `n` (were the node idle)?
bool CouldFit(const NodeOffer& n, const TaskGroup& g) {
  return Allowed(n, g) && g.gpus_per_task <= UsableTotal(n, g) &&
         (n.cpus == 0 || g.PlacementMilliCpus() <= n.cpus) &&
         (n.memory_bytes == 0 || g.memory_bytes_per_task <= n.memory_bytes);
}

// Fails when some task of a group, or the job as a whole, can never be placed
// (on the cluster were it idle; CPUs and memory per task, GPUs also in sum).
Status CheckFeasible(const JobSpec& spec, const std::vector<NodeOffer>& nodes) {
  std::set<std::string> known;
  for (const auto& n : nodes) known.insert(n.name);
  uint64_t cluster_gpus = 0;
  for (const auto& n : nodes) cluster_gpus += n.total_gpus;
  for (const auto& g : spec.groups) {
    for (const auto& name : g.nodes) {
      if (!known.count(name)) return Status::InvalidArgument("node '" + name + "' is not known");
    }
    const NodeOffer* largest = nullptr;  // the allowed node with most GPUs a task may use
    uint32_t largest_usable = 0;
    bool any_allowed = false, fits = false;
    uint64_t tasks_held = 0;  // tasks of g the allowed nodes could hold at once, by GPUs
    for (const auto& n : nodes) {
      if (!Allowed(n, g)) continue;
      any_allowed = true;
      const uint32_t usable = UsableTotal(n, g);
      if (CouldFit(n, g)) {
        fits = true;
        tasks_held += g.gpus_per_task == 0 ? g.replicas : usable / g.gpus_per_task;
      }
      if (largest == nullptr || usable > largest_usable) {
        largest = &n;
        largest_usable = usable;
      }
    }
    if (fits) {
      if (tasks_held < g.replicas) {
        const std::string model = g.gpu_model.empty() ? "" : g.gpu_model + " ";
        return Status::InvalidArgument(
            "the " + std::to_string(g.replicas) + " " + g.role + " tasks need " +
            std::to_string(g.gpus_per_task) + " " + model + (g.gpus_per_task == 1 ? "GPU" : "GPUs") +
            " each; the nodes" +
            (g.nodes.empty() && g.node_labels.empty() ? "" : " allowed") + " hold " +
            std::to_string(tasks_held) + " such tasks at most");
      }
      continue;
    }
    if (!any_allowed) {
      std::vector<std::string> wanted;
      if (!g.nodes.empty()) wanted.push_back("nodes " + Join(g.nodes, ","));
      std::string labels;
      for (const auto& [k, v] : g.node_labels) labels += (labels.empty() ? "" : ",") + k + "=" + v;
      if (!labels.empty()) wanted.push_back("labels " + labels);
      if (!g.gpu_model.empty()) wanted.push_back("GPU model " + g.gpu_model);
      return Status::InvalidArgument("no node matches the " + g.role + " tasks' " + Join(wanted, " and "));
    }
    if (largest != nullptr && g.gpus_per_task > largest_usable) {
      const std::string model = g.gpu_model.empty() ? "" : g.gpu_model + " ";
      return Status::InvalidArgument("a " + g.role + " task needs " +
                                     std::to_string(g.gpus_per_task) + " " + model +
                                     "GPUs; the largest node" +
                                     (g.nodes.empty() && g.node_labels.empty() ? "" : " allowed") +
                                     ", " + largest->name + ", has " +
                                     std::to_string(largest_usable));
    }
    return Status::InvalidArgument("a " + g.role + " task needs more CPUs or memory than any node has");
  }
  if (spec.GpuCount() > cluster_gpus) {
    return Status::InvalidArgument("the job needs " + std::to_string(spec.GpuCount()) +
                                   " GPUs at once; the cluster has " + std::to_string(cluster_gpus));
  }
  return Status::Ok();
}

struct NodeLeft {
  const NodeOffer* offer;
  std::vector<uint32_t> gpus;  // still free
  uint32_t cpus;
  uint64_t memory;
};

}  // namespace

Result<std::vector<PlacedTask>> PlaceJob(const JobSpec& spec, const std::vector<NodeOffer>& all,
                                         const PlacementOptions& options) {
  RETURN_IF_ERROR(Validate(spec));
  std::vector<NodeOffer> nodes;
  for (const auto& n : all) {
    if (n.ready) nodes.push_back(n);
  }
  if (nodes.empty()) return Status::ResourceExhausted("no node is ready");
  RETURN_IF_ERROR(CheckFeasible(spec, nodes));

  std::vector<NodeLeft> left;
  for (const auto& n : nodes) left.push_back({&n, n.free_gpus, n.cpus, n.memory_bytes});
  std::map<std::string, std::set<uint16_t>> used = options.used_ports;
  std::vector<PlacedTask> out;
  size_t next_node = 0;  // round robin cursor (spread)
  for (const auto& g : spec.groups) {
    for (uint32_t i = 0; i < g.replicas; ++i) {
      NodeLeft* chosen = nullptr;
      for (size_t k = 0; k < left.size(); ++k) {
        NodeLeft& n = left[(options.spread ? next_node + k : k) % left.size()];
        if (!Allowed(*n.offer, g) || Usable(*n.offer, g, n.gpus).size() < g.gpus_per_task) continue;
        if (n.offer->cpus != 0 && g.PlacementMilliCpus() > n.cpus) continue;
        if (n.offer->memory_bytes != 0 && g.memory_bytes_per_task > n.memory) continue;
        chosen = &n;
        next_node = (options.spread ? next_node + k : k) + 1;
        break;
      }
      if (chosen == nullptr) {
        uint32_t free = 0;
        for (const auto& n : left) {
          if (Allowed(*n.offer, g))
            free = std::max<uint32_t>(free, static_cast<uint32_t>(Usable(*n.offer, g, n.gpus).size()));
        }
        return Status::ResourceExhausted(
            "not enough free GPUs: " + g.role + "-" + std::to_string(i) + " needs " +
            std::to_string(g.gpus_per_task) + " on one node, the most left on an allowed node is " +
            std::to_string(free) + " (the job needs " + std::to_string(spec.GpuCount()) +
            " GPUs in all)");
      }
      PlacedTask t;
      t.role = g.role;
      t.index = i;
      t.node = chosen->offer->name;
      t.address = chosen->offer->address.empty() ? chosen->offer->name : chosen->offer->address;
      const std::vector<uint32_t> usable = Usable(*chosen->offer, g, chosen->gpus);
      t.gpus.assign(usable.begin(), usable.begin() + g.gpus_per_task);
      std::erase_if(chosen->gpus, [&](uint32_t gpu) {
        return std::find(t.gpus.begin(), t.gpus.end(), gpu) != t.gpus.end();
      });
      if (chosen->offer->cpus != 0) chosen->cpus -= g.PlacementMilliCpus();
      if (chosen->offer->memory_bytes != 0) chosen->memory -= g.memory_bytes_per_task;
      out.push_back(std::move(t));
    }
  }
  RETURN_IF_ERROR(AssignPorts(out, options.ports, used));
  return out;
}

bool CouldEverHold(const NodeOffer& n, const TaskGroup& g) { return CouldFit(n, g); }

std::vector<PlacedTask> ExamplePlacement(const JobSpec& spec) {
  std::vector<PlacedTask> out;
  for (const auto& g : spec.groups) {
    for (uint32_t i = 0; i < g.replicas; ++i) {
      PlacedTask t;
      t.role = g.role;
      t.index = i;
      t.node = "node-" + std::to_string(out.size() + 1);
      t.address = t.node;
      for (uint32_t k = 0; k < g.gpus_per_task; ++k) t.gpus.push_back(k);
      t.port = 29500;
      out.push_back(std::move(t));
    }
  }
  return out;
}

Status AssignPorts(std::vector<PlacedTask>& tasks, const PortRange& range,
                   std::map<std::string, std::set<uint16_t>>& used) {
  for (auto& t : tasks) {
    std::set<uint16_t>& taken = used[t.address];
    t.port = 0;
    for (uint32_t p = range.first; p <= range.last; ++p) {
      if (!taken.count(static_cast<uint16_t>(p))) {
        t.port = static_cast<uint16_t>(p);
        break;
      }
    }
    if (t.port == 0) {
      return Status::ResourceExhausted("no free port in " + std::to_string(range.first) + "-" +
                                       std::to_string(range.last) + " on " + t.address);
    }
    taken.insert(t.port);
  }
  return Status::Ok();
}

}  // namespace rota::jobs
