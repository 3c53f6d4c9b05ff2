#include "agent/task_cgroup.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "common/file_util.h"
#include "common/strings.h"

namespace rota::agent {

std::vector<pid_t> CgroupProcesses(const std::string& dir);

namespace {

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

Status MakeDir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) return Status::Ok();
  return Status::Unavailable("cannot create cgroup " + path + ": " + std::strerror(errno));
}

// Writes to a cgroup control file (no temporary file: these are not regular files).
Status Write(const std::string& path, const std::string& value) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return Status::Unavailable("cannot open " + path + ": " + std::strerror(errno));
  bool ok = std::fputs(value.c_str(), f) >= 0;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) return Status::Unavailable("cannot write '" + value + "' to " + path + ": " + std::strerror(errno));
  return Status::Ok();
}

// The task's own cgroup: new, or left empty by an earlier run; never one in use.
Status MakeLeaf(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) == 0) return Status::Ok();
  if (errno == EEXIST && CgroupProcesses(path).empty()) return Status::Ok();
  return Status::Unavailable("cannot create cgroup " + path + ": " +
                             (errno == EEXIST ? std::string("it exists and holds processes")
                                              : std::strerror(errno)));
}

constexpr int64_t kPeriodUs = 100'000;

int64_t QuotaUs(double cpus) { return std::max<int64_t>(1000, std::llround(cpus * kPeriodUs)); }

std::string Trimmed(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return "";
  std::string t = *text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t;
}

// v1 cpuset: a cgroup takes no process before it has CPUs and memory nodes;
// `dir` gets those of `parent` where it has none.
Status InheritCpuset(const std::string& parent, const std::string& dir) {
  for (const char* file : {"cpuset.cpus", "cpuset.mems"}) {
    if (!Trimmed(dir + "/" + file).empty()) continue;
    const std::string value = Trimmed(parent + "/" + file);
    if (value.empty()) return Status::Unavailable("cgroup " + parent + " has no " + file);
    RETURN_IF_ERROR(Write(dir + "/" + file, value));
  }
  return Status::Ok();
}

}  // namespace

Status ResizeTaskCgroups(const std::vector<std::string>& dirs, double cpus, const std::string& cpuset) {
  if (!(cpus > 0)) return Status::InvalidArgument("a CPU allotment must be > 0 cores");
  const int64_t quota_us = QuotaUs(cpus);
  bool cpu_done = false;
  for (const auto& dir : dirs) {
    if (Exists(dir + "/cpu.max")) {  // v2
      RETURN_IF_ERROR(Write(dir + "/cpu.max", std::to_string(quota_us) + " " + std::to_string(kPeriodUs)));
      cpu_done = true;
    } else if (Exists(dir + "/cpu.cfs_quota_us")) {  // v1
      RETURN_IF_ERROR(Write(dir + "/cpu.cfs_period_us", std::to_string(kPeriodUs)));
      RETURN_IF_ERROR(Write(dir + "/cpu.cfs_quota_us", std::to_string(quota_us)));
      cpu_done = true;
    }
    if (!cpuset.empty() && Exists(dir + "/cpuset.cpus")) {
      RETURN_IF_ERROR(Write(dir + "/cpuset.cpus", cpuset));
    }
  }
  if (!cpu_done) return Status::Conflict("the task's cgroups have no CPU controller");
  return Status::Ok();
}

