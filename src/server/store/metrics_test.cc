// The SQL of tasks' metrics (metrics.h), on SQLite and on PostgreSQL.
#include "server/store/metrics.h"

#include <gtest/gtest.h>

#include "common/clock.h"
#include "server/store/jobs.h"
#include "server/store/store_test_backend.h"

namespace rota::store {
namespace {

using api::TaskMetricPoint;
using testing::Backend;

class StoreMetricsTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    ROTA_SKIP_WITHOUT_BACKEND(loc_);
    auto s = loc_.Open({}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    ASSERT_TRUE(store_->Write([&](Db& db) -> Status {
      RETURN_IF_ERROR(db.Exec("INSERT INTO users (id, username, role, created_ms, updated_ms) VALUES "
                              "(1, 'alice', 'user', 0, 0)"));
      ArrayRow a;
      a.owner_id = 1;
      a.name = "sweep";
      a.indices = "0-1";
      a.size = 2;
      a.spec_json = "{}";
      ASSIGN_OR_RETURN(array_id_, InsertArray(db, a));
      for (int64_t i = 0; i < 3; ++i) {
        JobRow r;
        r.owner_id = 1;
        r.name = "m";
        r.spec_json = "{}";
        r.state = "running";
        r.array_id = i < 2 ? array_id_ : 0;  // the third is not a member
        r.array_index = i;
        ASSIGN_OR_RETURN(jobs_[i], InsertJob(db, r));
      }
      return Status::Ok();
    }).ok());
  }

  static TaskMetricPoint P(const std::string& name, double v, int64_t step, uint64_t seq, int64_t t,
                           TaskMetricPoint::Source src = TaskMetricPoint::Source::kStdout) {
    return TaskMetricPoint{name, v, step, src, seq, t};
  }
  Status Insert(int64_t job, const std::string& task, const std::vector<TaskMetricPoint>& points) {
    return store_->Write([&](Db& db) { return InsertMetricPoints(db, job, task, points); });
  }

  testing::TestStoreLocation loc_{GetParam()};
  FakeClock clock_{1'700'000'000'000};
  std::unique_ptr<Store> store_;
  int64_t array_id_ = 0;
  int64_t jobs_[3] = {};
};
INSTANTIATE_TEST_SUITE_P(, StoreMetricsTest, ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         testing::BackendParamName<::testing::TestParamInfo<Backend>>);

TEST_P(StoreMetricsTest, APointSentTwiceIsKeptOnceAndReadInTimeOrder) {
  const std::string task = "job-" + std::to_string(jobs_[0]) + ".r0.worker-0";
  ASSERT_TRUE(Insert(jobs_[0], task, {P("loss", 2.0, 1, 0, 100), P("acc", 0.5, 1, 0, 100)}).ok());
  // Sent again after a reconnect, with a new point; the same line offset in the
  // other source is another point.
  ASSERT_TRUE(Insert(jobs_[0], task,
                     {P("loss", 2.0, 1, 0, 150), P("loss", 1.5, 2, 30, 200),
                      P("loss", 9.0, -1, 0, 210, TaskMetricPoint::Source::kFile)})
                  .ok());
  bool truncated = true;
  std::vector<MetricRow> rows;
  ASSERT_TRUE(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(rows, JobMetrics(db, jobs_[0], 100, &truncated));
    return Status::Ok();
  }).ok());
  EXPECT_FALSE(truncated);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].name, "acc");  // time 100: by name
  EXPECT_EQ(rows[1].name, "loss");
  EXPECT_EQ(rows[1].time_ms, 100);  // the first copy is the one kept
  EXPECT_EQ(rows[2].step, 2);
  EXPECT_DOUBLE_EQ(rows[2].value, 1.5);
  EXPECT_EQ(rows[3].step, -1);
  EXPECT_EQ(rows[3].task, task);
  ASSERT_TRUE(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(rows, JobMetrics(db, jobs_[0], 3, &truncated));
    return Status::Ok();
  }).ok());
  EXPECT_TRUE(truncated);
  EXPECT_EQ(rows.size(), 3u);
}

TEST_P(StoreMetricsTest, AnArraysMembersAreSummedUpPerMetric) {
  ASSERT_TRUE(Insert(jobs_[0], "job-1.r0.worker-0",
                     {P("loss", 3.0, 1, 0, 100), P("loss", 1.0, 2, 20, 200), P("loss", 2.0, 3, 40, 300)})
                  .ok());
  ASSERT_TRUE(Insert(jobs_[1], "job-2.r0.worker-0", {P("loss", 0.5, -1, 0, 100), P("acc", 0.9, -1, 0, 100)}).ok());
  ASSERT_TRUE(Insert(jobs_[2], "job-3.r0.worker-0", {P("loss", 0.1, -1, 0, 100)}).ok());
  std::map<int64_t, std::map<std::string, MetricSummary>> got;
  ASSERT_TRUE(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(got, ArrayMetricSummaries(db, array_id_));
    return Status::Ok();
  }).ok());
  ASSERT_EQ(got.size(), 2u);  // the job outside the array is not in it
  const MetricSummary& first = got[jobs_[0]]["loss"];
  EXPECT_DOUBLE_EQ(first.last, 2.0);
  EXPECT_EQ(first.last_step, 3);
  EXPECT_DOUBLE_EQ(first.min, 1.0);
  EXPECT_DOUBLE_EQ(first.max, 3.0);
  EXPECT_EQ(first.count, 3);
  EXPECT_EQ(got[jobs_[1]].size(), 2u);
  EXPECT_DOUBLE_EQ(got[jobs_[1]]["acc"].last, 0.9);
  EXPECT_EQ(got[jobs_[1]]["acc"].last_step, -1);
}

TEST_P(StoreMetricsTest, TrialPointsAreEveryMembersSteppedPointsOfOneMetric) {
  ASSERT_TRUE(Insert(jobs_[0], "job-1.r0.worker-0",
                     {P("loss", 3.0, 1, 0, 100), P("acc", 0.2, 1, 0, 100), P("loss", 9.0, -1, 10, 150),
                      P("loss", 1.0, 2, 20, 200)})
                  .ok());
  ASSERT_TRUE(Insert(jobs_[2], "job-3.r0.worker-0", {P("loss", 0.1, 1, 0, 100)}).ok());
  ASSERT_TRUE(store_->Write([&](Db& db) {
    return db.Exec("UPDATE jobs SET state = 'succeeded', reason = 'stopped early: x' WHERE id = " +
                   std::to_string(jobs_[1]));
  }).ok());
  std::vector<TrialPoints> got;
  ASSERT_TRUE(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(got, ArrayTrialPoints(db, array_id_, "loss"));
    return Status::Ok();
  }).ok());
  ASSERT_EQ(got.size(), 2u);  // both members, the one without points too; not the outsider
  EXPECT_EQ(got[0].job_id, jobs_[0]);
  EXPECT_EQ(got[0].state, "running");
  ASSERT_EQ(got[0].points.size(), 2u);  // the other metric and the stepless point are left out
  EXPECT_EQ(got[0].points[0].step, 1);
  EXPECT_DOUBLE_EQ(got[0].points[0].value, 3.0);
  EXPECT_EQ(got[0].points[1].step, 2);
  EXPECT_EQ(got[0].points[1].time_ms, 200);
  EXPECT_EQ(got[1].job_id, jobs_[1]);
  EXPECT_EQ(got[1].state, "succeeded");
  EXPECT_EQ(got[1].reason, "stopped early: x");
  EXPECT_TRUE(got[1].points.empty());
}

}  // namespace
}  // namespace rota::store
