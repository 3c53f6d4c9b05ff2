// Login flood benchmark: while --clients concurrent clients send wrong passwords to
// POST /api/v1/auth/login as fast as they are answered, one signed-in client measures
// GET /api/v1/nodes and GET /healthz every --probe-ms (alternating). The same probe
// runs first for --idle-s with no flood, so both sides are in one run.
//
// Each flood client keeps one connection (as a script would) and signs in as its own
// made-up user ("flood-<n>"): every attempt is a wrong password, from one address
// (loopback), so throttling by address applies. With --honour-retry-after 1 a client
// waits what a 429/503 says before its next attempt (a well-behaved client); by default
// it does not (an attacker).
//
// With --log-followers N (> 0) it first submits --jobs running jobs (one GPU each, as a
// bench user whose tasks run as --unix-user) that print "line <i>" every --line-ms until
// shortly after the flood, and then N clients follow their logs: even-numbered ones as
// `rota logs --follow` does (GET .../logs from the last offset, when caught up GET the job,
// 500 ms pause), odd-numbered ones as the web UI's log view does (256 KiB chunks, a poll a
// second, the job every 2 s). The followers run alone for --follow-s after the idle phase,
// then through the flood, until their job ends; each checks that it received the whole log.
// Before the followers start and after the jobs end it reads the nodes (state, connected,
// state_since) and rota_server_connected_agents: a node whose state or state_since changed
// or that is not connected at the end counts as disconnected; a job that did not succeed
// or a task that is not "exited" with code 0 as lost.
//
// Prints one JSON object: per phase the probe's p50/p99/max per endpoint; for the flood
// the answers by status, requests/s and, per client, the attempt that first got 429;
// with followers, their reads per phase, the jobs' ends and the nodes before and after.
//
// Usage: rota_login_flood --server http://127.0.0.1:PORT --token TOKEN
//            [--clients 200] [--seconds 20] [--idle-s 5] [--probe-ms 20] [--honour-retry-after 0]
//            [--log-followers 0] [--jobs 10] [--line-ms 200] [--follow-s 5] [--unix-user USER]
//            [--nodes 3]

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/codec.h"
#include "common/file_util.h"
#include "common/status.h"
#include "net/http_client.h"

namespace {

using Clock = std::chrono::steady_clock;
using rota::Result;
using rota::Status;
using rota::api::Json;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(std::lround(p * static_cast<double>(v.size() - 1)))];
}

// `text` parsed, or an empty object.
Json ParseOrEmpty(const std::string& text) {
  auto j = rota::api::ParseJson(text);
  return j.ok() ? std::move(*j) : Json::object();
}

Json Stats(const std::vector<double>& v) {
  return Json{{"n", v.size()},
              {"p50_ms", Percentile(v, 0.5)},
              {"p99_ms", Percentile(v, 0.99)},
              {"max_ms", v.empty() ? NAN : *std::max_element(v.begin(), v.end())}};
}

struct Options {
  std::string server, token;
  int clients = 200;
  int seconds = 20;
  int idle_s = 5;
  int probe_ms = 20;
  bool honour_retry_after = false;
  int log_followers = 0;
  int jobs = 10;
  int line_ms = 200;
  int follow_s = 5;
  std::string unix_user;
  int nodes = 3;
};

