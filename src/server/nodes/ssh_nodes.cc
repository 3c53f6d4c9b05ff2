#include "server/nodes/ssh_nodes.h"

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <thread>
#include <variant>

#include "common/clock.h"
#include "common/file_util.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/run_command.h"
#include "common/strings.h"
#include "reserve/json_fields.h"
#include "server/store/ssh_nodes.h"
#include "ssh/remote_scripts.h"

namespace rota::server {
namespace {

using store::Db;

constexpr size_t kMaxDoneTasks = 4096;  // finished tasks remembered for their logs
constexpr int kScanThreads = 2;         // ssh-keyscan at once (Add, Pin)
constexpr size_t kScanQueue = 16;       // waiting beyond them: Unavailable

int64_t MonoMs() { return RealClock::Get().MonotonicMs(); }


}  // namespace

Result<SshNodeRequest> SshNodeRequestFromJson(const api::Json& j) {
  if (!j.is_object()) return Status::InvalidArgument("an ssh node must be a JSON object");
  reserve::JsonFields f(j, "");
  RETURN_IF_ERROR(f.Only({"name", "url", "gpus", "gpu_model", "labels", "host_key"}));
  SshNodeRequest request;
  SshNodeSpec& s = request.spec;
  RETURN_IF_ERROR(f.Str("name", &s.name, true, 63));
  if (!api::IsValidNodeName(s.name)) {
    return Status::InvalidArgument("name: '" + s.name +
                                   "' is not a node name (1..63 of [A-Za-z0-9._-], starting "
                                   "alphanumeric)");
  }
  RETURN_IF_ERROR(f.Str("url", &s.url, true, 300));
  auto target = ssh::ParseSshUrl(s.url);
  if (!target.ok()) return target.status().WithContext("url");
  s.url = target->Url();
  int64_t gpus = 0;
  RETURN_IF_ERROR(f.Int("gpus", &gpus, 0, static_cast<int64_t>(api::kMaxGpusPerNode)));
  s.gpus = static_cast<uint32_t>(gpus);
  RETURN_IF_ERROR(f.Str("gpu_model", &s.gpu_model, false, 128));
  if (f.Has("labels")) {
    const api::Json& l = j.at("labels");
    if (!l.is_object()) return Status::InvalidArgument("labels must be an object of strings");
    if (l.size() > api::kMaxLabels) return Status::InvalidArgument("labels has too many entries");
    for (auto it = l.begin(); it != l.end(); ++it) {
      if (!it.value().is_string() || it.key().empty() || it.key().size() > 63 ||
          it.value().get_ref<const std::string&>().size() > 253) {
        return Status::InvalidArgument("labels." + it.key() + " must be a short string");
      }
      s.labels[it.key()] = it.value().get<std::string>();
    }
  }
  std::string host_key;
  RETURN_IF_ERROR(f.Str("host_key", &host_key, false, 16384));
  if (!host_key.empty()) {
    auto pin = ssh::ParseHostKeyPin(host_key);
    if (!pin.ok()) return pin.status().WithContext("host_key");
    request.pin = std::move(*pin);
  }
  return request;
}

api::Json ToJson(const SshNodeSpec& s) {
  auto key = ssh::ParseHostKey(s.host_key);
  return api::Json{{"name", s.name},
                   {"url", s.url},
                   {"gpus", s.gpus},
                   {"gpu_model", s.gpu_model},
                   {"labels", s.labels},
                   {"created_ms", s.created_ms},
                   {"host_key", s.host_key},
                   {"host_key_fingerprint", key.ok() ? key->Fingerprint() : ""},
                   {"host_key_source", s.host_key_source},
                   {"host_key_ms", s.host_key_ms}};
}

// ---------------------------------------------------------------------------
// One node: probes it and runs its task operations, one at a time.

class SshNodes::Worker {
 public:
  using Op = std::variant<api::TaskStartMsg, api::TaskSignalMsg, api::TaskLogsMsg>;

  Worker(SshNodes* owner, SshNodeSpec spec, ssh::SshTarget target, ssh::SshClientOptions client)
      : owner_(owner),
        spec_(std::move(spec)),
        target_(std::move(target)),
        client_(std::move(client)),
        host_key_(spec_.host_key),
        host_key_source_(spec_.host_key_source),
        host_key_ms_(spec_.host_key_ms) {}

