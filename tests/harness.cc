#include "tests/harness.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <thread>

#include "common/file_util.h"
#include "common/process.h"
#include "common/strings.h"

namespace rota::testing {
namespace {

// A process as /proc/<pid>/stat shows it.
struct ProcEntry {
  pid_t pid = 0;
  pid_t ppid = 0;
  char state = '?';  // 'Z': a zombie
};

std::string ProcPath(pid_t pid, const char* file) {
  return "/proc/" + std::to_string(pid) + "/" + file;
}

// The processes alive now (those that vanish while being read are left out).
std::vector<ProcEntry> ListProcesses() {
  std::vector<ProcEntry> out;
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    ProcEntry p;
    p.pid = static_cast<pid_t>(std::atol(e->d_name));
    auto stat = ReadFile(ProcPath(p.pid, "stat"));
    if (!stat.ok()) continue;
    // "pid (comm) S ppid ...": comm may hold spaces and parentheses.
    const size_t close = stat->rfind(')');
    if (close == std::string::npos || close + 4 > stat->size()) continue;
    p.state = (*stat)[close + 2];
    p.ppid = static_cast<pid_t>(std::atol(stat->c_str() + close + 4));
    out.push_back(p);
  }
  ::closedir(d);
  return out;
}

// True when `text` contains `mark` not followed by a character that could
// continue a file name (so /tmp/rota_it_ab does not match /tmp/rota_it_abc).
bool ContainsMark(const std::string& text, const std::string& mark) {
  for (size_t at = text.find(mark); at != std::string::npos; at = text.find(mark, at + 1)) {
    const size_t end = at + mark.size();
    if (end == text.size() || mark.back() == '/') return true;
    const char c = text[end];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return true;
  }
  return false;
}

// True when `pid`'s command line, environment or working directory mentions a mark.
bool Mentions(pid_t pid, const std::vector<std::string>& marks) {
  std::string text;
  for (const char* file : {"cmdline", "environ"}) {
    auto t = ReadFile(ProcPath(pid, file));
    if (t.ok()) text += *t + '\0';
  }
  char cwd[4096];
  const ssize_t n = ::readlink(ProcPath(pid, "cwd").c_str(), cwd, sizeof cwd);
  if (n > 0) text.append(cwd, static_cast<size_t>(n));
  for (const std::string& m : marks) {
    if (!m.empty() && ContainsMark(text, m)) return true;
  }
  return false;
}

// The cgroups of the agent tasks whose state lies under `dir`
// (<state>/tasks/<id>/spec.json names them).
std::vector<std::string> TaskCgroupsUnder(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.filename() != "spec.json" || p.parent_path().parent_path().filename() != "tasks")
      continue;
    auto text = ReadFile(p.string());
    auto spec = text.ok() ? api::ParseJson(*text) : Result<api::Json>(text.status());
    if (!spec.ok() || !spec->contains("cgroups") || !(*spec)["cgroups"].is_array()) continue;
    for (const auto& c : (*spec)["cgroups"]) {
      if (c.is_string()) out.push_back(c.get<std::string>());
    }
  }
  return out;
}

std::vector<pid_t> CgroupMembers(const std::string& cgroup) {
  std::vector<pid_t> out;
  auto text = ReadFile(cgroup + "/cgroup.procs");
  if (!text.ok()) return out;
  for (const std::string& line : Split(*text, '\n')) {
    if (!line.empty()) out.push_back(static_cast<pid_t>(std::atol(line.c_str())));
  }
  return out;
}

// Alive and not a zombie.
bool Running(pid_t pid) {
  auto stat = ReadFile(ProcPath(pid, "stat"));
  if (!stat.ok()) return false;
  const size_t close = stat->rfind(')');
  return close != std::string::npos && close + 2 < stat->size() && (*stat)[close + 2] != 'Z';
}

