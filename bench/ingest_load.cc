// Server ingest load generator: opens N real agent connections (the agent
// protocol over WebSocket) to a running `rota server`, each reporting 8 GPUs
// every second, and measures
//   - sample ack latency (send -> server committed to SQLite -> ack), p50/p99/max,
//   - GET /api/v1/gpus latency while under that load, p50/p99: a user paging through
//     the cluster (--probe-page GPUs per request, the next page each time; 0 reads
//     every GPU in one request),
//   - server CPU (% of one core, and per acked sample) and RSS, read from
//     /proc/<server pid>, over the steady state; the ramp (connecting and registering
//     every agent: TCP, TLS and WebSocket handshakes) is reported apart.
//
// A https:// server is reached over wss:// (TLS), trusting --ca-file (a `rota server`'s
// generated CA: <data_dir>/tls/ca.pem), for the agents and the probe alike.
//
// The agents' messages are loadgen/sim_messages.h (as SimAgentFleet's, which the failover
// tests use: tests/ha_load_e2e_test.cc). These agents do not buffer or fail over: they
// measure one server.
//
// Usage: rota_ingest_load --server http[s]://127.0.0.1:PORT --token T --server-pid PID
//                         --agents 2000 --seconds 30 [--ramp-seconds 10] [--ca-file CA.pem]
// Prints one JSON object with the results.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/codec.h"
#include "api/protocol.h"
#include "common/clock.h"
#include "common/file_util.h"
#include "loadgen/sim_messages.h"
#include "net/http_client.h"
#include "net/ws_client.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string server;
  std::string token;      // join token (the agents')
  std::string api_token;  // a user's token for the GET /api/v1/gpus probe
  int server_pid = 0;
  int agents = 100;
  int seconds = 20;
  int ramp_seconds = 10;
  int gpus = 8;
  int loop_threads = 1;
  int interval_s = 1;  // each agent's sample interval
  int probe_page = 100;  // GPUs per GET /api/v1/gpus; 0: all
  std::string ca_file;   // trusted for a https:// server
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1));
  return v[i];
}

// utime+stime ticks and RSS bytes of a pid.
bool ProcUsage(int pid, uint64_t* ticks, uint64_t* rss) {
  auto stat = rota::ReadFile("/proc/" + std::to_string(pid) + "/stat");
  auto statm = rota::ReadFile("/proc/" + std::to_string(pid) + "/statm");
  if (!stat.ok() || !statm.ok()) return false;
  size_t close = stat->rfind(')');
  std::vector<std::string> f;
  size_t pos = close + 2;
  while (pos < stat->size()) {
    size_t sp = stat->find(' ', pos);
    f.push_back(stat->substr(pos, sp - pos));
    if (sp == std::string::npos) break;
    pos = sp + 1;
  }
  *ticks = std::stoull(f[11]) + std::stoull(f[12]);
  unsigned long long size = 0, res = 0;
  std::sscanf(statm->c_str(), "%llu %llu", &size, &res);
  *rss = res * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return true;
}

std::string SampleJson(int gpus, int64_t t_ms, int salt) {
  return rota::api::Encode(
      rota::api::SamplesMsg{static_cast<uint64_t>(t_ms / 1000), {rota::loadgen::SimSample(gpus, t_ms, salt)}});
}