  void Adopt(const std::string& id, const std::string& user) {
    MutexLock lock(&mu_);
    tasks_[id] = Tracked{user, "", false};
  }

  void Start() { thread_ = std::thread([this] { Run(); }); }

  void Stop() {
    {
      MutexLock lock(&mu_);
      stop_ = true;
    }
    cv_.NotifyAll();
    if (thread_.joinable()) thread_.join();
    if (session_ != 0) owner_->cluster_->Disconnect(spec_.name, session_, owner_->clock_->NowMs());
    (void)RunCommand(ssh::SshCloseArgv(target_, client_), RunOptions{"", 5000, 4096});
  }

  void Enqueue(Op op) {
    {
      MutexLock lock(&mu_);
      queue_.push_back(std::move(op));
    }
    cv_.NotifyAll();
  }

  bool reachable() const {
    MutexLock lock(&mu_);
    return reachable_;
  }
  std::string error() const {
    MutexLock lock(&mu_);
    return error_;
  }
  size_t running_tasks() const {
    MutexLock lock(&mu_);
    size_t n = 0;
    for (const auto& [id, t] : tasks_) n += t.done ? 0 : 1;
    return n;
  }
  // The node as declared, with its host key now.
  SshNodeSpec spec() const {
    SshNodeSpec s = spec_;
    MutexLock lock(&mu_);
    s.host_key = host_key_;
    s.host_key_source = host_key_source_;
    s.host_key_ms = host_key_ms_;
    return s;
  }

  // After its known hosts file was rewritten for `spec`'s key: new connections
  // check that one (a shared connection open now goes on).
  void SetHostKey(const SshNodeSpec& spec) {
    MutexLock lock(&mu_);
    host_key_ = spec.host_key;
    host_key_source_ = spec.host_key_source;
    host_key_ms_ = spec.host_key_ms;
  }

 private:
  struct Tracked {
    std::string user;
    std::string reported;  // last state reported ("" none yet)
    bool done = false;
  };

  void Run() {
    int64_t next_probe = 0, next_poll = 0;
    while (true) {
      std::deque<Op> ops;
      {
        MutexLock lock(&mu_);
        int64_t now = MonoMs();
        int64_t wake = next_probe;
        if (HasRunningLocked()) wake = std::min(wake, next_poll);
        cv_.WaitFor(&mu_, std::chrono::milliseconds(std::max<int64_t>(0, wake - now)),
                    [this]() ROTA_REQUIRES(mu_) { return stop_ || !queue_.empty(); });
        if (stop_) return;
        ops.swap(queue_);
      }
      for (auto& op : ops) {
        std::visit([this](auto& m) { Do(m); }, op);
      }
      int64_t now = MonoMs();
      if (now >= next_probe) {
        Probe();
        next_probe = MonoMs() + owner_->options_.probe_interval_ms;
      }
      if (now >= next_poll) {
        Poll(/*all=*/false);
        next_poll = MonoMs() + owner_->options_.poll_interval_ms;
      }
    }
  }

  bool HasRunningLocked() const ROTA_REQUIRES(mu_) {
    for (const auto& [id, t] : tasks_) {
      if (!t.done) return true;
    }
    return false;
  }

  // Runs `script` on the node through `remote` (a RemoteShell command).
  Result<CommandOutput> Ssh(const std::string& remote, const std::string& script) {
    RunOptions o;
    o.input = script;
    o.timeout_ms = owner_->options_.command_timeout_ms;
    auto out = RunCommand(ssh::SshArgv(target_, client_, remote), o);
    if (!out.ok()) return out.status().WithContext("ssh " + target_.Url());
    if (out->exit_code == 255 &&
        out->err.find("Host key verification failed") != std::string::npos) {
      std::string pinned;
      {
        MutexLock lock(&mu_);
        pinned = host_key_;
      }
      return Status::Unavailable(owner_->HostKeyProblem(spec_.name, target_, pinned));
    }
    if (out->exit_code == 255 || out->signal != 0) {
      return Status::Unavailable("ssh " + target_.Url() + ": " +
                                 (out->err.empty() ? "connection failed" : FirstLine(out->err, 300)));
    }
    return out;
  }

  Result<CommandOutput> SshAs(const std::string& user, const std::string& script) {
    ASSIGN_OR_RETURN(std::string remote, ssh::RemoteShell(target_.user, user));
    return Ssh(remote, script);
  }

