// The command and command_result messages (api/protocol.h).

#include <gtest/gtest.h>

#include "api/protocol.h"

namespace rota::api {
namespace {

CommandMsg SignalCommand() {
  CommandMsg m;
  m.id = 42;
  m.action = CommandAction::kSignal;
  m.uid = 1001;
  m.user = "bob";
  m.signal = CommandSignal::kKill;
  m.targets = {{123, 1'700'000'000'000, 3}, {456, 1'700'000'000'500, 0}};
  return m;
}

TEST(CommandProtocolTest, CommandRoundTrips) {
  CommandMsg m = SignalCommand();
  auto back = DecodeServerMessage(Encode(m));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  const auto& c = std::get<CommandMsg>(*back);
  EXPECT_EQ(c.id, 42u);
  EXPECT_EQ(c.action, CommandAction::kSignal);
  EXPECT_EQ(c.uid, 1001u);
  EXPECT_EQ(c.user, "bob");
  EXPECT_EQ(c.signal, CommandSignal::kKill);
  ASSERT_EQ(c.targets.size(), 2u);
  EXPECT_EQ(c.targets[1].pid, 456u);
  EXPECT_EQ(c.targets[1].start_time_ms, 1'700'000'000'500);
  EXPECT_EQ(c.targets[0].gpu, 3u);

  CommandMsg w = m;
  w.action = CommandAction::kWarn;
  w.message = "GPU 3 is reserved by alice until 12:00.\nPlease stop.";
  auto wb = DecodeServerMessage(Encode(w));
  ASSERT_TRUE(wb.ok()) << wb.status().ToString();
  EXPECT_EQ(std::get<CommandMsg>(*wb).message, w.message);
  EXPECT_EQ(std::get<CommandMsg>(*wb).action, CommandAction::kWarn);
}

TEST(CommandProtocolTest, ResultRoundTrips) {
  CommandResultMsg r;
  r.id = 7;
  r.outcomes = {{12, TargetOutcome::kSignalled, "SIGTERM sent"},
                {13, TargetOutcome::kMismatch, "started at other time"},
                {14, TargetOutcome::kGone, ""},
                {15, TargetOutcome::kDenied, "EPERM"},
                {16, TargetOutcome::kError, "x"}};
  r.terminals = {"/dev/pts/3", "/dev/tty2"};
  auto back = DecodeAgentMessage(Encode(r));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  const auto& b = std::get<CommandResultMsg>(*back);
  EXPECT_EQ(b.id, 7u);
  ASSERT_EQ(b.outcomes.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(b.outcomes[i].outcome, r.outcomes[i].outcome);
    EXPECT_EQ(b.outcomes[i].pid, r.outcomes[i].pid);
    EXPECT_EQ(b.outcomes[i].detail, r.outcomes[i].detail);
  }
  EXPECT_EQ(b.terminals, r.terminals);
  EXPECT_TRUE(b.error.empty());

  CommandResultMsg e;
  e.id = 8;
  e.error = "command: action must be ...";
  auto eb = DecodeAgentMessage(Encode(e));
  ASSERT_TRUE(eb.ok()) << eb.status().ToString();
  EXPECT_EQ(std::get<CommandResultMsg>(*eb).error, e.error);
}

// Bad inputs tried: wrong types, unknown action and signal, missing fields, empty and
// too many targets, pid 0 and negative pids (process groups), out-of-range gpu and
// uid, oversized message, warn without a message, non-object targets.
TEST(CommandProtocolTest, RejectsBadCommands) {
  const std::string head = R"({"v":1,"type":"command",)";
  const std::string t = R"("targets":[{"pid":5,"start_time_ms":1,"gpu":0}])";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {head + R"("action":"signal","uid":1,"signal":"TERM",)" + t + "}", "id is required"},
      {head + R"("id":"7","action":"signal","uid":1,"signal":"TERM",)" + t + "}", "id must be an integer"},
      {head + R"("id":-1,"action":"signal","uid":1,"signal":"TERM",)" + t + "}", "id must be an integer"},
      {head + R"("id":1,"uid":1,"signal":"TERM",)" + t + "}", "action is required"},
      {head + R"("id":1,"action":"reboot","uid":1,)" + t + "}", "action must be \"warn\" or \"signal\", not 'reboot'"},
      {head + R"("id":1,"action":7,"uid":1,)" + t + "}", "action must be a string"},
      {head + R"("id":1,"action":"signal","signal":"TERM",)" + t + "}", "uid is required"},
      {head + R"("id":1,"action":"signal","uid":-5,"signal":"TERM",)" + t + "}", "uid must be an integer"},
      {head + R"("id":1,"action":"signal","uid":4294967295,"signal":"TERM",)" + t + "}", "uid must be an integer in [0, 4294967294]"},
      {head + R"("id":1,"action":"signal","uid":1,)" + t + "}", "signal is required"},
      {head + R"("id":1,"action":"signal","uid":1,"signal":"HUP",)" + t + "}", "signal must be \"TERM\" or \"KILL\", not 'HUP'"},
      {head + R"("id":1,"action":"signal","uid":1,"signal":15,)" + t + "}", "signal must be a string"},
      {head + R"("id":1,"action":"signal","uid":1,"signal":"TERM"})", "targets is required"},
      {head + R"("id":1,"action":"signal","uid":1,"signal":"TERM","targets":{}})", "targets must be an array"},
      {head + R"("id":1,"action":"signal","uid":1,"signal":"TERM","targets":[]})", "targets must not be empty"},
      {head + R"("id":1,"action":"signal","uid":1,"signal":"TERM","targets":[5]})", "targets[0] must be an object"},
      {head + R"("id":1,"action":"signal","uid":1,"signal":"TERM","targets":[{"start_time_ms":1,"gpu":0}]})", "targets[0].pid is required"},
      {head + R"("id":1,"action":"signal","uid":1,"signal":"TERM","targets":[{"pid":0,"start_time_ms":1,"gpu":0}]})", "targets[0].pid must be an integer in [1, "},
      {head + R"("id":1,"action":"signal","uid":1,"signal":"TERM","targets":[{"pid":5,"start_time_ms":1,"gpu":0},{"pid":-1,"start_time_ms":1,"gpu":0}]})", "targets[1].pid must be an integer"},
      {head + R"("id":1,"action":"signal","uid":1,"signal":"TERM","targets":[{"pid":5.5,"start_time_ms":1,"gpu":0}]})", "targets[0].pid must be an integer"},
      {head + R"("id":1,"action":"signal","uid":1,"signal":"TERM","targets":[{"pid":5,"gpu":0}]})", "targets[0].start_time_ms is required"},
      {head + R"("id":1,"action":"signal","uid":1,"signal":"TERM","targets":[{"pid":5,"start_time_ms":1}]})", "targets[0].gpu is required"},
      {head + R"("id":1,"action":"signal","uid":1,"signal":"TERM","targets":[{"pid":5,"start_time_ms":1,"gpu":64}]})", "targets[0].gpu must be an integer in [0, 63]"},
      {head + R"("id":1,"action":"warn","uid":1,)" + t + "}", "message is required for action \"warn\""},
      {head + R"("id":1,"action":"warn","uid":1,"message":["hi"],)" + t + "}", "message must be a string"},
      {head + R"("id":1,"action":"warn","uid":1,"message":"hi","user":5,)" + t + "}", "user must be a string"},
      {head + R"("id":1,"action":"warn","uid":1,"message":")" + std::string(kMaxCommandMessageBytes + 1, 'x') +
           "\"," + t + "}",
       "message is longer than 4096 bytes"},
  };
  for (const auto& [text, expected] : cases) {
    auto r = DecodeServerMessage(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find("command: " + expected), std::string::npos)
        << r.status().message() << "\n  lacks: " << expected;
  }

