// Job launch benchmark: drives a running rota server (e.g. `rota dev`) through the
// public REST API with a bearer token and measures
//   - submit -> "running" latency of a 1-task job and of an 8-task gang, one job at a
//     time on an idle cluster (POST /api/v1/jobs, then GET /api/v1/jobs/ID every
//     --poll-ms until the state is running). Each task runs `date +%s.%N` first, so
//     the latency to the task process's own start is reported too (read back through
//     the logs API), the same measure the Slurm side of bench/run_jobs.sh uses;
//   - throughput of --jobs one-task jobs (`date +%s.%N`, a `true` that says when it
//     started) submitted by --clients concurrent HTTP clients as fast as the server
//     answers, run to completion: submissions/s, starts/s (task start times from their
//     logs), finishes/s (the time no job is left pending, starting or running).
// Rates are N / (last event - first submission), so starts and finishes include the
// submission phase: "run 1,000 jobs to completion".
//   - with --queued N (0: skipped), a full cluster with N one-GPU jobs queued behind it:
//     every GPU gets an "occupant" job, then N jobs are submitted by --clients clients
//     (submit latency while the queue grows); GET /api/v1/jobs, GET /api/v1/queue and GET /api/v1/queues
//     latency with the queue full (until the response is received; parsing it is not
//     timed); then --fills of the occupants end, one at a time, when the bench writes to
//     the FIFO each waits on, and the time from an occupant's last output line (its
//     process ends right after) to the first line of the job that took its GPU is the
//     fill latency. Every
//     job prints `date +%s.%N`; occupants and queued jobs then sleep for an hour and are
//     all cancelled at the end.
//
// Usage: rota_job_launch --server http://127.0.0.1:PORT --token TOKEN
//            [--unix-user USER] [--latency-jobs 30] [--gang-tasks 8] [--jobs 1000]
//            [--clients 4] [--gpus-per-job 0] [--poll-ms 5] [--hold-ms 500] [--keep-alive 1]
//            [--queued 0] [--fills 10]
// --keep-alive 1 (default): each client thread keeps one connection open, as API clients
// and SDKs do; 0: a new connection for every request.
// With --unix-user, TOKEN must be an admin's: a user `jobbench-XXXX` running its tasks
// as USER is created and used (tasks never run as root; as root pass `nobody`).
// Prints a table on stderr and one JSON object on stdout. Loopback servers only.
//
// Not thread-safe beyond what it does itself; one run per process.

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <string>
#include <thread>
#include <vector>

#include "api/codec.h"
#include "common/file_util.h"
#include "common/status.h"
#include "net/http_client.h"

namespace {

using rota::Result;
using rota::Status;
using rota::api::Json;
using Steady = std::chrono::steady_clock;

struct Options {
  std::string server;
  std::string token;
  std::string unix_user;
  int latency_jobs = 30;
  int gang_tasks = 8;
  int jobs = 1000;
  int clients = 4;
  int gpus_per_job = 0;
  int poll_ms = 5;
  int hold_ms = 500;
  int timeout_s = 600;
  int keep_alive = 1;  // 1: one connection per client thread; 0: one per request
  int queued = 0;
  int fills = 10;
};

double NowUnixS() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(std::lround(p * static_cast<double>(v.size() - 1)));
  return v[i];
}

bool IsFinal(const std::string& state) {
  return state == "succeeded" || state == "failed" || state == "cancelled";
}

// Parses a positive integer flag value in [lo, hi]; names the flag on error.
Result<int> IntFlag(const std::string& flag, const std::string& v, int lo, int hi) {
  bool ok = !v.empty() && v.size() <= 9;
  for (char c : v) ok = ok && c >= '0' && c <= '9';
  if (!ok || std::stoi(v) < lo || std::stoi(v) > hi) {
    return Status::InvalidArgument(flag + ": '" + v + "' must be a whole number in " +
                                   std::to_string(lo) + ".." + std::to_string(hi));
  }
  return std::stoi(v);
}