  void Probe() {
    auto out = Ssh("exec /bin/sh -s", ssh::ProbeScript());
    Result<ssh::Probe> probe = out.ok() ? ssh::ParseProbe(out->out) : Result<ssh::Probe>(out.status());
    const int64_t now = owner_->clock_->NowMs();
    if (!probe.ok()) {
      bool was;
      {
        MutexLock lock(&mu_);
        was = reachable_;
        reachable_ = false;
        error_ = probe.status().message();
      }
      if (was) {
        ROTA_LOG(WARNING) << "ssh node " << spec_.name << " unreachable: " << probe.status().message();
        owner_->cluster_->Disconnect(spec_.name, session_, now);
      } else if (first_failure_) {
        ROTA_LOG(WARNING) << "ssh node " << spec_.name << " not reachable yet: "
                          << probe.status().message();
      }
      first_failure_ = false;
      return;
    }
    api::NodeInfo info = Info(*probe);
    bool was;
    {
      MutexLock lock(&mu_);
      was = reachable_;
    }
    if (!was || info.gpus.size() != info_.gpus.size() || info.hostname != info_.hostname) {
      session_ = owner_->next_session_.fetch_add(1);
      Status st = owner_->store_->UpsertNode(info, now);
      if (st.ok()) st = owner_->cluster_->Connect(info, session_, now);
      if (!st.ok()) {
        MutexLock lock(&mu_);
        error_ = st.message();
        ROTA_LOG(WARNING) << "ssh node " << spec_.name << ": " << st.message();
        return;
      }
      info_ = info;
      ROTA_LOG(INFO) << "ssh node " << spec_.name << " (" << target_.Url() << ") ready: "
                     << probe->hostname << ", " << probe->cpus << " CPUs, " << info.gpus.size()
                     << " GPUs";
      {
        MutexLock lock(&mu_);
        reachable_ = true;
        error_.clear();
      }
      Poll(/*all=*/true);  // as an agent reports all its tasks after registering
    }
    api::NodeSample sample = Sample(*probe, now);
    owner_->cluster_->RecordSample(spec_.name, session_, sample, now);
    owner_->store_->Append(spec_.name, {std::move(sample)}, [](Status) {});
  }

  api::NodeInfo Info(const ssh::Probe& p) const {
    api::NodeInfo info;
    info.name = spec_.name;
    info.node_id = "ssh:" + target_.Url();
    info.hostname = p.hostname;
    info.addresses = {target_.host};
    info.cpus = p.cpus;
    info.memory_bytes = p.mem_total_bytes;
    info.labels = spec_.labels;
    info.labels["rota.io/transport"] = "ssh";
    info.agent_version = "ssh";
    info.sample_interval_ms = owner_->options_.probe_interval_ms;
    if (!p.gpu_infos.empty()) {
      info.gpus = p.gpu_infos;
    } else {
      for (uint32_t i = 0; i < spec_.gpus; ++i) {
        api::GpuInfo g;
        g.index = i;
        g.uuid = "SSH-" + spec_.name + "-" + std::to_string(i);
        g.name = spec_.gpu_model.empty() ? "GPU" : spec_.gpu_model;
        info.gpus.push_back(std::move(g));
      }
      info.gpu_status = spec_.gpus == 0 ? "no GPUs: no nvidia-smi on the node and none declared"
                                        : "declared (no nvidia-smi on the node)";
    }
    return info;
  }

  api::NodeSample Sample(const ssh::Probe& p, int64_t now) {
    api::NodeSample s;
    s.time_ms = now;
    s.host.mem_total_bytes = p.mem_total_bytes;
    s.host.mem_available_bytes = p.mem_available_bytes;
    s.host.load1 = p.load1;
    s.host.load5 = p.load5;
    s.host.load15 = p.load15;
    if (prev_total_ != 0 && p.cpu_total > prev_total_ && p.cpu_busy >= prev_busy_) {
      s.host.cpu_percent = 100.0 * static_cast<double>(p.cpu_busy - prev_busy_) /
                           static_cast<double>(p.cpu_total - prev_total_);
    }
    prev_total_ = p.cpu_total;
    prev_busy_ = p.cpu_busy;
    if (!p.gpus.empty()) {
      s.gpus = p.gpus;
    } else {
      for (const auto& g : info_.gpus) {
        api::GpuSample gs;
        gs.index = g.index;
        gs.uuid = g.uuid;
        s.gpus.push_back(std::move(gs));
      }
    }
    return s;
  }

