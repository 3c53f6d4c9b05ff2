#pragma once
// FreeMap: which GPUs, CPUs and memory of each node are free during one
// scheduling pass, and gang placement on it. Pure values.
//
// Placement rules (PlaceGang):
//  - all tasks of a job are placed or none is; a task's GPUs are on one node;
//  - demands with more GPUs per task are placed first;
//  - pack (default): a demand that fits one node goes to the node that fits it
//    with the fewest GPUs left over (keeps whole nodes free for big jobs),
//    preferring nodes the job already uses; one that does not fit a node takes
//    the nodes that hold the most of its tasks first (fewest nodes);
//  - spread: each task goes to the node with the most free GPUs;
//  - a node must be schedulable and match the demand's model, labels and nodes;
//  - within a node the lowest free GPU indices are taken.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <string>
#include <vector>

#include "sched/snapshot.h"

namespace rota::sched {

class FreeMap {
 public:
  explicit FreeMap(const std::vector<Node>& nodes);

  size_t size() const { return nodes_.size(); }
  const Node& node(size_t i) const { return *nodes_[i].node; }
  // Index of a node by name; nullopt when unknown.
  std::optional<size_t> Find(const std::string& name) const;

  bool Free(size_t n, uint32_t gpu) const { return nodes_[n].gpu_free[gpu] != 0; }
  uint32_t FreeGpus(size_t n) const { return nodes_[n].free_gpus; }
  uint32_t TotalFree() const { return total_free_; }
  // Takes / gives back what a task holds. GPUs outside the node are ignored.
  void Take(const TaskAlloc& t);
  void Give(const TaskAlloc& t);
  void TakeGpu(size_t n, uint32_t gpu);
  void GiveGpu(size_t n, uint32_t gpu);

  // Upper bound on how many tasks of `d` fit now (GPUs only), without placing.
  uint64_t RoughCapacity(const TaskDemand& d) const;
  // The node with the largest free block a demand may use, for messages.
  std::pair<std::string, uint32_t> LargestBlock(const TaskDemand& d) const;

 private:
  friend std::optional<std::vector<TaskAlloc>> PlaceGang(
      const FreeMap&, const std::vector<TaskDemand>&, bool,
      const std::function<bool(size_t, uint32_t)>&);
  struct NodeFree {
    const Node* node;
    std::vector<uint8_t> gpu_free;  // 1 free
    uint32_t free_gpus = 0;
    int64_t free_cpus = 0;    // meaningful when node->cpus > 0
    int64_t free_memory = 0;  // meaningful when node->memory_bytes > 0
  };
  std::vector<NodeFree> nodes_;
  std::shared_ptr<const std::unordered_map<std::string, size_t>> index_;  // shared by copies
  uint32_t total_free_ = 0;
};

// Whether a demand may ever use a node (schedulable aside).
bool Eligible(const Node& n, const TaskDemand& d);

// Places every task of `demands` on the free GPUs of `map`; `blocked(node,
// gpu)` (may be empty) removes GPUs this job may not use (reservations).
// Returns the tasks in demand order, or nullopt when the gang does not fit.
std::optional<std::vector<TaskAlloc>> PlaceGang(const FreeMap& map, const std::vector<TaskDemand>& demands,
                                                bool spread,
                                                const std::function<bool(size_t, uint32_t)>& blocked);

}  // namespace rota::sched
