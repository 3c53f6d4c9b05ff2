#include "api/task_protocol.h"

#include <gtest/gtest.h>

#include "api/protocol.h"

namespace rota::api {
namespace {

TaskSpec Spec() {
  TaskSpec t;
  t.id = "j42.worker-1.0";
  t.job_id = "j42";
  t.name = "worker-1.0";
  t.argv = {"python", "train.py", "--lr", "0.1", "a b; c"};
  t.env = {{"RANK", "1"}, {"TF_CONFIG", "{\"cluster\":{}}"}};
  t.workdir = "/home/alice";
  t.user = "alice";
  t.files = {{"hostfile", "10.0.0.1 slots=2\n"}};
  t.file_env = {{"ROTA_HOSTFILE", "hostfile"}};
  t.ports = {29500, 29501};
  t.cpus = 2.5;
  t.memory_bytes = 8ull << 30;
  t.stop_after_disconnect_ms = 300'000;
  return t;
}

TEST(TaskProtocolTest, MessagesRoundTrip) {
  auto start = DecodeServerMessage(Encode(TaskStartMsg{Spec()}));
  ASSERT_TRUE(start.ok()) << start.status().ToString();
  const TaskSpec& t = std::get<TaskStartMsg>(*start).task;
  EXPECT_EQ(t.argv, Spec().argv);
  EXPECT_EQ(t.env, Spec().env);
  EXPECT_EQ(t.files, Spec().files);
  EXPECT_EQ(t.file_env, Spec().file_env);
  EXPECT_EQ(t.user, "alice");
  EXPECT_DOUBLE_EQ(t.cpus, 2.5);
  EXPECT_EQ(t.ports, Spec().ports);
  EXPECT_EQ(t.memory_bytes, 8ull << 30);
  EXPECT_EQ(t.stop_after_disconnect_ms, 300'000);

  auto sig = DecodeServerMessage(Encode(TaskSignalMsg{"j42.worker-1.0", "KILL"}));
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_EQ(std::get<TaskSignalMsg>(*sig).signal, "KILL");

  auto logs = DecodeServerMessage(Encode(TaskLogsMsg{7, "j42.worker-1.0", "stderr", 100, 4096}));
  ASSERT_TRUE(logs.ok()) << logs.status().ToString();
  EXPECT_EQ(std::get<TaskLogsMsg>(*logs).offset, 100u);

  TaskReport running{"j42.a", "running", 123, std::nullopt, std::nullopt, "", 0};
  TaskReport killed{"j42.b", "exited", 124, std::nullopt, 9, "", 1000};
  TaskReport failed{"j42.c", "exited", 0, 127, std::nullopt, "cannot run 'x'", 1000};
  auto status = DecodeAgentMessage(Encode(TaskStatusMsg{{running, killed, failed}}));
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  const auto& tasks = std::get<TaskStatusMsg>(*status).tasks;
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks[1].signal, 9);
  EXPECT_FALSE(tasks[1].exit_code.has_value());
  EXPECT_EQ(tasks[2].exit_code, 127);
  EXPECT_EQ(tasks[2].error, "cannot run 'x'");

  auto log = DecodeAgentMessage(Encode(TaskLogMsg{7, "hello\n", 100, 106, ""}));
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ(std::get<TaskLogMsg>(*log).data, "hello\n");
  EXPECT_EQ(std::get<TaskLogMsg>(*log).next_offset, 0u);  // an older agent's message
}

// Invalid UTF-8 is replaced in the JSON, so the byte count travels beside the text.
TEST(TaskProtocolTest, JobNumberOfTaskIdReadsTheServersIds) {
  EXPECT_EQ(JobNumberOfTaskId("job-7.r0.worker-0"), 7);
  EXPECT_EQ(JobNumberOfTaskId("job-1234567890123.x"), 1234567890123);
  for (const char* bad : {"", "job-", "job-7", "job-.x", "job-0.x", "job--1.x", "job-7x.y", "j42.worker-1.0",
                          "job-99999999999999999999.x"}) {
    EXPECT_FALSE(JobNumberOfTaskId(bad).has_value()) << bad;
  }
}

TEST(TaskProtocolTest, TaskLogCarriesTheNextOffsetInFileBytes) {
  TaskLogMsg m{7, "ok \xff\xfe\n", 100, 200, ""};
  m.next_offset = 106;
  auto log = DecodeAgentMessage(Encode(m));
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  const auto& got = std::get<TaskLogMsg>(*log);
  EXPECT_NE(got.data.size(), 6u);  // replaced: longer than the bytes read
  EXPECT_EQ(got.next_offset, 106u);

  m.next_offset = 99;  // before the chunk
  auto bad = DecodeAgentMessage(Encode(m));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("next_offset"), std::string::npos);
}

// Tried: path tricks and junk in ids, empty argv, a relative workdir, bad env
// names, file names with '/', file_env naming no file, a user name with a
// slash, unknown signals, bad states, exit codes and signals out of range,
// max_bytes 0 and over the limit, wrong types.
TEST(TaskProtocolTest, BadMessagesAreRefusedNamingTheField) {
  auto server = [](const Json& j) { return DecodeServerMessage(j.dump()); };
  auto agent = [](const Json& j) { return DecodeAgentMessage(j.dump()); };
  auto with = [&](Json j, const char* type) {
    j["v"] = 1;
    j["type"] = type;
    return j;
  };
  const Json good = ToJson(Spec());
  auto start = [&](const char* key, Json value) {
    Json t = good;
    t[key] = std::move(value);
    return with(Json{{"task", t}}, "task_start");
  };
  const std::vector<std::pair<Json, std::string>> bad_server = {
      {start("id", "../etc"), "id"},
      {start("id", ""), "id"},
      {start("id", std::string(200, 'a')), "id"},
      {start("argv", Json::array()), "argv"},
      {start("argv", "python train.py"), "argv"},
      {start("workdir", "relative/dir"), "workdir"},
      {start("env", {{"A=B", "x"}}), "env"},
      {start("files", {{"../x", "y"}}), "files"},
      {start("file_env", {{"F", "missing"}}), "file_env"},
      {start("user", "../root"), "user"},
      {start("cpus", -1), "cpus"},
      {start("ports", {0}), "ports"},
      {start("ports", {70000}), "ports"},
      {start("ports", "29500"), "ports"},
      {start("cpus", "2"), "cpus"},
      {start("cpus", 1e9), "cpus"},
      {start("memory_bytes", -5), "memory_bytes"},
      {start("stop_after_disconnect_ms", -1), "stop_after_disconnect_ms"},
      {start("stop_after_disconnect_ms", "5m"), "stop_after_disconnect_ms"},
      {start("memory_bytes", 1.5), "memory_bytes"},
      {with(Json::object(), "task_start"), "task"},
      {with(Json{{"id", "a"}, {"signal", "HUP"}}, "task_signal"), "signal"},
      {with(Json{{"id", "a/b"}, {"signal", "TERM"}}, "task_signal"), "id"},
      {with(Json{{"req", 1}, {"id", "a"}, {"max_bytes", 0}}, "task_logs"), "max_bytes"},
      {with(Json{{"req", 1}, {"id", "a"}, {"max_bytes", 1 << 30}}, "task_logs"), "max_bytes"},
      {with(Json{{"req", 1}, {"id", "a"}, {"stream", "stdin"}}, "task_logs"), "stream"},
      {with(Json{{"req", "one"}, {"id", "a"}}, "task_logs"), "req"},
  };
  for (const auto& [msg, field] : bad_server) {
    auto r = server(msg);
    ASSERT_FALSE(r.ok()) << msg.dump();
    EXPECT_NE(r.status().message().find(field), std::string::npos)
        << msg.dump() << " -> " << r.status().message();
  }
  auto report = [&](Json r) { return with(Json{{"tasks", Json::array({std::move(r)})}}, "task_status"); };
  const std::vector<std::pair<Json, std::string>> bad_agent = {
      {with(Json::object(), "task_status"), "tasks"},
      {report(Json{{"id", "a"}, {"state", "sleeping"}}), "state"},
      {report(Json{{"id", "a"}, {"state", "exited"}, {"exit_code", 300}}), "exit_code"},
      {report(Json{{"id", "a"}, {"state", "exited"}, {"signal", 0}}), "signal"},
      {report(Json{{"id", "a b"}, {"state", "running"}}), "id"},
      {report(Json{{"id", "a"}, {"state", "running"}, {"pid", "x"}}), "pid"},
      {with(Json{{"data", "x"}}, "task_log"), "req"},
  };
  for (const auto& [msg, field] : bad_agent) {
    auto r = agent(msg);
    ASSERT_FALSE(r.ok()) << msg.dump();
    EXPECT_NE(r.status().message().find(field), std::string::npos)
        << msg.dump() << " -> " << r.status().message();
  }
}

// Found by the protocol fuzzer (fuzz/protocol_fuzz.cc, 2026-12-02): a number out of an
// integer field's range was converted anyway (undefined behaviour: UBSan stopped it).
// Floats, negatives for unsigned fields and values past the type are refused by name.
TEST(TaskProtocolTest, IntegerFieldsOutOfRangeAreRefusedNotConverted) {
  const std::string found =
      R"({"id":"job-3.r0.worker-0","max_bytes":4092222222222222222222222222222222222222222)"
      R"(22222222222222222222222222222222222222222222222222222222222222222222222222222222226,)"
      R"("offset":100,"req":5,"st1eam":"stderr","type":"task_logs","v":1})";
  auto m = DecodeServerMessage(found);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("max_bytes"), std::string::npos) << m.status().message();
  for (const char* bad : {R"("offset":-1)", R"("offset":1.5)", R"("offset":1e300)",
                          R"("req":18446744073709551616)", R"("offset":"7")"}) {
    const std::string text = std::string(R"({"type":"task_logs","v":1,"id":"j1.a","req":1,)") + bad + "}";
    auto r = DecodeServerMessage(text);
    EXPECT_FALSE(r.ok()) << text;
  }
  auto ok = DecodeServerMessage(R"({"type":"task_logs","v":1,"id":"j1.a","req":1,"offset":7})");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(std::get<TaskLogsMsg>(*ok).offset, 7u);
}

}  // namespace
}  // namespace rota::api

