#include "server/store/open_minutes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <random>

#include "server/store/gpu_pack.h"
#include "server/store/history.h"
#include "server/store/store.h"
#include "server/store/store_test_backend.h"
#include "server/store/store_test_util.h"

namespace rota::store {
namespace {

constexpr int64_t kT0 = testing::kMinuteT0;
using testing::AppendSync;
using testing::MakeNode;
using testing::MakeSample;
using testing::Backend;

TEST(OpenMinutesTest, TracksOnlyMinutesFromTheFloorOn) {
  OpenMinutes open(kT0 + kMinuteMs);
  const api::NodeSample s = MakeSample(kT0 + 5'000, 2, 10);
  open.AddHost(1, s.time_ms, s.host, 7);
  open.AddGpus(1, s.time_ms, s.gpus);
  EXPECT_EQ(open.tracked(), 0u);  // before the floor: its rows are recomputed
  EXPECT_EQ(open.additions(), 0u);
  EXPECT_FALSE(open.Take(1, kT0));

  const api::NodeSample a = MakeSample(kT0 + 61'000, 2, 10), b = MakeSample(kT0 + 62'000, 2, 30);
  for (const api::NodeSample* x : {&a, &b}) {
    open.AddHost(1, x->time_ms, x->host, 5);
    open.AddGpus(1, x->time_ms, x->gpus);
  }
  EXPECT_EQ(open.tracked(), 1u);
  EXPECT_EQ(open.additions(), 4u);
  // Writing has begun: a late first row of the minute is not tracked, but a
  // tracked node's rows still add to its totals.
  open.RaiseFloor(kT0 + 2 * kMinuteMs);
  const api::NodeSample c = MakeSample(kT0 + 63'000, 2, 20);
  open.AddGpus(2, c.time_ms, c.gpus);
  open.AddGpus(1, c.time_ms, c.gpus);
  EXPECT_EQ(open.tracked(), 1u);

  std::optional<MinuteTotals> t = open.Take(1, kT0 + kMinuteMs);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->host_n, 2);
  EXPECT_EQ(t->mem_used.sum, 10);
  EXPECT_DOUBLE_EQ(t->cpu_percent.max, 30);
  ASSERT_EQ(t->gpus.size(), 2u);
  const GpuMinute& g0 = t->gpus[0].second;
  EXPECT_EQ(g0.n, 3);
  EXPECT_EQ(g0.metric[0].sum, 60);  // util_gpu 10 + 30 + 20
  EXPECT_EQ(g0.metric[0].max, 30);
  EXPECT_EQ(g0.energy_t, kT0 + 63'000);  // the latest reading, whatever the order
  EXPECT_EQ(open.tracked(), 0u);
  EXPECT_FALSE(open.Take(1, kT0 + kMinuteMs));  // taken once
}

TEST(OpenMinutesTest, ClearForgetsEverythingAndTracksNoneOfItsMinutesAgain) {
  OpenMinutes open(kT0);
  const api::NodeSample a = MakeSample(kT0 + 3 * kMinuteMs, 1, 10);
  open.AddGpus(1, a.time_ms, a.gpus);
  open.Clear(kT0 + kMinuteMs);
  EXPECT_EQ(open.tracked(), 0u);
  EXPECT_EQ(open.floor_ms(), kT0 + 4 * kMinuteMs);  // past the minute it tracked
  open.AddGpus(1, a.time_ms, a.gpus);
  EXPECT_EQ(open.tracked(), 0u);
}

TEST(OpenMinutesTest, TotalsDoNotDependOnTheOrderOfSamples) {
  std::mt19937 rng(7);
  std::vector<api::NodeSample> samples;
  for (int i = 0; i < 30; ++i) {
    api::NodeSample s = MakeSample(kT0 + i * 2'000, 3, static_cast<uint32_t>(rng() % 100));
    s.gpus[1].failed = i % 4 == 0;
    if (i % 3 == 0) s.gpus[2].power_mw.reset();
    samples.push_back(s);
  }
  auto totals = [](const std::vector<api::NodeSample>& v) {
    MinuteTotals t;
    for (const api::NodeSample& s : v) {
      t.AddHost(s.host.cpu_percent, 1, s.host.load1);
      for (const api::GpuSample& g : s.gpus) t.AddGpu(s.time_ms, ToStored(g));
    }
    std::sort(t.gpus.begin(), t.gpus.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    return t;
  };
  const MinuteTotals in_order = totals(samples);
  std::shuffle(samples.begin(), samples.end(), rng);
  const MinuteTotals shuffled = totals(samples);
  EXPECT_EQ(in_order.host_n, shuffled.host_n);
  EXPECT_EQ(in_order.gpus, shuffled.gpus);
  EXPECT_EQ(in_order.gpus[1].second.failed_n, 8);
  EXPECT_EQ(in_order.gpus[2].second.metric[4].n, 20);  // power absent from 10 samples
}

// The aggregates written from memory are the ones recomputed from the raw rows,
// with out-of-order samples, duplicates, failed GPUs and absent readings.
// Runs on SQLite and on PostgreSQL (store_test_backend.h).
class MinutesFromMemoryTest : public ::testing::TestWithParam<Backend> {
 protected:
  MinutesFromMemoryTest() : clock_(kT0 - 30'000) {}  // the floor is kT0
  void SetUp() override { ROTA_SKIP_WITHOUT_BACKEND(loc_); }

  std::unique_ptr<Store> Open() {
    auto s = loc_.Open({}, clock_);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  // Every aggregate row, as text, in key order.
  std::vector<std::string> Aggregates() {
    auto db = loc_.Connect();
    EXPECT_TRUE(db.ok());
    std::vector<std::string> rows;
    if (!db.ok()) return rows;
    for (const char* sql : {"SELECT * FROM gpu_minutes ORDER BY node, gpu, minute_ms",
                            "SELECT * FROM node_minutes ORDER BY node, minute_ms"}) {
      auto q = db->Prepare(sql);
      EXPECT_TRUE(q.ok());
      if (!q.ok()) return rows;
      while (*q->Step()) {
        std::string row;
        for (int c = 0; c < q->ColumnCount(); ++c) {
          // Sums of doubles may differ in their last bits with the order of adding (and
          // PostgreSQL prints a double that is whole without a point): every number
          // to 6 decimals (integers up to 2^53 exactly).
          std::string v = q->Text(c);
          if (!v.empty()) v = std::to_string(q->Double(c));
          row += v + "|";
        }
        rows.push_back(row);
      }
    }
    return rows;
  }

  testing::TestStoreLocation loc_{GetParam()};
  FakeClock clock_;
};
INSTANTIATE_TEST_SUITE_P(, MinutesFromMemoryTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         testing::BackendParamName<::testing::TestParamInfo<Backend>>);

TEST_P(MinutesFromMemoryTest, AggregatesFromMemoryEqualThoseRecomputedFromRows) {
  std::mt19937 rng(11);
  {
    auto s = Open();
    for (const char* n : {"a", "b", "c"}) ASSERT_TRUE(s->UpsertNode(MakeNode(n, 4), 1).ok());
    ASSERT_TRUE(s->UpsertNode(MakeNode("d", 0), 1).ok());  // no GPUs: host readings only
    for (const std::string n : {"a", "b", "c", "d"}) {
      std::vector<api::NodeSample> v;
      for (int64_t t = kT0; t < kT0 + 3 * kMinuteMs; t += 5'000) {
        const int gpus = n == "d" ? 0 : n == "c" ? 2 : 4;
        api::NodeSample x = MakeSample(t, gpus, static_cast<uint32_t>(rng() % 100));
        x.host.cpu_percent = static_cast<double>(rng() % 1000) / 7;  // not exact in binary
        if (gpus > 0) {
          x.gpus[0].failed = rng() % 5 == 0;
          if (x.gpus[0].failed) x.gpus[0] = api::GpuSample{.index = 0, .failed = true};
          if (rng() % 3 == 0) x.gpus[1].temperature_c.reset();
          if (rng() % 4 == 0) x.gpus[1].energy_mj.reset();
        }
        v.push_back(std::move(x));
      }
      std::shuffle(v.begin(), v.end(), rng);
      std::vector<api::NodeSample> first(v.begin(), v.begin() + 20);
      ASSERT_TRUE(AppendSync(*s, n, first).ok());
      ASSERT_TRUE(AppendSync(*s, n, std::vector<api::NodeSample>(v.begin() + 10, v.end())).ok());
    }
    clock_.SetMs(kT0 + 3 * kMinuteMs + 30'000);
    ASSERT_TRUE(s->AggregateMinutes().ok());
    EXPECT_EQ(s->Stats().minutes_from_memory, 12);
    EXPECT_EQ(s->Stats().minutes_recomputed, 0);
    EXPECT_GT(s->Stats().duplicate_rows, 0);
  }
  const std::vector<std::string> from_memory = Aggregates();
  ASSERT_EQ(from_memory.size(), 2u * 4 * 3 + 2u * 3 + 4u * 3);  // GPU rows, then node rows
  {
    auto db = loc_.Connect();
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->Exec("DELETE FROM gpu_minutes; DELETE FROM node_minutes; "
                         "UPDATE store_state SET value = 0 WHERE key = 'minutes_from_ms'")
                    .ok());
  }
  auto s = Open();  // every minute with rows is found and recomputed
  ASSERT_TRUE(s->AggregateMinutes().ok());
  EXPECT_EQ(s->Stats().minutes_recomputed, 12);
  EXPECT_EQ(s->Stats().minutes_from_memory, 0);
  const std::vector<std::string> recomputed = Aggregates();
  ASSERT_EQ(recomputed.size(), from_memory.size());
  for (size_t i = 0; i < recomputed.size(); ++i) EXPECT_EQ(recomputed[i], from_memory[i]) << i;
}

// Before schema version 12 every sample's host readings had their own row in
// node_samples, beside its node_gpu_samples row. Those rows stay readable and
// each sample counts once: replayed, it is a duplicate; newer ones get one row.
TEST_P(MinutesFromMemoryTest, HostReadingsWrittenBeforeVersion12CountOnce) {
  {
    auto s = Open();
    ASSERT_TRUE(s->UpsertNode(MakeNode("a", 2), 1).ok());
    ASSERT_TRUE(s->UpsertNode(MakeNode("c", 0), 1).ok());
  }
  const api::NodeSample old_a = MakeSample(kT0, 2, 20), old_c = MakeSample(kT0, 0, 20);
  {  // rows as a version-11 writer stored them
    auto db = loc_.Connect();
    ASSERT_TRUE(db.ok());
    auto host = db->Prepare("INSERT INTO node_samples (node, t_ms, cpu_percent, mem_used, "
                            "mem_total, load1) SELECT id, ?2, 20, 20, 1000, 2.0 FROM nodes "
                            "WHERE name = ?1");
    ASSERT_TRUE(host.ok());
    for (const char* n : {"a", "c"}) {
      host->Reset();
      ASSERT_TRUE(host->Bind(1, std::string(n)).Bind(2, kT0).Run().ok());
    }
    std::string blob;
    PackGpus(old_a.gpus, &blob);
    auto gpus = db->Prepare("INSERT INTO node_gpu_samples (node, t_ms, n_gpus, gpus) "
                            "SELECT id, ?1, 2, ?2 FROM nodes WHERE name = 'a'");
    ASSERT_TRUE(gpus.ok());
    ASSERT_TRUE(gpus->Bind(1, kT0).BindBlob(2, blob).Run().ok());
  }
  auto s = Open();
  ASSERT_TRUE(AppendSync(*s, "a", {old_a, MakeSample(kT0 + 10'000, 2, 60)}).ok());
  ASSERT_TRUE(AppendSync(*s, "c", {old_c, MakeSample(kT0 + 10'000, 0, 60)}).ok());
  clock_.SetMs(kT0 + 2 * kMinuteMs);
  ASSERT_TRUE(s->AggregateMinutes().ok());
  EXPECT_EQ(s->Stats().minutes_recomputed, 2);  // their rows were there before the store opened
  auto db = loc_.Connect();
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(*db->QueryInt("SELECT count(*) FROM node_samples"), 3);  // a's old, c's old and new
  EXPECT_EQ(*db->QueryInt("SELECT count(*) FROM node_gpu_samples WHERE mem_total IS NOT NULL"), 1);
  for (const char* n : {"a", "c"}) {
    const std::string node = std::string("(SELECT id FROM nodes WHERE name = '") + n + "')";
    EXPECT_EQ(*db->QueryInt("SELECT n FROM node_minutes WHERE node = " + node), 2) << n;
    EXPECT_EQ(*db->QueryInt("SELECT cpu_percent_sum FROM node_minutes WHERE node = " + node), 80)
        << n;
    EXPECT_EQ(*db->QueryInt("SELECT mem_used_sum FROM node_minutes WHERE node = " + node), 80) << n;
    // The raw history reads both tables, in time order.
    auto h = s->NodeHistory(n, kT0, kT0 + 20'000, 10'000);
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    ASSERT_EQ(h->points.size(), 2u) << n;
    EXPECT_EQ(h->points[0].t_ms, kT0);
    EXPECT_EQ(h->points[0].avg.at(0), std::make_pair(std::string("cpu_pct"), 20.0));
    EXPECT_EQ(h->points[1].avg.at(0), std::make_pair(std::string("cpu_pct"), 60.0));
  }
  EXPECT_EQ(*db->QueryInt("SELECT sum(n) FROM gpu_minutes"), 4);  // a's two GPUs, twice
}

// Samples of a node the store does not know fail before any row is written:
// the totals of the others stay in use.
TEST_P(MinutesFromMemoryTest, AnUnknownNodesSamplesLeaveTheTotalsAlone) {
  auto s = Open();
  ASSERT_TRUE(s->UpsertNode(MakeNode("a", 2), 1).ok());
  ASSERT_TRUE(AppendSync(*s, "a", {MakeSample(kT0), MakeSample(kT0 + 30'000)}).ok());
  EXPECT_EQ(AppendSync(*s, "ghost", {MakeSample(kT0 + 10'000)}).code(), StatusCode::kNotFound);
  ASSERT_TRUE(AppendSync(*s, "a", {MakeSample(kT0 + 50'000)}).ok());
  clock_.SetMs(kT0 + 2 * kMinuteMs);
  ASSERT_TRUE(s->AggregateMinutes().ok());
  EXPECT_EQ(s->Stats().minutes_from_memory, 1);
  EXPECT_EQ(s->Stats().minutes_recomputed, 0);
}

}  // namespace
}  // namespace rota::store