Result<Options> ParseFlags(int argc, char** argv) {
  Options o;
  struct IntFlagSpec {
    int* value;
    int lo, hi;
  };
  const std::map<std::string, IntFlagSpec> ints = {{"--latency-jobs", {&o.latency_jobs, 0, 10000}},
                                                   {"--gang-tasks", {&o.gang_tasks, 0, 64}},
                                                   {"--jobs", {&o.jobs, 0, 100000}},
                                                   {"--clients", {&o.clients, 1, 64}},
                                                   {"--gpus-per-job", {&o.gpus_per_job, 0, 8}},
                                                   {"--poll-ms", {&o.poll_ms, 1, 1000}},
                                                   {"--hold-ms", {&o.hold_ms, 0, 60000}},
                                                   {"--timeout-s", {&o.timeout_s, 1, 86400}},
                                                   {"--keep-alive", {&o.keep_alive, 0, 1}},
                                                   {"--queued", {&o.queued, 0, 100000}},
                                                   {"--fills", {&o.fills, 1, 100}}};
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "-h" || k == "--help") return Status::InvalidArgument("");
    if (i + 1 >= argc) return Status::InvalidArgument(k + ": needs a value");
    const std::string v = argv[++i];
    if (auto it = ints.find(k); it != ints.end()) {
      ASSIGN_OR_RETURN(*it->second.value, IntFlag(k, v, it->second.lo, it->second.hi));
    } else if (k == "--server") {
      o.server = v;
    } else if (k == "--token") {
      o.token = v;
    } else if (k == "--unix-user") {
      o.unix_user = v;
    } else {
      return Status::InvalidArgument("unknown flag " + k);
    }
  }
  if (o.server.empty() || o.token.empty())
    return Status::InvalidArgument("--server and --token are required");
  while (!o.server.empty() && o.server.back() == '/') o.server.pop_back();
  // Benchmarks never send traffic off this machine.
  bool loopback = false;
  for (const char* p : {"http://127.", "http://localhost:", "http://[::1]:"}) {
    loopback = loopback || o.server.rfind(p, 0) == 0;
  }
  if (!loopback) {
    return Status::InvalidArgument("--server '" + o.server +
                                   "': must be a loopback http:// URL "
                                   "(http://127.0.0.1:PORT)");
  }
  for (char c : o.unix_user) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') {
      return Status::InvalidArgument("--unix-user '" + o.unix_user + "': not a user name");
    }
  }
  return o;
}

// The REST API with one bearer token. Thread-safe (HttpCall is).
class Api {
 public:
  Api(std::string server, std::string token, bool keep_alive)
      : server_(std::move(server)), token_(std::move(token)), keep_alive_(keep_alive) {}

  // Calls and parses the answer; an unexpected HTTP status is an error naming the call.
  // With keep-alive each thread keeps one connection open (as API clients do); else
  // every call opens its own.
  Result<Json> Call(const std::string& method, const std::string& path, const std::string& body,
                    int want_status) const {
    ASSIGN_OR_RETURN(std::string text, Fetch(method, path, body, want_status));
    return rota::api::ParseJson(text);
  }
  Result<Json> Get(const std::string& path) const { return Call("GET", path, "", 200); }
  // The response body unparsed: what a read costs the server and the wire, without
  // this client's JSON parsing (a full queue's body is megabytes).
  Result<std::string> Fetch(const std::string& method, const std::string& path, const std::string& body,
                            int want_status) const {
    std::vector<std::string> headers = {"Authorization: Bearer " + token_};
    if (!body.empty()) headers.push_back("Content-Type: application/json");
    thread_local rota::net::HttpConnection connection;
    ASSIGN_OR_RETURN(auto r, keep_alive_
                                 ? connection.Call(method, server_ + path, body, headers, 30000)
                                 : rota::net::HttpCall(method, server_ + path, body, headers, 30000));
    if (r.status != want_status) {
      return Status::Internal(method + " " + path + " -> " + std::to_string(r.status) + ": " +
                              r.body);
    }
    return std::move(r.body);
  }
  const std::string& server() const { return server_; }

 private:
  std::string server_, token_;
  bool keep_alive_;
};

// Creates a bench user whose tasks run as `unix_user` and signs in as it.
Result<std::string> BenchUserToken(const Api& admin, const std::string& unix_user) {
  ASSIGN_OR_RETURN(std::string salt, rota::RandomHex(4));
  ASSIGN_OR_RETURN(std::string password, rota::RandomHex(12));
  const std::string name = "jobbench-" + salt;
  Json user{{"username", name},
            {"role", "user"},
            {"password", password},
            {"email", name + "@localhost"},
            {"unix_user", unix_user}};
  RETURN_IF_ERROR(admin.Call("POST", "/api/v1/users", user.dump(), 201).status());
  ASSIGN_OR_RETURN(Json login,
                   admin.Call("POST", "/api/v1/auth/login",
                              Json{{"username", name}, {"password", password}}.dump(), 200));
  if (!login.contains("token") || !login["token"].is_string())
    return Status::Internal("login: no token");
  return login["token"].get<std::string>();
}

