#include "jobs/launch_env.h"

#include <algorithm>

#include "api/codec.h"
#include "common/strings.h"

namespace rota::jobs {
namespace {

using api::Json;

bool SafeAddress(const std::string& a) {
  if (a.empty() || a.size() > 255) return false;
  for (char c : a) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == ':' || c == '-' || c == '_' || c == '[' || c == ']';
    if (!ok) return false;
  }
  return true;
}

std::string HostPort(const PlacedTask& t) {
  // IPv6 literals need brackets before a port.
  const bool v6 = t.address.find(':') != std::string::npos && t.address.front() != '[';
  return (v6 ? "[" + t.address + "]" : t.address) + ":" + std::to_string(t.port);
}

std::string GpuList(const std::vector<uint32_t>& gpus) {
  std::string s;
  for (size_t i = 0; i < gpus.size(); ++i) s += (i ? "," : "") + std::to_string(gpus[i]);
  return s;
}

// Replaces every "{key}" of `vars` in `text`.
std::string Substitute(std::string text, const std::map<std::string, std::string>& vars) {
  for (const auto& [key, value] : vars) {
    const std::string pattern = "{" + key + "}";
    for (size_t pos = text.find(pattern); pos != std::string::npos;
         pos = text.find(pattern, pos + value.size())) {
      text.replace(pos, pattern.size(), value);
    }
  }
  return text;
}

std::vector<std::string> Argv(const JobSpec& spec, const TaskGroup& g,
                              const std::map<std::string, std::string>& vars) {
  const std::vector<std::string>& cmd = g.command.empty() ? spec.command : g.command;
  std::vector<std::string> argv;
  for (const auto& a : cmd) argv.push_back(Substitute(a, vars));
  if (spec.shell) return {"/bin/sh", "-c", argv.empty() ? "" : argv[0]};
  return argv;
}

const TaskGroup* GroupOf(const JobSpec& spec, const std::string& role) {
  for (const auto& g : spec.groups) {
    if (g.role == role) return &g;
  }
  return nullptr;
}

// Checks that `tasks` are exactly the spec's tasks, in group order.
Status CheckTasks(const JobSpec& spec, const std::vector<PlacedTask>& tasks) {
  size_t k = 0;
  for (const auto& g : spec.groups) {
    for (uint32_t i = 0; i < g.replicas; ++i, ++k) {
      if (k >= tasks.size() || tasks[k].role != g.role || tasks[k].index != i) {
        return Status::InvalidArgument("placement does not match the job: task " + g.role + "-" +
                                       std::to_string(i) + " is missing or out of order");
      }
      if (tasks[k].gpus.size() != g.gpus_per_task) {
        return Status::InvalidArgument("placement gives " + tasks[k].Name() + " " +
                                       std::to_string(tasks[k].gpus.size()) + " GPUs, not " +
                                       std::to_string(g.gpus_per_task));
      }
      if (!SafeAddress(tasks[k].address)) {
        return Status::InvalidArgument("node address '" + tasks[k].address + "' of " +
                                       tasks[k].node + " is not a host name or IP address");
      }
    }
  }
  if (k != tasks.size()) return Status::InvalidArgument("placement has more tasks than the job");
  return Status::Ok();
}

}  // namespace

