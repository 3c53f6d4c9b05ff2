#pragma once
// SshNodes: agentless nodes, declared as ssh://user@host[:port], that rota
// reaches with the OpenSSH client instead of an agent. For each one a worker
// thread probes the node (hostname, CPUs, memory, load, GPUs from nvidia-smi or
// as declared) and keeps it in ClusterState and the metrics history like an
// agent's node; starts, polls, signals and reads the logs of job tasks with the
// scripts of ssh/remote_scripts.h; and reports them to the job service as an
// agent would (task_status, task_log). Tasks run as the job owner's Unix user:
// directly when the node is reached as that user, through setpriv when it is
// reached as root. Tasks started are kept in the store (ssh_tasks), so a
// restarted server follows them on.
//
// The server's SSH key pair is generated on first start in DATA_DIR/ssh/
// (id_ed25519, 0600); admins add its public key to the login's
// authorized_keys. Host keys are learnt on first contact (accept-new) into
// DATA_DIR/ssh/known_hosts. Connections are shared (ControlMaster).
//
// Thread-safe.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/codec.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "server/nodes/cluster_state.h"
#include "server/store/store.h"
#include "server/nodes/task_transport.h"
#include "ssh/ssh_target.h"

namespace rota::server {

// An agentless node as the admin declared it.
struct SshNodeSpec {
  std::string name;
  std::string url;        // ssh://user@host[:port]
  uint32_t gpus = 0;      // GPUs when the node has no nvidia-smi (0..64)
  std::string gpu_model;  // their model, for placement and display
  std::map<std::string, std::string> labels;
  int64_t created_ms = 0;
};
// {"name", "url", "gpus", "gpu_model", "labels"}; InvalidArgument naming the
// field for anything else (unknown fields, bad names, URL, counts, labels).
Result<SshNodeSpec> SshNodeSpecFromJson(const api::Json& j);
api::Json ToJson(const SshNodeSpec& spec);

struct SshNodesOptions {
  std::string data_dir;             // where ssh/ (key, known hosts) lives
  int64_t probe_interval_ms = 2000; // node probe (liveness and sample)
  int64_t poll_interval_ms = 1000;  // task status, while tasks run
  int command_timeout_ms = 20'000;  // one ssh call
  int connect_timeout_s = 5;
};

class SshNodes : public TaskTransport {
 public:
  // Borrowed pointers; they must outlive this.
  SshNodes(store::Store* store, ClusterState* cluster, const Clock* clock, SshNodesOptions options);
  ~SshNodes() override;
  SshNodes(const SshNodes&) = delete;
  SshNodes& operator=(const SshNodes&) = delete;

  // Creates or loads the key pair, loads declared nodes and their tasks, and
  // starts a worker per node. FailedPrecondition-like Unavailable when
  // ssh-keygen is missing and a key must be made (nodes are then refused).
  Status Start();
  // Stops every worker: no more probes, reports or task operations. Idempotent.
  void Stop();

  // Declares a node and starts following it. Conflict when the name is taken
  // (by an agent's node or another ssh node); InvalidArgument for a bad spec.
  Result<SshNodeSpec> Add(SshNodeSpec spec);
  // Forgets a node. NotFound when it is not an ssh node; Conflict while tasks
  // of unfinished jobs run there.
  Status Remove(const std::string& name);
  // Declared nodes with whether the last probe reached them, and its error.
  struct View {
    SshNodeSpec spec;
    bool reachable = false;
    std::string error;
    size_t tasks = 0;  // tasks followed there now
  };
  std::vector<View> List() const;
  bool Has(const std::string& name) const;
  // The OpenSSH public key line to authorise on the nodes ("" before Start).
  std::string public_key() const;

  // TaskTransport. SendTask queues the work for the node's worker and returns;
  // Unavailable when the node is unknown or not reachable now.
  void SetTaskListeners(TaskStatusListener status, TaskLogListener log) override;
  Status SendTask(const std::string& node, const api::TaskStartMsg& m) override;
  Status SendTask(const std::string& node, const api::TaskSignalMsg& m) override;
  Status SendTask(const std::string& node, const api::TaskLogsMsg& m) override;

 private:
  class Worker;
  Status StartWorker(const SshNodeSpec& spec, std::vector<std::pair<std::string, std::string>> tasks);
  std::shared_ptr<Worker> Find(const std::string& node) const;

  store::Store* const store_;
  ClusterState* const cluster_;
  const Clock* const clock_;
  const SshNodesOptions options_;
  ssh::SshClientOptions client_;  // set by Start
  std::string public_key_;        // set by Start
  std::string cluster_id_;        // set by Start: names task directories on the nodes
  TaskStatusListener status_listener_;
  TaskLogListener log_listener_;
  std::atomic<uint64_t> next_session_{uint64_t{1} << 62};

  mutable Mutex mu_;
  std::map<std::string, std::shared_ptr<Worker>> workers_ ROTA_GUARDED_BY(mu_);
};

}  // namespace rota::server