// Ends an occupant's wait: writes a line to the FIFO it reads, once it has it open.
Status Release(const std::string& fifo, int timeout_s) {
  const auto deadline = Steady::now() + std::chrono::seconds(timeout_s);
  while (true) {
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
      const bool written = ::write(fd, "\n", 1) == 1;
      ::close(fd);
      if (written) return Status::Ok();
      return Status::Internal("write " + fifo + ": " + std::strerror(errno));
    }
    if (errno != ENXIO) return Status::Internal("open " + fifo + ": " + std::strerror(errno));
    if (Steady::now() > deadline) return Status::DeadlineExceeded("no occupant reads " + fifo);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // its reader is not there yet
  }
}

Json JobSpec(const std::string& name, int tasks, int gpus, std::vector<std::string> argv) {
  return Json{
      {"name", name},
      {"framework", "generic"},
      {"command", std::move(argv)},
      {"workdir", "/tmp"},
      {"groups",
       Json::array({Json{{"role", "worker"}, {"replicas", tasks}, {"gpus_per_task", gpus}}})}};
}

// Reads the `date +%s.%N` line each task of a job printed first; returns the latest
// (the moment the whole gang had started), or nullopt.
std::optional<double> TaskStartTime(const Api& api, const Json& job) {
  std::optional<double> latest;
  for (const auto& t : job.value("tasks", Json::array())) {
    const std::string path = "/api/v1/jobs/" + std::to_string(job["id"].get<int64_t>()) +
                             "/logs?task=" + t.value("name", "");
    auto log = api.Get(path);
    if (!log.ok()) return std::nullopt;
    const std::string data = log->value("data", "");
    char* end = nullptr;
    double s = std::strtod(data.c_str(), &end);
    if (end == data.c_str() || s < 1e9) return std::nullopt;
    latest = std::max(latest.value_or(0), s);
  }
  return latest;
}

// Polls a job until `done(job)` or the deadline.
Result<Json> PollJob(const Api& api, int64_t id, int poll_ms, int timeout_s,
                     const std::function<bool(const Json&)>& done) {
  const auto deadline = Steady::now() + std::chrono::seconds(timeout_s);
  while (true) {
    ASSIGN_OR_RETURN(Json job, api.Get("/api/v1/jobs/" + std::to_string(id)));
    if (done(job)) return job;
    if (Steady::now() > deadline) {
      return Status::DeadlineExceeded("job " + std::to_string(id) + " still " +
                                      job.value("state", "?") + " (" + job.value("reason", "") +
                                      ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
  }
}

struct LatencyResult {
  std::vector<double> api_ms;   // submit sent -> GET shows running
  std::vector<double> task_ms;  // submit sent -> last task's own start time
  int failed = 0;
};

// What every task of a latency job runs (and the spawn floor runs without rota): say
// when it started, then hold its GPU for --hold-ms.
std::vector<std::string> LatencyCommand(const Options& o) {
  char hold[32];
  std::snprintf(hold, sizeof hold, "%.3f", o.hold_ms / 1000.0);
  return {"sh", "-c", std::string("date +%s.%N; exec sleep ") + hold};
}

// One job at a time on an idle cluster: submit, wait for running, wait for its end.
Result<LatencyResult> MeasureLatency(const Api& api, const Options& o, int tasks, int gpus) {
  LatencyResult out;
  for (int i = 0; i < o.latency_jobs; ++i) {
    Json spec = JobSpec("lat-" + std::to_string(tasks) + "-" + std::to_string(i), tasks, gpus,
                        LatencyCommand(o));
    const double t0 = NowUnixS();
    const auto s0 = Steady::now();
    ASSIGN_OR_RETURN(Json job, api.Call("POST", "/api/v1/jobs", spec.dump(), 201));
    const int64_t id = job["id"].get<int64_t>();
    ASSIGN_OR_RETURN(job, PollJob(api, id, o.poll_ms, o.timeout_s, [](const Json& j) {
                       return j.value("state", "") == "running" || IsFinal(j.value("state", ""));
                     }));
    const double ms = std::chrono::duration<double, std::milli>(Steady::now() - s0).count();
    if (job.value("state", "") != "running") {
      ++out.failed;
      std::cerr << "job " << id << " ended " << job.value("state", "")
                << " before running was seen: " << job.value("reason", "") << "\n";
    } else {
      out.api_ms.push_back(ms);
    }
    ASSIGN_OR_RETURN(job, PollJob(api, id, 20, o.timeout_s,
                                  [](const Json& j) { return IsFinal(j.value("state", "")); }));
    if (job.value("state", "") != "succeeded") {
      ++out.failed;
      std::cerr << "job " << id << " " << job.value("state", "") << ": " << job.value("reason", "")
                << "\n";
      continue;
    }
    if (auto start = TaskStartTime(api, job)) out.task_ms.push_back((*start - t0) * 1000);
  }
  return out;
}

// The machine's own cost of what a latency job's tasks do, with no scheduler at all:
// `tasks` copies of LatencyCommand started at once with posix_spawn from this process
// (their output to one pipe, which SpawnProcess does not offer); the time until the last
// one printed its start. Whatever a launcher measures above this floor is its own. One
// sample per latency job.
Result<std::vector<double>> MeasureSpawnFloor(const Options& o, int tasks) {
  std::vector<std::string> command = LatencyCommand(o);
  std::vector<char*> args;
  for (auto& a : command) args.push_back(a.data());
  args.push_back(nullptr);
  std::vector<double> out;
  for (int i = 0; i < o.latency_jobs; ++i) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return Status::IoError("pipe: " + std::string(std::strerror(errno)));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    std::vector<pid_t> pids;
    const double t0 = NowUnixS();
    for (int t = 0; t < tasks; ++t) {
      pid_t pid = 0;
      if (::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ) == 0) pids.push_back(pid);
    }
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    // Each `date` line is one write, shorter than PIPE_BUF: lines never interleave.
    std::string text;
    char buf[4096];
    while (std::count(text.begin(), text.end(), '\n') < static_cast<long>(pids.size())) {
      const ssize_t n = ::read(fds[0], buf, sizeof buf);
      if (n <= 0) break;
      text.append(buf, static_cast<size_t>(n));
    }
    ::close(fds[0]);
    for (pid_t pid : pids) ::kill(pid, SIGTERM);
    for (pid_t pid : pids) ::waitpid(pid, nullptr, 0);
    double latest = 0;
    size_t lines = 0;
    for (size_t at = 0; at < text.size();) {
      const size_t nl = text.find('\n', at);
      const double s = std::strtod(text.c_str() + at, nullptr);
      if (s > 1e9) latest = std::max(latest, s), ++lines;
      at = nl == std::string::npos ? text.size() : nl + 1;
    }
    if (static_cast<int>(lines) != tasks) {
      return Status::Internal("spawn floor: " + std::to_string(lines) + " of " +
                              std::to_string(tasks) + " processes printed their start");
    }
    out.push_back((latest - t0) * 1000);
  }
  return out;
}

