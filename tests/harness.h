#pragma once
// Integration-test harness: real `rota` processes (server, agents with the
// simulated NVML library) on loopback, in a temporary directory.

#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "api/codec.h"
#include "common/status.h"
#include "net/http_client.h"

namespace rota::testing {

// A temporary directory, removed (recursively) on destruction after every
// process that uses it is killed (KillProcessesUsing): the servers, agents and
// task shims started with paths in it, what a ServerProcess started (it runs in
// its data directory), the tasks the agents started (their environment names
// their task directory), and all their descendants.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Kills (SIGKILL) every process other than this one that mentions one of
// `marks` (e.g. a temporary directory) in its command line, environment or
// working directory, every process in the cgroups of agent tasks whose state
// directory (<dir>/tasks/<id>/spec.json) lies under one of `marks`, and all
// their descendants. They are stopped (SIGSTOP) first, so none escapes by
// forking meanwhile, whatever Unix user or session it runs in. Reaps those that
// are this process's children, waits (up to 10 s) until the others are gone and
// removes the task cgroups left behind. Names each killed process on stderr.
// Returns how many were killed.
int KillProcessesUsing(const std::vector<std::string>& marks);

// Kills every descendant of this process, as KillProcessesUsing does. The
// harness calls it after every test (a gtest listener it installs), so no
// process a test started directly outlives it.
int KillDescendants();

// True when every thread of `pid` is stopped (SIGSTOP took effect).
bool ProcessStopped(pid_t pid);

// Paths of the built artefacts (set by CMake).
std::string RotaBinary();
std::string SimNvmlLibrary();

// True when ROTA_REQUIRE_ROOT_TESTS=1: tests that need root must run, not
// skip (scripts/test.sh sets it when it runs as root).
bool RootTestsRequired();

// In a TEST body: skips the test when not running as root, or fails it when
// RootTestsRequired(). `why` says what needs root.
#define ROTA_SKIP_UNLESS_ROOT(why)                                                     \
  do {                                                                                 \
    if (::geteuid() != 0) {                                                            \
      if (::rota::testing::RootTestsRequired()) {                                      \
        FAIL() << "needs root (" << (why) << ") and ROTA_REQUIRE_ROOT_TESTS=1 is set"; \
      }                                                                                \
      GTEST_SKIP() << "needs root (" << (why) << ")";                                  \
    }                                                                                  \
  } while (0)

// Polls `pred` every 50 ms until it is true or `timeout` passes.
bool WaitFor(const std::function<bool()>& pred, std::chrono::milliseconds timeout);

// A child process; killed (SIGKILL) with all its descendants and reaped on
// destruction if still running.
class Child {
 public:
  Child() = default;
  Child(std::vector<std::string> argv, std::map<std::string, std::string> env, std::string log_path);
  ~Child();
  Child(Child&& o) noexcept;
  Child& operator=(Child&& o) noexcept;

  Status Start();
  pid_t pid() const { return pid_; }
  bool running();
  void Signal(int sig);
  // SIGTERM and wait (SIGKILL after grace); returns the wait status.
  int Stop(int grace_ms = 5000);
  void Kill();  // SIGKILL and reap; its descendants live on, as after a crash
  void KillTree();  // SIGKILL it and all its descendants (frozen first), and reap
  std::string Log() const;

 private:
  std::vector<std::string> argv_;
  std::map<std::string, std::string> env_;
  std::string log_path_;
  pid_t pid_ = 0;
};

// `rota server` on 127.0.0.1 with its own data dir and join token. On
// destruction the server is killed, and with it the tasks it started on ssh
// nodes (they run in the nodes' home directories, under its cluster id).
class ServerProcess {
 public:
  explicit ServerProcess(std::string data_dir, uint16_t port = 0);
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  Status Start();  // waits until /readyz answers 200
  // Starts the process and waits only until it listens (server.url written): a server of
  // several on PostgreSQL started while none leads (its /readyz waits for a leader, and
  // admin_token() stays as it was).
  Status Launch();
  std::string url() const { return url_; }
  uint16_t port() const { return port_; }
  const std::string& token() const { return token_; }
  Child& child() { return child_; }
  const std::string& data_dir() const { return data_dir_; }
  // The generated CA of a server serving TLS (url() is https://), else "". Start() makes
  // this process trust it (net::SetClientTls), CliEnv() passes it (ROTA_CA_FILE), and
  // AgentProcess gives it to the agent (--ca-file) unless told another trust.
  std::string ca_file() const {
    return url_.rfind("https://", 0) == 0 ? data_dir_ + "/tls/ca.pem" : "";
  }

