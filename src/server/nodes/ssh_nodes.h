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
// authorized_keys. Each node is pinned to one host key when it is declared:
// the key (or the fingerprint) the admin gives, checked against what the node
// presents, or else the key the node presents then, whose fingerprint the
// answer shows for the admin to compare. The pin is kept in the store and
// written to DATA_DIR/ssh/known_hosts.d/NAME; ssh checks it strictly and never
// learns a key, so a node whose key changes is not reached again (its error
// names the fingerprint expected and the one seen) until an admin pins the new
// key (Pin). Nodes declared before pins existed are checked against the keys
// learnt at their first contact (DATA_DIR/ssh/known_hosts, copied to their
// file) and listed as unpinned. Connections are shared (ControlMaster). ssh-keyscan runs on a
// small pool, never on the caller's thread.
//
// Thread-safe.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/codec.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "common/worker_pool.h"
#include "server/nodes/cluster_state.h"
#include "server/nodes/task_transport.h"
#include "server/store/store.h"
#include "ssh/host_key.h"
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
  // The host key ssh accepts, set by the server when it is pinned.
  std::string host_key;         // "type base64"; "" unpinned (declared before pins existed)
  std::string host_key_source;  // "given": the key given; "fingerprint": the key seen, which
                                // matched the fingerprint given; "scanned": the key seen
  int64_t host_key_ms = 0;      // when it was pinned
};

// A declaration as POST /api/v1/ssh-nodes takes it: the node, and what to pin.
struct SshNodeRequest {
  SshNodeSpec spec;
  std::optional<ssh::HostKeyPin> pin;  // none: the key the node presents is pinned
};
// {"name", "url", "gpus", "gpu_model", "labels", "host_key"} (host_key: an
// OpenSSH public key line or a SHA256:... fingerprint); InvalidArgument naming
// the field for anything else (unknown fields, bad names, URL, counts, labels,
// host key).
Result<SshNodeRequest> SshNodeRequestFromJson(const api::Json& j);
// The spec's fields, with host_key_fingerprint ("" when unpinned).
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

  // Called once with the node as stored, or why not.
  using Done = std::function<void(Result<SshNodeSpec>)>;

  // Declares a node pinned to its host key and starts following it. The node's
  // keys are read (ssh-keyscan) on a pool thread and `done` runs there; errors
  // found before (bad spec, name taken, pool busy) call it at once on the
  // calling thread. Errors: InvalidArgument for a bad spec; Conflict when the
  // name is taken (by an agent's node or another ssh node) or the node presents
  // no key the pin matches (naming both fingerprints; nothing is stored);
  // Unavailable when its keys cannot be read and no whole key was given, or the
  // pool is busy. A whole key given is pinned even when the node cannot be
  // reached now (ssh checks it at first contact).
  void Add(SshNodeRequest request, Done done);
  // Pins node `name` to a new host key, read and checked as for Add (`pin`
  // none: the key it presents now). For a key changed on purpose, and for
  // nodes declared before pins existed. NotFound when no such ssh node.
  void Pin(const std::string& name, std::optional<ssh::HostKeyPin> pin, Done done);
  // Forgets a node. NotFound when it is not an ssh node; Conflict while tasks
  // of unfinished jobs run there.
  Status Remove(const std::string& name);
  // Declared nodes with whether the last probe reached them, and its error.
  struct View {
    SshNodeSpec spec;  // with its host key now
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
  // Pool thread: reads the keys `target` presents and picks the one to pin.
  Result<ssh::HostKey> ReadHostKey(const ssh::SshTarget& target, const ssh::HostKeyPin* pin) const;
  // Pool thread: `spec` pinned to the key its node presents that `pin` matches
  // (the strongest with no pin; a whole key given also when the node cannot be
  // reached now).
  Result<SshNodeSpec> WithHostKey(SshNodeSpec spec,
                                  const std::optional<ssh::HostKeyPin>& pin) const;
  // Pool thread: the second halves of Add and Pin.
  Result<SshNodeSpec> AddScanned(SshNodeSpec spec, const std::optional<ssh::HostKeyPin>& pin);
  Result<SshNodeSpec> PinScanned(const std::string& name,
                                 const std::optional<ssh::HostKeyPin>& pin);
  // Worker threads: why ssh refused the host key of `target` (expected `pinned`,
  // "" unpinned), naming what it presents now.
  std::string HostKeyProblem(const std::string& name, const ssh::SshTarget& target,
                             const std::string& pinned) const;
  // DATA_DIR/ssh/known_hosts.d/NAME: what ssh checks the node's key against.
  std::string KnownHostsFile(const std::string& name) const;
  // Writes it: the pinned key, or for an unpinned node the keys learnt at first
  // contact (DATA_DIR/ssh/known_hosts, when ssh still learnt them).
  Status WriteKnownHosts(const SshNodeSpec& spec) const;

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
  bool stopped_ ROTA_GUARDED_BY(mu_) = false;
  // Host key scans (Add, Pin). Reset first by the destructor: its threads use the rest.
  std::unique_ptr<WorkerPool> pool_;
};

}  // namespace rota::server
