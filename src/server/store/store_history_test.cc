// Store::GpuHistory / NodeHistory against hand-made samples with exact expected values.

#include <gtest/gtest.h>

#include <future>

#include "server/store/store.h"
#include "server/store/store_test_backend.h"
#include "server/store/store_test_util.h"

namespace rota::store {
namespace {

using testing::Backend;
using testing::MakeNode;
using testing::TestStoreLocation;
using Pairs = std::vector<std::pair<std::string, double>>;

constexpr int64_t kT0 = 1'699'999'200'000;  // a whole hour
constexpr int64_t kS = 1000;

double Get(const Pairs& p, const std::string& name) {
  for (const auto& [k, v] : p) {
    if (k == name) return v;
  }
  ADD_FAILURE() << "no metric " << name;
  return -1;
}

bool Has(const Pairs& p, const std::string& name) {
  for (const auto& [k, v] : p) {
    if (k == name) return true;
  }
  return false;
}

// GPU 0's samples: (t offset s, util, temp or absent, energy), two minutes.
std::vector<api::NodeSample> TwoMinutesOfSamples() {
  struct G {
    int64_t t;
    uint32_t util;
    std::optional<uint32_t> temp;
    uint64_t energy;
  };
  const G gs[] = {{0, 10, 40, 1000},
                  {10, 20, std::nullopt, 1500},
                  {20, 60, 50, 2500},
                  {70, 30, 45, 3000},
                  {80, 50, 47, 3100}};
  std::vector<api::NodeSample> v;
  for (const G& g : gs) {
    api::NodeSample s;
    s.time_ms = kT0 + g.t * kS;
    s.host.cpu_percent = g.util / 2.0;
    s.host.mem_total_bytes = 1000;
    s.host.mem_available_bytes = 1000 - g.util;
    s.host.load1 = g.util / 10.0;
    api::GpuSample gpu;
    gpu.index = 0;
    gpu.util_gpu_pct = g.util;
    gpu.temperature_c = g.temp;
    gpu.energy_mj = g.energy;
    gpu.power_mw = g.util * 1000;
    s.gpus.push_back(gpu);
    v.push_back(s);
  }
  return v;
}

Status AppendSync(Store& store, std::vector<api::NodeSample> v) {
  std::promise<Status> p;
  store.Append("n1", std::move(v), [&](Status st) { p.set_value(st); });
  return p.get_future().get();
}

// The 1-minute answers for TwoMinutesOfSamples (raw rows give the same).
void ExpectTheMinuteAnswers(Store& store) {
  auto r = store.GpuHistory("n1", 0, kT0, kT0 + 120 * kS, 60 * kS);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->resolution, "1m");
  ASSERT_EQ(r->points.size(), 2u);
  EXPECT_EQ(r->points[0].samples, 3);
  EXPECT_DOUBLE_EQ(Get(r->points[0].avg, "util_gpu_pct"), 30);
  EXPECT_DOUBLE_EQ(Get(r->points[0].max, "util_gpu_pct"), 60);
  EXPECT_DOUBLE_EQ(Get(r->points[0].avg, "temp_c"), 45);
  EXPECT_DOUBLE_EQ(Get(r->points[0].last, "energy_mj"), 2500);
  EXPECT_EQ(r->points[1].samples, 2);
  EXPECT_DOUBLE_EQ(Get(r->points[1].avg, "util_gpu_pct"), 40);
  EXPECT_DOUBLE_EQ(Get(r->points[1].max, "util_gpu_pct"), 50);
  EXPECT_DOUBLE_EQ(Get(r->points[1].last, "energy_mj"), 3100);
  auto n = store.NodeHistory("n1", kT0, kT0 + 120 * kS, 60 * kS);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  ASSERT_EQ(n->points.size(), 2u);
  EXPECT_DOUBLE_EQ(Get(n->points[1].avg, "cpu_pct"), 20);
  EXPECT_DOUBLE_EQ(Get(n->points[1].max, "load1"), 5);
}

// Runs on SQLite and on PostgreSQL (store_test_backend.h).
class StoreHistoryTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    ROTA_SKIP_WITHOUT_BACKEND(loc_);
    auto s = loc_.Open({}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    ASSERT_TRUE(store_->UpsertNode(MakeNode("n1", 1), kT0).ok());
    ASSERT_TRUE(AppendSync(*store_, TwoMinutesOfSamples()).ok());
  }

