#include "agent/task_runner.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "api/task_protocol.h"
#include "common/file_util.h"
#include "common/log.h"
#include "common/process.h"

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
         name != "stderr.log" && name != TaskRunner::kResourcesFile;
}

std::optional<TaskProcess> ReadTaskProcess(const std::string& path) {
  auto text = ReadFile(path, 4096);
  if (!text.ok()) return std::nullopt;
  return ParsePidFile(*text);
}

// A file of the task's for its owner: 0600, owned by uid:gid when the task runs as
// another user (else by the agent's user).
Status WriteOwnerFile(const std::string& path, const std::string& content, std::optional<uint32_t> uid,
                      std::optional<uint32_t> gid) {
  RETURN_IF_ERROR(WriteFileAtomic(path, content, 0600));
  if (uid && ::chown(path.c_str(), *uid, gid.value_or(static_cast<gid_t>(-1))) != 0) {
    return Status::IoError("cannot give " + path + " to uid " + std::to_string(*uid) + ": " +
                           std::strerror(errno));
  }
  return Status::Ok();
}

// The task directory's modes (MakeDirs' are cut by the umask): reachable by name,
// not listable (its owner's task opens its own files in it).
void TightenDir(const std::string& path) { ::chmod(path.c_str(), 0711); }

// Every file of task directory `dir` made 0600: the agent's records keep their
// owner, the others (logs, the request's files, the notice) go to uid:gid. Links and
// other non-regular files are left alone.
void TightenTaskFiles(const std::string& dir, std::optional<uint32_t> uid, std::optional<uint32_t> gid) {
  TightenDir(dir);
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    int fd = ::openat(::dirfd(d), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
      const bool agents = name == "spec.json" || name == "pid" || name == "status.json" || name == "shim.log";
      if (!agents && uid) (void)::fchown(fd, *uid, gid.value_or(static_cast<gid_t>(-1)));
      if ((st.st_mode & 07777) != 0600) ::fchmod(fd, 0600);
    }
    ::close(fd);
  }
  ::closedir(d);
}

Result<ShimSpec> ReadSpec(const std::string& dir) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(dir + "/spec.json"));
  ASSIGN_OR_RETURN(api::Json j, api::ParseJson(text));
  return ShimSpecFromJson(j);
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

std::string ResourcesJson(double cpus, const std::string& cpuset, const std::vector<uint32_t>& gpus,
                          uint64_t generation) {
  api::Json j{{"cpus", cpus}, {"cpuset", cpuset}, {"gpus", gpus}, {"generation", generation}};
  return j.dump() + "\n";
}

const char* TaskStateName(TaskState s) {
  switch (s) {
    case TaskState::kRunning: return "running";
    case TaskState::kExited: return "exited";
    case TaskState::kLost: return "lost";
  }
  return "lost";
}

TaskRunner::TaskRunner(std::vector<std::string> shim_argv, std::string state_dir)
    : boot_id_(ReadBootId()), shim_argv_(std::move(shim_argv)), state_dir_(std::move(state_dir)) {
  if (boot_id_.empty()) {
    ROTA_LOG(WARNING) << "cannot read " << kBootIdPath << ": adopted tasks cannot be told apart from "
                      << "processes that reuse their pids, and are not signalled";
  }
}

TaskRunner::~TaskRunner() {
  // Tasks keep running; only reap shims that already ended.
  for (const auto& [id, shim] : shims_) {
    if (shim > 0) ::waitpid(shim, nullptr, WNOHANG);
  }
}

std::string TaskRunner::Dir(const std::string& id) const { return state_dir_ + "/tasks/" + id; }
std::string TaskRunner::StdoutPath(const std::string& id) const { return Dir(id) + "/stdout.log"; }
std::string TaskRunner::StderrPath(const std::string& id) const { return Dir(id) + "/stderr.log"; }
std::string TaskRunner::MetricsPath(const std::string& id) const { return Dir(id) + "/" + kMetricsFile; }