  Json many = Json::parse(Encode(SignalCommand()));
  many["targets"] = Json::array();
  for (size_t i = 0; i <= kMaxCommandTargets; ++i) {
    many["targets"].push_back({{"pid", i + 1}, {"start_time_ms", 1}, {"gpu", 0}});
  }
  auto r = DecodeServerMessage(many.dump());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("targets has more than 1024 elements"), std::string::npos)
      << r.status().message();
  many["targets"].erase(many["targets"].size() - 1);
  EXPECT_TRUE(DecodeServerMessage(many.dump()).ok()) << "exactly 1024 targets are allowed";
}

TEST(CommandProtocolTest, RejectsBadResults) {
  const std::string head = R"({"v":1,"type":"command_result",)";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {head + R"("outcomes":[]})", "id is required"},
      {head + R"("id":1,"outcomes":{}})", "outcomes must be an array"},
      {head + R"("id":1,"outcomes":[{"outcome":"gone"}]})", "outcomes[0].pid is required"},
      {head + R"("id":1,"outcomes":[{"pid":3}]})", "outcomes[0].outcome is required"},
      {head + R"("id":1,"outcomes":[{"pid":3,"outcome":"exploded"}]})", "outcomes[0].outcome must be one of"},
      {head + R"("id":1,"outcomes":[{"pid":3,"outcome":"gone","detail":1}]})", "outcomes[0].detail must be a string"},
      {head + R"("id":1,"terminals":[7]})", "terminals[0] must be a path"},
      {head + R"("id":1,"terminals":[""]})", "terminals[0] must be a path"},
      {head + R"("id":1,"terminals":"/dev/pts/1"})", "terminals must be an array"},
      {head + R"("id":1,"error":false})", "error must be a string"},
  };
  for (const auto& [text, expected] : cases) {
    auto r = DecodeAgentMessage(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find("command_result: " + expected), std::string::npos)
        << r.status().message() << "\n  lacks: " << expected;
  }
}