Result<std::vector<std::string>> CreateTaskCgroups(const std::string& root, const std::string& id,
                                                   const CgroupLimits& limits) {
  if (id.empty() || id.find('/') != std::string::npos || id[0] == '.') {
    return Status::InvalidArgument("bad task id for a cgroup: '" + id + "'");
  }
  const int64_t quota_us = limits.cpus > 0 ? QuotaUs(limits.cpus) : 0;
  if (Exists(root + "/cgroup.controllers")) {  // v2
    const std::string parent = root + "/rota";
    RETURN_IF_ERROR(MakeDir(parent));
    // Hand the cpu and memory controllers down (best effort: one may be absent).
    (void)Write(root + "/cgroup.subtree_control", "+cpu +memory");
    (void)Write(parent + "/cgroup.subtree_control", "+cpu +memory");
    if (!limits.cpuset.empty()) {
      (void)Write(root + "/cgroup.subtree_control", "+cpuset");
      (void)Write(parent + "/cgroup.subtree_control", "+cpuset");
    }
    if (quota_us == 0 && limits.memory_bytes == 0 && limits.cpuset.empty()) {
      // No limit: a cgroup below rota/plain, which hands no controller down, so
      // creating it costs no cpu or memory controller state (its memory and CPU
      // are counted in rota/plain; cpu.stat still gives its own CPU time).
      const std::string plain = parent + "/plain";
      RETURN_IF_ERROR(MakeDir(plain));
      const std::string dir = plain + "/" + id;
      RETURN_IF_ERROR(MakeLeaf(dir));
      return std::vector<std::string>{dir};
    }
    const std::string dir = parent + "/" + id;
    RETURN_IF_ERROR(MakeLeaf(dir));
    if (quota_us > 0) RETURN_IF_ERROR(Write(dir + "/cpu.max", std::to_string(quota_us) + " " + std::to_string(kPeriodUs)));
    if (limits.memory_bytes > 0) RETURN_IF_ERROR(Write(dir + "/memory.max", std::to_string(limits.memory_bytes)));
    if (!limits.cpuset.empty()) RETURN_IF_ERROR(Write(dir + "/cpuset.cpus", limits.cpuset));
    return std::vector<std::string>{dir};
  }
  // v1: the cpuacct cgroup always (it holds every process of the task, and
  // counts its CPU time); cpu and memory only for a limit (each cgroup costs
  // the kernel its controller's state on every start and end), or when there
  // is no cpuacct hierarchy to hold the task.
  std::vector<std::string> dirs;
  std::map<std::string, std::string> made;  // resolved hierarchy -> the task's dir there
  for (const char* controller : {"cpuacct", "cpu", "memory", "cpuset"}) {
    const std::string name = controller;
    const bool wanted = name == "cpuacct" || (dirs.empty() && name != "cpuset") || (name == "cpu" && quota_us > 0) ||
                        (name == "memory" && limits.memory_bytes > 0) || (name == "cpuset" && !limits.cpuset.empty());
    if (!wanted) continue;
    const std::string hierarchy = root + "/" + controller;
    if (!Exists(hierarchy + "/cgroup.procs")) continue;
    std::error_code ec;
    std::string resolved = std::filesystem::canonical(hierarchy, ec).string();
    if (ec) resolved = hierarchy;
    std::string dir;
    if (auto shared = made.find(resolved); shared != made.end()) {
      dir = shared->second;  // cpu and cpuacct are often one hierarchy ("cpu,cpuacct")
    } else {
      RETURN_IF_ERROR(MakeDir(hierarchy + "/rota"));
      dir = hierarchy + "/rota/" + id;
      if (name == "cpuset") RETURN_IF_ERROR(InheritCpuset(hierarchy, hierarchy + "/rota"));
      RETURN_IF_ERROR(MakeLeaf(dir));
      dirs.push_back(dir);
      made[resolved] = dir;
    }
    if (name == "cpuset") {
      RETURN_IF_ERROR(Write(dir + "/cpuset.mems", Trimmed(hierarchy + "/rota/cpuset.mems")));
      RETURN_IF_ERROR(Write(dir + "/cpuset.cpus", limits.cpuset));
    }
    if (name == "cpu" && quota_us > 0) {
      RETURN_IF_ERROR(Write(dir + "/cpu.cfs_period_us", std::to_string(kPeriodUs)));
      RETURN_IF_ERROR(Write(dir + "/cpu.cfs_quota_us", std::to_string(quota_us)));
    }
    if (name == "memory" && limits.memory_bytes > 0) {
      RETURN_IF_ERROR(Write(dir + "/memory.limit_in_bytes", std::to_string(limits.memory_bytes)));
    }
  }
  if (dirs.empty()) return Status::Unavailable("no cgroup v2 or v1 cpu/memory hierarchy under " + root);
  return dirs;
}

std::vector<pid_t> CgroupProcesses(const std::string& dir) {
  std::vector<pid_t> out;
  auto text = ReadFile(dir + "/cgroup.procs");
  if (!text.ok()) return out;
  for (const auto& line : Split(*text, '\n', /*skip_empty=*/true)) {
    long v = std::strtol(line.c_str(), nullptr, 10);
    if (v > 1) out.push_back(static_cast<pid_t>(v));
  }
  return out;
}

int SignalCgroups(const std::vector<std::string>& dirs, int sig, pid_t skip_group) {
  int n = 0;
  std::set<pid_t> done;  // a process in several of the dirs (v1: cpu and memory) once
  for (const auto& dir : dirs) {
    for (pid_t p : CgroupProcesses(dir)) {
      if (!done.insert(p).second || (skip_group > 0 && ::getpgid(p) == skip_group)) continue;
      n += ::kill(p, sig) == 0 ? 1 : 0;
    }
  }
  return n;
}

void KillAndRemoveCgroups(const std::vector<std::string>& dirs) {
  for (int i = 0; i < 100; ++i) {
    if (SignalCgroups(dirs, SIGKILL) == 0) {
      bool empty = true;
      for (const auto& d : dirs) empty = empty && CgroupProcesses(d).empty();
      if (empty) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (const auto& d : dirs) ::rmdir(d.c_str());
}

}  // namespace rota::agent