// Stops every process `belongs` selects and their descendants, until a pass
// finds no new one, then kills and reaps them (see KillProcessesUsing). With
// `why` set, names each on stderr.
int KillSelected(const std::function<bool(const ProcEntry&)>& belongs,
                 const std::string& why = "") {
  const pid_t self = ::getpid();
  std::set<pid_t> caught;
  for (int pass = 0; pass < 100; ++pass) {
    const std::vector<ProcEntry> procs = ListProcesses();
    std::set<pid_t> take;
    for (const ProcEntry& p : procs) {
      if (p.pid != self && (caught.count(p.pid) != 0 || belongs(p))) take.insert(p.pid);
    }
    // Descendants of what is taken, to a fixed point (parents may be listed after children).
    for (bool grew = true; grew;) {
      grew = false;
      for (const ProcEntry& p : procs) {
        if (p.pid != self && take.count(p.pid) == 0 && take.count(p.ppid) != 0) {
          take.insert(p.pid);
          grew = true;
        }
      }
    }
    bool fresh = false;
    for (pid_t pid : take) {
      if (caught.insert(pid).second) {
        fresh = true;
        ::kill(pid, SIGSTOP);
      }
    }
    if (!fresh) break;
  }
  for (pid_t pid : caught) {
    auto cmd = why.empty() ? Result<std::string>("") : ReadFile(ProcPath(pid, "cmdline"));
    std::string line = cmd.ok() ? *cmd : "";
    std::replace(line.begin(), line.end(), '\0', ' ');
    if (!line.empty()) {
      std::fprintf(stderr, "[harness] %s: killing pid %d: %s\n", why.c_str(), pid, line.c_str());
    }
    ::kill(pid, SIGKILL);
  }
  // Our children are reaped here; the others by their parents or init.
  WaitFor(
      [&] {
        bool left = false;
        for (pid_t pid : caught) {
          ::waitpid(pid, nullptr, WNOHANG);
          left = left || Running(pid);
        }
        return !left;
      },
      std::chrono::seconds(10));
  return static_cast<int>(caught.size());
}

// Kills what a test leaves running when it ends.
class LeftoverKiller : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo&) override { KillDescendants(); }
};

// Installed before main() runs the tests: this file is in every integration test.
[[maybe_unused]] const bool kLeftoverKillerInstalled = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new LeftoverKiller);
  return true;
}();

}  // namespace

int KillProcessesUsing(const std::vector<std::string>& marks) {
  std::vector<std::string> cgroups;
  for (const std::string& m : marks) {
    for (std::string& c : TaskCgroupsUnder(m)) cgroups.push_back(std::move(c));
  }
  std::set<pid_t> in_cgroups;
  for (const std::string& c : cgroups) {
    for (pid_t pid : CgroupMembers(c)) in_cgroups.insert(pid);
  }
  const int killed = KillSelected(
      [&](const ProcEntry& p) {
        return p.state != 'Z' && (in_cgroups.count(p.pid) != 0 || Mentions(p.pid, marks));
      },
      "processes using " + Join(marks, ", "));
  // A task shim killed before its task ended leaves its cgroups behind.
  for (const std::string& c : cgroups) {
    WaitFor([&] { return ::rmdir(c.c_str()) == 0 || errno != EBUSY; }, std::chrono::seconds(5));
  }
  return killed;
}

int KillDescendants() {
  const pid_t self = ::getpid();
  return KillSelected([&](const ProcEntry& p) { return p.ppid == self; },
                      "process left by the test");
}

bool ProcessStopped(pid_t pid) {
  DIR* d = ::opendir(ProcPath(pid, "task").c_str());
  if (d == nullptr) return false;
  bool any = false, all = true;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    auto stat = ReadFile(ProcPath(pid, "task/") + e->d_name + "/stat");
    if (!stat.ok()) continue;
    const size_t close = stat->rfind(')');
    const char state =
        close != std::string::npos && close + 2 < stat->size() ? (*stat)[close + 2] : '?';
    any = true;
    all = all && (state == 'T' || state == 't');
  }
  ::closedir(d);
  return any && all;
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/rota_it_XXXXXX";
  path_ = ::mkdtemp(tmpl);
}

TempDir::~TempDir() {
  KillProcessesUsing({path_});
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string RotaBinary() { return ROTA_BINARY; }
std::string SimNvmlLibrary() { return ROTA_SIM_NVML_LIB; }

bool RootTestsRequired() {
  const char* v = std::getenv("ROTA_REQUIRE_ROOT_TESTS");
  return v != nullptr && std::string(v) == "1";
}

bool WaitFor(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (pred()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Child::Child(std::vector<std::string> argv, std::map<std::string, std::string> env,
             std::string log_path)
    : argv_(std::move(argv)), env_(std::move(env)), log_path_(std::move(log_path)) {}

Child::~Child() { KillTree(); }

Child::Child(Child&& o) noexcept { *this = std::move(o); }

Child& Child::operator=(Child&& o) noexcept {
  if (this != &o) {
    KillTree();
    argv_ = std::move(o.argv_);
    env_ = std::move(o.env_);
    log_path_ = std::move(o.log_path_);
    pid_ = o.pid_;
    o.pid_ = 0;
  }
  return *this;
}

Status Child::Start() {
  SpawnOptions opts;
  opts.env = env_;
  opts.output_path = log_path_;
  opts.die_with_parent = true;  // never outlive a crashed test
  ASSIGN_OR_RETURN(pid_, SpawnProcess(argv_, opts));
  return Status::Ok();
}

bool Child::running() {
  if (pid_ <= 0) return false;
  int status;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    pid_ = 0;
    return false;
  }
  return true;
}

void Child::Signal(int sig) {
  if (pid_ > 0) ::kill(pid_, sig);
}

int Child::Stop(int grace_ms) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  auto st = WaitProcess(pid_, grace_ms);
  if (!st.ok()) {
    ::kill(pid_, SIGKILL);
    st = WaitProcess(pid_, -1);
  }
  pid_ = 0;
  return st.ok() ? *st : -1;
}

void Child::Kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  (void)WaitProcess(pid_, -1);
  pid_ = 0;
}

