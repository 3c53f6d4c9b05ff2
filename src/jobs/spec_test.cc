#include "jobs/spec.h"

#include <gtest/gtest.h>

namespace rota::jobs {
namespace {

using api::Json;

Json TfJob() {
  return Json{{"name", "mnist"},
              {"command", {"python", "train.py", "--batch_size", "100"}},
              {"framework", "tensorflow"},
              {"env", {{"TF_CPP_MIN_LOG_LEVEL", "2"}}},
              {"groups",
               {{{"role", "ps"}, {"replicas", 1}},
                {{"role", "worker"}, {"replicas", 3}, {"gpus_per_task", 1}, {"memory", "16GiB"}, {"gpu_model", "A100"}}}},
              {"restart", {{"policy", "on-failure"}, {"max_restarts", 2}, {"backoff", "2s"}}},
              {"time_limit", "2h"},
              {"stop_after_disconnect", "5m"}};
}

TEST(JobSpecTest, DecodesAndRoundTrips) {
  auto s = JobSpecFromJson(TfJob());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->framework, Framework::kTensorflow);
  EXPECT_EQ(s->TaskCount(), 4u);
  EXPECT_EQ(s->GpuCount(), 3u);
  EXPECT_EQ(s->groups[1].memory_bytes_per_task, 16ULL << 30);
  EXPECT_EQ(s->groups[1].gpu_model, "A100");
  EXPECT_EQ(s->restart.kind, RestartKind::kOnFailure);
  EXPECT_EQ(s->restart.backoff_initial_ms, 2000);
  EXPECT_EQ(s->time_limit_ms, 2 * 3600'000);
  EXPECT_EQ(s->stop_after_disconnect_ms, 5 * 60'000);
  auto again = JobSpecFromJson(ToJson(*s));
  ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << ToJson(*s).dump();
  EXPECT_EQ(*again, *s);
}

TEST(JobSpecTest, DurationsOfAnyLengthRoundTrip) {
  // 90m, 90s and 25h were once written "1h 30m", "1m 30s" and "1d 1h", which
  // the spec could not read back: the job vanished from listings.
  Json j = TfJob();
  j["time_limit"] = "90m";
  j["stop_after_disconnect"] = "25h";
  j["restart"]["backoff"] = "90s";
  j["restart"]["max_backoff"] = "1h30m";
  auto s = JobSpecFromJson(j);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->time_limit_ms, 90 * 60'000);
  EXPECT_EQ(ToJson(*s)["time_limit"], "90m");
  auto again = JobSpecFromJson(ToJson(*s));
  ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << ToJson(*s).dump();
  EXPECT_EQ(*again, *s);
  j["stop_after_disconnect"] = "0s";  // never, as "must be 0 (never) or 1s up to 7d" says
  j["time_limit"] = "0";
  s = JobSpecFromJson(j);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->stop_after_disconnect_ms, 0);
  EXPECT_EQ(s->time_limit_ms, 0);
  j["time_limit"] = "1h 30m";  // as older versions stored it
  s = JobSpecFromJson(j);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->time_limit_ms, 90 * 60'000);
}

TEST(JobSpecTest, AnExplicitPriorityZeroIsKeptApartFromNone) {
  // The queue gives a job naming no priority its bound nearest 0, but refuses an
  // explicit 0 outside its bounds: the two must survive decoding and storing.
  auto none = JobSpecFromJson(TfJob());
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(none->priority.has_value());
  EXPECT_EQ(none->Priority(), 0);
  EXPECT_FALSE(ToJson(*none).contains("priority"));
  Json j = TfJob();
  j["priority"] = 0;
  auto zero = JobSpecFromJson(j);
  ASSERT_TRUE(zero.ok()) << zero.status().ToString();
  ASSERT_TRUE(zero->priority.has_value());
  EXPECT_EQ(*zero->priority, 0);
  auto again = JobSpecFromJson(ToJson(*zero));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->priority, std::optional<int>(0));
  j["priority"] = -7;
  auto neg = JobSpecFromJson(j);
  ASSERT_TRUE(neg.ok()) << neg.status().ToString();
  EXPECT_EQ(neg->Priority(), -7);
}

// Each bad spec is refused naming the field. Tried: unknown framework, zero and
// negative replicas, too many GPUs per task, a role the framework does not know,
// the same role twice, two chiefs, no command, shell with several strings, a
// relative workdir, a bad env name, an unknown key, wrong types, an MPI job
// without launcher or with GPUs on it, process_per_node outside pytorch, a bad
// restart policy, an absurd time limit, bad sizes, a bad name.
TEST(JobSpecTest, RejectsBadSpecsNamingTheField) {
  struct Case {
    const char* what;
    Json patch;  // merged into TfJob()
    const char* field;
  };
  const std::vector<Case> cases = {
      {"unknown framework", {{"framework", "caffe"}}, "unknown framework 'caffe'"},
      {"zero replicas", {{"groups", {{{"role", "worker"}, {"replicas", 0}}}}}, "replicas"},
      {"negative replicas", {{"groups", {{{"role", "worker"}, {"replicas", -2}}}}}, "replicas"},
      {"too many gpus", {{"groups", {{{"role", "worker"}, {"gpus_per_task", 65}}}}}, "gpus_per_task"},
      {"gpu model not a string", {{"groups", {{{"role", "worker"}, {"gpu_model", 100}}}}}, "gpu_model"},
      {"bad role", {{"groups", {{{"role", "reducer"}}}}}, "not a tensorflow role"},
      {"role twice", {{"groups", {{{"role", "worker"}}, {{"role", "worker"}}}}}, "appears twice"},
      {"two chiefs", {{"groups", {{{"role", "chief"}, {"replicas", 2}}}}}, "one chief"},
      {"no command", {{"command", Json::array()}}, "job.command"},
      {"shell with two strings", {{"shell", true}}, "exactly one string"},
      {"relative workdir", {{"workdir", "data/run"}}, "job.workdir"},
      {"bad env name", {{"env", {{"1BAD", "x"}}}}, "not a valid variable name"},
      {"env not strings", {{"env", {{"A", 1}}}}, "job.env.A"},
      {"unknown key", {{"colour", "red"}}, "colour"},
      {"command not a list", {{"command", "python train.py"}}, "job.command"},
      {"no groups", {{"groups", Json::array()}}, "job.groups"},
      {"mpi without launcher",
       {{"framework", "mpi"}, {"groups", {{{"role", "worker"}, {"replicas", 2}}}}},
       "launcher"},
      {"mpi launcher with gpus",
       {{"framework", "mpi"},
        {"groups", {{{"role", "launcher"}, {"gpus_per_task", 1}}, {{"role", "worker"}}}}},
       "no GPUs"},
      {"process_per_node outside pytorch", {{"process_per_node", true}}, "only for pytorch"},
      {"bad restart policy", {{"restart", {{"policy", "always"}}}}, "job.restart.policy"},
      {"too many restarts", {{"restart", {{"policy", "on-failure"}, {"max_restarts", 5000}}}},
       "max_restarts"},
      {"absurd time limit", {{"time_limit", "9999d"}}, "time_limit"},
      {"malformed time limit", {{"time_limit", "soon"}}, "time_limit"},
      {"stop after disconnect too soon", {{"stop_after_disconnect", "500ms"}}, "stop_after_disconnect"},
      {"stop after disconnect too late", {{"stop_after_disconnect", "30d"}}, "stop_after_disconnect"},
      {"bad memory", {{"groups", {{{"role", "worker"}, {"memory", "lots"}}}}}, "memory"},
      {"bad memory unit", {{"groups", {{{"role", "worker"}, {"memory", "3parsecs"}}}}}, "memory"},
      {"bad name", {{"name", "-x y"}}, "job.name"},
      {"empty name", {{"name", ""}}, "job.name"},
  };
  for (const auto& c : cases) {
    Json j = TfJob();
    j.merge_patch(c.patch);
    if (c.patch.contains("command") && c.patch["command"].is_array() && c.patch["command"].empty()) {
      j["command"] = Json::array();
    }
    if (c.patch.contains("groups")) j["groups"] = c.patch["groups"];
    auto s = JobSpecFromJson(j);
    ASSERT_FALSE(s.ok()) << c.what;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument) << c.what;
    EXPECT_NE(s.status().message().find(c.field), std::string::npos)
        << c.what << ": " << s.status().message();
  }
  EXPECT_FALSE(JobSpecFromJson(Json::array()).ok());
  EXPECT_FALSE(JobSpecFromJson(Json("job")).ok());
}

