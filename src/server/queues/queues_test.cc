#include "server/queues/queues.h"

#include <gtest/gtest.h>

#include "server/store/store_test_util.h"

namespace rota::server {
namespace {

using api::Json;

class QueuesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::Store::Open(dir_.path(), store::StoreOptions{}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    queues_ = std::make_unique<Queues>(store_.get(), &clock_);
    ASSERT_TRUE(queues_->Start().ok());
  }

  QueueDef Def(const Json& j) {
    auto d = QueueFromJson(j);
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return d.ok() ? *d : QueueDef{};
  }

  store::testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Queues> queues_;
};

TEST_F(QueuesTest, BadDefinitionsAreRefusedNamingTheField) {
  struct Case {
    const char* json;
    const char* field;
  } cases[] = {
      {R"({"priority": 1})", "queue.name"},
      {R"({"name": "Bad"})", "queue.name"},
      {R"({"name": "q", "bogus": 1})", "bogus"},
      {R"({"name": "q", "priority": 5000})", "queue.priority"},
      {R"({"name": "q", "min_priority": 3, "max_priority": 1})", "queue.min_priority"},
      {R"({"name": "q", "max_gpus": -1})", "queue.max_gpus"},
      {R"({"name": "q", "default_time_limit": "soon"})", "queue.default_time_limit"},
      {R"({"name": "q", "max_time_limit": "400d"})", "queue.max_time_limit"},
      {R"({"name": "q", "default_time_limit": "2h", "max_time_limit": "1h"})", "queue.default_time_limit"},
      {R"({"name": "q", "users": "alice"})", "queue.users"},
      {R"([1, 2])", "queue"},
  };
  for (const auto& c : cases) {
    auto d = QueueFromJson(Json::parse(c.json));
    ASSERT_FALSE(d.ok()) << c.json;
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument) << c.json;
    EXPECT_NE(d.status().message().find(c.field), std::string::npos) << c.json << ": " << d.status().message();
  }
}

TEST_F(QueuesTest, AdmitFillsDefaultsAndChecksBoundsAndMembers) {
  ASSERT_TRUE(queues_->Create(Def(Json{{"name", "ml"}, {"min_priority", -5}, {"max_priority", 5},
                                       {"groups", {"vision"}}, {"default_time_limit", "2h"},
                                       {"preemptible", true}}))
                  .ok());
  jobs::JobSpec spec;
  spec.queue = "ml";
  spec.priority = 5;
  ASSERT_TRUE(queues_->Admit("alice", {"vision"}, false, &spec).ok());
  EXPECT_EQ(spec.time_limit_ms, 2 * 3600'000);
  EXPECT_EQ(spec.preemptible, std::optional<bool>(true));

  jobs::JobSpec own;
  own.queue = "ml";
  own.time_limit_ms = 1000;
  own.preemptible = false;
  ASSERT_TRUE(queues_->Admit("alice", {"vision"}, false, &own).ok());
  EXPECT_EQ(own.time_limit_ms, 1000) << "the job's own values win";
  EXPECT_EQ(own.preemptible, std::optional<bool>(false));

  jobs::JobSpec high = spec;
  high.priority = 6;
  Status st = queues_->Admit("alice", {"vision"}, false, &high);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("-5..5"), std::string::npos) << st.message();
  st = queues_->Admit("bob", {"audio"}, false, &spec);
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(st.message().find("groups vision"), std::string::npos) << st.message();
  EXPECT_TRUE(queues_->Admit("root", {}, true, &spec).ok()) << "admins may use any queue";

  jobs::JobSpec nameless;
  ASSERT_TRUE(queues_->Admit("bob", {}, false, &nameless).ok());
  EXPECT_EQ(nameless.queue, "default");
  nameless.priority = 1;
  EXPECT_EQ(queues_->Admit("bob", {}, false, &nameless).code(), StatusCode::kInvalidArgument)
      << "the built-in default lets jobs lower their priority only";
  // A job needing more GPUs at once than its queue may hold could never start.
  ASSERT_TRUE(queues_->Create(Def(Json{{"name", "small"}, {"max_gpus", 2}})).ok());
  jobs::JobSpec big;
  big.queue = "small";
  big.groups.resize(1);
  big.groups[0].gpus_per_task = 4;
  st = queues_->Admit("bob", {}, false, &big);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("needs 4 GPUs at once; queue 'small' holds at most 2"), std::string::npos)
      << st.message();
  // A job naming no priority in a queue whose bounds exclude 0: the nearest bound.
  ASSERT_TRUE(queues_->Create(Def(Json{{"name", "hp"}, {"min_priority", 5}, {"max_priority", 10}})).ok());
  jobs::JobSpec plain;
  plain.queue = "hp";
  ASSERT_TRUE(queues_->Admit("bob", {}, false, &plain).ok());
  EXPECT_EQ(plain.priority, 5);
  // An explicit 0 is a priority like any other: outside 5..10 it is refused.
  jobs::JobSpec zero;
  zero.queue = "hp";
  zero.priority = 0;
  st = queues_->Admit("bob", {}, false, &zero);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("job.priority: 0 is outside queue 'hp' bounds 5..10"), std::string::npos)
      << st.message();
  jobs::JobSpec unknown;
  unknown.queue = "nope";
  st = queues_->Admit("bob", {}, false, &unknown);
  EXPECT_NE(st.message().find("queues: default, hp, ml, small"), std::string::npos) << st.message();
}

