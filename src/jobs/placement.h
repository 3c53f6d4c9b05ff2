#pragma once
// Placement: which node, GPUs and port each task of a job gets. Pure. This is the
// simple placer of the job launcher (explicit nodes, else first fit over free
// GPUs); the scheduler replaces it behind the same PlaceJob signature.
//
// Gang semantics: every task is placed or none is (an error says why).

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "jobs/spec.h"

namespace rota::jobs {

// A node as placement sees it.
struct NodeOffer {
  std::string name;
  std::string address;  // where other tasks reach this node's tasks (host or IP)
  std::map<std::string, std::string> labels;
  std::vector<uint32_t> free_gpus;  // GPU indices free for this job, ascending
  uint32_t total_gpus = 0;          // all GPUs of the node (for error messages)
  uint32_t cpus = 0;                // milli-cores; 0: unknown (not checked)
  uint64_t memory_bytes = 0;        // 0: unknown (not checked)
  bool ready = true;                // unreachable nodes are not offered
  std::string gpu_model;            // the NVML name of its GPUs ("" unknown)
  // The NVML name of each GPU (by index) when they are not all one model;
  // empty: every GPU is gpu_model. A task asking a model gets only its GPUs.
  std::vector<std::string> gpu_models;
};

// Ports handed out: [first, last], skipping `used` per address (other jobs'
// ports, and ports the agent found busy).
struct PortRange {
  uint16_t first = 29500;
  uint16_t last = 29999;
};

struct PlacedTask {
  std::string role;
  uint32_t index = 0;  // within its role
  std::string node;
  std::string address;
  std::vector<uint32_t> gpus;
  uint16_t port = 0;

  std::string Name() const { return role + "-" + std::to_string(index); }  // "worker-1"
  bool operator==(const PlacedTask&) const = default;
};

struct PlacementOptions {
  PortRange ports;
  // Ports already taken, by address.
  std::map<std::string, std::set<uint16_t>> used_ports;
  // Spread tasks round robin over nodes instead of filling one node first.
  bool spread = false;
};

// Places every task of `spec` on `nodes`. Tasks come out in group order, then
// index. Errors:
//  - InvalidArgument when a task can never fit: it asks more GPUs than any node
//    has ("a worker task needs 16 GPUs; the largest node, gpu-a, has 8"), or
//    names unknown nodes, or no node has its labels;
//  - ResourceExhausted when it would fit an idle cluster but not now (busy GPUs,
//    no free port), naming what is missing.
Result<std::vector<PlacedTask>> PlaceJob(const JobSpec& spec, const std::vector<NodeOffer>& nodes,
                                         const PlacementOptions& options = {});

// Whether a task of `g` could ever run on `n` were the node idle (its nodes,
// labels, GPU model, GPUs, CPUs and memory per task).
bool CouldEverHold(const NodeOffer& n, const TaskGroup& g);

// An illustrative placement of `spec` for previews (what a job's processes will see): each
// task on a node of its own named "node-<k>" (k = 1, 2, ... in task order), GPUs 0..n-1,
// port 29500. Same order as PlaceJob. The real placement decides nodes, GPUs and ports.
std::vector<PlacedTask> ExamplePlacement(const JobSpec& spec);

// Gives each task the lowest port of `range` not yet taken on its address, and
// marks it taken in `used`. ResourceExhausted naming the address when none is
// left.
Status AssignPorts(std::vector<PlacedTask>& tasks, const PortRange& range,
                   std::map<std::string, std::set<uint16_t>>& used);

}  // namespace rota::jobs