  // Polls the running tasks, per Unix user, and reports what changed (all=true:
  // everything, as after a (re)connection).
  void Poll(bool all) {
    std::map<std::string, std::vector<std::string>> by_user;
    {
      MutexLock lock(&mu_);
      if (!reachable_) return;
      for (const auto& [id, t] : tasks_) {
        if (!t.done) by_user[t.user].push_back(id);
      }
    }
    std::vector<api::TaskReport> changed;
    for (const auto& [user, ids] : by_user) {
      auto out = SshAs(user, ssh::PollScript(owner_->cluster_id_, ids));
      if (!out.ok()) {
        if (out.status().code() == StatusCode::kPermissionDenied) {
          for (const auto& id : ids) changed.push_back(Lost(id, out.status().message()));
        }
        continue;  // unreachable: the probe notices; the job service decides on loss
      }
      auto reports = ssh::ParsePoll(out->out);
      for (const auto& id : ids) {
        auto it = reports.find(id);
        if (it == reports.end()) continue;
        changed.push_back(std::move(it->second));
      }
    }
    std::vector<api::TaskReport> send;
    std::vector<std::string> finished;
    {
      MutexLock lock(&mu_);
      for (auto& r : changed) {
        auto it = tasks_.find(r.id);
        if (it == tasks_.end()) continue;
        if (r.state != "running") {
          if (r.ended_ms == 0) r.ended_ms = owner_->clock_->NowMs();
          it->second.done = true;
          finished.push_back(r.id);
          done_order_.push_back(r.id);
        }
        if (all || r.state != it->second.reported) {
          it->second.reported = r.state;
          send.push_back(r);
        }
      }
      while (done_order_.size() > kMaxDoneTasks) {
        tasks_.erase(done_order_.front());
        done_order_.pop_front();
      }
    }
    Report(std::move(send));
    for (const auto& id : finished) Forget(id);
  }

  api::TaskReport Lost(const std::string& id, const std::string& why) {
    api::TaskReport r;
    r.id = id;
    r.state = "lost";
    r.error = why;
    return r;
  }

  // Calls the status listener; never under mu_.
  void Report(std::vector<api::TaskReport> reports) ROTA_EXCLUDES(mu_) {
    if (reports.empty() || !owner_->status_listener_) return;
    owner_->status_listener_(spec_.name, api::TaskStatusMsg{std::move(reports)});
  }

  void Forget(const std::string& id) {
    Status st = owner_->store_->Write([&](Db& db) { return store::DeleteSshTask(db, id); });
    if (!st.ok()) ROTA_LOG(WARNING) << "ssh node " << spec_.name << ": " << st.message();
  }

  void Do(const api::TaskStartMsg& m) {
    const api::TaskSpec& t = m.task;
    auto failed = [&](const std::string& why) {
      api::TaskReport r;
      r.id = t.id;
      r.state = "exited";
      r.exit_code = 127;
      r.error = why;
      r.ended_ms = owner_->clock_->NowMs();
      ROTA_LOG(WARNING) << "ssh node " << spec_.name << ": task " << t.id << ": " << why;
      Report({r});
    };
    auto script = ssh::LaunchScript(owner_->cluster_id_, t);
    if (!script.ok()) return failed(script.status().message());
    auto remote = ssh::RemoteShell(target_.user, t.user);
    if (!remote.ok()) return failed(remote.status().message());
    const store::SshTaskRow row{t.id, spec_.name, t.user, owner_->clock_->NowMs()};
    Status st = owner_->store_->Write([&](Db& db) { return store::PutSshTask(db, row); });
    if (!st.ok()) return failed(st.message());
    auto out = Ssh(*remote, *script);
    if (!out.ok()) {
      Forget(t.id);
      return failed(out.status().message());
    }
    std::string answer = FirstLine(out->out, 300);
    if (answer.compare(0, 8, "started ") != 0) {
      Forget(t.id);
      std::string why = answer.compare(0, 7, "error: ") == 0 ? answer.substr(7)
                        : answer.empty() ? FirstLine(out->err, 300)
                                         : answer;
      return failed(why.empty() ? "the node gave no answer" : why);
    }
    api::TaskReport r;
    r.id = t.id;
    r.state = "running";
    r.pid = std::atoll(answer.c_str() + 8);
    {
      MutexLock lock(&mu_);
      tasks_[t.id] = Tracked{t.user, "running", false};
    }
    ROTA_LOG(INFO) << "ssh node " << spec_.name << ": task " << t.id << " started, pid " << r.pid;
    Report({r});
  }

