// What one early-stopping look at a sweep costs the leader (server/jobs/early_stopper.cc):
// the read of every member's points of the rule's metric (store::ArrayTrialPoints, one
// query) and the decision (jobs::DecideEarlyStops, ASHA and median), on a store holding a
// sweep of TRIALS members with POINTS stepped points each (plus as many of another metric,
// which the query must skip). docs/benchmarks.md, "Early stopping: the cost of a look".
//
//   rota_early_stop_bench TRIALS POINTS [STORE_URL]   (default: SQLite in a new directory in /tmp)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/clock.h"
#include "jobs/early_stop.h"
#include "server/store/jobs.h"
#include "server/store/metrics.h"
#include "server/store/store.h"

using namespace rota;

namespace {

double Ms(SteadyTime a, SteadyTime b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

int Fail(const Status& st) {
  std::fprintf(stderr, "rota_early_stop_bench: %s\n", st.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: rota_early_stop_bench TRIALS POINTS [STORE_URL]\n");
    return 2;
  }
  const int trials = std::atoi(argv[1]);
  const int points = std::atoi(argv[2]);
  if (trials <= 0 || points <= 0) {
    std::fprintf(stderr, "TRIALS and POINTS must be positive\n");
    return 2;
  }
  // A directory of its own (the store makes its data dir private: never /tmp itself).
  char dir[] = "/tmp/rota_early_stop_bench_XXXXXX";
  if (argc <= 3 && ::mkdtemp(dir) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::string file = std::string(dir) + "/rota.db";
  const std::string url = argc > 3 ? argv[3] : "sqlite:" + file;
  RealClock& clock = RealClock::Get();
  auto opened = store::Store::OpenUrl(url, {}, clock);
  if (!opened.ok()) return Fail(opened.status());
  std::unique_ptr<store::Store> s = std::move(*opened);
  int64_t array_id = 0;
  std::vector<int64_t> jobs;
  const SteadyTime t0 = SteadyNow();
  Status st = s->Write([&](store::Db& db) -> Status {
    RETURN_IF_ERROR(db.Exec("INSERT INTO users (id, username, role, created_ms, updated_ms) VALUES "
                            "(1, 'bench', 'user', 0, 0)"));
    store::ArrayRow a;
    a.owner_id = 1;
    a.name = "sweep";
    a.indices = "0-" + std::to_string(trials - 1);
    a.size = trials;
    a.spec_json = "{}";
    ASSIGN_OR_RETURN(array_id, store::InsertArray(db, a));
    for (int i = 0; i < trials; ++i) {
      store::JobRow r;
      r.owner_id = 1;
      r.name = "trial";
      r.spec_json = "{}";
      r.state = i % 3 == 0 ? "succeeded" : "running";
      r.array_id = array_id;
      r.array_index = i;
      ASSIGN_OR_RETURN(int64_t id, store::InsertJob(db, r));
      jobs.push_back(id);
    }
    return Status::Ok();
  });
  if (!st.ok()) return Fail(st);
  // Points in transactions of one trial each (as agents' batches arrive, but bigger).
  for (int i = 0; i < trials; ++i) {
    std::vector<api::TaskMetricPoint> batch;
    batch.reserve(2 * static_cast<size_t>(points));
    for (int p = 0; p < points; ++p) {
      const double loss = 1.0 + i * 0.01 + 1.0 / (p + 1);
      const int64_t t = 1'700'000'000'000 + p * 1000 + i;
      batch.push_back({"loss", loss, p + 1, api::TaskMetricPoint::Source::kStdout, uint64_t(2 * p), t});
      batch.push_back({"acc", 1 / loss, p + 1, api::TaskMetricPoint::Source::kStdout, uint64_t(2 * p + 1), t});
    }
    const std::string task = "job-" + std::to_string(jobs[i]) + ".r0.worker-0";
    st = s->Write([&](store::Db& db) { return store::InsertMetricPoints(db, jobs[i], task, batch); });
    if (!st.ok()) return Fail(st);
  }
  const SteadyTime t1 = SteadyNow();
  std::vector<double> read_ms, decide_asha_ms, decide_median_ms;
  size_t rows = 0;
  int stops = 0;
  for (int look = 0; look < 5; ++look) {
    std::vector<store::TrialPoints> got;
    const SteadyTime a = SteadyNow();
    st = s->Read([&](store::Db& db) -> Status {
      ASSIGN_OR_RETURN(got, store::ArrayTrialPoints(db, array_id, "loss"));
      return Status::Ok();
    });
    if (!st.ok()) return Fail(st);
    const SteadyTime b = SteadyNow();
    std::vector<jobs::TrialHistory> hist;
    rows = 0;
    for (auto& g : got) {
      jobs::TrialHistory h;
      h.job_id = g.job_id;
      h.running = g.state == "running";
      h.completed = g.state == "succeeded";
      for (auto& p : g.points) h.points.push_back({p.step, p.value, p.time_ms});
      rows += g.points.size();
      hist.push_back(std::move(h));
    }
    jobs::EarlyStopSpec asha;
    asha.rule = jobs::EarlyStopSpec::Rule::kAsha;
    asha.metric = "loss";
    const SteadyTime c = SteadyNow();
    stops = static_cast<int>(jobs::DecideEarlyStops(asha, hist).size());
    const SteadyTime d = SteadyNow();
    jobs::EarlyStopSpec median;
    median.metric = "loss";
    (void)jobs::DecideEarlyStops(median, hist);
    const SteadyTime e = SteadyNow();
    read_ms.push_back(Ms(a, b));
    decide_asha_ms.push_back(Ms(c, d));
    decide_median_ms.push_back(Ms(d, e));
  }
  auto median_of = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf(
      "{\"store\": \"%s\", \"trials\": %d, \"points_per_trial\": %d, \"rows_read\": %zu, \"load_s\": %.1f, "
      "\"read_ms\": %.1f, \"decide_asha_ms\": %.2f, \"decide_median_ms\": %.2f, \"asha_stops\": %d}\n",
      url.rfind("sqlite:", 0) == 0 ? "sqlite" : "postgresql", trials, points, rows, Ms(t0, t1) / 1000,
      median_of(read_ms), median_of(decide_asha_ms), median_of(decide_median_ms), stops);
  s.reset();
  if (argc <= 3) {
    for (const char* suffix : {"", "-wal", "-shm"}) ::unlink((file + suffix).c_str());
    ::unlink((std::string(dir) + "/rota.lock").c_str());
    ::rmdir(dir);
  }
  return 0;
}