void Child::KillTree() {
  if (pid_ <= 0) return;
  const pid_t pid = pid_;
  KillSelected([pid](const ProcEntry& p) { return p.pid == pid; });
  (void)WaitProcess(pid_, -1);  // when KillSelected did not reap it already
  pid_ = 0;
}

std::string Child::Log() const {
  auto text = ReadFile(log_path_);
  return text.ok() ? *text : "";
}

ServerProcess::ServerProcess(std::string data_dir, uint16_t port)
    : data_dir_(std::move(data_dir)), port_(port) {}

ServerProcess::~ServerProcess() {
  child_.KillTree();
  // Tasks on ssh nodes live in ~/.rota/<cluster id>/ of their Unix users.
  if (auto id = ReadFile(data_dir_ + "/ssh/cluster-id"); id.ok() && !Trim(*id).empty()) {
    KillProcessesUsing({"/.rota/" + std::string(Trim(*id)) + "/"});
  }
}

Status ServerProcess::Start() {
  RETURN_IF_ERROR(Launch());
  bool ready = WaitFor(
      [&] {
        auto r = net::HttpCall("GET", url_ + "/readyz", "", {}, 2000);
        return r.ok() && r->status == 200;
      },
      std::chrono::seconds(20));
  if (!ready) return Status::Unavailable("server not ready; log:\n" + child_.Log());
  ASSIGN_OR_RETURN(admin_token_, Login("admin", kAdminPassword));
  return Status::Ok();
}

Status ServerProcess::Launch() {
  ::unlink((data_dir_ + "/server.url").c_str());
  std::map<std::string, std::string> env = {{"ROTA_RETENTION_INTERVAL", "1m"},
                                            {"ROTA_PASSWORD_HASH_COST", "min"},
                                            {"ROTA_ADMIN_PASSWORD", kAdminPassword}};
  for (const auto& [k, v] : extra_env_) env[k] = v;
  // Run in the data directory: what the server starts inherits it as working
  // directory, so KillProcessesUsing finds even what hides its command line
  // (ssh control masters rename themselves "ssh: <socket> [mux]").
  RETURN_IF_ERROR(MakeDirs(data_dir_, 0700));
  child_ = Child(
      {"/usr/bin/env", "-C", data_dir_, RotaBinary(), "server", "--listen",
       listen_host_ + ":" + std::to_string(port_), "--data-dir", data_dir_, "--join-token", token_},
      env, data_dir_ + ".server.log");
  RETURN_IF_ERROR(child_.Start());
  std::string url;
  bool up = WaitFor(
      [&] {
        auto text = ReadFile(data_dir_ + "/server.url");
        if (!text.ok()) return false;
        url = std::string(Trim(*text));
        return !url.empty();
      },
      std::chrono::seconds(20));
  if (!up) return Status::Unavailable("server did not start; log:\n" + child_.Log());
  url_ = url;
  port_ = static_cast<uint16_t>(std::stoi(url_.substr(url_.rfind(':') + 1)));
  // A server serving TLS (tls on, or a listen address away from loopback): this process
  // trusts its generated CA from now on.
  if (!ca_file().empty()) net::SetClientTls({.ca_file = ca_file(), .pin = ""});
  return Status::Ok();
}

Result<net::ClientResponse> ServerProcess::Call(const std::string& method, const std::string& path,
                                                const std::string& body) const {
  return CallAs(admin_token_, method, path, body);
}

Result<net::ClientResponse> ServerProcess::CallAs(const std::string& token,
                                                  const std::string& method,
                                                  const std::string& path,
                                                  const std::string& body) const {
  std::vector<std::string> headers = {"Content-Type: application/json"};
  if (!token.empty()) headers.push_back("Authorization: Bearer " + token);
  return net::HttpCall(method, url_ + path, body, headers, 10000);
}