  void Do(const api::TaskSignalMsg& m) {
    std::string user;
    {
      MutexLock lock(&mu_);
      auto it = tasks_.find(m.id);
      if (it == tasks_.end() || it->second.done) return;
      user = it->second.user;
    }
    auto script = ssh::SignalScript(owner_->cluster_id_, m.id, m.signal);
    if (!script.ok()) return;
    auto out = SshAs(user, *script);
    if (!out.ok() || FirstLine(out->out, 300) != "ok") {
      ROTA_LOG(WARNING) << "ssh node " << spec_.name << ": SIG" << m.signal << " to task " << m.id
                        << " failed: " << (out.ok() ? FirstLine(out->out, 300) : out.status().message());
    }
  }

  void Do(const api::TaskLogsMsg& m) {
    api::TaskLogMsg answer;
    answer.req = m.req;
    answer.offset = m.offset;
    std::string user;
    {
      MutexLock lock(&mu_);
      auto it = tasks_.find(m.id);
      if (it != tasks_.end()) user = it->second.user;
    }
    if (user.empty()) {
      answer.error = "task " + m.id + " is not known on node " + spec_.name;
    } else if (auto script = ssh::LogsScript(owner_->cluster_id_, m); !script.ok()) {
      answer.error = script.status().message();
    } else if (auto out = SshAs(user, *script); !out.ok()) {
      answer.error = out.status().message();
    } else {
      answer = ssh::ParseLogs(m.req, m.offset, out->out);
    }
    if (owner_->log_listener_) owner_->log_listener_(spec_.name, std::move(answer));
  }

  SshNodes* const owner_;
  const SshNodeSpec spec_;  // as declared; its host key fields as at the start
  const ssh::SshTarget target_;
  const ssh::SshClientOptions client_;  // the owner's, with this node's known hosts file
  // Worker thread only:
  uint64_t session_ = 0;
  api::NodeInfo info_;
  uint64_t prev_total_ = 0, prev_busy_ = 0;
  bool first_failure_ = true;

