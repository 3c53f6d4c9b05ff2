// `rota simulate` as a user runs it: the binary on trace and queue files.

#include <unistd.h>

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
  // --plot replaces its file: a device or a link of that name is refused (run
  // as root, --plot /dev/null would have replaced /dev/null).
  const std::string link = dir.path() + "/link.svg";
  ASSERT_EQ(::symlink((dir.path() + "/missing.svg").c_str(), link.c_str()), 0);
  for (const std::string& special : {std::string("/dev/null"), link}) {
    CliResult dev = RunCli({"simulate", "--trace", trace, "--plot", special, "--policy", "fifo"});
    EXPECT_EQ(dev.exit_code, 2) << special << ": " << dev.err;
    EXPECT_NE(dev.err.find("exists and is not a regular file"), std::string::npos) << dev.err;
  }
  // Input files are read up to a size: /dev/zero is refused, not read forever.
  CliResult zeros = RunCli({"simulate", "--trace", trace, "--policy", "fifo", "--queues", "/dev/zero"});
  EXPECT_EQ(zeros.exit_code, 2) << zeros.err;
  EXPECT_NE(zeros.err.find("larger than 16 MiB"), std::string::npos) << zeros.err;
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

// Flags that cannot mean anything are refused with status 2 (never ignored or
// replaced by a default); what the run was is in its output.
TEST(SimulateCli, MeaninglessFlagsAreRefusedAndTheOutputSaysWhatRan) {
  TempDir dir;
  const std::string trace = dir.path() + "/trace.csv";
  ASSERT_TRUE(WriteFileAtomic(trace,
                              "submit_time,duration_s,num_gpus\n"
                              "2026-01-02 12:00:00,7200,8\n2026-01-02 13:00:00,600,1\n")
                  .ok());
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--nodes", "0"}, "--nodes: must be a whole number of 1 or more"},
      {{"--pooled", "0"}, "--pooled: must be a whole number of 1 or more"},
      {{"--nodes", "-3"}, "--nodes"},
      {{"--pooled", "16", "--nodes", "2"}, "--pooled and --nodes exclude each other"},
      {{"--preempt-cost", "-5s"}, "--preempt-cost must not be negative"},
      {{"--policy", "best"}, "best"},
  };
  for (const auto& [flags, message] : bad) {
    std::vector<std::string> argv = {"simulate", "--trace", trace};
    argv.insert(argv.end(), flags.begin(), flags.end());
    CliResult r = RunCli(argv);
    EXPECT_EQ(r.exit_code, 2) << flags[0] << ": " << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << flags[0] << ": " << r.err;
  }
  // A window no job was submitted in: said once, not once per policy.
  CliResult none = RunCli({"simulate", "--trace", trace, "--from", "2030-01-01", "--to", "2030-02-01"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(none.err, "rota: no job of the trace is submitted in the window --from .. --to\n");

  // A policy named twice runs once; the window asked for is the one measured.
  CliResult r = RunCli({"simulate", "--trace", trace, "--nodes", "1", "--policy", "fifo", "--policy", "fifo",
                        "--from", "2026-01-02", "--to", "2026-01-03", "--preempt-cost", "5", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json out = Json::parse(r.out);
  ASSERT_EQ(out["results"].size(), 1u) << r.out;
  EXPECT_EQ(out["from"], "2026-01-02T00:00:00Z");
  EXPECT_EQ(out["to"], "2026-01-03T00:00:00Z");
  EXPECT_EQ(out["nodes"], 1);
  EXPECT_TRUE(out["load"].is_null()) << "the cluster was not sized to a load";
  EXPECT_EQ(out["preempt_cost_ms"], 5000);
  EXPECT_NEAR(out["results"][0]["utilisation"].get<double>(), (8.0 * 7200 + 600) / (8.0 * 86400), 1e-9);
  CliResult table = RunCli({"simulate", "--trace", trace, "--nodes", "1", "--policy", "fifo", "--preempt-cost", "5"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("1 node x 8 GPUs, 2 jobs"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("preemption cost 5s"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("pass99ms"), std::string::npos) << table.out;
  // All submitted at once: no window to measure utilisation over.
  ASSERT_TRUE(WriteFileAtomic(trace, "submit_time,duration_s,num_gpus\n0,3600,8\n0,1800,4\n").ok());
  CliResult same = RunCli({"simulate", "--trace", trace, "--nodes", "2", "--policy", "fifo", "-o", "json"});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  out = Json::parse(same.out);
  EXPECT_TRUE(out["results"][0]["utilisation"].is_null()) << same.out;
  EXPECT_TRUE(out["results"][0]["utilisation_while_waiting"].is_null()) << same.out;
}

}  // namespace
}  // namespace rota::testing
