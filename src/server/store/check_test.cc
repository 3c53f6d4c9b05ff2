// rota store check (check.h) on both backends: a consistent store passes with its counts;
// each kind of broken row is found and counted.
#include "server/store/check.h"

#include <gtest/gtest.h>

#include <map>

#include "common/clock.h"
#include "server/store/schema.h"
#include "server/store/store_test_backend.h"
#include "server/store/store_test_util.h"

namespace rota::store {
namespace {

using testing::Backend;

class StoreCheckTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    ROTA_SKIP_WITHOUT_BACKEND(loc_);
    auto s = loc_.Open({}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE((*s)->UpsertNode(testing::MakeNode("n1", 2), 1).ok());
    std::vector<api::NodeSample> v;
    for (int i = 0; i < 30; ++i) v.push_back(testing::MakeSample(testing::kMinuteT0 + i * 1000, 2));
    ASSERT_TRUE(testing::AppendSync(**s, "n1", v).ok());
    ASSERT_TRUE((*s)->Write([](Db& db) {
      return db.Exec("INSERT INTO users (id, username, role, created_ms, updated_ms) VALUES "
                     "(1, 'alice', 'user', 0, 0);"
                     "INSERT INTO jobs (id, owner_id, name, spec_json, state, created_ms, updated_ms, ended_ms) "
                     "VALUES (1, 1, 'a', '{}', 'succeeded', 0, 0, 5)");
    }).ok());
  }

  int64_t Count(const CheckReport& r, const std::string& table) {
    for (const auto& [t, n] : r.counts) {
      if (t == table) return n;
    }
    return -1;
  }

  testing::TestStoreLocation loc_{GetParam()};
  FakeClock clock_{1'700'000'000'000};
};
INSTANTIATE_TEST_SUITE_P(, StoreCheckTest, ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         testing::BackendParamName<::testing::TestParamInfo<Backend>>);

TEST_P(StoreCheckTest, AConsistentStorePassesWithItsCounts) {
  auto r = CheckStore(loc_.url());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->problems.empty()) << r->problems.front().check;
  EXPECT_EQ(r->schema_version, kSchemaVersion);
  EXPECT_GT(r->checks, 15);
  EXPECT_EQ(Count(*r, "nodes"), 1);
  EXPECT_EQ(Count(*r, "gpus"), 2);
  EXPECT_EQ(Count(*r, "node_gpu_samples"), 30);
  EXPECT_EQ(Count(*r, "jobs"), 1);
}

TEST_P(StoreCheckTest, OrphansAndBrokenRulesAreFoundAndCounted) {
  auto db = loc_.Connect();
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  // Samples of a node that does not exist (no foreign key says so), and two ended jobs
  // without an end time.
  ASSERT_TRUE(db->Exec("INSERT INTO node_gpu_samples (node, t_ms, n_gpus, gpus) VALUES (999, 1, 0, ''), "
                       "(999, 2, 0, '');"
                       "INSERT INTO jobs (id, owner_id, name, spec_json, state, created_ms, updated_ms) "
                       "VALUES (2, 1, 'b', '{}', 'failed', 0, 0), (3, 1, 'c', '{}', 'cancelled', 0, 0);"
                       // A member of an array that is not there, and metrics of a job that is not.
                       "INSERT INTO jobs (id, owner_id, name, spec_json, state, created_ms, updated_ms, array_id) "
                       "VALUES (4, 1, 'm', '{}', 'pending', 0, 0, 55);"
                       "INSERT INTO task_metrics (job_id, task, source, seq, name, step, value, time_ms) "
                       "VALUES (88, 'job-88.r0.worker-0', 0, 0, 'loss', -1, 1.5, 0), "
                       "(88, 'job-88.r0.worker-0', 0, 9, 'loss', -1, 1.0, 0)")
                  .ok());
  if (GetParam() == Backend::kSqlite) {
    // A foreign key broken behind the store's back (this connection does not enforce them).
    ASSERT_TRUE(db->Exec("PRAGMA foreign_keys = OFF; INSERT INTO gpus (node, idx, uuid, name, pci_bus_id) "
                         "VALUES (77, 0, 'u', 'n', 'p')")
                    .ok());
  }
  auto r = CheckStore(loc_.url());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::map<std::string, int64_t> found;
  for (const auto& p : r->problems) found[p.check] = p.rows;
  EXPECT_EQ(found["samples without their node"], 2);
  EXPECT_EQ(found["ended jobs without an end time"], 2);
  EXPECT_EQ(found["array members without their array"], 1);
  EXPECT_EQ(found["metrics of jobs that do not exist"], 2);
  if (GetParam() == Backend::kSqlite) {
    EXPECT_EQ(found["GPUs without their node"], 1);
    EXPECT_EQ(found["foreign_key_check (first in table gpus)"], 1);
    EXPECT_EQ(r->problems.size(), 6u);
  } else {
    EXPECT_EQ(r->problems.size(), 4u);
  }
}

TEST_P(StoreCheckTest, WhatIsNoStoreIsAnErrorNotAReport) {
  EXPECT_EQ(CheckStore("nonsense:x").status().code(), StatusCode::kInvalidArgument);
  if (GetParam() == Backend::kSqlite) {
    EXPECT_EQ(CheckStore("sqlite:" + loc_.dir() + "/missing.db").status().code(), StatusCode::kNotFound);
  } else {
    EXPECT_EQ(CheckStore("postgresql://rota@127.0.0.1:1/rota").status().code(), StatusCode::kUnavailable);
  }
}

}  // namespace
}  // namespace rota::store
