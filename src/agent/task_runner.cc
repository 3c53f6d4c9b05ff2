#include "agent/task_runner.h"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "common/file_util.h"
#include "common/log.h"
#include "common/process.h"
#include "common/strings.h"

namespace rota::agent {
namespace {

bool ValidId(const std::string& id) {
  if (id.empty() || id.size() > 128 || id == "." || id == "..") return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool ValidFileName(const std::string& name) {
  if (name.empty() || name.size() > 64 || name[0] == '.') return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
      return false;
  }
  return name != "spec.json" && name != "pid" && name != "status.json" && name != "stdout.log" &&
         name != "stderr.log";
}

std::optional<pid_t> ReadPid(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return std::nullopt;
  const std::string t(Trim(*text));
  if (t.empty() || t.size() > 10 || t.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const long v = std::stol(t);
  if (v <= 1) return std::nullopt;
  return static_cast<pid_t>(v);
}

std::optional<TaskExit> ReadExit(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return std::nullopt;
  auto j = api::ParseJson(*text);
  if (!j.ok()) return std::nullopt;
  auto e = TaskExitFromJson(*j);
  if (!e.ok()) return std::nullopt;
  return *e;
}

}  // namespace

const char* TaskStateName(TaskState s) {
  switch (s) {
    case TaskState::kRunning: return "running";
    case TaskState::kExited: return "exited";
    case TaskState::kLost: return "lost";
  }
  return "lost";
}

TaskRunner::TaskRunner(std::vector<std::string> shim_argv, std::string state_dir)
    : shim_argv_(std::move(shim_argv)), state_dir_(std::move(state_dir)) {}

TaskRunner::~TaskRunner() {
  // Tasks keep running; only reap shims that already ended.
  for (const auto& [id, shim] : shims_) {
    if (shim > 0) ::waitpid(shim, nullptr, WNOHANG);
  }
}

std::string TaskRunner::Dir(const std::string& id) const { return state_dir_ + "/tasks/" + id; }
std::string TaskRunner::StdoutPath(const std::string& id) const { return Dir(id) + "/stdout.log"; }
std::string TaskRunner::StderrPath(const std::string& id) const { return Dir(id) + "/stderr.log"; }

Result<TaskStatus> TaskRunner::Start(const TaskRequest& r) {
  if (!ValidId(r.id)) return Status::InvalidArgument("task id '" + r.id + "' must match [A-Za-z0-9._-]{1,128}");
  if (shims_.count(r.id)) return Status::AlreadyExists("task " + r.id + " exists");
  if (r.argv.empty()) return Status::InvalidArgument("task " + r.id + ": empty command");
  const std::string dir = Dir(r.id);
  if (::access(dir.c_str(), F_OK) == 0) return Status::AlreadyExists("task directory " + dir + " exists");
  RETURN_IF_ERROR(MakeDirs(dir, 0755));
  ShimSpec s;
  s.argv = r.argv;
  s.env = r.env;
  s.workdir = r.workdir;
  s.uid = r.uid;
  s.gid = r.gid;
  s.user = r.user;
  s.groups = r.groups;
  s.stdout_path = StdoutPath(r.id);
  s.stderr_path = StderrPath(r.id);
  s.pid_path = dir + "/pid";
  s.status_path = dir + "/status.json";
  for (const auto& [name, content] : r.files) {
    if (!ValidFileName(name)) return Status::InvalidArgument("task file name '" + name + "' is not allowed");
    RETURN_IF_ERROR(WriteFileAtomic(dir + "/" + name, content, 0644));
    for (auto& a : s.argv) {
      const std::string pattern = "{file:" + name + "}";
      for (size_t p = a.find(pattern); p != std::string::npos; p = a.find(pattern, p)) {
        a.replace(p, pattern.size(), dir + "/" + name);
      }
    }
  }
  for (const auto& [var, name] : r.file_env) {
    if (!r.files.count(name)) return Status::InvalidArgument("file_env names an unknown file '" + name + "'");
    s.env[var] = dir + "/" + name;
  }
  s.env["ROTA_PREEMPT_NOTICE"] = dir + "/" + kNoticeFile;  // exists once rota stops the task
  RETURN_IF_ERROR(ShimSpecFromJson(ToJson(s)).status());
  if (::geteuid() == 0 && !cgroup_root_.empty()) {
    // Named after this agent's state directory too: agents sharing a host (rota
    // dev, tests) may use the same task ids.
    char key[32];
    std::snprintf(key, sizeof key, "%08zx", std::hash<std::string>{}(state_dir_) & 0xffffffffu);
    auto cgroups = CreateTaskCgroups(cgroup_root_, std::string(key) + "." + r.id, r.limits);
    if (cgroups.ok()) {
      s.cgroups = *cgroups;
    } else {
      ROTA_LOG(WARNING) << "task " << r.id << " runs without a cgroup (no limits; a cancel reaches "
                        << "its process group only): " << cgroups.status().message();
    }
  }
  const std::string spec_path = dir + "/spec.json";
  Status written = WriteFileAtomic(spec_path, ToJson(s).dump() + "\n", 0600);
  if (!written.ok()) {
    KillAndRemoveCgroups(s.cgroups);
    return written;
  }
  std::vector<std::string> argv = shim_argv_;
  argv.push_back(spec_path);
  SpawnOptions opts;
  opts.output_path = dir + "/shim.log";
  auto spawned = SpawnProcess(argv, opts);
  if (!spawned.ok()) {
    KillAndRemoveCgroups(s.cgroups);
    return spawned.status();
  }
  pid_t shim = *spawned;
  shims_[r.id] = shim;
  if (!s.cgroups.empty()) cgroups_[r.id] = s.cgroups;
  // The shim writes the pid before it waits; a start failure writes the status.
  for (int i = 0; wait_for_start_ && i < 1000; ++i) {
    if (ReadPid(s.pid_path) || ReadExit(s.status_path)) break;
    int st = 0;
    if (::waitpid(shim, &st, WNOHANG) == shim) {
      shims_[r.id] = 0;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return Poll(r.id);
}

pid_t TaskRunner::ShimPid(const std::string& id) const {
  auto it = shims_.find(id);
  return it == shims_.end() ? 0 : it->second;
}

Result<TaskStatus> TaskRunner::Poll(const std::string& id) {
  auto it = shims_.find(id);
  if (it == shims_.end()) return Status::NotFound("task " + id + " is not known");
  const std::string dir = Dir(id);
  TaskStatus out;
  out.id = id;
  out.pid = ReadPid(dir + "/pid").value_or(0);
  if (it->second > 0) {
    int st = 0;
    if (::waitpid(it->second, &st, WNOHANG) == it->second) it->second = 0;  // reaped
  }
  if (auto e = ReadExit(dir + "/status.json")) {
    out.state = TaskState::kExited;
    out.exit = *e;
    return out;
  }
  // No status yet: running while the shim lives.
  bool shim_alive = false;
  if (it->second > 0) {
    shim_alive = true;
  } else if (out.pid > 0) {
    // Adopted (or reaped before writing its status): the task's own process tells.
    shim_alive = ::kill(out.pid, 0) == 0 || errno == EPERM;
  }
  if (shim_alive) {
    out.state = TaskState::kRunning;
    return out;
  }
  // The task is gone; its shim may be writing the status right now.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (auto e = ReadExit(dir + "/status.json")) {
    out.state = TaskState::kExited;
    out.exit = *e;
    return out;
  }
  out.state = TaskState::kLost;
  out.error = "the task's supervisor ended without recording how the task ended";
  return out;
}

Status TaskRunner::Notify(const std::string& id, const std::string& text) {
  if (!ValidId(id)) return Status::InvalidArgument("bad task id '" + id + "'");
  if (::access((Dir(id) + "/spec.json").c_str(), F_OK) != 0) return Status::NotFound("no task " + id);
  return WriteFileAtomic(Dir(id) + "/" + kNoticeFile, text + "\n", 0644);
}

Status TaskRunner::Signal(const std::string& id, int sig) {
  ASSIGN_OR_RETURN(TaskStatus st, Poll(id));
  // A task started a moment ago may not have its process yet: wait for it.
  for (int i = 0; i < 400 && st.state == TaskState::kRunning && st.pid <= 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSIGN_OR_RETURN(st, Poll(id));
  }
  if (st.state != TaskState::kRunning) return Status::Conflict("task " + id + " is not running");
  if (st.pid <= 1) return Status::Unavailable("task " + id + " has no process yet");
  if (::kill(-st.pid, sig) != 0 && errno != ESRCH) {
    return Status::IoError("cannot signal task " + id + ": " + std::strerror(errno));
  }
  if (auto text = ReadFile(Dir(id) + "/spec.json"); text.ok()) {
    auto j = api::ParseJson(*text);
    auto spec = j.ok() ? ShimSpecFromJson(*j) : Result<ShimSpec>(j.status());
    // Descendants that left the process group; those in it got the signal once.
    if (spec.ok()) SignalCgroups(spec->cgroups, sig, st.pid);
  }
  return Status::Ok();
}

Status TaskRunner::Remove(const std::string& id) {
  ASSIGN_OR_RETURN(TaskStatus st, Poll(id));
  if (st.state == TaskState::kRunning) return Status::Conflict("task " + id + " is still running");
  std::error_code ec;
  std::filesystem::remove_all(Dir(id), ec);
  if (ec) return Status::IoError("cannot remove " + Dir(id) + ": " + ec.message());
  shims_.erase(id);
  cgroups_.erase(id);
  return Status::Ok();
}

std::vector<std::string> TaskRunner::Cgroups(const std::string& id) const {
  auto it = cgroups_.find(id);
  return it == cgroups_.end() ? std::vector<std::string>{} : it->second;
}

std::vector<std::string> TaskRunner::Ids() const {
  std::vector<std::string> out;
  for (const auto& [id, shim] : shims_) out.push_back(id);
  return out;
}

std::vector<std::string> TaskRunner::Adopt() {
  std::vector<std::string> out;
  DIR* d = ::opendir((state_dir_ + "/tasks").c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    const std::string id = e->d_name;
    if (!ValidId(id) || shims_.count(id)) continue;
    shims_[id] = 0;
    out.push_back(id);
    if (auto text = ReadFile(Dir(id) + "/spec.json"); text.ok()) {
      auto j = api::ParseJson(*text);
      auto spec = j.ok() ? ShimSpecFromJson(*j) : Result<ShimSpec>(j.status());
      if (spec.ok() && !spec->cgroups.empty()) cgroups_[id] = spec->cgroups;
    }
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace rota::agent
