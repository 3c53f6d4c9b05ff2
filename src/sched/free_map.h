#pragma once
// FreeMap: which GPUs, CPUs, memory and task slots of each node are free during one
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
//  - a node must be schedulable and match the demand's model, labels and nodes,
//    and have the CPUs, memory and task slots (Node::task_slots) the tasks ask;
//  - within a node the lowest free GPU indices are taken; on a node of mixed
//    models (Node::gpu_models) only GPUs of the demand's model, and a task
//    that names none gets GPUs of one model when the node has enough of one.
//
// GPUs are also numbered flat: node i's GPU g is Offset(i) + g, in
// [0, FlatSize()). A GpuMask uses that numbering.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "sched/snapshot.h"

namespace rota::sched {

// One count per flat GPU: non-zero = this job may not use it (callers keep
// how many things block each GPU in it, and use it as is).
using GpuMask = std::vector<uint16_t>;

class FreeMap {
 public:
  explicit FreeMap(const std::vector<Node>& nodes);

  size_t size() const { return nodes_.size(); }
  const Node& node(size_t i) const { return *nodes_[i].node; }
  // Index of a node by name; nullopt when unknown.
  std::optional<size_t> Find(const std::string& name) const;
  // Flat numbering (see above).
  uint32_t Offset(size_t n) const { return nodes_[n].offset; }
  uint32_t FlatSize() const { return static_cast<uint32_t>(gpu_free_.size()); }

  bool Free(size_t n, uint32_t gpu) const { return gpu_free_[nodes_[n].offset + gpu] != 0; }
  bool FreeFlat(uint32_t flat) const { return gpu_free_[flat] != 0; }
  uint32_t FreeGpus(size_t n) const { return nodes_[n].free_gpus; }
  // Free GPUs of node n that `blocked` (FlatSize() bytes) leaves usable.
  uint32_t FreeUnblocked(size_t n, const GpuMask& blocked) const {
    const auto& f = nodes_[n];
    if (f.free_gpus == 0) return 0;
    const uint8_t* free = gpu_free_.data() + f.offset;
    const uint16_t* b = blocked.data() + f.offset;
    uint32_t k = 0;  // branch-free: the compiler vectorises it
    for (uint32_t g = 0; g < f.node->gpus; ++g) k += (free[g] != 0) & (b[g] == 0);
    return k;
  }
  uint32_t TotalFree() const { return total_free_; }
  // Free GPUs of node n a task of `d` may use: FreeGpus(n) but on a node of
  // mixed models, where only the demand's model counts.
  uint32_t FreeFor(size_t n, const TaskDemand& d) const;
  // Tasks the node can still take (Node::task_slots); INT64_MAX when not counted.
  int64_t FreeSlots(size_t n) const {
    return nodes_[n].node->task_slots ? slots_[nodes_[n].pool] : INT64_MAX;
  }
  // Takes / gives back what a task holds. GPUs outside the node are ignored.
  void Take(const TaskAlloc& t);
  void Give(const TaskAlloc& t);
  // The same, with the task's node already found (t.node is not read).
  void Take(size_t n, const TaskAlloc& t);
  void Give(size_t n, const TaskAlloc& t);
  void TakeGpu(size_t n, uint32_t gpu);
  void GiveGpu(size_t n, uint32_t gpu);
  // Whether GiveGpu(n, gpu) can ever make the GPU free: it is on the node,
  // the node is schedulable, the GPU usable and not pinned.
  bool Givable(size_t n, uint32_t gpu) const;
  // Pins a GPU: it is never given back in this map, nor in copies made after
  // (a GPU two running jobs claim stays taken while either may hold it).
  void Pin(size_t n, uint32_t gpu);
  // Gives back what a task holds, its GPUs given flat and Givable (checked
  // once by a caller that gives the same tasks back often); calls
  // on_freed(flat) for each GPU that was not free.
  template <class OnFreed>
  void GiveFlat(size_t n, std::span<const uint32_t> flat, int64_t cpus, uint64_t memory,
                OnFreed&& on_freed) {
    auto& f = nodes_[n];
    for (uint32_t g : flat) {
      if (gpu_free_[g]) continue;
      gpu_free_[g] = 1;
      ++f.free_gpus;
      ++total_free_;
      on_freed(g);
    }
    f.free_cpus += cpus;
    f.free_memory += static_cast<int64_t>(memory);
    ++slots_[f.pool];
  }

 private:
  friend std::optional<std::vector<TaskAlloc>> PlaceGang(const FreeMap&,
                                                         const std::vector<TaskDemand>&, bool,
                                                         const GpuMask*,
                                                         const std::vector<std::vector<uint8_t>>*);
  struct NodeFree {
    const Node* node;
    uint32_t offset = 0;  // of GPU 0 in gpu_free_
    uint32_t free_gpus = 0;
    int64_t free_cpus = 0;    // meaningful when node->cpus > 0
    int64_t free_memory = 0;  // meaningful when node->memory_bytes > 0
    size_t pool = 0;          // its task slots: slots_[pool] (when node->task_slots is set)
  };
  std::vector<NodeFree> nodes_;
  std::vector<uint8_t> gpu_free_;                                         // flat; 1 free
  std::vector<uint8_t> pinned_;  // flat; 1 pinned (Pin); empty when none is
  std::vector<int64_t> slots_;  // free task slots per port pool
  std::shared_ptr<const std::unordered_map<std::string, size_t>> index_;  // shared by copies
  uint32_t total_free_ = 0;
};

// Whether a demand may ever use a node (schedulable aside). A node of mixed
// models matches a demand's model when one of its GPUs does.
bool Eligible(const Node& n, const TaskDemand& d);

// GPUs of `n`, busy or not, a task of `d` may use (by model).
uint32_t UsableGpus(const Node& n, const TaskDemand& d);

// The model of GPU `gpu` of `n`; whether a task asking `model` ("": any) may use it.
const std::string& GpuModel(const Node& n, uint32_t gpu);
bool ModelMatches(const Node& n, uint32_t gpu, const std::string& model);

// Places every task of `demands` on the free GPUs of `map`; `blocked` (may be
// null; else FlatSize() bytes) removes GPUs this job may not use
// (reservations, GPUs kept for other jobs). `eligible` (may be null; else
// [demand][node]) is what Eligible() and schedulable say, computed once by a
// caller that places the same demands often.
// Returns the tasks in demand order, or nullopt when the gang does not fit.
std::optional<std::vector<TaskAlloc>> PlaceGang(
    const FreeMap& map, const std::vector<TaskDemand>& demands, bool spread, const GpuMask* blocked,
    const std::vector<std::vector<uint8_t>>* eligible = nullptr);

}  // namespace rota::sched