Result<std::vector<ProcessLaunch>> BuildLaunch(const JobSpec& spec,
                                               const std::vector<PlacedTask>& tasks,
                                               const LaunchContext& ctx) {
  RETURN_IF_ERROR(Validate(spec));
  RETURN_IF_ERROR(CheckTasks(spec, tasks));

  std::vector<std::string> hosts, ports;
  std::map<std::string, std::vector<std::string>> by_role;  // role -> host:port
  for (const auto& t : tasks) {
    hosts.push_back(t.address);
    ports.push_back(std::to_string(t.port));
    by_role[t.role].push_back(HostPort(t));
  }
  const PlacedTask& first = tasks.front();

  // Framework-wide values.
  Json cluster = Json::object();
  std::string hostfile, mpi_hosts;
  uint32_t mpi_slots = 0;
  uint32_t world_size = 0;
  std::vector<uint32_t> rank_base;  // pytorch: first global rank of each task
  if (spec.framework == Framework::kTensorflow) {
    for (const auto& [role, list] : by_role) {
      if (role != "evaluator") cluster[role] = list;
    }
  } else if (spec.framework == Framework::kMpi) {
    std::vector<std::pair<std::string, uint32_t>> slots;  // address -> slots, first-seen order
    for (const auto& t : tasks) {
      if (t.role != "worker") continue;
      const uint32_t n = std::max<uint32_t>(1, static_cast<uint32_t>(t.gpus.size()));
      auto it = std::find_if(slots.begin(), slots.end(), [&](const auto& s) { return s.first == t.address; });
      if (it == slots.end()) slots.emplace_back(t.address, n);
      else it->second += n;
      mpi_slots += n;
    }
    for (const auto& [addr, n] : slots) {
      hostfile += addr + " slots=" + std::to_string(n) + "\n";
      mpi_hosts += (mpi_hosts.empty() ? "" : ",") + addr + ":" + std::to_string(n);
    }
  } else if (spec.framework == Framework::kPytorch) {
    for (const auto& t : tasks) {
      rank_base.push_back(world_size);
      // One rank per GPU (one for a task without GPUs), whether torchrun starts
      // them (process_per_node) or rota does.
      world_size += std::max<uint32_t>(1, static_cast<uint32_t>(t.gpus.size()));
    }
  }

  std::vector<ProcessLaunch> out;
  for (size_t k = 0; k < tasks.size(); ++k) {
    const PlacedTask& t = tasks[k];
    const TaskGroup& g = *GroupOf(spec, t.role);
    std::map<std::string, std::string> vars = {{"job_name", t.role},
                                               {"task_index", std::to_string(t.index)}};
    for (const char* role : {"ps", "worker", "chief", "master", "evaluator"}) {
      auto it = by_role.find(role);
      vars[std::string(role) + "_hosts"] = it == by_role.end() ? "" : Join(it->second, ",");
    }
    ProcessLaunch base;
    base.task = t.Name();
    base.name = t.Name();
    base.role = t.role;
    base.task_index = t.index;
    base.node = t.node;
    base.gpus = t.gpus;
    base.env = spec.env;
    auto& env = base.env;
    env["ROTA_JOB_ID"] = ctx.job_id;
    env["ROTA_TASK_ROLE"] = t.role;
    env["ROTA_TASK_INDEX"] = std::to_string(t.index);
    env["ROTA_TASK_NAME"] = t.Name();
    env["ROTA_NODE"] = t.node;
    env["ROTA_PORT"] = std::to_string(t.port);
    env["ROTA_HOSTS"] = Join(hosts, ",");
    env["ROTA_PORTS"] = Join(ports, ",");
    env["ROTA_RESTART_COUNT"] = std::to_string(ctx.restart_count);
    env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
    env["CUDA_VISIBLE_DEVICES"] = GpuList(t.gpus);

    switch (spec.framework) {
      case Framework::kGeneric:
        break;
      case Framework::kTensorflow:
        env["TF_CONFIG"] =
            Json{{"cluster", cluster}, {"task", {{"type", t.role}, {"index", t.index}}}}.dump();
        break;
      case Framework::kJax:
        env["COORDINATOR_ADDRESS"] = HostPort(first);
        env["NUM_PROCESSES"] = std::to_string(tasks.size());
        env["PROCESS_ID"] = std::to_string(k);
        break;
      case Framework::kMpi:
        if (t.role == "launcher") {
          base.files["hostfile"] = hostfile;
          base.file_env["ROTA_HOSTFILE"] = "hostfile";
          env["ROTA_MPI_HOSTS"] = mpi_hosts;
          vars["hostfile"] = "{file:hostfile}";
          vars["mpi_hosts"] = mpi_hosts;
          vars["num_procs"] = std::to_string(mpi_slots);
        } else {
          base.runs = false;
        }
        break;
      case Framework::kPytorch: {
        const uint32_t nproc = std::max<uint32_t>(1, static_cast<uint32_t>(t.gpus.size()));
        env["MASTER_ADDR"] = first.address;
        env["MASTER_PORT"] = std::to_string(first.port);
        env["WORLD_SIZE"] = std::to_string(world_size);
        env["NODE_RANK"] = std::to_string(k);
        env["GROUP_RANK"] = std::to_string(k);
        env["LOCAL_WORLD_SIZE"] = std::to_string(nproc);
        env["PET_NNODES"] = std::to_string(tasks.size());
        env["PET_NODE_RANK"] = std::to_string(k);
        env["PET_NPROC_PER_NODE"] = std::to_string(nproc);
        env["PET_MASTER_ADDR"] = first.address;
        env["PET_MASTER_PORT"] = std::to_string(first.port);
        env["TORCHELASTIC_RESTART_COUNT"] = std::to_string(ctx.restart_count);
        if (!spec.process_per_node && nproc > 1) {
          for (uint32_t local = 0; local < nproc; ++local) {
            ProcessLaunch p = base;
            p.name = t.Name() + "." + std::to_string(local);
            p.gpus = {t.gpus[local]};
            p.env["CUDA_VISIBLE_DEVICES"] = std::to_string(t.gpus[local]);
            p.env["RANK"] = std::to_string(rank_base[k] + local);
            p.env["LOCAL_RANK"] = std::to_string(local);
            p.argv = Argv(spec, g, vars);
            out.push_back(std::move(p));
          }
          continue;
        }
        env["RANK"] = std::to_string(rank_base[k]);
        env["LOCAL_RANK"] = "0";
        break;
      }
    }
    if (base.runs) base.argv = Argv(spec, g, vars);
    out.push_back(std::move(base));
  }
  return out;
}

}  // namespace rota::jobs
