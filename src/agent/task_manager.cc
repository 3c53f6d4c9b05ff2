#include "agent/task_manager.h"

#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "common/clock.h"
#include "common/log.h"
#include "common/mutex.h"

namespace rota::agent {
namespace {

// The groups `user` belongs to (its primary group `gid` included), from the
// user database, as initgroups would set them.
Result<std::vector<uint32_t>> SupplementaryGroups(const std::string& user, gid_t gid) {
  std::vector<gid_t> groups(64);
  for (int attempt = 0; attempt < 8; ++attempt) {
    int n = static_cast<int>(groups.size());
    if (::getgrouplist(user.c_str(), gid, groups.data(), &n) >= 0) {
      groups.resize(static_cast<size_t>(n));
      return std::vector<uint32_t>(groups.begin(), groups.end());
    }
    if (n <= static_cast<int>(groups.size())) break;  // failed without saying how many
    groups.resize(static_cast<size_t>(n));
  }
  return Status::Internal("cannot list the groups of Unix user '" + user + "'");
}

api::TaskReport ToReport(const TaskStatus& st) {
  api::TaskReport r;
  r.id = st.id;
  r.state = TaskStateName(st.state);
  r.pid = st.pid;
  if (st.exit) {
    if (st.exit->signal != 0)
      r.signal = st.exit->signal;
    else if (st.exit->exit_code >= 0 && st.exit->exit_code <= 255)
      r.exit_code = st.exit->exit_code;
    r.error = st.exit->error;
    r.ended_ms = st.exit->ended_ms;
  }
  if (!st.error.empty()) r.error = st.error;
  return r;
}

// False when something on this node listens on (or holds) TCP `port`.
// SO_REUSEADDR: connections lingering in TIME_WAIT do not count.
bool PortFree(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return true;  // cannot tell: let the task find out
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 || errno != EADDRINUSE;
  ::close(fd);
  return free;
}

bool SameReport(const api::TaskReport& a, const api::TaskReport& b) {
  return a.state == b.state && a.pid == b.pid && a.exit_code == b.exit_code &&
         a.signal == b.signal && a.error == b.error;
}

}  // namespace

TaskManager::TaskManager(std::vector<std::string> shim_argv, std::string state_dir, SendFn send,
                         int64_t poll_ms)
    : runner_(std::move(shim_argv), std::move(state_dir)),
      send_(std::move(send)),
      poll_ms_(poll_ms),
      exits_([this](pid_t pid) {
        MutexLock lock(&mu_);
        exited_pids_.push_back(pid);
        cv_.NotifyAll();
      }) {
  runner_.set_wait_for_start(false);  // starts overlap; pids are reported as they appear
  for (const auto& id : runner_.Adopt()) {
    ROTA_LOG(INFO) << "task " << id << ": adopted";
    live_.insert(id);
    TrackCgroups(id);  // untracked again by the first poll if it ended meanwhile
  }
  thread_ = std::thread([this] { Run(); });
}

TaskManager::~TaskManager() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  thread_.join();
}

void TaskManager::OnStart(api::TaskStartMsg m) {
  MutexLock lock(&mu_);
  work_.emplace_back(std::move(m));
  cv_.NotifyAll();
}

void TaskManager::OnSignal(api::TaskSignalMsg m) {
  MutexLock lock(&mu_);
  work_.emplace_back(std::move(m));
  cv_.NotifyAll();
}

void TaskManager::OnResize(api::TaskResizeMsg m) {
  MutexLock lock(&mu_);
  work_.emplace_back(std::move(m));
  cv_.NotifyAll();
}

void TaskManager::OnLogs(api::TaskLogsMsg m) {
  MutexLock lock(&mu_);
  work_.emplace_back(std::move(m));
  cv_.NotifyAll();
}

void TaskManager::OnDisconnected() {
  MutexLock lock(&mu_);
  if (disconnected_since_ms_ < 0) {
    disconnected_since_ms_ = MonotonicNs() / 1'000'000;
    outage_began_ = true;
  }
  cv_.NotifyAll();
}

std::vector<TaskCgroups> TaskManager::RunningTaskCgroups() const {
  MutexLock lock(&cgroups_mu_);
  std::vector<TaskCgroups> out;
  out.reserve(cgroups_.size());
  for (const auto& [id, c] : cgroups_) out.push_back(c);
  return out;
}

