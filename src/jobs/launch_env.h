#pragma once
// Launch plans: the processes a placed job starts, each with its final argv and
// the environment its framework expects. Pure; the server computes this and the
// agents run it. See docs/design-jobs.md.
//
// Every process gets the generic variables
//   ROTA_JOB_ID, ROTA_TASK_ROLE, ROTA_TASK_INDEX, ROTA_TASK_NAME, ROTA_PORT,
//   ROTA_HOSTS (address of every task, in task order), ROTA_PORTS (their ports),
//   ROTA_RESTART_COUNT, CUDA_VISIBLE_DEVICES (its GPUs; "" for none) and
//   CUDA_DEVICE_ORDER=PCI_BUS_ID (NVML indices are PCI bus order),
// and its framework's:
//   tensorflow  TF_CONFIG {"cluster": {role: ["addr:port", ...]}, "task": {"type",
//               "index"}} (evaluators are not in the cluster); argv placeholders
//               {ps_hosts} {worker_hosts} {chief_hosts} {master_hosts} {job_name}
//               {task_index} for TF1-style flags;
//   pytorch     MASTER_ADDR, MASTER_PORT (the first task), WORLD_SIZE, RANK,
//               LOCAL_RANK, LOCAL_WORLD_SIZE, NODE_RANK, GROUP_RANK, and torchrun's
//               PET_NNODES, PET_NODE_RANK, PET_NPROC_PER_NODE, PET_MASTER_ADDR,
//               PET_MASTER_PORT, TORCHELASTIC_RESTART_COUNT. One process per GPU of
//               a task (one for a task without GPUs); with process_per_node, one
//               process per task holding all its GPUs (run torchrun in it);
//   mpi         the launcher runs the command with ROTA_HOSTFILE (a file "host
//               slots=N" per worker address) and ROTA_MPI_HOSTS ("host:N,...");
//               argv placeholders {hostfile}, {mpi_hosts}, {num_procs}; worker
//               tasks hold their GPUs and run nothing;
//   jax         COORDINATOR_ADDRESS (first task addr:port), NUM_PROCESSES, PROCESS_ID.
// The job's own env comes first; rota's variables win over it.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "jobs/placement.h"
#include "jobs/spec.h"

namespace rota::jobs {

struct ProcessLaunch {
  std::string task;  // the task it belongs to: "worker-1"
  std::string name;  // unique in the job: "worker-1", or "worker-1.2" for local rank 2
  std::string role;
  uint32_t task_index = 0;
  std::string node;
  std::vector<uint32_t> gpus;
  bool runs = true;               // false: holds its task's GPUs, starts nothing (mpi workers)
  std::vector<std::string> argv;  // final; /bin/sh -c STRING for shell jobs
  std::map<std::string, std::string> env;
  // Files the agent writes into the process's directory before starting it
  // (name -> content). Each env variable in `file_env` (variable -> file name)
  // is set to that file's absolute path, and "{file:NAME}" in argv is replaced
  // by it. Names are plain ([a-z0-9_.-]).
  std::map<std::string, std::string> files;
  std::map<std::string, std::string> file_env;
};

struct LaunchContext {
  std::string job_id;
  uint32_t restart_count = 0;
};

// The processes of `spec` placed as `tasks` (PlaceJob's output, in its order).
// InvalidArgument when the placement does not match the spec (a task missing,
// an address with characters outside [A-Za-z0-9.:_[]-]).
Result<std::vector<ProcessLaunch>> BuildLaunch(const JobSpec& spec,
                                               const std::vector<PlacedTask>& tasks,
                                               const LaunchContext& ctx);

}  // namespace rota::jobs
