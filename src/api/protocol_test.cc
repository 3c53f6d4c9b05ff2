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

TEST(ProtocolTest, ServerMessagesRoundTrip) {
  auto ack = DecodeServerMessage(Encode(AckMsg{7}));
  ASSERT_TRUE(ack.ok());
  EXPECT_EQ(std::get<AckMsg>(*ack).seq, 7u);
  auto err = DecodeServerMessage(Encode(ErrorMsg{"bad \xff token", true}));
  ASSERT_TRUE(err.ok());
  EXPECT_TRUE(std::get<ErrorMsg>(*err).fatal);
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