TEST_F(QueuesTest, AMaximumTimeLimitRequiresOneAndCapsIt) {
  ASSERT_TRUE(queues_->Create(Def(Json{{"name", "short"}, {"max_time_limit", "4h"}})).ok());
  ASSERT_TRUE(queues_->Create(Def(Json{{"name", "dflt"}, {"default_time_limit", "1h"},
                                       {"max_time_limit", "4h"}}))
                  .ok());
  jobs::JobSpec none;
  none.queue = "short";
  Status st = queues_->Admit("alice", {}, false, &none);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("job.time_limit: queue 'short' requires a time limit (at most 4h)"),
            std::string::npos) << st.message();
  jobs::JobSpec longer = none;
  longer.time_limit_ms = 5 * 3600'000;
  st = queues_->Admit("alice", {}, false, &longer);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("5h exceeds queue 'short' maximum 4h"), std::string::npos) << st.message();
  jobs::JobSpec at_max = none;
  at_max.time_limit_ms = 4 * 3600'000;
  EXPECT_TRUE(queues_->Admit("alice", {}, false, &at_max).ok());
  jobs::JobSpec filled;
  filled.queue = "dflt";
  ASSERT_TRUE(queues_->Admit("alice", {}, false, &filled).ok());
  EXPECT_EQ(filled.time_limit_ms, 3600'000) << "the default fills a required limit";
  EXPECT_EQ(ToJson(queues_->List()[2]).value("max_time_limit", ""), "4h");
}

TEST_F(QueuesTest, ChangesAreStoredAndTheDefaultQueueStays) {
  ASSERT_TRUE(queues_->Create(Def(Json{{"name", "ml"}, {"priority", 3}})).ok());
  EXPECT_EQ(queues_->Create(Def(Json{{"name", "ml"}})).status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(queues_->Replace(Def(Json{{"name", "nope"}})).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(queues_->Replace(Def(Json{{"name", "default"}, {"max_priority", 10}})).ok());
  ASSERT_TRUE(queues_->Create(Def(Json{{"name", "gone"}})).ok());
  ASSERT_TRUE(queues_->Delete("gone").ok());
  EXPECT_EQ(queues_->Delete("default").code(), StatusCode::kConflict);
  EXPECT_EQ(queues_->Delete("gone").code(), StatusCode::kNotFound);

  Queues again(store_.get(), &clock_);
  ASSERT_TRUE(again.Start().ok());
  auto list = again.List();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].queue.name, "default");
  EXPECT_EQ(list[0].queue.max_priority, 10);
  EXPECT_EQ(list[1].queue.name, "ml");
  EXPECT_EQ(list[1].queue.priority, 3);
  EXPECT_EQ(ToJson(list[1]).value("built_in", true), false);
  // The default queue stays built in (and keeps its description) once changed.
  EXPECT_EQ(ToJson(list[0]).value("built_in", false), true);
  EXPECT_NE(list[0].description.find("built in"), std::string::npos);
}

TEST_F(QueuesTest, TimeLimitsOfAnyLengthAreStoredReadBackAndAGetBodyPutsBack) {
  // 90m and 150m were once stored as "1h 30m", which the server could not read
  // back: the queue could not be changed and the server not restarted.
  QueueDef odd = Def(Json{{"name", "odd"}, {"default_time_limit", "90m"}, {"max_time_limit", "2h30m"}});
  ASSERT_TRUE(queues_->Create(odd).ok());
  Queues again(store_.get(), &clock_);
  ASSERT_TRUE(again.Start().ok());
  auto got = again.Get("odd");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->queue.default_time_limit_ms, 90 * 60'000);
  EXPECT_EQ(got->queue.max_time_limit_ms, 150 * 60'000);
  Json j = ToJson(*got);
  EXPECT_EQ(j["default_time_limit"], "90m");
  EXPECT_EQ(j["max_time_limit"], "150m");
  // What GET gives (with its read-only extras) is a valid PUT body.
  j["pending"] = 3;
  j["unfinished"] = 4;
  j["priority"] = 2;
  auto back = QueueFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE(again.Replace(*back).ok());
  EXPECT_EQ(again.Get("odd")->queue.priority, 2);
  // A stored queue of an older version, whose member names were not checked,
  // still loads (a server must start); input is checked, names trimmed.
  Json stored = ToJson(*got);
  stored["users"] = {" bob", "not/a name"};
  auto loaded = QueueFromJson(stored, /*check_names=*/false);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->queue.users, (std::vector<std::string>{"bob", "not/a name"}));
  EXPECT_EQ(QueueFromJson(stored).status().code(), StatusCode::kInvalidArgument);
  // The older spaced form reads too.
  auto spaced = QueueFromJson(Json{{"name", "old"}, {"default_time_limit", "1h 30m"}});
  ASSERT_TRUE(spaced.ok()) << spaced.status().ToString();
  EXPECT_EQ(spaced->queue.default_time_limit_ms, 90 * 60'000);
}

}  // namespace
}  // namespace rota::server