Result<std::string> ServerProcess::Login(const std::string& username,
                                         const std::string& password) const {
  api::Json body{{"username", username}, {"password", password}};
  ASSIGN_OR_RETURN(auto resp, CallAs("", "POST", "/api/v1/auth/login", body.dump()));
  if (resp.status != 200) {
    return Status::Unauthenticated("login as " + username + " -> " + std::to_string(resp.status) +
                                   ": " + resp.body);
  }
  ASSIGN_OR_RETURN(api::Json j, api::ParseJson(resp.body));
  return j.value("token", "");
}

Result<std::string> ServerProcess::CreateUser(const std::string& username, const std::string& role,
                                              const api::Json& extra) const {
  api::Json body{{"username", username},
                 {"role", role},
                 {"password", kUserPassword},
                 {"email", username + "@example.test"}};
  for (const auto& [k, v] : extra.items()) body[k] = v;
  ASSIGN_OR_RETURN(auto resp, Call("POST", "/api/v1/users", body.dump()));
  if (resp.status != 201) {
    return Status::Internal("create user " + username + " -> " + std::to_string(resp.status) +
                            ": " + resp.body);
  }
  return Login(username, kUserPassword);
}

std::map<std::string, std::string> ServerProcess::CliEnv() const {
  std::map<std::string, std::string> env = {{"ROTA_SERVER", url_}, {"ROTA_TOKEN", admin_token_}};
  if (!ca_file().empty()) env["ROTA_CA_FILE"] = ca_file();
  return env;
}

Result<api::Json> ServerProcess::GetJson(const std::string& path) const {
  ASSIGN_OR_RETURN(auto resp, Call("GET", path));
  if (resp.status < 200 || resp.status >= 300) {
    return Status::Internal("GET " + path + " -> " + std::to_string(resp.status) + ": " +
                            resp.body);
  }
  return api::ParseJson(resp.body);
}

AgentProcess::AgentProcess(const std::string& base_dir, SimGpuNode node,
                           const ServerProcess& server, std::vector<std::string> extra_args)
    : node_(std::move(node)) {
  state_dir_ = base_dir + "/agent-" + node_.name;
  sim_config_ = state_dir_ + "/sim-nvml.json";
  argv_ = {RotaBinary(),   "agent",  "--server",   server.url(),    "--token",
           server.token(), "--name", node_.name,   "--state-dir",   state_dir_,
           "--interval",   "0.5s",   "--nvml-lib", SimNvmlLibrary()};
  const bool trust_given = std::any_of(extra_args.begin(), extra_args.end(), [](const std::string& a) {
    return a == "--server-pin" || a == "--ca-file";
  });
  if (!server.ca_file().empty() && !trust_given) {
    argv_.insert(argv_.end(), {"--ca-file", server.ca_file()});
  }
  for (auto& a : extra_args) argv_.push_back(std::move(a));
  log_path_ = base_dir + "/agent-" + node_.name + ".log";
  env_["ROTA_SIM_NVML_CONFIG"] = sim_config_;
  child_ = Child(argv_, env_, log_path_);
}

// Each of these changes argv_ or env_ and makes the child again from both, so
// they combine in any order (a netns, other servers and extra variables).
void AgentProcess::UseNetns(const std::string& netns, const std::string& server_url) {
  std::vector<std::string> argv = {"/usr/sbin/ip", "netns", "exec", netns};
  for (size_t i = 0; i < argv_.size(); ++i) {
    argv.push_back(argv_[i]);
    if (argv_[i] == "--server" && i + 1 < argv_.size()) argv.push_back(server_url), ++i;
  }
  argv_ = std::move(argv);
  child_ = Child(argv_, env_, log_path_);
}

void AgentProcess::SetServers(const std::string& server_urls) {
  for (size_t i = 0; i + 1 < argv_.size(); ++i) {
    if (argv_[i] == "--server") argv_[i + 1] = server_urls;
  }
  child_ = Child(argv_, env_, log_path_);
}

void AgentProcess::SetEnv(const std::string& key, const std::string& value) {
  env_[key] = value;
  child_ = Child(argv_, env_, log_path_);
}

void AgentProcess::UseConfigFile(const std::string& path) {
  argv_ = {RotaBinary(), "agent", "--config", path, "--state-dir", state_dir_,
           "--interval", "0.5s", "--nvml-lib", SimNvmlLibrary()};
  child_ = Child(argv_, env_, log_path_);
}

