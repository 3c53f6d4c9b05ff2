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
// Prints one JSON object: per phase the probe's p50/p99/max per endpoint; for the flood
// the answers by status, requests/s and, per client, the attempt that first got 429.
//
// Usage: rota_login_flood --server http://127.0.0.1:PORT --token TOKEN
//            [--clients 200] [--seconds 20] [--idle-s 5] [--probe-ms 20] [--honour-retry-after 0]

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
#include "net/http_client.h"

namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(std::lround(p * static_cast<double>(v.size() - 1)))];
}

struct Options {
  std::string server, token;
  int clients = 200;
  int seconds = 20;
  int idle_s = 5;
  int probe_ms = 20;
  bool honour_retry_after = false;
};

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

rota::api::Json ProbeJson(const Probe& p) {
  auto stats = [](const std::vector<double>& v) {
    return rota::api::Json{{"n", v.size()},
                           {"p50_ms", Percentile(v, 0.5)},
                           {"p99_ms", Percentile(v, 0.99)},
                           {"max_ms", v.empty() ? NAN : *std::max_element(v.begin(), v.end())}};
  };
  return {{"nodes", stats(p.nodes_ms)}, {"healthz", stats(p.healthz_ms)}, {"errors", p.errors}};
}

int Usage(const std::string& why) {
  std::cerr << "rota_login_flood: " << why
            << "\nusage: rota_login_flood --server URL --token TOKEN [--clients 200] [--seconds 20]"
               " [--idle-s 5] [--probe-ms 20] [--honour-retry-after 0]\n";
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
    else return Usage("unknown flag " + flag);
  }
  if (o.server.empty() || o.token.empty()) return Usage("--server and --token are required");
  if (o.clients < 1 || o.seconds < 1 || o.probe_ms < 1) return Usage("bad numbers");

  // Idle.
  std::atomic<bool> stop{false};
  Probe idle;
  {
    std::thread t([&] { idle = RunProbe(o, stop); });
    std::this_thread::sleep_for(std::chrono::seconds(o.idle_s));
    stop = true;
    t.join();
  }

  // Flood.
  stop = false;
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
      const std::string body = rota::api::Json{{"username", "flood-" + std::to_string(c)},
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

  int64_t total = 0;
  rota::api::Json statuses = rota::api::Json::object();
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
  rota::api::Json out{
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
  std::cout << out.dump() << "\n";
  return 0;
}
