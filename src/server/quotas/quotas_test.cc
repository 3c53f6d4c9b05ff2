#include "server/quotas/quotas.h"

#include <gtest/gtest.h>

#include "server/store/store_test_util.h"

namespace rota::server {
namespace {

using api::Json;

class QuotasTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }
  void Open() {
    quotas_.reset();
    store_.reset();
    auto s = store::Store::Open(dir_.path(), store::StoreOptions{}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    quotas_ = std::make_unique<Quotas>(store_.get(), &clock_);
    ASSERT_TRUE(quotas_->Start().ok());
  }

  store::testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Quotas> quotas_;
};

TEST_F(QuotasTest, BadQuotasAreRefusedNamingTheField) {
  struct Case {
    const char* kind;
    const char* name;
    const char* json;
    const char* expect;
  } cases[] = {
      {"robot", "alice", "{}", "quota kind 'robot'"},
      {"user", "Alice", "{}", "username 'Alice'"},
      {"group", "a b", "{}", "group name 'a b'"},
      {"user", "alice", "[]", "must be an object"},
      {"user", "alice", R"({"bogus": 1})", "bogus"},
      {"user", "alice", R"({"max_gpus": -1})", "quota.max_gpus"},
      {"user", "alice", R"({"max_gpus": "8"})", "quota.max_gpus"},
      {"user", "alice", R"({"max_gpu_hours": -5})", "quota.max_gpu_hours"},
      {"user", "alice", R"({"share": 0})", "quota.share: must be from 0.001 to 1000000"},
      {"user", "alice", R"({"share": -1})", "quota.share: must be from 0.001 to 1000000"},
      {"user", "alice", R"({"share": 1e-320})", "quota.share: must be from 0.001 to 1000000"},
      {"user", "alice", R"({"share": 1e7})", "quota.share: must be from 0.001 to 1000000"},
      {"user", "alice", R"({"share": "2"})", "quota.share"},
      {"user", "alice", R"({"name": "bob"})", "quota.name"},
      {"user", "alice", R"({"kind": "group"})", "quota.kind"},
  };
  for (const auto& c : cases) {
    auto q = QuotaFromJson(c.kind, c.name, Json::parse(c.json));
    ASSERT_FALSE(q.ok()) << c.json;
    EXPECT_EQ(q.status().code(), StatusCode::kInvalidArgument) << c.json;
    EXPECT_NE(q.status().message().find(c.expect), std::string::npos) << q.status().message();
  }
}

TEST_F(QuotasTest, QuotasPersistAndReachTheScheduler) {
  auto alice = QuotaFromJson("user", "alice", Json{{"max_gpus", 4}, {"share", 2.5}});
  auto ml = QuotaFromJson("group", "ml", Json{{"max_gpu_hours", 100}});
  ASSERT_TRUE(alice.ok() && ml.ok());
  ASSERT_TRUE(quotas_->Set(*alice).ok());
  ASSERT_TRUE(quotas_->Set(*ml).ok());
  Open();  // a restarted server reads them back
  auto list = quotas_->List();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].kind, "user");
  EXPECT_EQ(list[1].kind, "group");
  QuotaView v = quotas_->ForScheduler();
  EXPECT_EQ(v.user_quotas["alice"].max_gpus, 4u);
  EXPECT_EQ(v.user_shares["alice"], 2.5);
  EXPECT_EQ(v.group_quotas["ml"].max_gpu_hours_per_period, 100);
  EXPECT_EQ(v.group_shares.count("ml"), 0u) << "share 1 is the default, not passed";
  EXPECT_EQ(quotas_->Delete("user", "bob").code(), StatusCode::kNotFound);
  ASSERT_TRUE(quotas_->Delete("user", "alice").ok());
  Open();
  EXPECT_EQ(quotas_->List().size(), 1u);
  EXPECT_EQ(quotas_->Get("user", "alice").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace rota::server
