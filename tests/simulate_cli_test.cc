// `rota simulate` as a user runs it: the binary on trace and queue files.

#include <gtest/gtest.h>

#include "common/file_util.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using api::Json;

// `rota simulate --queues`: the trace's queue column with the queues of a
// GET /api/v1/queues answer; a bad queue file is refused naming the entry.
TEST(SimulateCli, TheTracesQueuesComeFromAQueuesFile) {
  TempDir dir;
  const std::string trace = dir.path() + "/trace.csv";
  ASSERT_TRUE(WriteFileAtomic(trace,
                              "submit_time,duration_s,num_gpus,user,queue\n"
                              "0,3600,1,ann,batch\n0,3600,1,bob,batch\n0,3600,1,cy,urgent\n")
                  .ok());
  const std::string queues = dir.path() + "/queues.json";
  ASSERT_TRUE(WriteFileAtomic(queues, R"({"queues": [
      {"name": "default", "priority": 0, "min_priority": -100, "max_priority": 0, "built_in": true,
       "pending": 0, "unfinished": 0},
      {"name": "urgent", "priority": 10, "max_gpus": 1, "pending": 3, "unfinished": 4}]})")
                  .ok());
  // Hostile sizes are refused before anything is allocated.
  for (const char* load : {"nan", "0", "-1", "101"}) {
    CliResult bad = RunCli({"simulate", "--trace", trace, "--load", load, "--policy", "fifo"});
    EXPECT_EQ(bad.exit_code, 2) << load << ": " << bad.err;
    EXPECT_NE(bad.err.find("--load must be above 0, at most 100"), std::string::npos) << load << ": " << bad.err;
  }
  CliResult plot = RunCli({"simulate", "--trace", trace, "--plot", "/nonexistent/x.svg", "--policy", "fifo"});
  EXPECT_EQ(plot.exit_code, 2) << plot.err;
  EXPECT_NE(plot.err.find("--plot: cannot write into /nonexistent"), std::string::npos) << plot.err;
  const std::string none = dir.path() + "/empty-queues.json";
  ASSERT_TRUE(WriteFileAtomic(none, R"({"queues": []})").ok());
  CliResult empty = RunCli({"simulate", "--trace", trace, "--pooled", "1", "--policy", "fifo", "--queues", none});
  EXPECT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_NE(empty.err.find("queue 'urgent' is not in --queues"), std::string::npos) << empty.err;
  CliResult huge = RunCli({"simulate", "--trace", trace, "--nodes", "4000000000", "--policy", "fifo"});
  EXPECT_EQ(huge.exit_code, 2) << huge.err;
  EXPECT_NE(huge.err.find("GPUs; at most 1,000,000"), std::string::npos) << huge.err;
  CliResult r = RunCli({"simulate", "--trace", trace, "--pooled", "1", "--policy", "rota", "--queues", queues,
                        "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // "batch" is not in the file: said, and run with the default's settings.
  EXPECT_NE(r.err.find("queue 'batch' is not in --queues"), std::string::npos) << r.err;
  Json out = Json::parse(r.out);
  const Json& by_queue = out["results"][0]["by_queue"];
  ASSERT_EQ(by_queue.size(), 2u) << out.dump();
  EXPECT_EQ(by_queue[1]["queue"], "urgent");
  EXPECT_NEAR(by_queue[1]["jct_hours"]["avg"].get<double>(), 1.0, 1e-6);
  EXPECT_EQ(by_queue[0]["queue"], "batch");
  EXPECT_EQ(by_queue[0]["jobs"], 2);
  // The table says the same.
  r = RunCli({"simulate", "--trace", trace, "--pooled", "1", "--policy", "rota", "--queues", queues});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("by queue:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("urgent"), std::string::npos) << r.out;

  ASSERT_TRUE(WriteFileAtomic(queues, R"([{"name": "urgent", "max_gpus": -1}])").ok());
  r = RunCli({"simulate", "--trace", trace, "--pooled", "1", "--queues", queues});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("queues[0]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("max_gpus"), std::string::npos) << r.err;
  ASSERT_TRUE(WriteFileAtomic(queues, R"([{"name": "urgent"}, {"name": "urgent"}])").ok());
  r = RunCli({"simulate", "--trace", trace, "--pooled", "1", "--queues", queues});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("given twice"), std::string::npos) << r.err;
  r = RunCli({"simulate", "--trace", trace, "--pooled", "1", "--queues", dir.path() + "/none.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--queues"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace rota::testing