struct Conn {
  std::unique_ptr<rota::net::WsClient> client;
  std::atomic<bool> registered{false};
  std::mutex mu;
  std::vector<std::pair<uint64_t, Clock::time_point>> inflight;  // seq -> send time
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--server") o.server = v;
    else if (k == "--token") o.token = v;
    else if (k == "--api-token") o.api_token = v;
    else if (k == "--server-pid") o.server_pid = std::stoi(v);
    else if (k == "--agents") o.agents = std::stoi(v);
    else if (k == "--seconds") o.seconds = std::stoi(v);
    else if (k == "--ramp-seconds") o.ramp_seconds = std::stoi(v);
    else if (k == "--gpus") o.gpus = std::stoi(v);
    else if (k == "--loop-threads") o.loop_threads = std::stoi(v);
    else if (k == "--interval") o.interval_s = std::stoi(v);
    else if (k == "--probe-page") o.probe_page = std::stoi(v);
    else if (k == "--ca-file") o.ca_file = v;
    else {
      std::cerr << "unknown flag " << k << "\n";
      return 2;
    }
  }
  const bool tls = o.server.rfind("https://", 0) == 0;
  if ((!tls && o.server.rfind("http://", 0) != 0) || o.token.empty() || o.api_token.empty() ||
      o.interval_s < 1 || o.interval_s > 60 || o.probe_page < 0) {
    std::cerr << "usage: rota_ingest_load --server http[s]://HOST:PORT --token JOIN_TOKEN "
                 "--api-token USER_TOKEN [--server-pid PID] [--agents N] [--seconds S] [--interval S] "
                 "[--probe-page GPUS] [--ca-file CA.pem]\n";
    return 2;
  }
  const std::string ws = (tls ? "wss://" + o.server.substr(8) : "ws://" + o.server.substr(7)) +
                         "/api/v1/agent/connect";
  rota::net::WsClientOptions ws_options;
  ws_options.tls.ca_file = o.ca_file;
  rota::net::SetClientTls(ws_options.tls);
  rota::net::WsClientLoop loop(o.loop_threads);
  std::vector<std::unique_ptr<Conn>> conns;
  std::mutex lat_mu;
  std::vector<double> ack_ms;
  // errors: the server's ErrorMsg; other: any other message (e.g. the power limits
  // every agent is sent when it registers).
  std::atomic<int> connect_failures{0}, closed{0}, errors{0}, other_messages{0};
  std::atomic<bool> measuring{false};

  // Connect all agents, spread over the ramp.
  uint64_t ramp_ticks0 = 0, ramp_ticks1 = 0, ramp_rss = 0, ramp_self0 = 0, ramp_self1 = 0;
  if (o.server_pid > 0) ProcUsage(o.server_pid, &ramp_ticks0, &ramp_rss);
  ProcUsage(getpid(), &ramp_self0, &ramp_rss);
  auto start = Clock::now();
  for (int i = 0; i < o.agents; ++i) {
    auto c = std::make_unique<Conn>();
    Conn* raw = c.get();
    c->client = loop.NewClient(ws_options);
    c->client->SetOnMessage([raw, &lat_mu, &ack_ms, &measuring, &errors,
                                  &other_messages](const std::string& text) {
      auto msg = rota::api::DecodeServerMessage(text);
      if (!msg.ok()) return;
      if (std::holds_alternative<rota::api::RegisteredMsg>(*msg)) {
        raw->registered = true;
      } else if (auto* ack = std::get_if<rota::api::AckMsg>(&*msg)) {
        auto now = Clock::now();
        std::lock_guard<std::mutex> lock(raw->mu);
        for (auto it = raw->inflight.begin(); it != raw->inflight.end();) {
          if (it->first <= ack->seq) {
            if (measuring) {
              std::lock_guard<std::mutex> l2(lat_mu);
              ack_ms.push_back(std::chrono::duration<double, std::milli>(now - it->second).count());
            }
            it = raw->inflight.erase(it);
          } else {
            ++it;
          }
        }
      } else if (std::holds_alternative<rota::api::ErrorMsg>(*msg)) {
        errors++;
      } else {
        other_messages++;
      }
    });
    c->client->SetOnClosed([&closed](const rota::Status&) { closed++; });
    rota::api::RegisterMsg reg = rota::loadgen::SimRegistration(
        "load-" + std::to_string(i), "load-id-" + std::to_string(i), i, o.gpus, 1000LL * o.interval_s);
    std::string reg_text = rota::api::Encode(reg);
    rota::net::WsClient* client = c->client.get();
    client->Connect(ws, {{"Authorization", "Bearer " + o.token}},
                    [client, reg_text, &connect_failures](const rota::Status& st) {
                      if (!st.ok()) {
                        connect_failures++;
                        return;
                      }
                      client->Send(reg_text);
                    });
    conns.push_back(std::move(c));
    if (o.ramp_seconds > 0 && i % 50 == 49) {
      std::this_thread::sleep_until(start + std::chrono::milliseconds(
                                                static_cast<int64_t>(o.ramp_seconds) * 1000 * (i + 1) / o.agents));
    }
  }
  // Wait for registrations.
  for (int w = 0; w < 300; ++w) {
    int n = 0;
    for (auto& c : conns) n += c->registered ? 1 : 0;
    if (n + connect_failures >= o.agents) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  int registered = 0;
  for (auto& c : conns) registered += c->registered ? 1 : 0;
  const double ramp_s = std::chrono::duration<double>(Clock::now() - start).count();
  if (o.server_pid > 0) ProcUsage(o.server_pid, &ramp_ticks1, &ramp_rss);
  ProcUsage(getpid(), &ramp_self1, &ramp_rss);
  const int closed_at_ramp = closed.load();

  // Reporting: every agent sends one sample per interval; in each second the agents whose
  // turn it is send, spread over the second.
  std::atomic<bool> stop{false};
  std::vector<double> get_ms;
  int get_failures = 0;  // answers other than 200 while measuring (a probe that measured
                         // nothing must say so, not report an empty p99)
  std::thread getter([&] {
    const std::vector<std::string> auth = {"Authorization: Bearer " + o.api_token};
    uint64_t offset = 0;
    while (!stop) {
      std::string url = o.server + "/api/v1/gpus";
      if (o.probe_page > 0) {
        url += "?offset=" + std::to_string(offset) + "&limit=" + std::to_string(o.probe_page);
      }
      auto t0 = Clock::now();
      auto r = rota::net::HttpCall("GET", url, "", auth, 10000);
      double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      const bool ok = r.ok() && r->status == 200;
      if (measuring) {
        if (ok) get_ms.push_back(ms);
        else ++get_failures;
      }
      if (ok && o.probe_page > 0) {  // the next page, from the start after the last one
        auto body = rota::api::Json::parse(r->body, nullptr, /*allow_exceptions=*/false);
        const uint64_t total = body.is_object() && body.value("total", rota::api::Json()).is_number_unsigned()
                                   ? body["total"].get<uint64_t>()
                                   : 0;
        offset += static_cast<uint64_t>(o.probe_page);
        if (offset >= total) offset = 0;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  uint64_t ticks0 = 0, ticks1 = 0, rss = 0, rss_max = 0, self0 = 0, self1 = 0, self_rss = 0;
  auto warmup = 3;
  Clock::time_point t_measure;
  int64_t wall0 = rota::RealClock::Get().NowMs() / 1000 * 1000;
  for (int sec = 0; sec < o.seconds + warmup; ++sec) {
    if (sec == warmup) {
      measuring = true;
      t_measure = Clock::now();
      if (o.server_pid > 0) ProcUsage(o.server_pid, &ticks0, &rss);
      ProcUsage(getpid(), &self0, &self_rss);
    }
    auto sec_start = Clock::now();
    int64_t t_ms = wall0 + sec * 1000;
    for (size_t i = 0; i < conns.size(); ++i) {
      Conn& c = *conns[i];
      if (c.registered && (static_cast<int>(i) + sec) % o.interval_s == 0) {
        std::string text = SampleJson(o.gpus, t_ms, static_cast<int>(i));
        {
          std::lock_guard<std::mutex> lock(c.mu);
          c.inflight.emplace_back(static_cast<uint64_t>(t_ms / 1000), Clock::now());
        }
        c.client->Send(std::move(text));
      }
      if (i % 100 == 99) {
        std::this_thread::sleep_until(sec_start + std::chrono::milliseconds(900 * (i + 1) / conns.size()));
      }
    }
    std::this_thread::sleep_until(sec_start + std::chrono::seconds(1));
    if (o.server_pid > 0) {
      uint64_t t, r;
      if (ProcUsage(o.server_pid, &t, &r)) rss_max = std::max(rss_max, r);
    }
  }
  double measured_s = std::chrono::duration<double>(Clock::now() - t_measure).count();
  if (o.server_pid > 0) ProcUsage(o.server_pid, &ticks1, &rss);
  ProcUsage(getpid(), &self1, &self_rss);
  std::this_thread::sleep_for(std::chrono::seconds(2));  // let the last acks arrive
  stop = true;
  getter.join();
  size_t unacked = 0;
  for (auto& c : conns) {
    std::lock_guard<std::mutex> lock(c->mu);
    unacked += c->inflight.size();
  }
  const int closed_total = closed.load();
  for (auto& c : conns) c->client.reset();
  auto percent = [&](uint64_t ticks) {
    return 100.0 * static_cast<double>(ticks) / static_cast<double>(sysconf(_SC_CLK_TCK)) / measured_s;
  };
  const double cpu_pct = percent(ticks1 - ticks0);
  const double ticks_per_s = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double cpu_us_per_sample = ack_ms.empty() ? 0
                                                  : 1e6 * static_cast<double>(ticks1 - ticks0) /
                                                        ticks_per_s / static_cast<double>(ack_ms.size());
  rota::api::Json out{{"agents", o.agents},
                      {"tls", tls},
                      {"registered", registered},
                      {"connect_failures", connect_failures.load()},
                      {"closed_during_ramp", closed_at_ramp},
                      {"closed_during_run", closed_total - closed_at_ramp},
                      {"ramp_s", ramp_s},
                      {"ramp_server_cpu_s", static_cast<double>(ramp_ticks1 - ramp_ticks0) / ticks_per_s},
                      {"ramp_load_generator_cpu_s", static_cast<double>(ramp_self1 - ramp_self0) / ticks_per_s},
                      {"errors", errors.load()},
                      {"other_messages", other_messages.load()},
                      {"gpus_per_agent", o.gpus},
                      {"interval_s", o.interval_s},
                      {"seconds", o.seconds},
                      {"samples_acked", ack_ms.size()},
                      {"samples_unacked_at_end", unacked},
                      {"ack_ms_p50", Percentile(ack_ms, 0.5)},
                      {"ack_ms_p99", Percentile(ack_ms, 0.99)},
                      {"ack_ms_max", Percentile(ack_ms, 1.0)},
                      {"get_gpus_page", o.probe_page},
                      {"get_gpus_requests", get_ms.size()},
                      {"get_gpus_failures", get_failures},
                      {"get_gpus_ms_p50", Percentile(get_ms, 0.5)},
                      {"get_gpus_ms_p99", Percentile(get_ms, 0.99)},
                      {"server_cpu_percent", cpu_pct},
                      {"server_cpu_us_per_sample", cpu_us_per_sample},
                      {"load_generator_cpu_percent", percent(self1 - self0)},
                      {"server_rss_mb", static_cast<double>(rss_max) / (1 << 20)}};
  std::cout << out.dump(2) << std::endl;
  return 0;
}