void TaskManager::TrackCgroups(const std::string& id) {
  std::vector<std::string> dirs = runner_.Cgroups(id);
  const std::optional<int64_t> job = api::JobNumberOfTaskId(id);
  if (dirs.empty() || !job) return;  // no cgroup (not root), or not a rota job's task
  MutexLock lock(&cgroups_mu_);
  cgroups_[id] = TaskCgroups{id, *job, std::move(dirs)};
}

void TaskManager::UntrackCgroups(const std::string& id) {
  MutexLock lock(&cgroups_mu_);
  cgroups_.erase(id);
}

void TaskManager::OnRegistered() {
  MutexLock lock(&mu_);
  disconnected_since_ms_ = -1;
  resend_ = true;
  cv_.NotifyAll();
}

void TaskManager::Start(const api::TaskSpec& spec) {
  // A start sent again (after a reconnect) for a task this node knows: nothing to do.
  if (failed_.count(spec.id) || runner_.Poll(spec.id).ok()) return;
  auto refuse = [&](const std::string& why) {
    ROTA_LOG(WARNING) << "task " << spec.id << ": " << why;
    api::TaskReport r;
    r.id = spec.id;
    r.state = "exited";
    r.exit_code = 127;
    r.error = why;
    r.ended_ms = RealClock::Get().NowMs();
    failed_[spec.id] = r;
  };
  for (uint16_t port : spec.ports) {
    if (!PortFree(port)) return refuse(api::PortInUseError(port));
  }
  TaskRequest req;
  req.id = spec.id;
  req.argv = spec.argv;
  req.env = spec.env;
  req.workdir = spec.workdir;
  req.files = spec.files;
  req.file_env = spec.file_env;
  req.limits.cpus = spec.cpus;
  req.limits.memory_bytes = spec.memory_bytes;
  req.limits.cpuset = spec.cpuset;
  req.malleable = spec.malleable;
  req.gpus = spec.gpus;
  req.resize_signal = spec.resize_signal;
  req.secrets = spec.secrets;
  const passwd* pw = nullptr;
  if (::geteuid() == 0) {
    if (spec.user.empty()) return refuse("no Unix user to run the task as");
    pw = ::getpwnam(spec.user.c_str());
    if (pw == nullptr) return refuse(api::NoUnixUserError(spec.user));
    if (pw->pw_uid == 0) return refuse("refusing to run a job task as root");
    req.uid = pw->pw_uid;
    req.gid = pw->pw_gid;
    req.user = spec.user;
    auto groups = SupplementaryGroups(spec.user, pw->pw_gid);
    if (!groups.ok()) return refuse(groups.status().message());
    req.groups = std::move(groups).value();
  } else {
    pw = ::getpwuid(::geteuid());
  }
  if (pw != nullptr) {
    req.env.try_emplace("HOME", pw->pw_dir);
    req.env.try_emplace("USER", pw->pw_name);
    req.env.try_emplace("LOGNAME", pw->pw_name);
    req.env.try_emplace("SHELL", pw->pw_shell);
    if (req.workdir.empty() && pw->pw_dir != nullptr && ::access(pw->pw_dir, F_OK) == 0) {
      req.workdir = pw->pw_dir;
    }
  }
  req.env.try_emplace("PATH", "/usr/local/bin:/usr/bin:/bin");
  auto st = runner_.Start(req);
  if (!st.ok()) return refuse(st.status().message());
  live_.insert(spec.id);
  TrackCgroups(spec.id);
  starting_ids_.insert(spec.id);
  // The task's own pid is known once the shim has started it (Poll); log the shim's.
  const pid_t shim = runner_.ShimPid(spec.id);
  ROTA_LOG(INFO) << "task " << spec.id << ": starting, shim pid " << shim;
  if (shim > 0 && exits_.Watch(shim)) shim_ids_[shim] = spec.id;
  if (spec.stop_after_disconnect_ms > 0) stop_after_[spec.id] = spec.stop_after_disconnect_ms;
}

api::TaskReport TaskManager::Report(const std::string& id) {
  if (auto f = failed_.find(id); f != failed_.end()) return f->second;
  auto st = runner_.Poll(id);
  if (!st.ok()) {
    api::TaskReport r;
    r.id = id;
    r.state = "lost";
    r.error = st.status().message();
    return r;
  }
  api::TaskReport r = ToReport(*st);
  if (r.state != "running") {
    if (auto why = stopped_why_.find(id); why != stopped_why_.end() && r.error.empty())
      r.error = why->second;
  }
  return r;
}

