#include "accounting/ledger.h"

#include <gtest/gtest.h>

#include "accounting/meter.h"

namespace rota::accounting {
namespace {

constexpr int64_t kHour = 3'600'000;

api::GpuSample Gpu(uint32_t index, std::optional<uint64_t> counter, std::optional<uint32_t> power_mw,
                   uint32_t util = 0) {
  api::GpuSample g;
  g.index = index;
  g.uuid = "GPU-" + std::to_string(index);
  g.energy_mj = counter;
  g.power_mw = power_mw;
  g.util_gpu_pct = util;
  return g;
}

api::NodeSample Sample(int64_t time_ms, std::vector<api::GpuSample> gpus) {
  api::NodeSample s;
  s.time_ms = time_ms;
  s.gpus = std::move(gpus);
  return s;
}

api::GpuProcess Proc(const std::string& user) {
  api::GpuProcess p;
  p.pid = 100;
  p.user = user;
  return p;
}

Amounts Sum(const std::map<Key, Amounts>& rows, const std::function<bool(const Key&)>& match) {
  Amounts total;
  for (const auto& [k, a] : rows) {
    if (match(k)) total += a;
  }
  return total;
}

TEST(MeterTest, CounterIsExactAcrossAnyGap) {
  Energy e = Between({1000, 5'000'000, 100'000}, {601'000, 65'000'000, 100'000}, 10'000);
  EXPECT_EQ(e.method, Method::kCounter);
  EXPECT_DOUBLE_EQ(e.mj, 60'000'000);
}

TEST(MeterTest, PowerIsIntegratedWithoutCounterAndEstimatedAcrossAGap) {
  // 100 W -> 300 W over 2 s: 400 J.
  Energy e = Between({0, std::nullopt, 100'000}, {2000, std::nullopt, 300'000}, 10'000);
  EXPECT_EQ(e.method, Method::kIntegrated);
  EXPECT_DOUBLE_EQ(e.mj, 400'000);
  e = Between({0, std::nullopt, 100'000}, {20'000, std::nullopt, 100'000}, 10'000);
  EXPECT_EQ(e.method, Method::kEstimated);
  EXPECT_DOUBLE_EQ(e.mj, 2'000'000);
}

TEST(MeterTest, ACounterResetOrAnImplausibleJumpFallsBackToPower) {
  Energy e = Between({0, 9'000'000, 200'000}, {1000, 150'000, 200'000}, 10'000);
  EXPECT_EQ(e.method, Method::kIntegrated);
  EXPECT_DOUBLE_EQ(e.mj, 200'000);
  // 10 MJ in a second: 10 MW.
  e = Between({0, 0, 200'000}, {1000, 10'000'000'000, 200'000}, 10'000);
  EXPECT_EQ(e.method, Method::kIntegrated);
  EXPECT_EQ(Between({0, std::nullopt, std::nullopt}, {1000, std::nullopt, std::nullopt}, 10'000).method,
            Method::kNone);
}

TEST(LedgerTest, AJobIsChargedExactlyForItsPartOfEachInterval) {
  Ledger ledger;
  NodeFacts facts;
  facts.holdings.push_back({7, "alice", {0}, 10'500, 0});
  People people;
  people.group_of_user["alice"] = "ml";
  // Counter: 100 W before the job started at 10.5 s, 300 W after (sampled every second).
  uint64_t counter = 0;
  ledger.Add("n1", Sample(10'000, {Gpu(0, counter, 100'000)}), facts, people);
  counter += 50'000 + 150'000;  // 0.5 s at 100 W, 0.5 s at 300 W
  ledger.Add("n1", Sample(11'000, {Gpu(0, counter, 300'000, 90)}), facts, people);
  counter += 300'000;
  ledger.Add("n1", Sample(12'000, {Gpu(0, counter, 300'000, 90)}), facts, people);
  facts.holdings[0].end_ms = 12'250;
  counter += 300'000 * 0.25 + 100'000 * 0.75;
  ledger.Add("n1", Sample(13'000, {Gpu(0, counter, 100'000)}), facts, people);

  auto pending = ledger.Take();
  Amounts job = Sum(pending.rows, [](const Key& k) { return k.job_id == 7; });
  Amounts idle = Sum(pending.rows, [](const Key& k) { return k.job_id == 0; });
  EXPECT_DOUBLE_EQ(job.gpu_ms, 1750);  // 10.5 s .. 12.25 s
  EXPECT_DOUBLE_EQ(idle.gpu_ms, 1250);
  // Pro rata within an interval: the job's share of each interval's counter delta.
  EXPECT_DOUBLE_EQ(job.energy_mj, 200'000 * 0.5 + 300'000 + 150'000 * 0.25);
  EXPECT_DOUBLE_EQ(job.energy_mj + idle.energy_mj, static_cast<double>(counter));
  EXPECT_DOUBLE_EQ(job.counter_mj, job.energy_mj);
  for (const auto& [k, a] : pending.rows) {
    if (k.job_id == 7) {
      EXPECT_EQ(k.user, "alice");
      EXPECT_EQ(k.group, "ml");
    }
  }
  EXPECT_DOUBLE_EQ(ledger.TotalsByUser().at("alice").energy_mj, job.energy_mj);
  EXPECT_EQ(pending.meters.at({"n1", 0}).last.counter_mj, counter);
}

TEST(LedgerTest, ProcessesOutsideJobsAreChargedToTheirUsersAndIdleTimeToNobody) {
  Ledger ledger;
  People people;
  people.user_of_unix["bob"] = "robert";
  ledger.Add("n1", Sample(0, {Gpu(0, 0, 100'000), Gpu(1, 0, 50'000)}), {}, people);
  api::GpuSample busy = Gpu(0, 400'000, 300'000, 100);
  busy.processes = {Proc("bob"), Proc("carol")};
  ledger.Add("n1", Sample(2000, {busy, Gpu(1, 100'000, 50'000)}), {}, people);
  auto rows = ledger.Take().rows;
  Amounts robert = Sum(rows, [](const Key& k) { return k.user == "robert"; });
  Amounts carol = Sum(rows, [](const Key& k) { return k.user == "unix:carol"; });
  Amounts idle = Sum(rows, [](const Key& k) { return k.user.empty(); });
  EXPECT_DOUBLE_EQ(robert.energy_mj, 200'000);
  EXPECT_DOUBLE_EQ(carol.gpu_ms, 1000);
  EXPECT_DOUBLE_EQ(carol.util_ms, 1000);
  EXPECT_DOUBLE_EQ(robert.busy_ms, 1000);
  EXPECT_DOUBLE_EQ(idle.gpu_ms, 2000);
  EXPECT_DOUBLE_EQ(idle.busy_ms, 0);
  EXPECT_DOUBLE_EQ(idle.energy_mj, 100'000);
}

TEST(LedgerTest, ReservationsAndBucketEdgesCutIntervals) {
  Ledger ledger;
  NodeFacts facts;
  facts.reservations.push_back({42, "alice", {0}, kHour - 500, kHour + 250});
  ledger.Add("n1", Sample(kHour - 1000, {Gpu(0, 0, 0)}), facts, {});
  ledger.Add("n1", Sample(kHour + 1000, {Gpu(0, 2'000'000, 0)}), facts, {});
  auto rows = ledger.Take().rows;
  Amounts reserved = Sum(rows, [](const Key& k) { return k.reservation_id == 42; });
  EXPECT_DOUBLE_EQ(reserved.gpu_ms, 750);
  EXPECT_DOUBLE_EQ(reserved.energy_mj, 750'000);
  // Left idle, the reserved time is its owner's; the rest is nobody's. Both are idle energy.
  EXPECT_DOUBLE_EQ(Sum(rows, [](const Key& k) { return k.user == "alice"; }).gpu_ms, 750);
  EXPECT_DOUBLE_EQ(Sum(rows, [](const Key& k) { return k.user.empty(); }).gpu_ms, 1250);
  EXPECT_DOUBLE_EQ(Sum(rows, [](const Key&) { return true; }).idle_mj, 2'000'000);
  EXPECT_DOUBLE_EQ(Sum(rows, [](const Key&) { return true; }).energy_mj, 2'000'000);
  EXPECT_DOUBLE_EQ(Sum(rows, [](const Key& k) { return k.bucket_ms == 0; }).gpu_ms, 1000);
  EXPECT_DOUBLE_EQ(Sum(rows, [](const Key& k) { return k.bucket_ms == kHour; }).gpu_ms, 1000);
}

TEST(LedgerTest, ReplaysCountOnceAndARestoredMeterContinues) {
  Ledger ledger;
  ledger.Add("n1", Sample(1000, {Gpu(0, 1000, 1000)}), {}, {});
  ledger.Add("n1", Sample(2000, {Gpu(0, 3000, 1000)}), {}, {});
  ledger.Add("n1", Sample(2000, {Gpu(0, 3000, 1000)}), {}, {});  // replayed
  ledger.Add("n1", Sample(1500, {Gpu(0, 2000, 1000)}), {}, {});  // older
  auto first = ledger.Take();
  EXPECT_DOUBLE_EQ(Sum(first.rows, [](const Key&) { return true; }).energy_mj, 2000);

  // A new ledger (server restart) continues from the stored meter: the energy
  // used while it was down is counted (by the counter) at the next sample.
  Ledger restarted;
  restarted.Restore({"n1", 0}, first.meters.at({"n1", 0}));
  restarted.Add("n1", Sample(62'000, {Gpu(0, 603'000, 10'000)}), {}, {});
  Amounts after = Sum(restarted.Take().rows, [](const Key&) { return true; });
  EXPECT_DOUBLE_EQ(after.energy_mj, 600'000);
  EXPECT_DOUBLE_EQ(after.counter_mj, 600'000);
  EXPECT_DOUBLE_EQ(after.gpu_ms, 60'000);
}

TEST(LedgerTest, ACounterResetAndASwappedGpuUsePowerAndFailedGpusWait) {
  Ledger ledger;
  ledger.Add("n1", Sample(0, {Gpu(0, 9'000'000, 100'000)}), {}, {});
  ledger.Add("n1", Sample(1000, {Gpu(0, 5'000, 100'000)}), {}, {});  // driver reloaded
  api::GpuSample swapped = Gpu(0, 9'999'000, 100'000);
  swapped.uuid = "GPU-new";
  ledger.Add("n1", Sample(2000, {swapped}), {}, {});
  api::GpuSample failed = Gpu(0, std::nullopt, std::nullopt);
  failed.failed = true;
  ledger.Add("n1", Sample(3000, {failed}), {}, {});
  swapped.energy_mj = 10'199'000;
  ledger.Add("n1", Sample(4000, {swapped}), {}, {});
  Amounts all = Sum(ledger.Take().rows, [](const Key&) { return true; });
  // 100 J by power twice, then 200 J by the counter over 2 s (the failed sample waited).
  EXPECT_DOUBLE_EQ(all.energy_mj, 100'000 + 100'000 + 200'000);
  EXPECT_DOUBLE_EQ(all.counter_mj, 200'000);
  EXPECT_DOUBLE_EQ(all.gpu_ms, 4000);
}

TEST(MeterTest, OnePowerReadingIsHeldAndImplausiblePowerIsCapped) {
  Energy e = Between({0, std::nullopt, 100'000}, {1000, std::nullopt, std::nullopt}, 10'000);
  EXPECT_DOUBLE_EQ(e.mj, 100'000);
  e = Between({0, std::nullopt, std::nullopt}, {1000, std::nullopt, 200'000}, 10'000);
  EXPECT_DOUBLE_EQ(e.mj, 200'000);
  e = Between({0, std::nullopt, 4'000'000'000}, {1000, std::nullopt, 4'000'000'000}, 10'000);
  EXPECT_DOUBLE_EQ(e.mj, kMaxPlausibleWatts * 1000);
}

TEST(LedgerTest, AnIntervalTooLongIsNotAccountedAndTheMeterRestarts) {
  Ledger ledger;
  ledger.Add("n1", Sample(0, {Gpu(0, std::nullopt, 100'000)}), {}, {});
  // A clock set years ahead: nothing is accounted, nothing is cut by the hour.
  ledger.Add("n1", Sample(int64_t{200'000} * kHour, {Gpu(0, std::nullopt, 100'000)}), {}, {});
  EXPECT_TRUE(ledger.Take().rows.empty());
  ledger.Add("n1", Sample(int64_t{200'000} * kHour + 1000, {Gpu(0, std::nullopt, 100'000)}), {}, {});
  EXPECT_DOUBLE_EQ(Sum(ledger.Take().rows, [](const Key&) { return true; }).energy_mj, 100'000);
}

TEST(LedgerTest, PutBackMergesWithNewerAmounts) {
  Ledger ledger;
  ledger.Add("n1", Sample(0, {Gpu(0, 0, 0)}), {}, {});
  ledger.Add("n1", Sample(1000, {Gpu(0, 1000, 0)}), {}, {});
  auto failed_write = ledger.Take();
  ledger.Add("n1", Sample(2000, {Gpu(0, 3000, 0)}), {}, {});
  ledger.PutBack(std::move(failed_write));
  auto all = ledger.Take();
  EXPECT_DOUBLE_EQ(Sum(all.rows, [](const Key&) { return true; }).energy_mj, 3000);
  EXPECT_EQ(all.meters.at({"n1", 0}).last.time_ms, 2000);
}

// A failed store write gives its meters back even when no sample came since:
// the next Take stores them. Meters that did not move are not stored again.
TEST(LedgerTest, TakeStoresTheMetersThatMovedAndPutBackKeepsThem) {
  Ledger ledger;
  ledger.Add("n1", Sample(0, {Gpu(0, 0, 0), Gpu(1, 0, 0)}), {}, {});
  EXPECT_EQ(ledger.Take().meters.size(), 2u);
  EXPECT_TRUE(ledger.Take().meters.empty());
  ledger.Add("n1", Sample(1000, {Gpu(1, 500, 0)}), {}, {});
  ledger.Add("n1", Sample(1000, {Gpu(0, 900, 0)}), {}, {});
  ledger.Add("n1", Sample(500, {Gpu(1, 100, 0)}), {}, {});   // a replay: older than GPU 1's meter
  auto failed_write = ledger.Take();
  ASSERT_EQ(failed_write.meters.size(), 2u);
  EXPECT_EQ(failed_write.meters.at({"n1", 1}).last.counter_mj, 500u);
  ledger.PutBack(std::move(failed_write));
  auto retried = ledger.Take();
  ASSERT_EQ(retried.meters.size(), 2u);
  EXPECT_EQ(retried.meters.at({"n1", 0}).last.time_ms, 1000);
  EXPECT_DOUBLE_EQ(Sum(retried.rows, [](const Key&) { return true; }).energy_mj, 1400);
  EXPECT_TRUE(ledger.Take().meters.empty());
}

// --- CPU package energy (RAPL) ---

api::NodeSample CpuSample(int64_t time_ms, uint64_t energy_mj, std::optional<uint64_t> busy_usec,
                          std::vector<api::CpuTaskSample> tasks = {}) {
  api::NodeSample s;
  s.time_ms = time_ms;
  s.host.cpu_energy_mj = energy_mj;
  s.host.cpu_busy_usec = busy_usec;
  s.host.cpu_tasks = std::move(tasks);
  return s;
}

double CpuOf(const std::map<Key, Amounts>& rows, const std::function<bool(const Key&)>& match) {
  return Sum(rows, match).cpu_mj;
}

TEST(LedgerCpuTest, AJobsTaskGetsTheEnergyTimesItsCpuShareAndOtherTheRest) {
  Ledger ledger;
  NodeFacts facts;
  facts.holdings.push_back({7, "alice", {0}, 0, 0});
  People people;
  people.group_of_user["alice"] = "ml";
  ledger.Add("n1", CpuSample(10'000, 5'000, 1'000'000, {{"job-7.r0.w-0", 7, 100}, {"job-8.r0.w-0", 8, 0}}),
             facts, people);
  // 300 J over a second; 2 CPU-seconds busy, of which job 7's task used 1 and job 8's
  // (not held: not known to the server) 0.5. A task not in the first sample counts
  // from the next one.
  ledger.Add("n1",
             CpuSample(11'000, 305'000, 3'000'000,
                       {{"job-7.r0.w-0", 7, 1'000'100}, {"job-8.r0.w-0", 8, 500'000}, {"job-9.r0.w-0", 9, 9'999}}),
             facts, people);
  auto pending = ledger.Take();
  EXPECT_EQ(CpuOf(pending.rows, [](const Key& k) { return k.job_id == 7; }), 150'000);
  EXPECT_EQ(CpuOf(pending.rows, [](const Key& k) { return k.job_id == 0 && k.user.empty(); }), 150'000);
  // The shares add up to the counter's delta exactly.
  EXPECT_EQ(CpuOf(pending.rows, [](const Key&) { return true; }), 300'000);
  for (const auto& [k, a] : pending.rows) {
    EXPECT_EQ(k.node, "n1");
    EXPECT_NE(k.job_id, 8);
    EXPECT_NE(k.job_id, 9);
    if (k.job_id == 7) {
      EXPECT_EQ(k.user, "alice");
      EXPECT_EQ(k.group, "ml");
    }
    // CPU energy is kept apart from GPU time and energy.
    EXPECT_EQ(a.gpu_ms, 0);
    EXPECT_EQ(a.energy_mj, 0);
  }
  EXPECT_EQ(ledger.TotalsByUser().at("alice").cpu_mj, 150'000);
  EXPECT_EQ(ledger.TotalsByNode().at("n1").cpu_mj, 300'000);
  const MeterState& meter = pending.meters.at({"n1", kCpuMeter});
  ASSERT_TRUE(meter.cpu.has_value());
  EXPECT_EQ(meter.cpu->energy_mj, 305'000u);
  EXPECT_EQ(meter.cpu->task_usec.at("job-9.r0.w-0"), 9'999u);

  // A task whose counter went back (its cgroup made again) gets nothing that interval.
  ledger.Add("n1", CpuSample(12'000, 405'000, 4'000'000, {{"job-7.r0.w-0", 7, 10}, {"job-9.r0.w-0", 9, 9'999}}),
             facts, people);
  auto next = ledger.Take();
  EXPECT_EQ(CpuOf(next.rows, [](const Key& k) { return k.job_id == 7; }), 0);
  EXPECT_EQ(CpuOf(next.rows, [](const Key&) { return true; }), 100'000);
}

TEST(LedgerCpuTest, AJobHoldingNoGpuGetsItsTasksShare) {
  // An MPI launcher or a CPU-only task: its job holds no GPU on the node.
  Ledger ledger;
  NodeFacts facts;
  facts.holdings.push_back({5, "bob", {}, 0, 0});
  ledger.Add("n1", CpuSample(1'000, 0, 0, {{"job-5.r0.launcher", 5, 0}}), facts, {});
  ledger.Add("n1", CpuSample(2'000, 100'000, 1'000'000, {{"job-5.r0.launcher", 5, 250'000}}), facts, {});
  auto rows = ledger.Take().rows;
  EXPECT_EQ(CpuOf(rows, [](const Key& k) { return k.job_id == 5 && k.user == "bob"; }), 25'000);
  EXPECT_EQ(CpuOf(rows, [](const Key&) { return true; }), 100'000);
}

TEST(LedgerCpuTest, WithoutTheNodesBusyTimeEverythingIsOther) {
  Ledger ledger;
  NodeFacts facts;
  facts.holdings.push_back({7, "alice", {0}, 0, 0});
  ledger.Add("n1", CpuSample(1'000, 0, std::nullopt, {{"job-7.r0.w-0", 7, 0}}), facts, {});
  ledger.Add("n1", CpuSample(2'000, 100'000, std::nullopt, {{"job-7.r0.w-0", 7, 500'000}}), facts, {});
  auto rows = ledger.Take().rows;
  EXPECT_EQ(CpuOf(rows, [](const Key& k) { return k.job_id == 7; }), 0);
  EXPECT_EQ(CpuOf(rows, [](const Key& k) { return k.job_id == 0 && k.user.empty(); }), 100'000);
}

TEST(LedgerCpuTest, ACounterResetOrAnImplausibleJumpAddsNothingAndTheBaselineRestarts) {
  Ledger ledger;
  ledger.Add("n1", CpuSample(1'000, 900'000, 0), {}, {});
  ledger.Add("n1", CpuSample(2'000, 1'000, 0), {}, {});  // the agent restarted: from 0 again
  EXPECT_EQ(CpuOf(ledger.Take().rows, [](const Key&) { return true; }), 0);
  ledger.Add("n1", CpuSample(3'000, 201'000, 0), {}, {});
  EXPECT_EQ(CpuOf(ledger.Take().rows, [](const Key&) { return true; }), 200'000);
  // 30 MJ in a second: 30 MW.
  ledger.Add("n1", CpuSample(4'000, 30'000'201'000, 0), {}, {});
  EXPECT_EQ(CpuOf(ledger.Take().rows, [](const Key&) { return true; }), 0);
  ledger.Add("n1", CpuSample(5'000, 30'000'301'000, 0), {}, {});
  EXPECT_EQ(CpuOf(ledger.Take().rows, [](const Key&) { return true; }), 100'000);
  // Replays and older samples count once.
  ledger.Add("n1", CpuSample(5'000, 30'000'301'000, 0), {}, {});
  ledger.Add("n1", CpuSample(4'500, 30'000'251'000, 0), {}, {});
  EXPECT_TRUE(ledger.Take().rows.empty());
  // An interval longer than max_interval_ms is not accounted; the meter restarts there.
  ledger.Add("n1", CpuSample(5'000 + 2 * 86'400'000LL, 30'100'301'000, 0), {}, {});
  EXPECT_EQ(CpuOf(ledger.Take().rows, [](const Key&) { return true; }), 0);
}

TEST(LedgerCpuTest, ABucketEdgeSplitsCpuEnergyProRata) {
  Ledger ledger;
  NodeFacts facts;
  facts.holdings.push_back({7, "alice", {0}, 0, 0});
  ledger.Add("n1", CpuSample(kHour - 250, 0, 0, {{"job-7.r0.w-0", 7, 0}}), facts, {});
  // 1000 mJ, all of the busy time the job's.
  ledger.Add("n1", CpuSample(kHour + 750, 1'000, 1'000'000, {{"job-7.r0.w-0", 7, 1'000'000}}), facts, {});
  auto rows = ledger.Take().rows;
  EXPECT_DOUBLE_EQ(CpuOf(rows, [](const Key& k) { return k.job_id == 7 && k.bucket_ms == 0; }), 250);
  EXPECT_DOUBLE_EQ(CpuOf(rows, [](const Key& k) { return k.job_id == 7 && k.bucket_ms == kHour; }), 750);
  EXPECT_DOUBLE_EQ(CpuOf(rows, [](const Key& k) { return k.job_id == 0; }), 0);
}

TEST(LedgerCpuTest, SamplesWithoutCpuEnergyChangeNothing) {
  Ledger ledger;
  ledger.Add("n1", Sample(0, {Gpu(0, 0, 100'000)}), {}, {});
  ledger.Add("n1", Sample(1000, {Gpu(0, 100'000, 100'000)}), {}, {});
  auto pending = ledger.Take();
  EXPECT_EQ(Sum(pending.rows, [](const Key&) { return true; }).cpu_mj, 0);
  EXPECT_EQ(pending.meters.count({"n1", kCpuMeter}), 0u);
  // Nor does one between two that carry it: the meter spans it.
  ledger.Add("n1", CpuSample(2'000, 1'000, 0), {}, {});
  ledger.Add("n1", Sample(3'000, {Gpu(0, 300'000, 100'000)}), {}, {});
  ledger.Add("n1", CpuSample(4'000, 51'000, 0), {}, {});
  EXPECT_EQ(CpuOf(ledger.Take().rows, [](const Key&) { return true; }), 50'000);
}

TEST(LedgerCpuTest, ARestoredCpuMeterContinuesWithItsTasks) {
  Ledger ledger;
  NodeFacts facts;
  facts.holdings.push_back({7, "alice", {0}, 0, 0});
  ledger.Add("n1", CpuSample(1'000, 10'000, 1'000'000, {{"job-7.r0.w-0", 7, 500}}), facts, {});
  auto stored = ledger.Take().meters;
  ASSERT_EQ(stored.count({"n1", kCpuMeter}), 1u);

  // A new ledger (server restart) continues from the stored meter: the energy used
  // while it was down is split with the tasks' CPU time over the same time.
  Ledger restarted;
  for (const auto& [key, meter] : stored) restarted.Restore(key, meter);
  restarted.Add("n1", CpuSample(61'000, 610'000, 5'000'000, {{"job-7.r0.w-0", 7, 1'000'500}}), facts, {});
  auto rows = restarted.Take().rows;
  EXPECT_EQ(CpuOf(rows, [](const Key& k) { return k.job_id == 7; }), 150'000);
  EXPECT_EQ(CpuOf(rows, [](const Key&) { return true; }), 600'000);
}

// A Unix account several rota users share names none of them: its processes
// count as the account's, not as whichever user was listed last.
TEST(LedgerTest, ASharedUnixAccountIsNoOnesInParticular) {
  auto map = UsersOfUnixAccounts({{"alice", "alice"}, {"bob", "lab"}, {"carol", "lab"}, {"dave", "dave"}});
  EXPECT_EQ(map, (std::map<std::string, std::string>{{"alice", "alice"}, {"dave", "dave"}}));
  EXPECT_EQ(UsersOfUnixAccounts({{"bob", "lab"}, {"bob", "lab"}}),
            (std::map<std::string, std::string>{{"lab", "bob"}}));
}

}  // namespace
}  // namespace rota::accounting