  TestStoreLocation loc_{GetParam()};
  FakeClock clock_{kT0 + 3'600'000};
  std::unique_ptr<Store> store_;
};
INSTANTIATE_TEST_SUITE_P(, StoreHistoryTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         testing::BackendParamName<::testing::TestParamInfo<Backend>>);

class StoreHistoryMinutesTest : public StoreHistoryTest {
 protected:
  void SetUp() override { ROTA_SKIP_WITHOUT_BACKEND(loc_); }
};
INSTANTIATE_TEST_SUITE_P(, StoreHistoryMinutesTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         testing::BackendParamName<::testing::TestParamInfo<Backend>>);

TEST_P(StoreHistoryTest, RawBucketsHaveExactAvgMaxAndLast) {
  auto r = store_->GpuHistory("n1", 0, kT0, kT0 + 120 * kS, 15 * kS);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->resolution, "raw");
  EXPECT_EQ(r->step_ms, 15 * kS);
  ASSERT_EQ(r->points.size(), 4u);
  const auto& p = r->points;
  EXPECT_EQ(p[0].t_ms, kT0);
  EXPECT_EQ(p[0].samples, 2);
  EXPECT_DOUBLE_EQ(Get(p[0].avg, "util_gpu_pct"), 15);
  EXPECT_DOUBLE_EQ(Get(p[0].max, "util_gpu_pct"), 20);
  EXPECT_DOUBLE_EQ(Get(p[0].avg, "temp_c"), 40);  // the absent reading is not a zero
  EXPECT_DOUBLE_EQ(Get(p[0].avg, "power_mw"), 15000);
  EXPECT_DOUBLE_EQ(Get(p[0].last, "energy_mj"), 1500);
  EXPECT_FALSE(Has(p[0].avg, "mem_used_bytes"));  // never reported
  EXPECT_EQ(p[1].t_ms, kT0 + 15 * kS);
  EXPECT_DOUBLE_EQ(Get(p[1].avg, "util_gpu_pct"), 60);
  EXPECT_EQ(p[2].t_ms, kT0 + 60 * kS);
  EXPECT_DOUBLE_EQ(Get(p[2].avg, "util_gpu_pct"), 30);
  EXPECT_EQ(p[3].t_ms, kT0 + 75 * kS);
  EXPECT_DOUBLE_EQ(Get(p[3].max, "temp_c"), 47);
}

TEST_P(StoreHistoryTest, RawRangeIsHalfOpen) {
  auto r = store_->GpuHistory("n1", 0, kT0 + 10 * kS, kT0 + 70 * kS, 120 * kS + 1);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->resolution, "raw");  // not a whole number of minutes
  int64_t samples = 0;
  for (const auto& p : r->points) samples += p.samples;
  EXPECT_EQ(samples, 2);  // t = 10 s and 20 s; 70 s is excluded
}

TEST_P(StoreHistoryTest, MinuteStepsUseAggregatesWithTheSameAnswers) {
  ExpectTheMinuteAnswers(*store_);

  // Two minutes in one bucket: the average is weighted by readings, not by minutes.
  auto r = store_->GpuHistory("n1", 0, kT0, kT0 + 120 * kS, 120 * kS);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->points.size(), 1u);
  EXPECT_EQ(r->points[0].samples, 5);
  EXPECT_DOUBLE_EQ(Get(r->points[0].avg, "util_gpu_pct"), 34);
  EXPECT_DOUBLE_EQ(Get(r->points[0].max, "util_gpu_pct"), 60);
  EXPECT_DOUBLE_EQ(Get(r->points[0].avg, "temp_c"), (40 + 50 + 45 + 47) / 4.0);
}

// A minute is aggregated some seconds after it ends; until then a minute-step
// read takes its raw rows, with the same answers before and after.
TEST_P(StoreHistoryMinutesTest, MinutesNotAggregatedYetAnswerFromTheirRawRows) {
  FakeClock clock(kT0 + 75 * kS);  // minute 0 ended 15 s ago, minute 1 is open
  auto opened = loc_.Open({}, clock);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Store& store = **opened;
  ASSERT_TRUE(store.UpsertNode(MakeNode("n1", 1), kT0).ok());
  ASSERT_TRUE(AppendSync(store, TwoMinutesOfSamples()).ok());
  auto minutes = [&] {
    auto db = loc_.Connect();
    return db.ok() ? *db->QueryInt("SELECT count(*) FROM gpu_minutes") : -1;
  };
  EXPECT_EQ(minutes(), 1);  // minute 0 only
  ExpectTheMinuteAnswers(store);
  // Nothing aggregated: every minute from raw rows.
  FakeClock early(kT0 + 30 * kS);
  TestStoreLocation loc2(GetParam());
  auto fresh = loc2.Open({}, early);
  ASSERT_TRUE(fresh.ok());
  ASSERT_TRUE((*fresh)->UpsertNode(MakeNode("n1", 1), kT0).ok());
  ASSERT_TRUE(AppendSync(**fresh, TwoMinutesOfSamples()).ok());
  ExpectTheMinuteAnswers(**fresh);
  // All aggregated (the open minute too): the same answers.
  ASSERT_TRUE(store.AggregateMinutes().ok());
  EXPECT_EQ(minutes(), 2);
  ExpectTheMinuteAnswers(store);
}