TEST(CommandProtocolTest, ValidateCommandMatchesTheDecoder) {
  CommandMsg m = SignalCommand();
  EXPECT_TRUE(ValidateCommand(m).ok());
  m.targets.clear();
  EXPECT_NE(ValidateCommand(m).message().find("targets must not be empty"), std::string::npos);
  m = SignalCommand();
  m.targets[1].pid = 0;
  EXPECT_NE(ValidateCommand(m).message().find("targets[1].pid"), std::string::npos);
  m = SignalCommand();
  m.action = CommandAction::kWarn;
  EXPECT_NE(ValidateCommand(m).message().find("message is required"), std::string::npos);
  m.message = std::string(kMaxCommandMessageBytes + 1, 'x');
  EXPECT_NE(ValidateCommand(m).message().find("message is longer"), std::string::npos);
  m = SignalCommand();
  m.targets.assign(kMaxCommandTargets + 1, CommandTarget{1, 1, 0});
  EXPECT_NE(ValidateCommand(m).message().find("more than 1024"), std::string::npos);
}

TEST(CommandProtocolTest, CommandIdOfFindsTheIdOfARefusedCommand) {
  EXPECT_EQ(CommandIdOf(R"({"v":1,"type":"command","id":9,"action":"reboot"})"), 9u);
  EXPECT_EQ(CommandIdOf(Encode(SignalCommand())), 42u);
  EXPECT_FALSE(CommandIdOf(R"({"v":1,"type":"command","action":"reboot"})").has_value());
  EXPECT_FALSE(CommandIdOf(R"({"v":1,"type":"command","id":"9"})").has_value());
  EXPECT_FALSE(CommandIdOf(R"({"v":2,"type":"command","id":9})").has_value());
  EXPECT_FALSE(CommandIdOf(R"({"v":1,"type":"ack","id":9})").has_value());
  EXPECT_FALSE(CommandIdOf("{junk").has_value());
}

}  // namespace
}  // namespace rota::api