// GET/POST with a bearer token on this thread's kept-alive connection; an unexpected
// status is an error naming the call.
Result<Json> Call(const Options& o, const std::string& token, const std::string& method,
                  const std::string& path, const std::string& body, int want) {
  thread_local rota::net::HttpConnection conn;
  std::vector<std::string> headers = {"Authorization: Bearer " + token};
  if (!body.empty()) headers.push_back("Content-Type: application/json");
  auto r = conn.Call(method, o.server + path, body, headers, 30'000);
  if (!r.ok()) return r.status();
  if (r->status != want) {
    return Status::Internal(method + " " + path + " -> " + std::to_string(r->status) + ": " +
                            r->body);
  }
  if (r->body.empty() || r->body[0] != '{') return Json{{"text", r->body}};
  return rota::api::ParseJson(r->body);
}

struct Probe {
  std::vector<double> nodes_ms, healthz_ms;
  int errors = 0;
};

// Alternates the two GETs every `probe_ms` until `stop`.
Probe RunProbe(const Options& o, const std::atomic<bool>& stop) {
  Probe p;
  rota::net::HttpConnection conn;
  const std::vector<std::string> auth = {"Authorization: Bearer " + o.token};
  bool nodes = true;
  while (!stop.load()) {
    const auto t0 = Clock::now();
    auto r = nodes ? conn.Call("GET", o.server + "/api/v1/nodes", "", auth, 30'000)
                   : conn.Call("GET", o.server + "/healthz", "", {}, 30'000);
    const double ms = Ms(Clock::now() - t0);
    if (!r.ok() || r->status != 200) ++p.errors;
    (nodes ? p.nodes_ms : p.healthz_ms).push_back(ms);
    nodes = !nodes;
    std::this_thread::sleep_until(t0 + std::chrono::milliseconds(o.probe_ms));
  }
  return p;
}

Json ProbeJson(const Probe& p) {
  return {{"nodes", Stats(p.nodes_ms)}, {"healthz", Stats(p.healthz_ms)}, {"errors", p.errors}};
}

// ---- Jobs, log followers and the nodes around them (--log-followers) ----

struct NodeState {
  std::string state, state_since;
  bool connected = false;
};

struct Cluster {
  std::map<std::string, NodeState> nodes;
  double connected_agents = NAN;  // rota_server_connected_agents
};

Result<Cluster> ReadCluster(const Options& o) {
  Cluster c;
  ASSIGN_OR_RETURN(Json list, Call(o, o.token, "GET", "/api/v1/nodes", "", 200));
  for (const auto& n : list.value("nodes", Json::array())) {
    c.nodes[n.value("name", "")] = {
        n.value("state", ""),
        n.value("state_since", Json()).is_string() ? n["state_since"].get<std::string>() : "",
        n.value("connected", false)};
  }
  ASSIGN_OR_RETURN(Json metrics, Call(o, o.token, "GET", "/metrics", "", 200));
  const std::string text = metrics.value("text", "");
  const std::string name = "\nrota_server_connected_agents ";
  if (size_t at = text.find(name); at != std::string::npos) {
    c.connected_agents = std::strtod(text.c_str() + at + name.size(), nullptr);
  }
  return c;
}

Result<Cluster> WaitReady(const Options& o) {
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (true) {
    ASSIGN_OR_RETURN(Cluster c, ReadCluster(o));
    int ready = 0;
    for (const auto& [name, n] : c.nodes) ready += n.state == "ready" && n.connected ? 1 : 0;
    if (ready >= o.nodes) return c;
    if (Clock::now() > deadline) {
      return Status::DeadlineExceeded(std::to_string(ready) + " of " + std::to_string(o.nodes) +
                                      " nodes ready after 60 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// Nodes of `before` that are not ready and connected in `after`, or whose state changed
// meanwhile (state_since moved: it went unreachable and came back).
Json CompareNodes(const Cluster& before, const Cluster& after) {
  Json changed = Json::array();
  for (const auto& [name, b] : before.nodes) {
    auto it = after.nodes.find(name);
    if (it == after.nodes.end() || !it->second.connected || it->second.state != b.state ||
        it->second.state_since != b.state_since) {
      changed.push_back(name);
    }
  }
  return {{"nodes", before.nodes.size()},
          {"connected_agents_before", before.connected_agents},
          {"connected_agents_after", after.connected_agents},
          {"disconnected_or_changed", changed}};
}

// Creates a user whose tasks run as `unix_user` and signs in as it.
Result<std::string> BenchUserToken(const Options& o) {
  ASSIGN_OR_RETURN(std::string salt, rota::RandomHex(4));
  ASSIGN_OR_RETURN(std::string password, rota::RandomHex(12));
  const std::string name = "follower-" + salt;
  Json user{{"username", name},
            {"role", "user"},
            {"password", password},
            {"email", name + "@localhost"},
            {"unix_user", o.unix_user}};
  RETURN_IF_ERROR(Call(o, o.token, "POST", "/api/v1/users", user.dump(), 201).status());
  ASSIGN_OR_RETURN(Json login, Call(o, o.token, "POST", "/api/v1/auth/login",
                                    Json{{"username", name}, {"password", password}}.dump(), 200));
  if (!login["token"].is_string()) return Status::Internal("login: no token");
  return login["token"].get<std::string>();
}

std::string ExpectedLog(int lines) {
  std::string s;
  for (int i = 0; i < lines; ++i) s += "line " + std::to_string(i) + "\n";
  return s;
}

// Submits the jobs and waits until each runs. Returns their ids.
Result<std::vector<int64_t>> StartJobs(const Options& o, const std::string& token, int lines) {
  char pause[32];
  std::snprintf(pause, sizeof pause, "%.3f", o.line_ms / 1000.0);
  const std::string script = "i=0; while [ $i -lt " + std::to_string(lines) +
                             " ]; do echo \"line $i\"; i=$((i+1)); sleep " + pause + "; done";
  std::vector<int64_t> ids;
  for (int j = 0; j < o.jobs; ++j) {
    Json spec{
        {"name", "follow-" + std::to_string(j)},
        {"framework", "generic"},
        {"command", Json::array({"sh", "-c", script})},
        {"workdir", "/tmp"},
        {"groups", Json::array({Json{{"role", "worker"}, {"replicas", 1}, {"gpus_per_task", 1}}})}};
    ASSIGN_OR_RETURN(Json job, Call(o, token, "POST", "/api/v1/jobs", spec.dump(), 201));
    ids.push_back(job["id"].get<int64_t>());
  }
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  for (int64_t id : ids) {
    while (true) {
      ASSIGN_OR_RETURN(Json job,
                       Call(o, token, "GET", "/api/v1/jobs/" + std::to_string(id), "", 200));
      const std::string state = job.value("state", "");
      if (state == "running") break;
      if (state != "pending" && state != "starting") {
        return Status::Internal("job " + std::to_string(id) + " is " + state + " before the run");
      }
      if (Clock::now() > deadline) {
        return Status::DeadlineExceeded("job " + std::to_string(id) + " not running after 60 s");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  return ids;
}

bool Final(const std::string& s) { return s == "succeeded" || s == "failed" || s == "cancelled"; }

enum Phase { kIdle = 0, kFollow = 1, kFlood = 2, kAfter = 3 };

struct FollowerResult {
  std::vector<double> log_ms[4];     // GET .../logs, by phase
  std::map<int, int64_t> by_status;  // of the log reads; 0: transport error
  int64_t job_reads = 0;
  bool complete = false;        // received exactly the job's whole output
  bool tail_after_end = false;  // the read after the job had ended still brought bytes
};

// Follows job `id`'s stdout until the job has ended and its log is read to the end.
FollowerResult Follow(const Options& o, const std::string& token, int64_t id, bool web,
                      const std::string& expected, const std::atomic<int>& phase,
                      Clock::time_point deadline) {
  FollowerResult r;
  rota::net::HttpConnection conn;
  const std::vector<std::string> auth = {"Authorization: Bearer " + token};
  const std::string job_url = o.server + "/api/v1/jobs/" + std::to_string(id);
  // The web UI names the task (from the job it shows); `rota logs` without --task lets the
  // server pick the first.
  const std::string base = job_url + "/logs?stream=stdout" + (web ? "&task=worker-0" : "") +
                           "&max_bytes=" + std::to_string(web ? 256 * 1024 : 1 << 20) + "&offset=";
  std::string got;
  uint64_t offset = 0;
  bool ended = false;
  auto last_job_read = Clock::now() - std::chrono::hours(1);
  while (Clock::now() < deadline) {
    const auto t0 = Clock::now();
    const int ph = phase.load();
    auto a = conn.Call("GET", base + std::to_string(offset), "", auth, 30'000);
    r.log_ms[ph].push_back(Ms(Clock::now() - t0));
    const int status = a.ok() ? a->status : 0;
    ++r.by_status[status];
    if (status != 200) {  // the CLI would stop with the error; a user runs it again
      std::this_thread::sleep_for(std::chrono::milliseconds(web ? 3000 : 1000));
      continue;
    }
    Json chunk = ParseOrEmpty(a->body);
    const std::string data = chunk.value("data", "");
    const uint64_t size = chunk.value("size", uint64_t{0});
    got += data;
    offset = web ? std::min(chunk.value("next_offset", uint64_t{0}), size)
                 : chunk.value("offset", uint64_t{0}) + data.size();
    if (ended) {
      r.tail_after_end = r.tail_after_end || !data.empty();
      if (offset >= size) break;
      continue;
    }
    if (offset < size) continue;  // more right now
    if (!web || Clock::now() - last_job_read >= std::chrono::seconds(2)) {
      last_job_read = Clock::now();
      ++r.job_reads;
      auto j = conn.Call("GET", job_url, "", auth, 30'000);
      if (j.ok() && j->status == 200) {
        Json job = ParseOrEmpty(j->body);
        // One last read once the job has ended (what the web UI does): its final output.
        if (Final(job.value("state", ""))) {
          ended = true;
          continue;
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(web ? 1000 : 500));
  }
  r.complete = got == expected;
  return r;
}

// How the jobs ended: jobs not succeeded, tasks not exited with 0 (lost, killed, failed).
Result<Json> JobEnds(const Options& o, const std::string& token, const std::vector<int64_t>& ids) {
  int succeeded = 0, other = 0, tasks = 0, tasks_bad = 0, restarts = 0;
  Json bad = Json::array();
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  for (int64_t id : ids) {
    Json job;
    while (true) {
      ASSIGN_OR_RETURN(job, Call(o, token, "GET", "/api/v1/jobs/" + std::to_string(id), "", 200));
      if (Final(job.value("state", "")) || Clock::now() > deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    const std::string state = job.value("state", "");
    if (state == "succeeded") {
      ++succeeded;
    } else {
      ++other;
      bad.push_back(Json{{"id", id}, {"state", state}, {"reason", job.value("reason", "")}});
    }
    restarts += job.value("restart_count", 0);
    for (const auto& t : job.value("tasks", Json::array())) {
      ++tasks;
      if (t.value("state", "") != "exited" || t.value("exit_code", -1) != 0) ++tasks_bad;
    }
  }
  return Json{{"jobs", ids.size()},   {"succeeded", succeeded}, {"other", other},
              {"not_succeeded", bad}, {"tasks", tasks},         {"tasks_lost_or_failed", tasks_bad},
              {"restarts", restarts}};
}

int Usage(const std::string& why) {
  std::cerr << "rota_login_flood: " << why
            << "\nusage: rota_login_flood --server URL --token TOKEN [--clients 200] [--seconds 20]"
               " [--idle-s 5] [--probe-ms 20] [--honour-retry-after 0] [--log-followers 0]"
               " [--jobs 10] [--line-ms 200] [--follow-s 5] [--unix-user USER] [--nodes 3]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], v = argv[i + 1];
    if (flag == "--server") o.server = v;
    else if (flag == "--token") o.token = v;
    else if (flag == "--clients") o.clients = std::stoi(v);
    else if (flag == "--seconds") o.seconds = std::stoi(v);
    else if (flag == "--idle-s") o.idle_s = std::stoi(v);
    else if (flag == "--probe-ms") o.probe_ms = std::stoi(v);
    else if (flag == "--honour-retry-after") o.honour_retry_after = v == "1";
    else if (flag == "--log-followers") o.log_followers = std::stoi(v);
    else if (flag == "--jobs") o.jobs = std::stoi(v);
    else if (flag == "--line-ms") o.line_ms = std::stoi(v);
    else if (flag == "--follow-s") o.follow_s = std::stoi(v);
    else if (flag == "--unix-user") o.unix_user = v;
    else if (flag == "--nodes") o.nodes = std::stoi(v);
    else return Usage("unknown flag " + flag);
  }
  if (o.server.empty() || o.token.empty()) return Usage("--server and --token are required");
  if (o.clients < 1 || o.seconds < 1 || o.probe_ms < 1) return Usage("bad numbers");
  const bool follow = o.log_followers > 0;
  if (follow && (o.jobs < 1 || o.line_ms < 10 || o.follow_s < 0 || o.unix_user.empty())) {
    return Usage("--log-followers needs --jobs >= 1, --line-ms >= 10 and --unix-user");
  }
  auto fail = [](const Status& st) {
    std::cerr << "rota_login_flood: " << st.message() << "\n";
    return 1;
  };

  // Jobs that print until a few seconds after the flood.
  Cluster before;
  std::string user_token;
  std::vector<int64_t> job_ids;
  std::string expected;
  if (follow) {
    auto ready = WaitReady(o);
    if (!ready.ok()) return fail(ready.status());
    auto token = BenchUserToken(o);
    if (!token.ok()) return fail(token.status());
    user_token = *token;
    const int lines = (o.idle_s + o.follow_s + o.seconds + 5) * 1000 / o.line_ms;
    expected = ExpectedLog(lines);
    auto ids = StartJobs(o, user_token, lines);
    if (!ids.ok()) return fail(ids.status());
    job_ids = *ids;
    auto c = ReadCluster(o);
    if (!c.ok()) return fail(c.status());
    before = *c;
  }

  // Idle.
  std::atomic<bool> stop{false};
  std::atomic<int> phase{kIdle};
  Probe idle;
  {
    std::thread t([&] { idle = RunProbe(o, stop); });
    std::this_thread::sleep_for(std::chrono::seconds(o.idle_s));
    stop = true;
    t.join();
  }

  // Followers alone, then with the flood, until their jobs end.
  std::vector<FollowerResult> followed(static_cast<size_t>(o.log_followers));
  std::vector<std::thread> followers;
  Probe following;
  if (follow) {
    phase = kFollow;
    const auto deadline = Clock::now() + std::chrono::seconds(o.follow_s + o.seconds + 120);
    for (int f = 0; f < o.log_followers; ++f) {
      followers.emplace_back([&, f] {
        followed[static_cast<size_t>(f)] =
            Follow(o, user_token, job_ids[static_cast<size_t>(f) % job_ids.size()], f % 2 == 1,
                   expected, phase, deadline);
      });
    }
    stop = false;
    std::thread t([&] { following = RunProbe(o, stop); });
    std::this_thread::sleep_for(std::chrono::seconds(o.follow_s));
    stop = true;
    t.join();
  }

  // Flood.
  stop = false;
  phase = kFlood;
  std::mutex mu;
  std::map<int, int64_t> by_status;  // 0: transport error
  std::vector<int> first_429(static_cast<size_t>(o.clients), 0);
  std::vector<double> login_ms;
  std::vector<std::thread> flood;
  const auto start = Clock::now();
  for (int c = 0; c < o.clients; ++c) {
    flood.emplace_back([&, c] {
      rota::net::HttpConnection conn;
      std::map<int, int64_t> mine;
      std::vector<double> lat;
      int attempt = 0, first = 0;
      const std::string body = Json{{"username", "flood-" + std::to_string(c)},
                                    {"password", "wrong-password-" + std::to_string(c)}}
                                   .dump();
      while (!stop.load()) {
        ++attempt;
        const auto t0 = Clock::now();
        auto r = conn.Call("POST", o.server + "/api/v1/auth/login", body,
                           {"Content-Type: application/json"}, 30'000);
        lat.push_back(Ms(Clock::now() - t0));
        const int status = r.ok() ? r->status : 0;
        ++mine[status];
        if (status == 429 && first == 0) first = attempt;
        if (!r.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (o.honour_retry_after && (status == 429 || status == 503)) {
          auto it = r->headers.find("retry-after");
          const int s = it == r->headers.end() ? 1 : std::max(1, std::atoi(it->second.c_str()));
          const auto until = Clock::now() + std::chrono::seconds(s);
          while (!stop.load() && Clock::now() < until) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
          }
        }
      }
      std::lock_guard<std::mutex> lock(mu);
      for (auto [k, v] : mine) by_status[k] += v;
      first_429[static_cast<size_t>(c)] = first;
      login_ms.insert(login_ms.end(), lat.begin(), lat.end());
    });
  }
  Probe during;
  std::thread probe([&] { during = RunProbe(o, stop); });
  std::this_thread::sleep_for(std::chrono::seconds(o.seconds));
  stop = true;
  probe.join();
  for (auto& t : flood) t.join();
  const double secs = Ms(Clock::now() - start) / 1000.0;
  phase = kAfter;

  int64_t total = 0;
  Json statuses = Json::object();
  for (auto [k, v] : by_status) {
    statuses[k == 0 ? "transport_error" : std::to_string(k)] = v;
    total += v;
  }
  std::vector<double> firsts;
  int never = 0;
  for (int f : first_429) {
    if (f == 0) ++never;
    else firsts.push_back(f);
  }
  Json out{
      {"clients", o.clients},
      {"seconds", o.seconds},
      {"honour_retry_after", o.honour_retry_after},
      {"idle", ProbeJson(idle)},
      {"flood", ProbeJson(during)},
      {"logins", {{"total", total},
                  {"per_s", static_cast<double>(total) / secs},
                  {"by_status", statuses},
                  {"latency_p50_ms", Percentile(login_ms, 0.5)},
                  {"latency_p99_ms", Percentile(login_ms, 0.99)},
                  {"first_429_attempt", {{"min", firsts.empty() ? NAN : *std::min_element(firsts.begin(), firsts.end())},
                                         {"median", Percentile(firsts, 0.5)},
                                         {"max", Percentile(firsts, 1.0)},
                                         {"clients_never_429", never}}}}}};

  if (follow) {
    for (auto& t : followers) t.join();
    std::vector<double> ms[4];
    std::map<int, int64_t> reads;
    int complete = 0, tails = 0;
    int64_t job_reads = 0;
    for (const auto& f : followed) {
      for (int p = 0; p < 4; ++p) ms[p].insert(ms[p].end(), f.log_ms[p].begin(), f.log_ms[p].end());
      for (auto [k, v] : f.by_status) reads[k] += v;
      complete += f.complete ? 1 : 0;
      tails += f.tail_after_end ? 1 : 0;
      job_reads += f.job_reads;
    }
    Json read_statuses = Json::object();
    for (auto [k, v] : reads) read_statuses[k == 0 ? "transport_error" : std::to_string(k)] = v;
    out["follow"] = ProbeJson(following);
    out["followers"] = {{"clients", o.log_followers},
                        {"jobs", o.jobs},
                        {"line_ms", o.line_ms},
                        {"log_reads_alone", Stats(ms[kFollow])},
                        {"log_reads_during_flood", Stats(ms[kFlood])},
                        {"log_reads_after", Stats(ms[kAfter])},
                        {"log_reads_by_status", read_statuses},
                        {"job_reads", job_reads},
                        {"complete_logs", complete},
                        {"bytes_after_end", tails}};
    auto ends = JobEnds(o, user_token, job_ids);
    if (!ends.ok()) return fail(ends.status());
    out["jobs"] = *ends;
    auto after = ReadCluster(o);
    if (!after.ok()) return fail(after.status());
    out["agents"] = CompareNodes(before, *after);
  }
  std::cout << out.dump() << "\n";
  return 0;
}