  // GET url() + path as JSON (as the admin); fails the Result on transport
  // errors or non-2xx.
  Result<api::Json> GetJson(const std::string& path) const;
  // A request as the admin.
  Result<net::ClientResponse> Call(const std::string& method, const std::string& path,
                                   const std::string& body = "") const;
  // A request with `token` ("" = anonymous).
  Result<net::ClientResponse> CallAs(const std::string& token, const std::string& method,
                                     const std::string& path, const std::string& body = "") const;
  // Creates a user (role "user" or "admin") with `extra` fields (email,
  // unix_user, ...) merged into the request and returns a session token for it.
  Result<std::string> CreateUser(const std::string& username, const std::string& role = "user",
                                 const api::Json& extra = api::Json::object()) const;
  // Signs in and returns a session token.
  Result<std::string> Login(const std::string& username, const std::string& password) const;
  // The first admin's session token (set by Start).
  const std::string& admin_token() const { return admin_token_; }
  static constexpr const char* kAdminPassword = "admin-test-password";
  static constexpr const char* kUserPassword = "user-test-password";
  // {ROTA_SERVER, ROTA_TOKEN (admin)} for RunCli.
  std::map<std::string, std::string> CliEnv() const;
  // Extra environment for the server process (set before Start).
  void SetEnv(const std::string& key, const std::string& value) { extra_env_[key] = value; }
  // The address the server listens on (default 127.0.0.1; set before Start).
  void SetListenHost(const std::string& host) { listen_host_ = host; }

 private:
  std::string data_dir_;
  uint16_t port_;
  std::string url_;
  std::string token_ = "test-join-token-0123456789";
  std::string admin_token_;
  std::map<std::string, std::string> extra_env_;
  std::string listen_host_ = "127.0.0.1";
  Child child_;
};

struct SimGpuNode {
  std::string name;
  int gpus = 2;
  std::string model = "NVIDIA A100-SXM4-80GB";
  std::vector<std::string> models;  // per GPU index when they differ (else `model`)
  int memory_mib = 81920;
  bool default_node = false;
};

// `rota agent` with the simulated NVML library configured for `node`.
class AgentProcess {
 public:
  AgentProcess(const std::string& base_dir, SimGpuNode node, const ServerProcess& server,
               std::vector<std::string> extra_args = {});
  Status Start();
  Child& child() { return child_; }
  const std::string& sim_config_path() const { return sim_config_; }
  const std::string& state_dir() const { return state_dir_; }
  const std::string& node_name() const { return node_.name; }
  // Rewrites the simulated NVML config with `faults` ({"2": "gpu_lost"}).
  Status SetFaults(const api::Json& faults);
  // Runs the agent inside network namespace `netns` (ip netns exec; same pid),
  // dialing `server_url`. Before Start.
  void UseNetns(const std::string& netns, const std::string& server_url);
  // Dials `server_urls` (--server URL1,URL2,...) instead of the server's URL. Before Start.
  void SetServers(const std::string& server_urls);
  // Extra environment for the agent (NOTIFY_SOCKET, ...). Before Start.
  void SetEnv(const std::string& key, const std::string& value);
  // Runs `rota agent --config <path>` with only the simulated NVML, the state directory and
  // the interval as flags: the server, token and name come from the file. Before Start.
  void UseConfigFile(const std::string& path);

 private:
  SimGpuNode node_;
  std::string state_dir_;
  std::string sim_config_;
  std::vector<std::string> argv_;
  std::map<std::string, std::string> env_;
  std::string log_path_;
  Child child_;
};

// Starts `rota agent` for node `node` with 2 simulated GPUs (not the default
// node: processes need ROTA_SIM_NODE), state in <dir>/agent-<node>, sampling
// every 0.5 s, against `server_url` with join token `token`.
Result<Child> StartSimAgent(const std::string& dir, const std::string& node,
                            const std::string& server_url, const std::string& token);

// Polls GET /api/v1/jobs/{id} (as the admin) until the job ended (succeeded,
// failed or cancelled) or `timeout` passed; the last answer (with events).
api::Json WaitJobEnd(const ServerProcess& server, int64_t id, std::chrono::milliseconds timeout);

// Runs the rota CLI with args and env, returns (exit status, stdout).
struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
// `input` is fed to its stdin.
CliResult RunCli(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {},
                 const std::string& input = "");

// The node's JSON from the server, or null when unknown.
api::Json NodeJson(const ServerProcess& server, const std::string& name);
bool NodeReady(const ServerProcess& server, const std::string& name);
// The row of GPU `index` of `node` in a GET /api/v1/gpus answer, or null.
api::Json FindGpu(const api::Json& gpus, const std::string& node, int index);

}  // namespace rota::testing
