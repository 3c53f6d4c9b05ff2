#include "server/store/usage.h"

#include <gtest/gtest.h>

#include "server/store/schema.h"
#include "server/store/store_test_backend.h"
#include "server/store/store_test_util.h"

namespace rota::store {
namespace {

using testing::Backend;

// Runs on SQLite and on PostgreSQL (store_test_backend.h).
class UsageStoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    ROTA_SKIP_WITHOUT_BACKEND(loc_);
    auto db = loc_.Connect();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::make_unique<Db>(std::move(db).value());
    ASSERT_TRUE(ApplySchema(*db_, 1).ok());
  }
  testing::TestStoreLocation loc_{GetParam()};
  std::unique_ptr<Db> db_;
};
INSTANTIATE_TEST_SUITE_P(, UsageStoreTest, ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         testing::BackendParamName<::testing::TestParamInfo<Backend>>);

TEST_P(UsageStoreTest, CpuEnergyIsSummedAndReportedApartFromGpuEnergy) {
  accounting::Key job{0, "n1", 7, "alice", "ml", 0};
  accounting::Key other{0, "n1", 0, "", "", 0};
  accounting::Amounts gpu;
  gpu.gpu_ms = 1000;
  gpu.energy_mj = 400;
  accounting::Amounts cpu;
  cpu.cpu_mj = 150;
  ASSERT_TRUE(AddUsage(*db_, {{job, gpu}, {other, cpu}}, {}).ok());
  ASSERT_TRUE(AddUsage(*db_, {{job, cpu}}, {}).ok());  // the same key: summed
  auto by_job = QueryUsage(*db_, {"job", 0, 3'600'000, "", ""});
  ASSERT_TRUE(by_job.ok()) << by_job.status().ToString();
  ASSERT_EQ(by_job->size(), 1u);
  EXPECT_EQ((*by_job)[0].key, "7");
  EXPECT_DOUBLE_EQ((*by_job)[0].amounts.energy_mj, 400);
  EXPECT_DOUBLE_EQ((*by_job)[0].amounts.cpu_mj, 150);
  auto by_node = QueryUsage(*db_, {"node", 0, 3'600'000, "", ""});
  ASSERT_TRUE(by_node.ok());
  EXPECT_DOUBLE_EQ((*by_node)[0].amounts.cpu_mj, 300);
}