TEST_P(StoreHistoryTest, OldRangesUseAggregatesWithWholeMinuteSteps) {
  clock_.SetMs(kT0 + 25 * 3'600'000);  // raw retention (24 h) no longer covers kT0
  auto r = store_->GpuHistory("n1", 0, kT0 + 30 * kS, kT0 + 120 * kS, 30 * kS);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->resolution, "1m");
  EXPECT_EQ(r->step_ms, 60 * kS);
  ASSERT_EQ(r->points.size(), 2u);
  EXPECT_EQ(r->points[0].t_ms, kT0);  // widened to the whole first minute
  EXPECT_EQ(r->points[0].samples, 3);
}

TEST_P(StoreHistoryTest, AutoStep) {
  auto r = store_->GpuHistory("n1", 0, kT0, kT0 + 3'600'000, 0);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->step_ms, 5 * kS);
  EXPECT_EQ(r->resolution, "raw");
  EXPECT_EQ(r->points.size(), 5u);
}

TEST_P(StoreHistoryTest, NodeHistory) {
  auto r = store_->NodeHistory("n1", kT0, kT0 + 120 * kS, 60 * kS);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->points.size(), 2u);
  EXPECT_DOUBLE_EQ(Get(r->points[0].avg, "cpu_pct"), 15);
  EXPECT_DOUBLE_EQ(Get(r->points[0].max, "cpu_pct"), 30);
  EXPECT_DOUBLE_EQ(Get(r->points[0].avg, "mem_used_bytes"), 30);
  EXPECT_DOUBLE_EQ(Get(r->points[1].max, "load1"), 5);
  EXPECT_TRUE(r->points[0].last.empty());
  auto raw = store_->NodeHistory("n1", kT0, kT0 + 120 * kS, 10 * kS);
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw->resolution, "raw");
  ASSERT_EQ(raw->points.size(), 5u);
  EXPECT_DOUBLE_EQ(Get(raw->points[4].avg, "load1"), 5);
}

// Bad inputs: unknown node, unknown GPU index, from == to, from > to, negative
// step, step below 1 s, too many points, negative from.
TEST_P(StoreHistoryTest, RejectsBadQueries) {
  auto r = store_->GpuHistory("nope", 0, kT0, kT0 + 1000, 1000);
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "node nope not found");
  EXPECT_EQ(store_->NodeHistory("nope", kT0, kT0 + 1000, 1000).status().code(),
            StatusCode::kNotFound);
  r = store_->GpuHistory("n1", 5, kT0, kT0 + 1000, 1000);
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "node n1 has no gpu 5");

  struct Case {
    int64_t from, to, step;
  };
  for (const Case& c :
       {Case{kT0, kT0, 1000}, Case{kT0 + 1, kT0, 1000}, Case{kT0, kT0 + 1, -1},
        Case{kT0, kT0 + 10'000, 10}, Case{kT0, kT0 + 86'400'000, 1000}, Case{-1, kT0, 0}}) {
    auto g = store_->GpuHistory("n1", 0, c.from, c.to, c.step);
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument)
        << c.from << " " << c.to << " " << c.step;
    auto n = store_->NodeHistory("n1", c.from, c.to, c.step);
    EXPECT_EQ(n.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST_P(StoreHistoryTest, RemovedGpuKeepsItsHistory) {
  ASSERT_TRUE(store_->UpsertNode(MakeNode("n1", 0), kT0 + 1).ok());
  auto r = store_->GpuHistory("n1", 0, kT0, kT0 + 120 * kS, 60 * kS);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->points.size(), 2u);
}

}  // namespace
}  // namespace rota::store