int64_t TaskManager::StopDisconnected(int64_t since_ms) {
  const int64_t now = MonotonicNs() / 1'000'000;
  int64_t next = -1;
  auto soonest = [&next](int64_t t) { next = next < 0 ? t : std::min(next, t); };
  for (auto it = stop_after_.begin(); it != stop_after_.end();) {
    const std::string& id = it->first;
    auto st = runner_.Poll(id);
    if (!st.ok() || st->state != TaskState::kRunning) {  // ended: nothing to stop
      stopping_.erase(id);
      it = stop_after_.erase(it);
      continue;
    }
    if (auto term = stopping_.find(id); term != stopping_.end()) {
      if (now - term->second >= kStopGraceMs) {
        ROTA_LOG(WARNING) << "task " << id << ": still running " << kStopGraceMs / 1000
                          << " s after SIGTERM: SIGKILL";
        (void)runner_.Signal(id, SIGKILL);
        stopping_.erase(term);
        it = stop_after_.erase(it);
        continue;
      }
      soonest(term->second + kStopGraceMs);
    } else if (since_ms >= 0) {
      if (now - since_ms >= it->second) {
        const std::string why = "stopped by its node: no contact with the server for " +
                                std::to_string((now - since_ms) / 1000) +
                                " s (stop_after_disconnect " + std::to_string(it->second / 1000) +
                                " s)";
        ROTA_LOG(WARNING) << "task " << id << ": " << why << ": SIGTERM";
        Status sent = runner_.Signal(id, SIGTERM);
        if (!sent.ok()) ROTA_LOG(WARNING) << "task " << id << ": SIGTERM: " << sent.message();
        stopped_why_[id] = why;
        stopping_[id] = now;
        soonest(now + kStopGraceMs);
      } else {
        soonest(since_ms + it->second);
      }
    }
    ++it;
  }
  return next;
}

void TaskManager::SendMetrics(const std::string& id, int64_t now_ms) {
  const std::vector<MetricsTail::Source> sources{
      {runner_.StdoutPath(id), api::TaskMetricPoint::Source::kStdout},
      {runner_.MetricsPath(id), api::TaskMetricPoint::Source::kFile}};
  for (int round = 0; round < 64; ++round) {  // a backlog goes out over later polls
    auto points = metrics_.Read(id, sources, now_ms);
    if (points.empty()) return;
    if (!send_(api::Encode(api::TaskMetricsMsg{id, std::move(points)}))) return;  // read again later
    metrics_.Commit(id);
  }
}

bool TaskManager::Poll(const std::vector<std::string>& ids, bool send_all) {
  api::TaskStatusMsg msg;
  // After a registration every point is sent again: some sent before it may not
  // have reached the server (it keeps each point once).
  if (send_all) metrics_.Rewind();
  const int64_t wall_ms = RealClock::Get().NowMs();
  for (const auto& id : ids) {
    auto it = last_.find(id);
    api::TaskReport r = Report(id);
    if (r.state == "running" && r.pid <= 0) {  // its shim is still starting it
      starting_ids_.insert(id);
      continue;
    }
    starting_ids_.erase(id);
    // A task's last metrics go before the report of its end: the server takes
    // them only from a task it still runs.
    if (r.state == "running" || live_.count(id)) SendMetrics(id, wall_ms);
    if (r.state != "running") {
      live_.erase(id);
      metrics_.Forget(id);
      UntrackCgroups(id);
    }
    if (send_all || it == last_.end() || !SameReport(it->second, r)) msg.tasks.push_back(r);
    last_[id] = r;
  }
  const bool starting = !starting_ids_.empty();
  for (const auto& [id, r] : failed_) {
    if (send_all || !last_.count(id)) msg.tasks.push_back(r);
    last_[id] = r;
  }
  if (msg.tasks.empty()) return starting;
  if (!send_(api::Encode(msg))) {
    // Not connected: everything is reported after the next registration.
    MutexLock lock(&mu_);
    resend_ = true;
  }
  return starting;
}