TEST_P(UsageStoreTest, CpuMetersRoundTripBesideGpuMeters) {
  accounting::MeterState gpu;
  gpu.uuid = "GPU-0";
  gpu.last = {1000, 5000, 200'000};
  accounting::CpuMeterState c;
  c.time_ms = 2000;
  c.energy_mj = 9'000'000'000'000;
  c.busy_usec = 123'456'789;
  c.task_usec = {{"job-7.r0.worker-0", 1'000'000}, {"job-8.r1.w", 0}};
  accounting::MeterState cpu;
  cpu.cpu = c;
  accounting::CpuMeterState bare;  // no busy time, no task
  bare.time_ms = 3000;
  accounting::MeterState cpu2;
  cpu2.cpu = bare;
  ASSERT_TRUE(AddUsage(*db_, {}, {{{"n1", 0}, gpu}, {{"n1", accounting::kCpuMeter}, cpu},
                                  {{"n2", accounting::kCpuMeter}, cpu2}})
                  .ok());
  auto meters = LoadMeters(*db_);
  ASSERT_TRUE(meters.ok()) << meters.status().ToString();
  ASSERT_EQ(meters->size(), 3u);
  EXPECT_EQ(meters->at({"n1", 0}).uuid, "GPU-0");
  EXPECT_FALSE(meters->at({"n1", 0}).cpu.has_value());
  ASSERT_TRUE(meters->at({"n1", accounting::kCpuMeter}).cpu.has_value());
  EXPECT_EQ(*meters->at({"n1", accounting::kCpuMeter}).cpu, c);
  EXPECT_EQ(*meters->at({"n2", accounting::kCpuMeter}).cpu, bare);

  // A row edited into junk is left out rather than failing the server's start.
  ASSERT_TRUE(db_->Exec("UPDATE cpu_meters SET tasks_json = '[1' WHERE node = 'n2'").ok());
  meters = LoadMeters(*db_);
  ASSERT_TRUE(meters.ok()) << meters.status().ToString();
  EXPECT_EQ(meters->count({"n2", accounting::kCpuMeter}), 0u);
  EXPECT_EQ(meters->count({"n1", accounting::kCpuMeter}), 1u);
}

// Usage is kept by hour; a window inside one hour counts the hour pro rata of its
// elapsed part (accounting::BucketShare), and by node carries the node's GPUs.
TEST_P(UsageStoreTest, AWindowInsideAnHourCountsThatHourProRata) {
  constexpr int64_t kHour = 3'600'000, kMin = 60'000;
  ASSERT_TRUE(db_->Exec("INSERT INTO nodes (id, name, node_id, info_json, first_seen_ms, last_seen_ms) "
                        "VALUES (1, 'n1', 'id1', '{}', 0, 0)")
                  .ok());
  ASSERT_TRUE(db_->Exec("INSERT INTO gpus (node, idx, uuid, name, pci_bus_id) VALUES "
                        "(1, 0, 'G0', 'A100', 'p0'), (1, 1, 'G1', 'A100', 'p1')")
                  .ok());
  accounting::Key early{10 * kHour, "n1", 7, "alice", "ml", 0};
  accounting::Key now_bucket{11 * kHour, "n1", 7, "alice", "ml", 0};
  accounting::Amounts a;
  a.gpu_ms = 2 * 60 * kMin;  // the hour that has ended: 2 GPUs, all of it
  a.energy_mj = 1000;
  accounting::Amounts b;
  b.gpu_ms = 2 * 45 * kMin;  // the current hour, 45 minutes old
  b.energy_mj = 900;
  ASSERT_TRUE(AddUsage(*db_, {{early, a}, {now_bucket, b}}, {}).ok());
  UsageQuery q{"user", 11 * kHour + 35 * kMin, 11 * kHour + 45 * kMin, "", ""};
  q.now_ms = 11 * kHour + 45 * kMin;  // rota usage --from 10m
  auto last10 = QueryUsage(*db_, q);
  ASSERT_TRUE(last10.ok()) << last10.status().ToString();
  ASSERT_EQ(last10->size(), 1u);
  EXPECT_EQ((*last10)[0].key, "alice");
  EXPECT_NEAR((*last10)[0].amounts.gpu_ms, 2 * 10 * kMin, 1e-6);
  EXPECT_NEAR((*last10)[0].amounts.energy_mj, 200, 1e-9);
  // From the middle of the ended hour to now: half of it and all of the current one.
  q.from_ms = 10 * kHour + 30 * kMin;
  q.by = "node";
  auto by_node = QueryUsage(*db_, q);
  ASSERT_TRUE(by_node.ok()) << by_node.status().ToString();
  ASSERT_EQ(by_node->size(), 1u);
  EXPECT_NEAR((*by_node)[0].amounts.gpu_ms, 2 * 30 * kMin + 2 * 45 * kMin, 1e-6);
  EXPECT_NEAR((*by_node)[0].amounts.energy_mj, 500 + 900, 1e-9);
  EXPECT_EQ((*by_node)[0].gpus, 2);
  // Hours that start in the window and end before it ends are counted whole, as before.
  auto whole = QueryUsage(*db_, {"user", 10 * kHour, 12 * kHour, "", ""});
  ASSERT_TRUE(whole.ok());
  EXPECT_NEAR((*whole)[0].amounts.energy_mj, 1900, 1e-9);
  // A window before every bucket: nothing.
  auto none = QueryUsage(*db_, {"user", 0, 10 * kHour, "", ""});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace rota::store