Status AgentProcess::SetFaults(const api::Json& faults) {
  api::Json gpus = api::Json::array();
  for (int i = 0; i < node_.gpus; ++i) {
    const size_t k = static_cast<size_t>(i);
    gpus.push_back({{"model", k < node_.models.size() ? node_.models[k] : node_.model},
                    {"memory_mib", node_.memory_mib},
                    {"power_limit_w", 400},
                    {"idle_power_w", 50}});
  }
  api::Json config{{"node", node_.name},
                   {"default_node", node_.default_node},
                   {"tasks_under", state_dir_},  // tests side by side share node names
                   {"gpus", gpus},
                   {"faults", faults}};
  return WriteFileAtomic(sim_config_, config.dump(2));
}

Status AgentProcess::Start() {
  RETURN_IF_ERROR(MakeDirs(state_dir_, 0700));
  if (::access(sim_config_.c_str(), R_OK) != 0) RETURN_IF_ERROR(SetFaults(api::Json::object()));
  return child_.Start();
}

CliResult RunCli(const std::vector<std::string>& args,
                 const std::map<std::string, std::string>& env, const std::string& input) {
  TempDir tmp;
  std::vector<std::string> argv = {RotaBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  SpawnOptions opts;
  opts.env = env;
  std::string out_path = tmp.path() + "/out", err_path = tmp.path() + "/err";
  opts.output_path = out_path;
  opts.error_path = err_path;
  opts.input_path = tmp.path() + "/in";
  if (!WriteFileAtomic(opts.input_path, input).ok()) return CliResult{-1, "", "cannot write stdin"};
  opts.die_with_parent = true;
  auto spawned = SpawnProcess(argv, opts);
  if (!spawned.ok()) return CliResult{-1, "", spawned.status().message()};
  pid_t pid = *spawned;
  CliResult r;
  auto st = WaitProcess(pid, 60000);
  if (st.ok() && WIFEXITED(*st)) r.exit_code = WEXITSTATUS(*st);
  auto out = ReadFile(out_path);
  auto err = ReadFile(err_path);
  r.out = out.ok() ? *out : "";
  r.err = err.ok() ? *err : "";
  return r;
}

api::Json NodeJson(const ServerProcess& server, const std::string& name) {
  auto j = server.GetJson("/api/v1/nodes/" + name);
  return j.ok() ? *j : api::Json();
}

bool NodeReady(const ServerProcess& server, const std::string& name) {
  api::Json n = NodeJson(server, name);
  return n.is_object() && n.value("state", "") == "ready";
}

api::Json FindGpu(const api::Json& gpus, const std::string& node, int index) {
  for (const auto& g : gpus) {
    if (g["node"] == node && g["index"] == index) return g;
  }
  return api::Json();
}

Result<Child> StartSimAgent(const std::string& dir, const std::string& node,
                            const std::string& server_url, const std::string& token) {
  std::string state = dir + "/agent-" + node;
  RETURN_IF_ERROR(MakeDirs(state, 0700));
  api::Json gpus = api::Json::array();
  for (int i = 0; i < 2; ++i) {
    gpus.push_back({{"model", "NVIDIA A100-SXM4-80GB"},
                    {"memory_mib", 81920},
                    {"power_limit_w", 400},
                    {"idle_power_w", 50}});
  }
  api::Json sim{
      {"node", node},   {"default_node", false},           {"tasks_under", state},
      {"gpus", gpus},   {"faults", api::Json::object()}};
  RETURN_IF_ERROR(WriteFileAtomic(state + "/sim-nvml.json", sim.dump(2)));
  // --enforcement-min-uid 0: the processes these tests have signalled are their own,
  // root's in CI (by default an agent never signals a uid below 1000).
  Child agent({RotaBinary(), "agent", "--server", server_url, "--token", token, "--name", node,
               "--state-dir", state, "--interval", "0.5s", "--nvml-lib", SimNvmlLibrary(),
               "--enforcement-min-uid", "0"},
              {{"ROTA_SIM_NVML_CONFIG", state + "/sim-nvml.json"}}, state + ".log");
  RETURN_IF_ERROR(agent.Start());
  return agent;
}

api::Json WaitJobEnd(const ServerProcess& server, int64_t id, std::chrono::milliseconds timeout) {
  api::Json job;
  WaitFor(
      [&] {
        auto j = server.GetJson("/api/v1/jobs/" + std::to_string(id));
        if (!j.ok()) return false;
        job = *j;
        const std::string s = job.value("state", "");
        return s == "succeeded" || s == "failed" || s == "cancelled";
      },
      timeout);
  return job;
}

}  // namespace rota::testing