Result<TaskStatus> TaskRunner::Start(const TaskRequest& r) {
  if (!ValidId(r.id)) return Status::InvalidArgument("task id '" + r.id + "' must match [A-Za-z0-9._-]{1,128}");
  if (shims_.count(r.id)) return Status::AlreadyExists("task " + r.id + " exists");
  if (r.argv.empty()) return Status::InvalidArgument("task " + r.id + ": empty command");
  const std::string dir = Dir(r.id);
  if (::access(dir.c_str(), F_OK) == 0) return Status::AlreadyExists("task directory " + dir + " exists");
  RETURN_IF_ERROR(MakeDirs(dir, 0711));
  TightenDir(state_dir_ + "/tasks");
  TightenDir(dir);
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
    RETURN_IF_ERROR(WriteOwnerFile(dir + "/" + name, content, r.uid, r.gid));
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
  if (!r.files.count(kMetricsFile)) {
    RETURN_IF_ERROR(WriteOwnerFile(MetricsPath(r.id), "", r.uid, r.gid));
    s.env["ROTA_METRICS_FILE"] = MetricsPath(r.id);
  }
  if (r.malleable) {
    if (!api::ResizeSignalNumber(r.resize_signal)) {
      return Status::InvalidArgument("task " + r.id + ": unknown resize signal '" + r.resize_signal + "'");
    }
    const std::string resources = dir + "/" + kResourcesFile;
    RETURN_IF_ERROR(WriteOwnerFile(resources, ResourcesJson(r.limits.cpus, r.limits.cpuset, r.gpus, 0), r.uid, r.gid));
    s.env["ROTA_RESOURCES_FILE"] = resources;
    s.env["ROTA_RESIZE_SIGNAL"] = r.resize_signal;
    // Ignored until the task installs a handler: a resize right after the start
    // (the node divided again as the next task arrives) must not end it.
    if (*api::ResizeSignalNumber(r.resize_signal) != 0) s.ignore_signals = {*api::ResizeSignalNumber(r.resize_signal)};
  }
  RETURN_IF_ERROR(ShimSpecFromJson(ToJson(s)).status());
  if (!r.secrets.empty()) {
    auto written_secrets = WriteTaskSecrets(secrets_root_, Key(), r.id, r.secrets, r.uid, r.gid);
    if (!written_secrets.ok()) return written_secrets.status().WithContext("task " + r.id + ": secrets");
    const std::string secrets_dir = *written_secrets;
    with_secrets_.insert(r.id);
    s.secrets_dir = secrets_dir;
    s.env["ROTA_SECRETS_DIR"] = secrets_dir;
    for (const auto& sec : r.secrets) {
      if (!sec.env.empty()) s.env_files[sec.env] = secrets_dir + "/" + sec.name;
    }
  }
  if (::geteuid() == 0 && !cgroup_root_.empty()) {
    // Named after this agent's state directory too: agents sharing a host (rota
    // dev, tests) may use the same task ids.
    auto cgroups = CreateTaskCgroups(cgroup_root_, Key() + "." + r.id, r.limits);
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
    DropSecrets(r.id);
    return written;
  }
  std::vector<std::string> argv = shim_argv_;
  argv.push_back(spec_path);
  SpawnOptions opts;
  opts.output_path = dir + "/shim.log";
  // Created 0600 here: the spawn would make it 0644.
  if (int fd = ::open(opts.output_path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600); fd >= 0) {
    ::close(fd);
  }
  auto spawned = SpawnProcess(argv, opts);
  if (!spawned.ok()) {
    KillAndRemoveCgroups(s.cgroups);
    DropSecrets(r.id);
    return spawned.status();
  }
  pid_t shim = *spawned;
  shims_[r.id] = shim;
  if (!s.cgroups.empty()) cgroups_[r.id] = s.cgroups;
  // The shim writes the pid before it waits; a start failure writes the status.
  for (int i = 0; wait_for_start_ && i < 1000; ++i) {
    if (ReadTaskProcess(s.pid_path) || ReadExit(s.status_path)) break;
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

TaskRunner::ProcessCheck TaskRunner::CheckTaskProcess(const TaskProcess& p, std::string* why) const {
  const std::string pid = "pid " + std::to_string(p.pid);
  if (!p.identified()) {
    *why = pid + " was recorded without a boot id and start time (a task of an older rota agent): "
           "it may belong to another process now, and is never signalled";
    return ProcessCheck::kNotTheTask;
  }
  if (boot_id_.empty()) {
    *why = std::string("this boot's id cannot be read (") + kBootIdPath + "): " + pid +
           " cannot be told apart from another process, and is never signalled";
    return ProcessCheck::kNotTheTask;
  }
  if (p.boot_id != boot_id_) {
    *why = "the node rebooted since the task started (boot id " + p.boot_id + ", now " + boot_id_ +
           "): " + pid + " is not the task's process";
    return ProcessCheck::kNotTheTask;
  }
  const std::optional<uint64_t> ticks = ReadStartTicks(p.pid);
  if (!ticks) return ProcessCheck::kGone;
  if (*ticks != *p.start_ticks) {
    *why = pid + " now belongs to another process (started " + std::to_string(*ticks) +
           " ticks after boot, the task " + std::to_string(*p.start_ticks) + ")";
    return ProcessCheck::kNotTheTask;
  }
  return ProcessCheck::kTask;
}

Result<TaskStatus> TaskRunner::Poll(const std::string& id) {
  auto it = shims_.find(id);
  if (it == shims_.end()) return Status::NotFound("task " + id + " is not known");
  const std::string dir = Dir(id);
  TaskStatus out;
  out.id = id;
  const std::optional<TaskProcess> record = ReadTaskProcess(dir + "/pid");
  out.pid = record ? record->pid : 0;
  if (it->second > 0) {
    int st = 0;
    if (::waitpid(it->second, &st, WNOHANG) == it->second) it->second = 0;  // reaped
  }
  if (auto e = ReadExit(dir + "/status.json")) {
    out.state = TaskState::kExited;
    out.exit = *e;
    DropSecrets(id);  // the shim removed them; the agent makes sure
    return out;
  }
  // No status yet: running while the shim lives.
  bool shim_alive = false;
  std::string not_the_task;  // why the recorded pid is not the task's process
  if (it->second > 0) {
    shim_alive = true;
  } else if (record) {
    // Adopted (or reaped before writing its status): the task's own process tells,
    // if that pid is still the task's (not another process since a reboot or its end).
    shim_alive = CheckTaskProcess(*record, &not_the_task) == ProcessCheck::kTask;
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
  DropSecrets(id);
  out.error = !not_the_task.empty()
                  ? "lost: " + not_the_task
                  : "the task's supervisor ended without recording how the task ended";
  return out;
}

Status TaskRunner::Notify(const std::string& id, const std::string& text) {
  if (!ValidId(id)) return Status::InvalidArgument("bad task id '" + id + "'");
  auto spec = ReadSpec(Dir(id));
  if (!spec.ok()) {
    if (spec.status().code() == StatusCode::kNotFound) return Status::NotFound("no task " + id);
    return spec.status();
  }
  return WriteOwnerFile(Dir(id) + "/" + kNoticeFile, text + "\n", spec->uid, spec->gid);
}

Status TaskRunner::Signal(const std::string& id, int sig) {
  ASSIGN_OR_RETURN(TaskStatus st, Poll(id));
  // A task started a moment ago may not have its process yet: wait for it.
  for (int i = 0; i < 400 && st.state == TaskState::kRunning && st.pid <= 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSIGN_OR_RETURN(st, Poll(id));
  }
  if (st.state != TaskState::kRunning) {
    return Status::Conflict("task " + id + " is not running" + (st.error.empty() ? "" : " (" + st.error + ")"));
  }
  if (st.pid <= 1) return Status::Unavailable("task " + id + " has no process yet");
  // Before any signal: is the pid still the task's process?
  std::string why;
  const std::optional<TaskProcess> record = ReadTaskProcess(Dir(id) + "/pid");
  const ProcessCheck check = record && record->pid == st.pid ? CheckTaskProcess(*record, &why)
                                                             : ProcessCheck::kGone;
  if (check == ProcessCheck::kGone) return Status::Ok();  // it ended a moment ago
  if (check == ProcessCheck::kNotTheTask) {
    ROTA_LOG(WARNING) << "task " << id << ": not signalled: " << why;
    return Status::Conflict("task " + id + " not signalled: " + why);
  }
  if (::kill(-st.pid, sig) != 0 && errno != ESRCH) {
    return Status::IoError("cannot signal task " + id + ": " + std::strerror(errno));
  }
  // Descendants that left the process group; those in it got the signal once.
  if (auto spec = ReadSpec(Dir(id)); spec.ok()) SignalCgroups(spec->cgroups, sig, st.pid);
  return Status::Ok();
}

Status TaskRunner::Resize(const std::string& id, double cpus, const std::string& cpuset, uint64_t generation) {
  if (!ValidId(id)) return Status::InvalidArgument("bad task id '" + id + "'");
  ASSIGN_OR_RETURN(TaskStatus st, Poll(id));
  if (st.state != TaskState::kRunning) {
    return Status::Conflict("task " + id + " is not running" + (st.error.empty() ? "" : " (" + st.error + ")"));
  }
  ASSIGN_OR_RETURN(ShimSpec spec, ReadSpec(Dir(id)));
  auto file = spec.env.find("ROTA_RESOURCES_FILE");
  auto signal_name = spec.env.find("ROTA_RESIZE_SIGNAL");
  if (file == spec.env.end() || signal_name == spec.env.end()) {
    return Status::Conflict("task " + id + " is not malleable");
  }
  const std::optional<int> sig = api::ResizeSignalNumber(signal_name->second);
  if (!sig) return Status::Conflict("task " + id + ": unknown resize signal '" + signal_name->second + "'");
  // The current generation and the GPUs (a resize changes CPUs only). The file
  // belongs to the task's user: whatever it holds is read defensively.
  uint64_t now = 0;
  std::vector<uint32_t> gpus;
  std::string old_cpuset;
  if (auto text = ReadFile(file->second, 1 << 16); text.ok()) {
    if (auto current = api::ParseJson(*text); current.ok() && current->is_object()) {
      const api::Json& c = *current;
      if (c.contains("generation") && c["generation"].is_number_unsigned()) now = c["generation"].get<uint64_t>();
      if (c.contains("cpuset") && c["cpuset"].is_string()) old_cpuset = c["cpuset"].get<std::string>();
      if (c.contains("gpus") && c["gpus"].is_array()) {
        for (const auto& g : c["gpus"]) {
          if (g.is_number_unsigned() && g.get<uint64_t>() < 1024) gpus.push_back(static_cast<uint32_t>(g.get<uint64_t>()));
        }
      }
    }
  }
  if (generation <= now) {
    return Status::Conflict("task " + id + ": generation " + std::to_string(generation) +
                            " is not newer than its current " + std::to_string(now));
  }
  const std::string new_cpuset = cpuset.empty() ? old_cpuset : cpuset;
  if (!spec.cgroups.empty()) RETURN_IF_ERROR(ResizeTaskCgroups(spec.cgroups, cpus, cpuset));
  RETURN_IF_ERROR(WriteOwnerFile(file->second, ResourcesJson(cpus, new_cpuset, gpus, generation), spec.uid, spec.gid));
  if (*sig == 0 || st.pid <= 1) return Status::Ok();
  return Signal(id, *sig);
}

Status TaskRunner::Remove(const std::string& id) {
  ASSIGN_OR_RETURN(TaskStatus st, Poll(id));
  if (st.state == TaskState::kRunning) return Status::Conflict("task " + id + " is still running");
  std::error_code ec;
  std::filesystem::remove_all(Dir(id), ec);
  if (ec) return Status::IoError("cannot remove " + Dir(id) + ": " + ec.message());
  DropSecrets(id);
  shims_.erase(id);
  cgroups_.erase(id);
  return Status::Ok();
}

std::string TaskRunner::Key() const {
  char key[32];
  std::snprintf(key, sizeof key, "%08zx", std::hash<std::string>{}(state_dir_) & 0xffffffffu);
  return key;
}

void TaskRunner::DropSecrets(const std::string& id) {
  if (with_secrets_.erase(id) == 0) return;
  RemoveTaskSecrets(TaskSecretsDir(secrets_root_, Key(), id));
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
  TightenDir(state_dir_ + "/tasks");
  while (dirent* e = ::readdir(d)) {
    const std::string id = e->d_name;
    if (!ValidId(id) || shims_.count(id)) continue;
    if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) continue;
    shims_[id] = 0;
    out.push_back(id);
    auto spec = ReadSpec(Dir(id));
    if (spec.ok() && !spec->cgroups.empty()) cgroups_[id] = spec->cgroups;
    if (spec.ok() && !spec->secrets_dir.empty()) with_secrets_.insert(id);
    // A directory of an older agent (0755, files 0644, logs 0640 to the owner's
    // group) is tightened like a new one.
    TightenTaskFiles(Dir(id), spec.ok() ? spec->uid : std::nullopt, spec.ok() ? spec->gid : std::nullopt);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  // Secrets of tasks this agent no longer has (removed while it was down) go now;
  // those of adopted tasks go when Poll sees them end.
  SweepTaskSecrets(secrets_root_, Key(), std::set<std::string>(out.begin(), out.end()));
  return out;
}

}  // namespace rota::agent