void TaskManager::Run() {
  int64_t next_stop_ms = -1;  // when StopDisconnected next needs to act
  std::deque<Work> work;      // taken from work_, not done yet (in arrival order)
  MutexLock lock(&mu_);
  while (!stop_) {
    // Tasks being started are looked at every few ms, so their start is reported
    // at once although starts do not wait for one another.
    int64_t wait_ms = starting_ ? 3 : poll_ms_;
    if (next_stop_ms >= 0)
      wait_ms = std::clamp<int64_t>(next_stop_ms - MonotonicNs() / 1'000'000, 0, wait_ms);
    cv_.WaitFor(&mu_, std::chrono::milliseconds(wait_ms), [&]() ROTA_REQUIRES(mu_) {
      return stop_ || !work.empty() || !work_.empty() || resend_ || !exited_pids_.empty() ||
             outage_began_;
    });
    if (stop_) return;
    outage_began_ = false;
    std::vector<pid_t> exited = std::move(exited_pids_);
    exited_pids_.clear();
    const int64_t disconnected_since = disconnected_since_ms_;
    for (auto& w : work_) work.push_back(std::move(w));
    work_.clear();
    const bool send_all = std::exchange(resend_, false);
    lock.Unlock();
    // Work is done a slice at a time: a burst of hundreds of starts must not hold
    // back the reports of tasks that ended (or got their pid) meanwhile; their
    // GPUs and ports are what the server's next placements need.
    const int64_t slice_end_ns = MonotonicNs() + kWorkSliceNs;
    while (!work.empty() && MonotonicNs() < slice_end_ns) {
      Work w = std::move(work.front());
      work.pop_front();
      if (auto* start = std::get_if<api::TaskStartMsg>(&w)) {
        Start(start->task);
      } else if (auto* sig = std::get_if<api::TaskSignalMsg>(&w)) {
        if (!sig->notice.empty()) {
          Status n = runner_.Notify(sig->id, sig->notice);
          if (!n.ok()) ROTA_LOG(INFO) << "task " << sig->id << ": notice: " << n.message();
        }
        Status st = runner_.Signal(sig->id, sig->signal == "KILL" ? SIGKILL : SIGTERM);
        if (!st.ok())
          ROTA_LOG(INFO) << "task " << sig->id << ": SIG" << sig->signal << ": " << st.message();
      } else if (auto* resize = std::get_if<api::TaskResizeMsg>(&w)) {
        Status st = runner_.Resize(resize->id, resize->cpus, resize->cpuset, resize->generation);
        if (!st.ok()) ROTA_LOG(INFO) << "task " << resize->id << ": resize: " << st.message();
        send_(api::Encode(api::TaskResizedMsg{resize->id, resize->generation, st.ok() ? "" : st.message()}));
      } else if (auto* logs = std::get_if<api::TaskLogsMsg>(&w)) {
        api::TaskLogMsg out;
        out.req = logs->req;
        const std::string path =
            logs->stream == "stderr" ? runner_.StderrPath(logs->id) : runner_.StdoutPath(logs->id);
        int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) {
          out.error = "no log for task " + logs->id;
        } else {
          const off_t size = ::lseek(fd, 0, SEEK_END);
          out.size = size < 0 ? 0 : static_cast<uint64_t>(size);
          out.offset = std::min<uint64_t>(logs->offset, out.size);
          out.data.resize(std::min<uint64_t>(logs->max_bytes, out.size - out.offset));
          const ssize_t n =
              ::pread(fd, out.data.data(), out.data.size(), static_cast<off_t>(out.offset));
          out.data.resize(n < 0 ? 0 : static_cast<size_t>(n));
          out.next_offset = out.offset + out.data.size();
          ::close(fd);
        }
        send_(api::Encode(out));
      }
    }
    next_stop_ms = stop_after_.empty() ? -1 : StopDisconnected(disconnected_since);
    // A full look at every unended task every poll_ms (and after a
    // registration); in between only at those starting and those whose shim
    // ended, so a burst of starts does not rescan every running task.
    const int64_t now = MonotonicNs() / 1'000'000;
    std::vector<std::string> ids;
    const bool full = send_all || now - last_full_poll_ms_ >= poll_ms_;
    if (send_all) {
      ids = runner_.Ids();
    } else if (full) {
      ids.assign(live_.begin(), live_.end());
    } else {
      ids.assign(starting_ids_.begin(), starting_ids_.end());
      for (pid_t pid : exited) {
        if (auto s = shim_ids_.find(pid); s != shim_ids_.end() && !starting_ids_.count(s->second)) {
          ids.push_back(s->second);
        }
      }
    }
    if (full) last_full_poll_ms_ = now;
    for (pid_t pid : exited) shim_ids_.erase(pid);
    starting_ = Poll(ids, send_all);
    lock.Lock();
  }
}

}  // namespace rota::agent
