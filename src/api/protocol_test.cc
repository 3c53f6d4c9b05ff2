#include "api/protocol.h"

#include <gtest/gtest.h>

namespace rota::api {
namespace {

TEST(ProtocolTest, RegisterRoundTrips) {
  RegisterMsg m;
  m.node.name = "node-a";
  m.node.node_id = "abc";
  auto back = DecodeAgentMessage(Encode(m));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE(std::holds_alternative<RegisterMsg>(*back));
  EXPECT_EQ(std::get<RegisterMsg>(*back).node.name, "node-a");
}

TEST(ProtocolTest, SamplesRoundTrip) {
  SamplesMsg m;
  m.seq = 41;
  NodeSample s;
  s.time_ms = 1'700'000'000'000;
  m.samples = {s, s};
  auto back = DecodeAgentMessage(Encode(m));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(std::get<SamplesMsg>(*back).seq, 41u);
  EXPECT_EQ(std::get<SamplesMsg>(*back).samples.size(), 2u);
}

// The DOM-free sample encoder must write exactly the document the DOM codec writes.
TEST(ProtocolTest, SamplesEncoderMatchesDomCodec) {
  NodeSample s;
  s.time_ms = 1'700'000'000'123;
  s.host.cpu_percent = 12.5;
  s.host.per_core_percent = {0, 100, 33.333333333333336};
  s.host.mem_total_bytes = 1ull << 40;
  s.host.mem_available_bytes = 3;
  s.host.load1 = 2;
  s.host.cpu_energy_mj = 9'000'000'000'000ull;
  s.host.cpu_busy_usec = 0;
  s.host.cpu_tasks = {{"job-3.r0.worker-0", 3, 17}, {"job-4.r1.w", 4, 18'000'000'000ull}};
  GpuSample failed;
  failed.index = 3;
  failed.failed = true;
  failed.error = "gpu is lost";
  GpuSample g;
  g.index = 1;
  g.uuid = "GPU-\"quoted\"\\";
  g.util_gpu_pct = 0;
  g.energy_mj = 18'000'000'000'000ull;
  GpuProcess p;
  p.pid = 7;
  p.command = "python3 train.py --name=\xc3\xa9t\xc3\xa9 \x01\n\t";
  p.cpu_percent = 0.1;
  p.start_time_ms = 1'700'000'000'000;
  g.processes = {p, p};
  s.gpus = {g, failed};
  SamplesMsg m{99, {s, s}};
  Json fast = Json::parse(Encode(m));
  Json dom{{"v", kProtocolVersion}, {"type", "samples"}, {"seq", 99},
           {"samples", Json::array({ToJson(s), ToJson(s)})}};
  EXPECT_EQ(fast, dom) << fast.dump() << "\n" << dom.dump();
  auto back = DecodeAgentMessage(Encode(m));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(std::get<SamplesMsg>(*back).samples[0].gpus[0].processes[0].command, p.command);
}

TEST(ProtocolTest, ServerMessagesRoundTrip) {
  auto ack = DecodeServerMessage(Encode(AckMsg{7}));
  ASSERT_TRUE(ack.ok());
  EXPECT_EQ(std::get<AckMsg>(*ack).seq, 7u);
  // The ack is formatted by hand: the same JSON as the envelope would give.
  const uint64_t big = (uint64_t{1} << 53) + 1;
  EXPECT_EQ(Json::parse(Encode(AckMsg{big})),
            (Json{{"v", kProtocolVersion}, {"type", "ack"}, {"seq", big}}));
  auto err = DecodeServerMessage(Encode(ErrorMsg{"bad \xff token", true}));
  ASSERT_TRUE(err.ok());
  EXPECT_TRUE(std::get<ErrorMsg>(*err).fatal);
}

// `registered` carries the leader epoch; older servers send none (0); a bad one is refused.
TEST(ProtocolTest, RegisteredCarriesTheLeaderEpoch) {
  RegisteredMsg m{"gpu-1", 5, ""};
  m.epoch = 12;
  auto back = DecodeServerMessage(Encode(m));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(std::get<RegisteredMsg>(*back).epoch, 12u);
  EXPECT_FALSE(Json::parse(Encode(RegisteredMsg{"gpu-1", 5, ""})).contains("epoch"));
  auto old = DecodeServerMessage(R"({"v":1,"type":"registered","node":"gpu-1","server_time_ms":5})");
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(std::get<RegisteredMsg>(*old).epoch, 0u);
  for (const char* bad : {R"({"v":1,"type":"registered","node":"n","epoch":-1})",
                          R"({"v":1,"type":"registered","node":"n","epoch":"7"})",
                          R"({"v":1,"type":"registered","node":"n","epoch":1.5})"}) {
    EXPECT_FALSE(DecodeServerMessage(bad).ok()) << bad;
  }
}

// Bad inputs tried: truncated JSON, non-object, missing/old/future version,
// unknown type, missing fields, negative seq, too many samples, invalid sample.
TEST(ProtocolTest, RejectsBadMessages) {
  std::string good = Encode(SamplesMsg{1, {}});
  const std::vector<std::pair<std::string, std::string>> cases = {
      {good.substr(0, good.size() / 2), "malformed JSON"},
      {"[1,2]", "must be a JSON object"},
      {R"({"type":"samples","seq":1,"samples":[]})", "no protocol version"},
      {R"({"v":0,"type":"samples","seq":1,"samples":[]})", "unsupported protocol version 0"},
      {R"({"v":99,"type":"samples","seq":1,"samples":[]})", "unsupported protocol version 99"},
      {R"({"v":1,"type":"launch"})", "unknown message type 'launch'"},
      {R"({"v":1})", "no \"type\""},
      {R"({"v":1,"type":"register"})", "node is required"},
      {R"({"v":1,"type":"samples","seq":-1,"samples":[]})", "seq must be"},
      {R"({"v":1,"type":"samples","seq":1})", "samples must be an array"},
      {R"({"v":1,"type":"samples","seq":1,"samples":[{"time_ms":1}]})", "samples[0]"},
  };
  for (const auto& [text, expected] : cases) {
    auto r = DecodeAgentMessage(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find(expected), std::string::npos)
        << r.status().message() << " lacks " << expected;
  }
  EXPECT_TRUE(IsVersionMismatch(DecodeAgentMessage(cases[4].first).status()));
  EXPECT_FALSE(IsVersionMismatch(DecodeAgentMessage(cases[5].first).status()));

  Json many = Json::parse(good);
  NodeSample s;
  s.time_ms = 1'700'000'000'000;
  for (size_t i = 0; i <= kMaxSamplesPerMessage; ++i) many["samples"].push_back(ToJson(s));
  auto r = DecodeAgentMessage(many.dump());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("more than"), std::string::npos);
}

}  // namespace
}  // namespace rota::api