// The machine's process-creation cost: mean ms for posix_spawn + exit + wait of /bin/true.
double SpawnTrueMs(int runs) {
  char* args[] = {const_cast<char*>("true"), nullptr};
  const auto s0 = Steady::now();
  for (int i = 0; i < runs; ++i) {
    pid_t pid = 0;
    if (::posix_spawn(&pid, "/bin/true", nullptr, nullptr, args, environ) == 0) ::waitpid(pid, nullptr, 0);
  }
  return std::chrono::duration<double, std::milli>(Steady::now() - s0).count() / runs;
}

struct ThroughputResult {
  int submitted = 0, succeeded = 0, failed = 0, starts_read = 0;
  double submit_s = 0, start_s = 0, finish_s = 0;  // from the first submission
  std::vector<double> queue_ms;                    // submit -> task start, under load
};

// Counts jobs in the unfinished states (limit 1 each: cheap).
Result<bool> AnyUnfinished(const Api& api) {
  for (const char* state : {"pending", "starting", "running"}) {
    ASSIGN_OR_RETURN(Json list, api.Get(std::string("/api/v1/jobs?state=") + state + "&limit=1"));
    if (!list["jobs"].empty()) return true;
  }
  return false;
}

Result<ThroughputResult> MeasureThroughput(const Api& api, const Options& o) {
  ThroughputResult out;
  std::vector<double> sent(o.jobs, 0);
  std::vector<int64_t> ids(o.jobs, 0);
  std::atomic<int> next{0};
  std::mutex mu;
  Status first_error;
  const double t0 = NowUnixS();
  std::vector<std::thread> clients;
  for (int c = 0; c < o.clients; ++c) {
    clients.emplace_back([&] {
      for (int i = next++; i < o.jobs; i = next++) {
        Json spec = JobSpec("tp-" + std::to_string(i), 1, o.gpus_per_job, {"date", "+%s.%N"});
        sent[i] = NowUnixS();
        auto job = api.Call("POST", "/api/v1/jobs", spec.dump(), 201);
        if (!job.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          if (first_error.ok()) first_error = job.status();
          continue;
        }
        ids[i] = (*job)["id"].get<int64_t>();
      }
    });
  }
  for (auto& t : clients) t.join();
  const double t_submitted = NowUnixS();
  RETURN_IF_ERROR(first_error.WithContext("submitting"));
  out.submitted = o.jobs;
  out.submit_s = t_submitted - t0;

  // Finished: twice in a row nothing pending, starting or running (a job moving between
  // two states while they are read must not end the wait early).
  const auto deadline = Steady::now() + std::chrono::seconds(o.timeout_s);
  double t_done = 0;
  int empty_rounds = 0;
  while (empty_rounds < 2) {
    const double t = NowUnixS();
    ASSIGN_OR_RETURN(bool busy, AnyUnfinished(api));
    if (busy) {
      empty_rounds = 0;
    } else if (++empty_rounds == 1) {
      t_done = t;
    }
    if (Steady::now() > deadline) return Status::DeadlineExceeded("jobs still unfinished");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  out.finish_s = t_done - t0;

  // Task start times from the tasks' own output.
  double last_start = 0;
  for (int i = 0; i < o.jobs; ++i) {
    ASSIGN_OR_RETURN(Json job, api.Get("/api/v1/jobs/" + std::to_string(ids[i])));
    if (job.value("state", "") != "succeeded") {
      if (out.failed++ < 3)
        std::cerr << "job " << ids[i] << " " << job.value("state", "") << ": "
                  << job.value("reason", "") << "\n";
      continue;
    }
    ++out.succeeded;
    if (auto s = TaskStartTime(api, job)) {
      ++out.starts_read;
      last_start = std::max(last_start, *s);
      out.queue_ms.push_back((*s - sent[i]) * 1000);
    }
  }
  out.start_s = last_start - t0;
  return out;
}

struct QueuedResult {
  int gpus = 0;
  std::vector<double> submit_ms;  // each POST while the queue grows
  double submit_s = 0;
  std::vector<double> list_ms;   // GET /api/v1/jobs (default page) with the queue full
  std::vector<double> queue_ms;  // GET /api/v1/queue (every pending job, with reasons)
  std::vector<double> queues_ms;  // GET /api/v1/queues (the queues with their counts: the UI's poll)
  std::vector<double> fill_ms;   // occupant's last line -> the next job's first line
};

// The first number a task printed (`which` 0) or the last one (`which` 1).
std::optional<double> LoggedTime(const Api& api, int64_t id, const std::string& task, int which) {
  auto log = api.Get("/api/v1/jobs/" + std::to_string(id) + "/logs?task=" + task);
  if (!log.ok()) return std::nullopt;
  std::string data = log->value("data", "");
  while (!data.empty() && data.back() == '\n') data.pop_back();
  const size_t nl = data.rfind('\n');
  const std::string line = which == 0 ? data.substr(0, data.find('\n'))
                                      : (nl == std::string::npos ? data : data.substr(nl + 1));
  char* end = nullptr;
  const double s = std::strtod(line.c_str(), &end);
  if (end == line.c_str() || s < 1e9) return std::nullopt;
  return s;
}

double TimedMs(const std::function<void()>& f) {
  const auto t = Steady::now();
  f();
  return std::chrono::duration<double, std::milli>(Steady::now() - t).count();
}

Result<QueuedResult> MeasureQueued(const Api& api, const Options& o) {
  QueuedResult out;
  ASSIGN_OR_RETURN(Json gpus, api.Get("/api/v1/gpus"));
  out.gpus = static_cast<int>(gpus["gpus"].size());
  if (out.gpus == 0 || o.fills > out.gpus) {
    return Status::InvalidArgument("the cluster has " + std::to_string(out.gpus) + " GPUs; --fills " +
                                      std::to_string(o.fills) + " needs at least as many");
  }
  // Occupants: the first --fills end when the bench writes a line to the FIFO
  // each reads, in a directory the bench owns (the moment they print last is
  // the end); the others sleep.
  char dir_template[] = "/tmp/rota-fill-XXXXXX";
  if (!mkdtemp(dir_template)) return Status::Internal("mkdtemp failed");
  const std::string dir = dir_template;
  chmod(dir.c_str(), 0755);  // tasks run as another user
  struct RemoveFifos {  // on every return
    const std::string& dir;
    int fills;
    ~RemoveFifos() {
      for (int f = 0; f < fills; ++f) unlink((dir + "/go-" + std::to_string(f)).c_str());
      rmdir(dir.c_str());
    }
  } remove_fifos{dir, o.fills};
  std::vector<int64_t> occupants;
  for (int i = 0; i < out.gpus; ++i) {
    std::string script = "date +%s.%N; exec sleep 3600";
    if (i < o.fills) {
      // It waits on a FIFO, not by polling for a file: a polling loop's process
      // starts would load the machine the measure runs on.
      const std::string fifo = dir + "/go-" + std::to_string(i);
      if (::mkfifo(fifo.c_str(), 0666) != 0 || ::chmod(fifo.c_str(), 0666) != 0) {
        return Status::Internal("mkfifo " + fifo + ": " + std::strerror(errno));
      }
      script = "date +%s.%N; read line < " + fifo + "; date +%s.%N";
    }
    ASSIGN_OR_RETURN(Json job, api.Call("POST", "/api/v1/jobs",
                                        JobSpec("occupant-" + std::to_string(i), 1, 1, {"sh", "-c", script}).dump(),
                                        201));
    occupants.push_back(job["id"].get<int64_t>());
  }
  for (int64_t id : occupants) {
    ASSIGN_OR_RETURN(Json job, PollJob(api, id, o.poll_ms, o.timeout_s,
                                       [](const Json& j) { return j.value("state", "") != "pending"; }));
    if (job.value("state", "") != "running" && job.value("state", "") != "starting") {
      return Status::Internal("occupant " + std::to_string(id) + " " + job.value("state", "") + ": " +
                              job.value("reason", ""));
    }
  }
  // The queue.
  std::vector<double> submit_ms(o.queued, 0);
  std::vector<int64_t> queued_ids(o.queued, 0);
  std::atomic<int> next{0};
  std::mutex mu;
  Status first_error;
  const auto q0 = Steady::now();
  std::vector<std::thread> clients;
  for (int c = 0; c < o.clients; ++c) {
    clients.emplace_back([&] {
      for (int i = next++; i < o.queued; i = next++) {
        const std::string spec =
            JobSpec("queued-" + std::to_string(i), 1, 1, {"sh", "-c", "date +%s.%N; exec sleep 3600"}).dump();
        Result<Json> job = Status::Internal("not sent");
        submit_ms[i] = TimedMs([&] { job = api.Call("POST", "/api/v1/jobs", spec, 201); });
        if (!job.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          if (first_error.ok()) first_error = job.status();
        } else {
          queued_ids[i] = (*job)["id"].get<int64_t>();
        }
      }
    });
  }
  for (auto& t : clients) t.join();
  out.submit_s = std::chrono::duration<double>(Steady::now() - q0).count();
  RETURN_IF_ERROR(first_error.WithContext("queueing"));
  out.submit_ms = std::move(submit_ms);
  // Reads with the queue full.
  Status read_error;
  for (int i = 0; i < 30; ++i) {
    out.list_ms.push_back(TimedMs([&] { read_error = api.Fetch("GET", "/api/v1/jobs", "", 200).status(); }));
    RETURN_IF_ERROR(read_error.WithContext("GET /api/v1/jobs"));
    out.queue_ms.push_back(TimedMs([&] { read_error = api.Fetch("GET", "/api/v1/queue", "", 200).status(); }));
    RETURN_IF_ERROR(read_error.WithContext("GET /api/v1/queue"));
    out.queues_ms.push_back(TimedMs([&] { read_error = api.Fetch("GET", "/api/v1/queues", "", 200).status(); }));
    RETURN_IF_ERROR(read_error.WithContext("GET /api/v1/queues"));
  }
  // Fills: end one occupant, wait for it, then find the job that took its GPU.
  std::set<int64_t> seen(occupants.begin(), occupants.end());
  for (int f = 0; f < o.fills; ++f) {
    RETURN_IF_ERROR(Release(dir + "/go-" + std::to_string(f), o.timeout_s));
    ASSIGN_OR_RETURN(Json ended, PollJob(api, occupants[f], 20, o.timeout_s,
                                         [](const Json& j) { return IsFinal(j.value("state", "")); }));
    auto end = LoggedTime(api, occupants[f], "worker-0", 1);
    if (!end) return Status::Internal("occupant " + std::to_string(occupants[f]) + " printed no end time");
    // The newest running job not seen before is the one that took the GPU.
    std::optional<double> start;
    const auto deadline = Steady::now() + std::chrono::seconds(30);
    while (!start && Steady::now() < deadline) {
      ASSIGN_OR_RETURN(Json running, api.Get("/api/v1/jobs?state=running&limit=100"));
      for (const auto& j : running["jobs"]) {
        const int64_t id = j["id"].get<int64_t>();
        if (seen.count(id)) continue;
        if (auto s = LoggedTime(api, id, "worker-0", 0)) {
          seen.insert(id);
          start = s;
          break;
        }
      }
      if (!start) std::this_thread::sleep_for(std::chrono::milliseconds(o.poll_ms));
    }
    if (!start) return Status::DeadlineExceeded("no job took the GPU occupant " + std::to_string(occupants[f]) + " freed");
    out.fill_ms.push_back((*start - *end) * 1000);
  }
  // Cancel everything, the queue first, and wait for what runs to end: tasks
  // outlive a server that stops.
  for (int64_t id : queued_ids) (void)api.Call("POST", "/api/v1/jobs/" + std::to_string(id) + "/cancel", "", 200);
  std::vector<int64_t> cancelled;
  for (const char* state : {"starting", "running"}) {
    ASSIGN_OR_RETURN(Json list, api.Get(std::string("/api/v1/jobs?limit=1000&state=") + state));
    for (const auto& j : list["jobs"]) {
      const int64_t id = j["id"].get<int64_t>();
      (void)api.Call("POST", "/api/v1/jobs/" + std::to_string(id) + "/cancel", "", 200);
      cancelled.push_back(id);
    }
  }
  for (int64_t id : cancelled) {
    RETURN_IF_ERROR(
        PollJob(api, id, 20, 60, [](const Json& j) { return IsFinal(j.value("state", "")); }).status());
  }
  return out;
}

std::string Fixed(double v, int digits) {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

Json LatencyJson(const LatencyResult& r) {
  return Json{{"samples", r.api_ms.size()},
              {"failed", r.failed},
              {"running_ms_p50", Percentile(r.api_ms, 0.5)},
              {"running_ms_p90", Percentile(r.api_ms, 0.9)},
              {"running_ms_p99", Percentile(r.api_ms, 0.99)},
              {"task_start_ms_p50", Percentile(r.task_ms, 0.5)},
              {"task_start_ms_p90", Percentile(r.task_ms, 0.9)}};
}

void PrintLatency(const std::string& what, const LatencyResult& r) {
  std::cerr << what << ": " << r.api_ms.size() << " jobs, submit -> running p50 "
            << Fixed(Percentile(r.api_ms, 0.5), 1) << " ms, p90 "
            << Fixed(Percentile(r.api_ms, 0.9), 1) << " ms, p99 "
            << Fixed(Percentile(r.api_ms, 0.99), 1) << " ms; submit -> task process started p50 "
            << Fixed(Percentile(r.task_ms, 0.5), 1) << " ms"
            << (r.failed ? ", FAILED " + std::to_string(r.failed) : "") << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  auto o = ParseFlags(argc, argv);
  if (!o.ok()) {
    if (!o.status().message().empty())
      std::cerr << "rota_job_launch: " << o.status().message() << "\n";
    std::cerr << "usage: rota_job_launch --server http://127.0.0.1:PORT --token TOKEN [--unix-user "
                 "USER]\n"
                 "         [--latency-jobs 30] [--gang-tasks 8] [--jobs 1000] [--clients 4]\n"
                 "         [--gpus-per-job 0] [--poll-ms 5] [--hold-ms 500] [--timeout-s 600]\n"
                 "         [--keep-alive 1] [--queued 0] [--fills 10]\n";
    return 2;
  }
  Api api(o->server, o->token, o->keep_alive == 1);
  if (!o->unix_user.empty()) {
    auto token = BenchUserToken(api, o->unix_user);
    if (!token.ok()) {
      std::cerr << "rota_job_launch: cannot create the bench user (is --token an admin's?): "
                << token.status().message() << "\n";
      return 1;
    }
    api = Api(o->server, *token, o->keep_alive == 1);
  }
  Json out = Json::object();
  auto fail = [](const Status& st) {
    std::cerr << "rota_job_launch: " << st.message() << "\n";
    return 1;
  };
  if (o->latency_jobs > 0) {
    auto one = MeasureLatency(api, *o, 1, 1);
    if (!one.ok()) return fail(one.status().WithContext("1-task latency"));
    PrintLatency("1-task job", *one);
    out["latency_1_task"] = LatencyJson(*one);
    if (o->gang_tasks > 0) {
      auto gang = MeasureLatency(api, *o, o->gang_tasks, 1);
      if (!gang.ok())
        return fail(
            gang.status().WithContext(std::to_string(o->gang_tasks) + "-task gang latency"));
      PrintLatency(std::to_string(o->gang_tasks) + "-task gang", *gang);
      out["latency_gang"] = LatencyJson(*gang);
      out["latency_gang"]["tasks"] = o->gang_tasks;
    }
    // The floor under both latencies, measured right after them on the same machine.
    Json spawn_floor{{"spawn_true_ms", SpawnTrueMs(200)}};
    for (int tasks : {1, o->gang_tasks}) {
      if (tasks == 0) continue;
      auto f = MeasureSpawnFloor(*o, tasks);
      if (!f.ok()) return fail(f.status());
      spawn_floor[tasks == 1 ? "task_1_ms_p50" : "gang_ms_p50"] = Percentile(*f, 0.5);
      if (tasks != 1) spawn_floor["gang_tasks"] = tasks;
    }
    std::cerr << "machine floor (the same commands started by posix_spawn, no scheduler): 1 task p50 "
              << Fixed(spawn_floor.value("task_1_ms_p50", NAN), 1) << " ms, " << o->gang_tasks
              << " tasks p50 " << Fixed(spawn_floor.value("gang_ms_p50", NAN), 1)
              << " ms; /bin/true spawned and reaped " << Fixed(spawn_floor["spawn_true_ms"].get<double>(), 2)
              << " ms\n";
    out["spawn_floor"] = spawn_floor;
  }
  if (o->jobs > 0) {
    auto tp = MeasureThroughput(api, *o);
    if (!tp.ok()) return fail(tp.status().WithContext("throughput"));
    const double n = o->jobs;
    std::cerr << "throughput: " << o->jobs << " jobs (" << o->gpus_per_job << " GPU each), "
              << o->clients << " clients: submitted " << Fixed(n / tp->submit_s, 1)
              << "/s, started " << Fixed(n / tp->start_s, 1) << "/s, finished "
              << Fixed(n / tp->finish_s, 1) << "/s (all done in " << Fixed(tp->finish_s, 2)
              << " s); succeeded " << tp->succeeded << ", failed " << tp->failed
              << ", start times read " << tp->starts_read << "; submit -> start under load p50 "
              << Fixed(Percentile(tp->queue_ms, 0.5), 0) << " ms\n";
    out["throughput"] = Json{{"jobs", o->jobs},
                             {"clients", o->clients},
                             {"keep_alive", o->keep_alive == 1},
                             {"gpus_per_job", o->gpus_per_job},
                             {"succeeded", tp->succeeded},
                             {"failed", tp->failed},
                             {"start_times_read", tp->starts_read},
                             {"submit_seconds", tp->submit_s},
                             {"last_start_seconds", tp->start_s},
                             {"all_finished_seconds", tp->finish_s},
                             {"submitted_per_s", n / tp->submit_s},
                             {"started_per_s", n / tp->start_s},
                             {"finished_per_s", n / tp->finish_s},
                             {"queue_ms_p50", Percentile(tp->queue_ms, 0.5)}};
  }
  if (o->queued > 0) {
    auto q = MeasureQueued(api, *o);
    if (!q.ok()) return fail(q.status().WithContext("queued"));
    auto p = [](const std::vector<double>& v, double x) { return Percentile(v, x); };
    std::cerr << "queued: " << o->queued << " one-GPU jobs behind " << q->gpus << " busy GPUs, submitted at "
              << Fixed(o->queued / q->submit_s, 0) << "/s (p50 " << Fixed(p(q->submit_ms, 0.5), 1) << " ms, p99 "
              << Fixed(p(q->submit_ms, 0.99), 1) << " ms); GET /api/v1/jobs p50 " << Fixed(p(q->list_ms, 0.5), 1)
              << " ms, p99 " << Fixed(p(q->list_ms, 0.99), 1) << " ms; GET /api/v1/queue p50 "
              << Fixed(p(q->queue_ms, 0.5), 1) << " ms, p99 " << Fixed(p(q->queue_ms, 0.99), 1)
              << " ms; GET /api/v1/queues p50 " << Fixed(p(q->queues_ms, 0.5), 1) << " ms, p99 "
              << Fixed(p(q->queues_ms, 0.99), 1) << " ms; freed GPU filled in p50 " << Fixed(p(q->fill_ms, 0.5), 1) << " ms, max "
              << Fixed(p(q->fill_ms, 1), 1) << " ms (" << q->fill_ms.size() << " fills)\n";
    out["queued"] = Json{{"jobs", o->queued},
                         {"gpus", q->gpus},
                         {"submitted_per_s", o->queued / q->submit_s},
                         {"submit_ms_p50", p(q->submit_ms, 0.5)},
                         {"submit_ms_p99", p(q->submit_ms, 0.99)},
                         {"list_ms_p50", p(q->list_ms, 0.5)},
                         {"list_ms_p99", p(q->list_ms, 0.99)},
                         {"queue_ms_p50", p(q->queue_ms, 0.5)},
                         {"queue_ms_p99", p(q->queue_ms, 0.99)},
                         {"queues_ms_p50", p(q->queues_ms, 0.5)},
                         {"queues_ms_p99", p(q->queues_ms, 0.99)},
                         {"fill_ms", q->fill_ms},
                         {"fill_ms_p50", p(q->fill_ms, 0.5)},
                         {"fill_ms_max", p(q->fill_ms, 1)}};
  }
  std::cout << out.dump() << std::endl;
  return 0;
}
