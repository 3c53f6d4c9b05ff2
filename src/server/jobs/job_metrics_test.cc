// JobMetrics against a real (SQLite) store: only the reporting node's own
// tasks are kept, within a job's bounds.
#include "server/jobs/job_metrics.h"

#include <gtest/gtest.h>

#include "common/clock.h"
#include "server/store/store.h"
#include "server/store/store_test_util.h"

namespace rota::server {
namespace {

using api::TaskMetricPoint;

class JobMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::Store::Open(dir_.path(), store::StoreOptions{}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    // Job 7 runs task job-7.r0.worker-0 on gpu-a; nothing else runs.
    metrics_ = std::make_unique<JobMetrics>(store_.get(), [](const std::string& node, const std::string& task) {
      return node == "gpu-a" && task == "job-7.r0.worker-0" ? std::optional<int64_t>(7) : std::nullopt;
    });
  }

  static api::TaskMetricsMsg Msg(const std::string& task, size_t n, const std::string& prefix = "loss",
                                 uint64_t first_seq = 0) {
    api::TaskMetricsMsg m{task, {}};
    for (size_t i = 0; i < n; ++i) {
      m.points.push_back(TaskMetricPoint{prefix, double(i), int64_t(i), TaskMetricPoint::Source::kStdout,
                                         first_seq + i, 1000});
    }
    return m;
  }

  std::vector<store::MetricRow> Points() {
    EXPECT_TRUE(store_->Flush().ok());
    bool truncated = false;
    auto rows = metrics_->JobPoints(7, JobMetrics::kMaxPointsPerRead, &truncated);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows : std::vector<store::MetricRow>{};
  }

  store::testing::TempDir dir_;
  FakeClock clock_{1'700'000'000'000};
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<JobMetrics> metrics_;
};

TEST_F(JobMetricsTest, OnlyTheNodesOwnTaskIsKept) {
  metrics_->OnMetrics("gpu-a", Msg("job-7.r0.worker-0", 3));
  metrics_->OnMetrics("gpu-b", Msg("job-7.r0.worker-0", 2, "stolen", 100));  // another node's task
  metrics_->OnMetrics("gpu-a", Msg("job-8.r0.worker-0", 2, "other"));        // not a task it runs
  auto rows = Points();
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& r : rows) EXPECT_EQ(r.name, "loss");
  EXPECT_EQ(metrics_->stats().points_accepted, 3u);
  EXPECT_EQ(metrics_->stats().points_refused, 4u);
}

TEST_F(JobMetricsTest, AJobKeepsAtMostItsBoundsOfNamesAndPoints) {
  api::TaskMetricsMsg names{"job-7.r0.worker-0", {}};
  for (size_t i = 0; i < JobMetrics::kMaxNamesPerJob + 5; ++i) {
    names.points.push_back(
        TaskMetricPoint{"m" + std::to_string(i), 1, -1, TaskMetricPoint::Source::kFile, i, 1000});
  }
  metrics_->OnMetrics("gpu-a", names);
  EXPECT_EQ(Points().size(), JobMetrics::kMaxNamesPerJob);
  // A name it has goes on; points stop at the bound.
  const int64_t room = JobMetrics::kMaxPointsPerJob - static_cast<int64_t>(JobMetrics::kMaxNamesPerJob);
  for (int64_t sent = 0; sent < room + 500; sent += 1000) {
    metrics_->OnMetrics("gpu-a", Msg("job-7.r0.worker-0", 1000, "m0", 1'000'000 + static_cast<uint64_t>(sent)));
  }
  EXPECT_EQ(metrics_->stats().points_accepted, static_cast<uint64_t>(JobMetrics::kMaxPointsPerJob));
  EXPECT_EQ(Points().size(), JobMetrics::kMaxPointsPerRead);  // a read is bounded too
}

}  // namespace
}  // namespace rota::server