namespace rota::api {
namespace {

TEST(TaskResizeProtocolTest, ResizeAndAnswerRoundTrip) {
  TaskResizeMsg m{"job-3.r0.worker-0", 1.5, "0-1,3", 7};
  auto back = DecodeServerMessage(Encode(m));
  ASSERT_TRUE(back.ok()) << back.status().message();
  const auto& r = std::get<TaskResizeMsg>(*back);
  EXPECT_EQ(r.id, m.id);
  EXPECT_DOUBLE_EQ(r.cpus, 1.5);
  EXPECT_EQ(r.cpuset, "0-1,3");
  EXPECT_EQ(r.generation, 7u);

  TaskResizedMsg a{"job-3.r0.worker-0", 7, "task job-3.r0.worker-0 is not known"};
  auto answer = DecodeAgentMessage(Encode(a));
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  EXPECT_EQ(std::get<TaskResizedMsg>(*answer).error, a.error);
  EXPECT_EQ(std::get<TaskResizedMsg>(*answer).generation, 7u);
}

TEST(TaskMetricsProtocolTest, PointsRoundTripAndBadOnesAreRefusedNamingTheField) {
  TaskMetricsMsg m{"job-5.r0.worker-0",
                   {{"loss", 0.25, 10, TaskMetricPoint::Source::kStdout, 120, 1'800'000'000'000},
                    {"eval/acc", -1e-3, -1, TaskMetricPoint::Source::kFile, 0, 1'800'000'000'500}}};
  auto back = DecodeAgentMessage(Encode(m));
  ASSERT_TRUE(back.ok()) << back.status().message();
  const auto& r = std::get<TaskMetricsMsg>(*back);
  EXPECT_EQ(r.id, m.id);
  EXPECT_EQ(r.points, m.points);

  auto refused = [&](const std::string& field, const Json& value) {
    Json j = Json::parse(Encode(m));
    j["points"][0][field] = value;
    auto d = DecodeAgentMessage(j.dump());
    return d.ok() ? std::string("accepted") : d.status().message();
  };
  EXPECT_NE(refused("name", "step").find("'step' names the step"), std::string::npos);
  EXPECT_NE(refused("name", "9lives").find("must begin with a letter"), std::string::npos);
  EXPECT_NE(refused("name", "a b").find("may hold letters"), std::string::npos);
  EXPECT_NE(refused("name", std::string(65, 'a')).find("1..64 bytes"), std::string::npos);
  EXPECT_NE(refused("value", "1").find("points[0].value: must be a finite number"), std::string::npos);
  EXPECT_NE(refused("step", -2).find("points[0].step"), std::string::npos);
  EXPECT_NE(refused("source", "stdin").find("must be stdout or file"), std::string::npos);
  EXPECT_NE(refused("seq", -1).find("seq"), std::string::npos);
  Json none = Json::parse(Encode(m));
  none["points"] = Json::array();
  EXPECT_FALSE(DecodeAgentMessage(none.dump()).ok());
  Json many = Json::parse(Encode(m));
  for (int i = 0; i < 1100; ++i) many["points"].push_back(many["points"][0]);
  auto too_many = DecodeAgentMessage(many.dump());
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("1..1024 points"), std::string::npos) << too_many.status().message();
}

TEST(TaskResizeProtocolTest, MalleableStartRoundTrips) {
  TaskSpec t;
  t.id = "job-4.r0.worker-0";
  t.argv = {"python3", "train.py"};
  t.cpus = 0.5;
  t.malleable = true;
  t.cpuset = "0";
  t.gpus = {1, 3};
  t.resize_signal = "USR2";
  auto back = DecodeServerMessage(Encode(TaskStartMsg{t}));
  ASSERT_TRUE(back.ok()) << back.status().message();
  const TaskSpec& r = std::get<TaskStartMsg>(*back).task;
  EXPECT_TRUE(r.malleable);
  EXPECT_EQ(r.cpuset, "0");
  EXPECT_EQ(r.gpus, (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(r.resize_signal, "USR2");
  // Not malleable: the default signal and no fields added.
  t.malleable = false;
  t.cpuset.clear();
  t.gpus.clear();
  t.resize_signal = "USR1";
  const Json plain = ToJson(t);
  EXPECT_FALSE(plain.contains("malleable"));
  EXPECT_FALSE(plain.contains("resize_signal"));
}

TEST(TaskResizeProtocolTest, BadResizesAreRefusedNamingTheField) {
  auto resize = [](Json j) {
    j["v"] = 1;
    j["type"] = "task_resize";
    return DecodeServerMessage(j.dump());
  };
  const Json good{{"id", "job-3.r0.worker-0"}, {"cpus", 1.5}, {"cpuset", "0-1"}, {"generation", 2}};
  ASSERT_TRUE(resize(good).ok());
  auto with = [&](const char* key, Json value) {
    Json j = good;
    if (value.is_null()) {
      j.erase(key);
    } else {
      j[key] = std::move(value);
    }
    return j;
  };
  const std::vector<std::pair<Json, std::string>> bad = {
      {with("id", nullptr), "id"},
      {with("id", "../x"), "id"},
      {with("cpus", nullptr), "cpus"},
      {with("cpus", 0), "cpus"},
      {with("cpus", -1), "cpus"},
      {with("cpus", 5000), "cpus"},
      {with("cpus", "2"), "cpus"},
      {with("cpuset", 3), "cpuset"},
      {with("cpuset", "3-1"), "cpuset"},
      {with("cpuset", "0,0"), "cpuset"},
      {with("cpuset", "2,1"), "cpuset"},
      {with("cpuset", "0,"), "cpuset"},
      {with("cpuset", "a-b"), "cpuset"},
      {with("cpuset", "0-99999"), "cpuset"},
      {with("cpuset", "-1"), "cpuset"},
      {with("generation", nullptr), "generation"},
      {with("generation", 0), "generation"},
      {with("generation", -3), "generation"},
      {with("generation", 1.5), "generation"},
  };
  for (const auto& [msg, field] : bad) {
    auto r = resize(msg);
    ASSERT_FALSE(r.ok()) << msg.dump();
    EXPECT_NE(r.status().message().find(field), std::string::npos) << msg.dump() << " -> " << r.status().message();
  }
  Json t = ToJson(TaskSpec{});
  t["id"] = "a";
  t["argv"] = {"x"};
  t["resize_signal"] = "KILL";
  auto start = DecodeServerMessage(Json{{"v", 1}, {"type", "task_start"}, {"task", t}}.dump());
  ASSERT_FALSE(start.ok());
  EXPECT_NE(start.status().message().find("resize_signal"), std::string::npos);
  t["resize_signal"] = "USR1";
  t["malleable"] = true;  // without cpus
  start = DecodeServerMessage(Json{{"v", 1}, {"type", "task_start"}, {"task", t}}.dump());
  ASSERT_FALSE(start.ok());
  EXPECT_NE(start.status().message().find("cpus"), std::string::npos);
}

TEST(TaskResizeProtocolTest, CpusetsParseToTheirCpus) {
  EXPECT_EQ(*ParseCpuset("0-2,5,7-8"), (std::vector<uint32_t>{0, 1, 2, 5, 7, 8}));
  EXPECT_TRUE(ParseCpuset("")->empty());
  EXPECT_FALSE(ParseCpuset("1-0").has_value());
  EXPECT_EQ(ResizeSignalNumber("NONE"), 0);
  EXPECT_FALSE(ResizeSignalNumber("TERM").has_value());
}

}  // namespace
}  // namespace rota::api