  mutable Mutex mu_;
  CondVar cv_;
  std::deque<Op> queue_ ROTA_GUARDED_BY(mu_);
  std::map<std::string, Tracked> tasks_ ROTA_GUARDED_BY(mu_);
  std::deque<std::string> done_order_ ROTA_GUARDED_BY(mu_);
  std::string host_key_ ROTA_GUARDED_BY(mu_);
  std::string host_key_source_ ROTA_GUARDED_BY(mu_);
  int64_t host_key_ms_ ROTA_GUARDED_BY(mu_) = 0;
  bool reachable_ ROTA_GUARDED_BY(mu_) = false;
  std::string error_ ROTA_GUARDED_BY(mu_) = "not probed yet";
  bool stop_ ROTA_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

// ---------------------------------------------------------------------------

SshNodes::SshNodes(store::Store* store, ClusterState* cluster, const Clock* clock,
                   SshNodesOptions options)
    : store_(store),
      cluster_(cluster),
      clock_(clock),
      options_(std::move(options)),
      pool_(std::make_unique<WorkerPool>("the ssh host key scans", kScanThreads, kScanQueue)) {}

SshNodes::~SshNodes() {
  pool_.reset();  // scans running finish (their nodes are stopped below); queued ones are dropped
  Stop();
  if (!client_.control_dir.empty()) (void)RunCommand({"rm", "-rf", client_.control_dir}, {});
}

void SshNodes::Stop() {
  std::map<std::string, std::shared_ptr<Worker>> workers;
  {
    MutexLock lock(&mu_);
    stopped_ = true;
    workers.swap(workers_);
  }
  for (auto& [name, w] : workers) w->Stop();
}

Status SshNodes::Start() {
  const std::string dir = options_.data_dir + "/ssh";
  RETURN_IF_ERROR(MakeDirs(dir, 0700));
  RETURN_IF_ERROR(MakeDirs(dir + "/known_hosts.d", 0700));
  client_.identity_file = dir + "/id_ed25519";
  client_.known_hosts_file = dir + "/known_hosts";
  client_.connect_timeout_s = options_.connect_timeout_s;
  if (!ReadFile(client_.identity_file + ".pub").ok()) {
    auto made = RunCommand({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "rota-server", "-f",
                            client_.identity_file},
                           RunOptions{"", 30'000, 1 << 16});
    if (!made.ok() || made->exit_code != 0) {
      ROTA_LOG(WARNING) << "no SSH key for agentless nodes (is OpenSSH's ssh-keygen installed?): "
                        << (made.ok() ? FirstLine(made->err, 300) : made.status().message());
    }
  }
  if (auto pub = ReadFile(client_.identity_file + ".pub"); pub.ok()) {
    public_key_ = FirstLine(*pub, 300);
  }
  // Names this cluster's task directories on the nodes (remote_scripts.h).
  if (auto id = ReadFile(dir + "/cluster-id"); id.ok() && ssh::CheckClusterId(FirstLine(*id, 300)).ok()) {
    cluster_id_ = FirstLine(*id, 300);
  } else {
    ASSIGN_OR_RETURN(cluster_id_, RandomHex(8));
    RETURN_IF_ERROR(WriteFileAtomic(dir + "/cluster-id", cluster_id_ + "\n", 0600));
  }
  char tmpl[] = "/tmp/rota-ssh-XXXXXX";  // short: socket paths are limited to 108 bytes
  if (::mkdtemp(tmpl) == nullptr) return Status::IoError("cannot create a directory in /tmp");
  client_.control_dir = tmpl;

  std::vector<SshNodeSpec> specs;
  std::multimap<std::string, std::pair<std::string, std::string>> tasks;  // node -> (id, user)
  std::vector<store::SshNodeRow> node_rows;
  std::vector<store::SshTaskRow> task_rows;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(node_rows, store::LoadSshNodes(db));
    ASSIGN_OR_RETURN(task_rows, store::LoadSshTasks(db));
    return Status::Ok();
  }));
  for (const auto& r : node_rows) {
    SshNodeSpec spec;
    spec.name = r.name;
    spec.url = r.url;
    spec.gpus = static_cast<uint32_t>(r.gpus);
    spec.gpu_model = r.gpu_model;
    auto labels = api::ParseJson(r.labels_json);
    if (labels.ok() && labels->is_object()) spec.labels = labels->get<std::map<std::string, std::string>>();
    spec.created_ms = r.created_ms;
    spec.host_key = r.host_key;
    spec.host_key_source = r.host_key_source;
    spec.host_key_ms = r.host_key_ms;
    specs.push_back(std::move(spec));
  }
  for (const auto& t : task_rows) tasks.emplace(t.node, std::make_pair(t.id, t.unix_user));
  for (const auto& spec : specs) {
    std::vector<std::pair<std::string, std::string>> mine;
    auto [b, e] = tasks.equal_range(spec.name);
    for (auto it = b; it != e; ++it) mine.push_back(it->second);
    if (spec.host_key.empty()) {
      ROTA_LOG(WARNING) << "ssh node " << spec.name << " has no pinned host key (declared before "
                        << "rota pinned them): it is checked against the keys learnt at first "
                        << "contact in " << client_.known_hosts_file
                        << "; pin it: rota ssh-node pin " << spec.name << " [--host-key KEY]";
    }
    if (Status st = WriteKnownHosts(spec); !st.ok()) {
      ROTA_LOG(WARNING) << "ssh node " << spec.name << ": " << st.message();
    }
    Status st = StartWorker(spec, std::move(mine));
    if (!st.ok()) ROTA_LOG(WARNING) << "ssh node " << spec.name << ": " << st.message();
  }
  return Status::Ok();
}

Status SshNodes::StartWorker(const SshNodeSpec& spec,
                             std::vector<std::pair<std::string, std::string>> tasks) {
  ASSIGN_OR_RETURN(ssh::SshTarget target, ssh::ParseSshUrl(spec.url));
  ssh::SshClientOptions client = client_;
  client.known_hosts_file = KnownHostsFile(spec.name);
  auto worker = std::make_shared<Worker>(this, spec, std::move(target), std::move(client));
  for (const auto& [id, user] : tasks) worker->Adopt(id, user);
  {
    MutexLock lock(&mu_);
    if (stopped_) return Status::Unavailable("the server is stopping");
    workers_[spec.name] = worker;
  }
  worker->Start();
  return Status::Ok();
}

Result<SshNodeSpec> SshNodes::PinScanned(const std::string& name,
                                         const std::optional<ssh::HostKeyPin>& pin) {
  std::shared_ptr<Worker> worker = Find(name);
  if (worker == nullptr) return Status::NotFound("no ssh node named '" + name + "'");
  auto pinned = WithHostKey(worker->spec(), pin);
  if (!pinned.ok()) return pinned.status().WithContext("ssh node " + name + " not pinned");
  const SshNodeSpec& spec = *pinned;
  const store::SshNodeRow row{
      spec.name, spec.url, 0, "", "", 0, spec.host_key, spec.host_key_source, spec.host_key_ms};
  RETURN_IF_ERROR(store_->Write([&](Db& db) { return store::UpdateSshNodeHostKey(db, row); }));
  RETURN_IF_ERROR(WriteKnownHosts(spec));
  worker->SetHostKey(spec);
  ROTA_LOG(INFO) << "ssh node " << name << " pinned to host key "
                 << ToJson(spec).value("host_key_fingerprint", "") << " (" << spec.host_key_source
                 << ")";
  return spec;
}

Status SshNodes::Remove(const std::string& name) {
  std::shared_ptr<Worker> worker = Find(name);
  if (worker == nullptr) return Status::NotFound("no ssh node named '" + name + "'");
  if (size_t n = worker->running_tasks(); n > 0) {
    return Status::Conflict("ssh node '" + name + "' still runs " + std::to_string(n) +
                            " task(s); cancel their jobs first");
  }
  RETURN_IF_ERROR(store_->Write([&](Db& db) { return store::DeleteSshNode(db, name); }));
  {
    MutexLock lock(&mu_);
    workers_.erase(name);
  }
  worker->Stop();
  ::unlink(KnownHostsFile(name).c_str());
  ROTA_LOG(INFO) << "ssh node " << name << " removed";
  return Status::Ok();
}

std::vector<SshNodes::View> SshNodes::List() const {
  std::vector<std::shared_ptr<Worker>> workers;
  {
    MutexLock lock(&mu_);
    for (const auto& [name, w] : workers_) workers.push_back(w);
  }
  std::vector<View> out;
  for (const auto& w : workers) {
    out.push_back(View{w->spec(), w->reachable(), w->error(), w->running_tasks()});
  }
  return out;
}

bool SshNodes::Has(const std::string& name) const { return Find(name) != nullptr; }

std::string SshNodes::public_key() const { return public_key_; }

std::shared_ptr<SshNodes::Worker> SshNodes::Find(const std::string& node) const {
  MutexLock lock(&mu_);
  auto it = workers_.find(node);
  return it == workers_.end() ? nullptr : it->second;
}

void SshNodes::SetTaskListeners(TaskStatusListener status, TaskLogListener log) {
  status_listener_ = std::move(status);
  log_listener_ = std::move(log);
}

Status SshNodes::SendTask(const std::string& node, const api::TaskStartMsg& m) {
  RETURN_IF_ERROR(api::Validate(m.task));
  if (!m.task.secrets.empty()) {
    return Status::Unimplemented("ssh node " + node + " cannot take secrets (only nodes with an agent do)");
  }
  auto w = Find(node);
  if (w == nullptr || !w->reachable()) {
    return Status::Unavailable("ssh node " + node + " is not reachable" +
                               (w == nullptr ? "" : ": " + w->error()));
  }
  w->Enqueue(m);
  return Status::Ok();
}

Status SshNodes::SendTask(const std::string& node, const api::TaskSignalMsg& m) {
  RETURN_IF_ERROR(api::ValidateTaskId(m.id));
  auto w = Find(node);
  if (w == nullptr) return Status::Unavailable("no ssh node " + node);
  w->Enqueue(m);
  return Status::Ok();
}

Status SshNodes::SendTask(const std::string& node, const api::TaskLogsMsg& m) {
  RETURN_IF_ERROR(api::ValidateTaskId(m.id));
  auto w = Find(node);
  if (w == nullptr) return Status::Unavailable("no ssh node " + node);
  w->Enqueue(m);
  return Status::Ok();
}

}  // namespace rota::server
