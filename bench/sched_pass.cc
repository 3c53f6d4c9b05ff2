// Scheduler pass latency: one sched::Schedule call on a live-like snapshot
// (352 nodes x 8 GPUs, ~90 % of GPUs held by running jobs with time limits,
// reservations, N pending jobs of mixed sizes and users, explain on: every
// pending job gets a reason, the first 100 blocked ones an estimate).
//   rota_sched_bench [PENDING ...]   (default: 1000 10000)
//   NO_DEFRAG=1 rota_sched_bench ...  (defragmentation off: its cost)
//   NO_EXPLAIN=1 rota_sched_bench ... (no reasons or estimates: a live pass between full ticks)
//   RUNS=N rota_sched_bench ...       (passes per size; default 100, 30 at 10,000)
// Prints p50/p99/max of the pass over repeated runs, and a digest of the
// decisions (starts, preemptions, reasons, estimates): a faster scheduler
// must print the same digest. docs/benchmarks.md.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/clock.h"
#include "sched/scheduler.h"

namespace {

using namespace rota::sched;

constexpr int64_t kNow = 1'800'000'000'000;
constexpr int64_t kMin = 60'000;

Snapshot Build(int pending) {
  Snapshot s;
  s.now_ms = kNow;
  if (std::getenv("NO_DEFRAG")) s.policy.defragment = false;
  if (std::getenv("NO_EXPLAIN")) s.policy.explain = false;
  s.queues.push_back(Queue{});
  uint64_t seed = 42;
  auto rnd = [&seed](uint64_t n) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (seed >> 33) % n;
  };
  for (int i = 0; i < 352; ++i) {
    Node n;
    n.name = "gpu-" + std::to_string(i);
    n.gpu_model = i % 4 == 0 ? "V100" : "A100";
    n.labels["rack"] = "r" + std::to_string(i / 16);
    n.gpus = 8;
    s.nodes.push_back(n);
  }
  // Running jobs: fill ~90 % of GPUs with 1-8 GPU tasks.
  int64_t id = 1;
  for (const auto& n : s.nodes) {
    uint32_t g = 0;
    while (g < 8) {
      const uint32_t size = std::min<uint32_t>(8 - g, 1u << rnd(4));
      if (rnd(10) == 0) {  // leave a hole
        g += size;
        continue;
      }
      RunningJob r;
      r.meta.id = id++;
      r.meta.user = "u" + std::to_string(rnd(50));
      r.meta.group = "g" + std::to_string(rnd(8));
      r.meta.preemptible = rnd(3) == 0;
      r.meta.time_limit_ms = (1 + static_cast<int64_t>(rnd(48))) * 60 * kMin;
      r.started_ms = kNow - static_cast<int64_t>(rnd(600)) * kMin;
      r.meta.submitted_ms = r.meta.queued_ms = r.started_ms - kMin;
      r.expected_end_ms = std::max(kNow + kMin, r.started_ms + r.meta.time_limit_ms);
      r.meta.attained_gpu_ms = static_cast<double>(size) * static_cast<double>(kNow - r.started_ms);
      TaskAlloc t;
      t.node = n.name;
      for (uint32_t k = 0; k < size; ++k) t.gpus.push_back(g + k);
      r.tasks.push_back(t);
      r.demands.push_back(TaskDemand{.tasks = 1, .gpus_per_task = size});  // movable (defragmentation)
      s.running.push_back(r);
      g += size;
    }
  }
  for (int i = 0; i < 40; ++i) {
    Reservation r;
    r.id = i + 1;
    r.user = "u" + std::to_string(rnd(50));
    r.node = "gpu-" + std::to_string(rnd(352));
    r.gpus = {0, 1, 2, 3};
    r.start_ms = kNow + static_cast<int64_t>(rnd(48)) * 30 * kMin;
    r.end_ms = r.start_ms + 4 * 60 * kMin;
    s.reservations.push_back(r);
  }
  for (int u = 0; u < 50; ++u)
    s.fairshare.user_usage["u" + std::to_string(u)] = static_cast<double>(rnd(1000)) * 1e6;
  static const uint32_t kSizes[] = {1, 1, 1, 1, 2, 4, 8, 8, 16, 32};
  for (int i = 0; i < pending; ++i) {
    PendingJob p;
    p.meta.id = id++;
    p.meta.user = "u" + std::to_string(rnd(50));
    p.meta.group = "g" + std::to_string(rnd(8));
    p.meta.submitted_ms = p.meta.queued_ms = kNow - static_cast<int64_t>(rnd(3000)) * kMin;
    p.meta.time_limit_ms = (1 + static_cast<int64_t>(rnd(24))) * 60 * kMin;
    p.meta.preemptible = rnd(4) == 0;
    const uint32_t gpus = kSizes[rnd(10)];
    TaskDemand d;
    d.tasks = gpus > 8 ? gpus / 8 : 1;
    d.gpus_per_task = std::min<uint32_t>(gpus, 8);
    if (rnd(5) == 0) d.gpu_model = "V100";
    p.demands.push_back(d);
    s.pending.push_back(p);
  }
  return s;
}

// FNV-1a over every decision, in order.
uint64_t Digest(const Decisions& d) {
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&h](const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;
  };
  for (const auto& s : d.starts) {
    mix("start " + std::to_string(s.id));
    for (const auto& t : s.tasks) {
      mix(t.node);
      for (uint32_t g : t.gpus) mix(std::to_string(g));
    }
  }
  for (const auto& p : d.preemptions) mix("preempt " + std::to_string(p.id) + " " + p.reason);
  for (const auto& w : d.waits) {
    mix("wait " + std::to_string(w.id) + " " + w.reason + " " +
        std::to_string(w.estimated_start_ms) + " " + std::to_string(w.position));
  }
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {1000, 10000};
  std::printf("%8s %8s %8s %8s %8s %7s %7s %6s  %s\n", "pending", "running", "p50_ms", "p99_ms",
              "max_ms", "starts", "preempt", "waits", "digest");
  for (int n : sizes) {
    const Snapshot s = Build(n);
    const char* runs_env = std::getenv("RUNS");
    const int runs = runs_env ? std::max(1, std::atoi(runs_env)) : n >= 10000 ? 30 : 100;
    std::vector<double> ms;
    Decisions d;
    for (int r = 0; r < runs; ++r) {
      const int64_t t0 = rota::MonotonicNs();
      d = Schedule(s);
      ms.push_back(static_cast<double>(rota::MonotonicNs() - t0) / 1e6);
    }
    std::sort(ms.begin(), ms.end());
    std::printf("%8d %8zu %8.2f %8.2f %8.2f %7zu %7zu %6zu  %016llx\n", n, s.running.size(),
                ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 99 / 100)], ms.back(),
                d.starts.size(), d.preemptions.size(), d.waits.size(),
                static_cast<unsigned long long>(Digest(d)));
  }
  return 0;
}
