// rota_store_bench [NODES] [SECONDS] [STORE_URL]: the store's writer alone. NODES nodes of 8
// GPUs each send one sample per simulated second for SECONDS simulated seconds,
// appended as fast as the writer takes them (at most 4,096 samples unacked,
// like many agents at once); the store's clock follows the samples, so minutes
// close and are aggregated as in a live server. Prints samples and GPU rows per
// second of wall time, the process's CPU time per sample (all threads: the
// appending one, the writer, the checkpoints; steadier than wall time on a busy
// machine) and the writer's transactions, then the database file's size once
// closed, per GPU sample. Figures: docs/benchmarks.md. STORE_URL (store_url.h, e.g. an
// empty PostgreSQL database) instead of a new SQLite store in a temporary directory.

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>

#include "common/clock.h"
#include "server/store/store.h"

namespace {

using rota::Status;

constexpr int kGpus = 8;

// User + system CPU time of the whole process, µs.
double ProcessCpuUs() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return (static_cast<double>(ru.ru_utime.tv_sec) + static_cast<double>(ru.ru_stime.tv_sec)) * 1e6 +
         static_cast<double>(ru.ru_utime.tv_usec) + static_cast<double>(ru.ru_stime.tv_usec);
}
constexpr int64_t kT0 = 1'700'000'000'000;

// Wall time is whatever the benchmark says (the newest sample's time).
class SampleClock final : public rota::Clock {
 public:
  int64_t NowMs() const override { return now_.load(); }
  int64_t MonotonicMs() const override { return rota::RealClock::Get().MonotonicMs(); }
  void Set(int64_t ms) { now_.store(ms); }

 private:
  std::atomic<int64_t> now_{kT0};
};

rota::api::NodeInfo Node(int i) {
  rota::api::NodeInfo n;
  n.name = "node-" + std::to_string(i);
  n.node_id = "id-" + n.name;
  n.hostname = n.name;
  n.cpus = 64;
  n.memory_bytes = 512ULL << 30;
  for (int g = 0; g < kGpus; ++g) {
    rota::api::GpuInfo gi;
    gi.index = static_cast<uint32_t>(g);
    gi.uuid = "GPU-" + n.name + "-" + std::to_string(g);
    gi.name = "NVIDIA H100 80GB HBM3";
    gi.pci_bus_id = "00000000:1" + std::to_string(g) + ":00.0";
    gi.memory_total_bytes = 80ULL << 30;
    n.gpus.push_back(gi);
  }
  return n;
}

rota::api::NodeSample Sample(int64_t t_ms, int node) {
  rota::api::NodeSample s;
  s.time_ms = t_ms;
  const auto v = static_cast<uint32_t>((t_ms / 1000 + node) % 100);
  s.host.cpu_percent = v;
  s.host.mem_total_bytes = 512ULL << 30;
  s.host.mem_available_bytes = 256ULL << 30;
  s.host.load1 = v / 10.0;
  for (int g = 0; g < kGpus; ++g) {
    rota::api::GpuSample gs;
    gs.index = static_cast<uint32_t>(g);
    gs.util_gpu_pct = v;
    gs.util_memory_pct = v / 2;
    gs.memory_used_bytes = uint64_t{v} << 28;
    gs.memory_total_bytes = 80ULL << 30;
    gs.temperature_c = 40 + v / 5;
    gs.power_mw = 100'000 + v * 4'000;
    gs.energy_mj = static_cast<uint64_t>(t_ms - kT0) * 300;
    gs.sm_clock_mhz = 1980;
    gs.mem_clock_mhz = 2619;
    gs.fan_pct = 0;
    s.gpus.push_back(gs);
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int seconds = argc > 2 ? std::atoi(argv[2]) : 180;
  const std::string url = argc > 3 ? argv[3] : "";
  if (nodes <= 0 || seconds <= 0) {
    std::fprintf(stderr, "usage: rota_store_bench [NODES > 0] [SECONDS > 0] [STORE_URL]\n");
    return 2;
  }
  char tmpl[] = "/tmp/rota_store_bench_XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;
  SampleClock clock;
  int rc = 0;
  {
    auto opened = url.empty() ? rota::store::Store::Open(dir, {}, clock)
                              : rota::store::Store::OpenUrl(url, {}, clock);
    if (!opened.ok()) {
      std::fprintf(stderr, "%s\n", opened.status().ToString().c_str());
      return 1;
    }
    rota::store::Store& store = **opened;
    for (int i = 0; i < nodes; ++i) {
      if (Status st = store.UpsertNode(Node(i), kT0); !st.ok()) {
        std::fprintf(stderr, "%s\n", st.ToString().c_str());
        return 1;
      }
    }
    std::mutex mu;
    std::condition_variable cv;
    int64_t inflight = 0, failed = 0;
    const auto start = std::chrono::steady_clock::now();
    const double cpu0 = ProcessCpuUs();
    for (int s = 0; s < seconds; ++s) {
      const int64_t t = kT0 + int64_t{s} * 1000;
      clock.Set(t + 500);
      for (int i = 0; i < nodes; ++i) {
        {
          std::unique_lock lk(mu);
          cv.wait(lk, [&] { return inflight < 4096; });
          ++inflight;
        }
        store.Append("node-" + std::to_string(i), {Sample(t, i)}, [&](Status st) {
          std::lock_guard lk(mu);
          --inflight;
          if (!st.ok()) ++failed;
          cv.notify_one();
        });
      }
    }
    if (Status st = store.Flush(); !st.ok()) rc = 1;
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double cpu_us = ProcessCpuUs() - cpu0;
    const auto stats = store.Stats();
    const double samples = double(nodes) * seconds;
    std::printf(
        "{\"nodes\":%d,\"gpus_per_node\":%d,\"seconds\":%d,\"wall_s\":%.3f,"
        "\"samples_per_s\":%.0f,\"gpu_rows_per_s\":%.0f,\"cpu_us_per_sample\":%.1f,"
        "\"transactions\":%lld,\"failed\":%lld,\"minutes_from_memory\":%lld,"
        "\"minutes_recomputed\":%lld,\"checkpoints\":%lld,\"wal_restarts\":%lld}\n",
        nodes, kGpus, seconds, wall, samples / wall, samples * kGpus / wall, cpu_us / samples,
        static_cast<long long>(stats.transactions), static_cast<long long>(failed),
        static_cast<long long>(stats.minutes_from_memory),
        static_cast<long long>(stats.minutes_recomputed),
        static_cast<long long>(stats.checkpoints), static_cast<long long>(stats.wal_restarts));
    if (failed > 0) rc = 1;
  }
  // The store is closed: its WAL is checkpointed into the database file. Every
  // table counts (samples, minute aggregates, nodes): the cost of keeping them.
  std::error_code ec;
  const auto db_bytes = std::filesystem::file_size(dir + "/rota.db", ec);
  if (!ec) {
    const double gpu_samples = double(nodes) * seconds * kGpus;
    std::printf("{\"db_bytes\":%llu,\"db_bytes_per_gpu_sample\":%.1f}\n",
                static_cast<unsigned long long>(db_bytes), double(db_bytes) / gpu_samples);
  }
  std::filesystem::remove_all(dir);
  return rc;
}
