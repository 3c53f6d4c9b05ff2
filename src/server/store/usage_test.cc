#include "server/store/usage.h"

#include <gtest/gtest.h>

#include "server/store/schema.h"
#include "server/store/store_test_util.h"

namespace rota::store {
namespace {

using testing::TempDir;

class UsageStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = Db::Open(dir_.path() + "/rota.db", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::make_unique<Db>(std::move(db).value());
    ASSERT_TRUE(ApplySchema(*db_, 1).ok());
  }
  TempDir dir_;
  std::unique_ptr<Db> db_;
};

TEST_F(UsageStoreTest, CpuEnergyIsSummedAndReportedApartFromGpuEnergy) {
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

TEST_F(UsageStoreTest, CpuMetersRoundTripBesideGpuMeters) {
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

}  // namespace
}  // namespace rota::store