TEST(JobSpecTest, ShellJobsTakeOneString) {
  Json j = TfJob();
  j["shell"] = true;
  j["command"] = {"python train.py --ps_hosts={ps_hosts} && echo done"};
  auto s = JobSpecFromJson(j);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->shell);
}

TEST(JobSpecTest, MpiWorkersNeedNoCommandOfTheirOwn) {
  Json j{{"name", "hvd"},
         {"framework", "mpi"},
         {"groups",
          {{{"role", "launcher"}, {"command", {"mpirun", "--hostfile", "{hostfile}", "python", "t.py"}}},
           {{"role", "worker"}, {"replicas", 2}, {"gpus_per_task", 2}}}}};
  auto s = JobSpecFromJson(j);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->GpuCount(), 4u);
}

TEST(RestartPolicyTest, BackoffDoublesUpToTheMaximumAndExitCodesDecide) {
  RestartPolicy never;
  EXPECT_FALSE(never.DelayBefore(1, 1));
  RestartPolicy on{RestartKind::kOnFailure, 4, 1000, 5000};
  EXPECT_EQ(on.DelayBefore(1, 1), 1000);
  EXPECT_EQ(on.DelayBefore(2, 1), 2000);
  EXPECT_EQ(on.DelayBefore(3, 137), 4000);
  EXPECT_EQ(on.DelayBefore(4, 1), 5000);
  EXPECT_FALSE(on.DelayBefore(5, 1));  // over max_restarts
  RestartPolicy codes{RestartKind::kExitCode, 3, 1000, 60000};
  EXPECT_FALSE(codes.DelayBefore(1, 1));    // permanent
  EXPECT_FALSE(codes.DelayBefore(1, 127));  // permanent
  EXPECT_EQ(codes.DelayBefore(1, 128), 1000);  // retryable
  EXPECT_EQ(codes.DelayBefore(1, 137), 1000);  // SIGKILL: retryable
}

TEST(ParseBytesTest, Units) {
  EXPECT_EQ(*ParseBytes("16GiB"), 16ULL << 30);
  EXPECT_EQ(*ParseBytes("512MiB"), 512ULL << 20);
  EXPECT_EQ(*ParseBytes("1.5G"), 1'500'000'000ULL);
  EXPECT_EQ(*ParseBytes("1000"), 1000u);
  for (const char* bad : {"", "GiB", "12 apples", "1e400", "-5G"}) {
    EXPECT_FALSE(ParseBytes(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace rota::jobs
