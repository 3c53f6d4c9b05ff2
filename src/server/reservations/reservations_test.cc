#include "server/reservations/reservations.h"

#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <thread>

#include "common/time_util.h"
#include "notify/smtp_mailer.h"
#include "server/enforcement/enforcement_binding.h"
#include "server/store/store_test_util.h"

namespace rota::server {
namespace {

using reserve::CreateRequest;
using reserve::GpuChoice;
using reserve::Patch;
using reserve::Requester;
using store::Db;

constexpr int64_t kHour = 3'600'000;
constexpr int64_t kMin = 60'000;

class ReservationsTest : public ::testing::Test {
 protected:
  ReservationsTest() : clock_(*ParseRfc3339("2026-11-22T10:00:00Z")), cluster_(3) {}

  void SetUp() override {
    auto s = store::Store::Open(dir_.path(), {}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
    for (auto [name, gpus] : {std::pair{"gpu-a", 4}, std::pair{"gpu-b", 2}}) {
      auto info = store::testing::MakeNode(name, gpus);
      ASSERT_TRUE(store_->UpsertNode(info, clock_.NowMs()).ok());
      ASSERT_TRUE(cluster_.Connect(info, ++session_, clock_.NowMs()).ok());
    }
    ASSERT_TRUE(store_->Write([](Db& db) {
      return db.Exec(
          "INSERT INTO users (id, username, email, role, created_ms, updated_ms) VALUES "
          "(1, 'alice', 'alice@example.com', 'user', 0, 0), (2, 'bob', '', 'user', 0, 0), "
          "(3, 'root', '', 'admin', 0, 0);"
          "INSERT INTO groups (id, name, created_ms) VALUES (1, 'ml', 0);"
          "INSERT INTO group_members (group_id, user_id) VALUES (1, 1);");
    }).ok());
    res_ = std::make_unique<Reservations>(store_.get(), &cluster_, &clock_);
    res_->SetIdleHook([this](const IdleNotice& n) { notices_.push_back(n); });
    ASSERT_TRUE(res_->Start().ok());
  }

  int64_t Now() const { return clock_.NowMs(); }

  CreateRequest Req(std::vector<uint32_t> gpus, int64_t start, int64_t end, const std::string& node = "gpu-a") {
    CreateRequest r;
    r.node = node;
    r.choice = GpuChoice::kIndices;
    r.gpus = std::move(gpus);
    r.start_ms = start;
    r.end_ms = end;
    r.title = "run";
    return r;
  }

  int64_t Rows(const char* table) {
    int64_t n = -1;
    EXPECT_TRUE(store_->Read([&](Db& db) -> Status {
      ASSIGN_OR_RETURN(n, db.QueryInt(std::string("SELECT count(*) FROM ") + table));
      return Status::Ok();
    }).ok());
    return n;
  }

  api::NodeSample Sample(int64_t t, uint32_t util) {
    return store::testing::MakeSample(t, 4, util);
  }
  // gpu-a reports `util` % at minutes first..last after t0 (its session since t0).
  void SamplesEveryMinute(int64_t t0, int first, int last, uint32_t util) {
    for (int i = first; i <= last; ++i) cluster_.RecordSample("gpu-a", 1, Sample(t0 + i * kMin, util), t0);
  }

  store::testing::TempDir dir_;
  FakeClock clock_;
  ClusterState cluster_;
  uint64_t session_ = 0;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Reservations> res_;
  std::vector<IdleNotice> notices_;
  const Requester alice_{1, "alice", {"ml"}, false};
  const Requester bob_{2, "bob", {}, false};
  const Requester root_{3, "root", {}, true};
};

TEST_F(ReservationsTest, CreatesNamedGpusAndReadsThemBack) {
  auto r = res_->Create(alice_, Req({2, 0}, Now() + kHour, Now() + 2 * kHour));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->gpus, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(r->gpu_uuids, (std::vector<std::string>{"GPU-gpu-a-0", "GPU-gpu-a-2"}));
  EXPECT_EQ(r->owner, "alice");
  auto got = res_->Get(r->id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->title, "run");
  EXPECT_EQ(got->StateAt(Now()), reserve::State::kUpcoming);
}

TEST_F(ReservationsTest, CountAndWholeNodePickFreeGpus) {
  ASSERT_TRUE(res_->Create(alice_, Req({0}, Now(), Now() + kHour)).ok());
  CreateRequest c = Req({}, Now(), Now() + kHour);
  c.choice = GpuChoice::kCount;
  c.count = 2;
  auto r = res_->Create(bob_, c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->gpus, (std::vector<uint32_t>{1, 2}));
  c.count = 2;  // only GPU 3 is left
  EXPECT_EQ(res_->Create(bob_, c).status().code(), StatusCode::kConflict);
  CreateRequest whole = Req({}, Now() + 2 * kHour, Now() + 3 * kHour, "gpu-b");
  whole.choice = GpuChoice::kWholeNode;
  auto w = res_->Create(bob_, whole);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->gpus, (std::vector<uint32_t>{0, 1}));
}

TEST_F(ReservationsTest, OverlapIsAConflictNamingOwnerTimeAndReservation) {
  auto first = res_->Create(alice_, Req({1}, *ParseRfc3339("2026-11-23T09:00:00Z"),
                                        *ParseRfc3339("2026-11-23T11:00:00Z")));
  ASSERT_TRUE(first.ok());
  auto second = res_->Create(bob_, Req({1, 2}, *ParseRfc3339("2026-11-23T10:00:00Z"),
                                       *ParseRfc3339("2026-11-23T12:00:00Z")));
  ASSERT_EQ(second.status().code(), StatusCode::kConflict);
  EXPECT_EQ(second.status().message(),
            "gpu-a/1 is reserved by alice from 2026-11-23T09:00:00Z to 2026-11-23T11:00:00Z "
            "(reservation " + std::to_string(first->id) + ")");
  // Back to back is fine, and so is another GPU.
  EXPECT_TRUE(res_->Create(bob_, Req({1}, *ParseRfc3339("2026-11-23T11:00:00Z"),
                                     *ParseRfc3339("2026-11-23T12:00:00Z"))).ok());
  EXPECT_TRUE(res_->Create(bob_, Req({2}, *ParseRfc3339("2026-11-23T10:00:00Z"),
                                     *ParseRfc3339("2026-11-23T12:00:00Z"))).ok());
}

TEST_F(ReservationsTest, RefusedRequestsChangeNothingStored) {
  ASSERT_TRUE(res_->Create(alice_, Req({0}, Now() + kHour, Now() + 2 * kHour)).ok());
  const int64_t res_rows = Rows("reservations"), gpu_rows = Rows("reservation_gpus");
  CreateRequest too_many = Req({}, Now(), Now() + kHour);
  too_many.choice = GpuChoice::kCount;
  too_many.count = 5;
  CreateRequest long_title = Req({1}, Now(), Now() + kHour);
  long_title.title = std::string(201, 'x');
  struct Case {
    const char* what;
    CreateRequest req;
    StatusCode code;
  } cases[] = {
      {"end before start", Req({1}, Now() + 2 * kHour, Now() + kHour), StatusCode::kInvalidArgument},
      {"zero length", Req({1}, Now() + kHour, Now() + kHour), StatusCode::kInvalidArgument},
      {"unknown node", Req({0}, Now(), Now() + kHour, "gpu-z"), StatusCode::kNotFound},
      {"unknown gpu", Req({9}, Now(), Now() + kHour), StatusCode::kNotFound},
      {"more gpus than exist", too_many, StatusCode::kInvalidArgument},
      {"start in the past", Req({1}, Now() - kHour, Now() + kHour), StatusCode::kInvalidArgument},
      {"year 9999", Req({1}, *ParseRfc3339("9999-01-01T00:00:00Z"), *ParseRfc3339("9999-01-02T00:00:00Z")), StatusCode::kInvalidArgument},
      {"two years long", Req({1}, Now(), Now() + 2 * 366 * reserve::kDayMs), StatusCode::kInvalidArgument},
      {"title too long", long_title, StatusCode::kInvalidArgument},
      {"overlap", Req({0, 1}, Now() + kHour, Now() + 3 * kHour), StatusCode::kConflict},
  };
  for (const auto& c : cases) {
    auto r = res_->Create(bob_, c.req);
    EXPECT_EQ(r.status().code(), c.code) << c.what << ": " << r.status().ToString();
  }
  EXPECT_EQ(Rows("reservations"), res_rows);
  EXPECT_EQ(Rows("reservation_gpus"), gpu_rows);
}

TEST_F(ReservationsTest, FiftyRacersForOneSlotExactlyOneWins) {
  constexpr int kRacers = 50;
  std::atomic<int> ok{0}, conflict{0}, other{0};
  std::latch go(kRacers);
  std::vector<std::thread> threads;
  for (int i = 0; i < kRacers; ++i) {
    threads.emplace_back([&, i] {
      Requester who = (i % 2) ? bob_ : alice_;
      CreateRequest req = Req({3}, Now() + kHour, Now() + 2 * kHour);
      go.arrive_and_wait();
      auto r = res_->Create(who, req);
      if (r.ok()) ++ok;
      else if (r.status().code() == StatusCode::kConflict) ++conflict;
      else ++other;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(conflict.load(), kRacers - 1);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(Rows("reservation_gpus"), 1);
}

TEST_F(ReservationsTest, EditRulesOwnershipAndAdminOverride) {
  auto r = res_->Create(alice_, Req({0}, Now() + kHour, Now() + 2 * kHour));
  ASSERT_TRUE(r.ok());
  Patch move;
  move.start_ms = Now() + 3 * kHour;
  move.end_ms = Now() + 4 * kHour;
  EXPECT_EQ(res_->Update(bob_, r->id, move).status().code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(res_->Update(alice_, r->id, move).ok());
  Patch retitle;
  retitle.title = "by admin";
  EXPECT_EQ(res_->Update(root_, r->id, retitle)->title, "by admin");
  EXPECT_EQ(res_->Update(alice_, 9999, retitle).status().code(), StatusCode::kNotFound);

  // Moving onto bob's slot conflicts.
  auto b = res_->Create(bob_, Req({0}, Now() + 5 * kHour, Now() + 6 * kHour));
  ASSERT_TRUE(b.ok());
  Patch onto;
  onto.end_ms = Now() + 5 * kHour + kMin;
  EXPECT_EQ(res_->Update(alice_, r->id, onto).status().code(), StatusCode::kConflict);

  // Running: start fixed, end can be extended while free.
  clock_.AdvanceMs(3 * kHour + 30 * kMin);
  Patch start;
  start.start_ms = Now();
  EXPECT_EQ(res_->Update(alice_, r->id, start).status().code(), StatusCode::kConflict);
  Patch extend;
  extend.end_ms = Now() + kHour;  // 4h30 -> free until bob's 5h
  EXPECT_TRUE(res_->Update(alice_, r->id, extend).ok());
  clock_.AdvanceMs(2 * kHour);
  EXPECT_EQ(res_->Update(alice_, r->id, retitle).status().code(), StatusCode::kConflict);  // ended
}

TEST_F(ReservationsTest, CancelFreesTheSlotAndEndsRunningOnesNow) {
  auto r = res_->Create(alice_, Req({0}, Now() + kHour, Now() + 2 * kHour));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(res_->Cancel(bob_, r->id).status().code(), StatusCode::kPermissionDenied);
  auto c = res_->Cancel(alice_, r->id);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->StateAt(Now()), reserve::State::kCancelled);
  EXPECT_EQ(c->gpus, (std::vector<uint32_t>{0}));  // history keeps its GPUs
  EXPECT_TRUE(res_->Create(bob_, Req({0}, Now() + kHour, Now() + 2 * kHour)).ok());
  EXPECT_EQ(res_->Cancel(alice_, r->id).status().code(), StatusCode::kConflict);

  auto run = res_->Create(alice_, Req({1}, Now(), Now() + kHour));
  ASSERT_TRUE(run.ok());
  clock_.AdvanceMs(10 * kMin);
  auto ended = res_->Cancel(root_, run->id);
  ASSERT_TRUE(ended.ok());
  EXPECT_EQ(ended->end_ms, Now());
  EXPECT_EQ(ended->StateAt(Now()), reserve::State::kEnded);
}

TEST_F(ReservationsTest, ActiveOnHeldByAndList) {
  auto a = res_->Create(alice_, Req({0, 1}, Now(), Now() + kHour));
  auto b = res_->Create(bob_, Req({2}, Now(), Now() + kHour));
  auto later = res_->Create(alice_, Req({3}, Now() + 2 * kHour, Now() + 3 * kHour));
  ASSERT_TRUE(a.ok() && b.ok() && later.ok());
  EXPECT_EQ(res_->ActiveOn("gpu-a", Now())->size(), 2u);
  auto held = res_->HeldBy(1, "gpu-a", Now());
  ASSERT_EQ(held->size(), 1u);
  EXPECT_EQ((*held)[0].gpus, (std::vector<uint32_t>{0, 1}));
  EXPECT_TRUE(res_->HeldBy(1, "gpu-b", Now())->empty());

  ReservationQuery q;
  q.owner_id = 1;
  EXPECT_EQ(res_->List(q)->reservations.size(), 2u);
  EXPECT_FALSE(res_->List(q)->truncated);
  q.state = reserve::State::kUpcoming;
  ASSERT_EQ(res_->List(q)->reservations.size(), 1u);
  EXPECT_EQ(res_->List(q)->reservations.front().id, later->id);
  ReservationQuery range;
  range.from_ms = Now() + 90 * kMin;
  range.to_ms = Now() + 4 * kHour;
  EXPECT_EQ(res_->List(range)->reservations.size(), 1u);
  // A limit below the matches keeps the latest-starting ones and says more matched.
  ReservationQuery cut;
  cut.limit = 2;
  auto first_two = res_->List(cut);
  ASSERT_TRUE(first_two.ok());
  EXPECT_TRUE(first_two->truncated);
  ASSERT_EQ(first_two->reservations.size(), 2u);
  EXPECT_EQ(first_two->reservations.back().id, later->id);
  cut.limit = 3;
  EXPECT_FALSE(res_->List(cut)->truncated);
  EXPECT_EQ(res_->List(cut)->reservations.size(), 3u);
  range.limit = 0;
  EXPECT_EQ(res_->List(range).status().code(), StatusCode::kInvalidArgument);
}

reserve::Policy MakePolicy(api::Json j) {
  auto p = reserve::PolicyFromJson(j);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return *p;
}

TEST_F(ReservationsTest, PoliciesRefuseNamingTheRuleAndStoreNothing) {
  ASSERT_TRUE(res_->CreatePolicy(MakePolicy({{"name", "ml-a"}, {"subjects", {{"groups", {"ml"}}}},
                                             {"targets", {{"nodes", {"gpu-a"}}}},
                                             {"max_duration", "2h"}})).ok());
  EXPECT_EQ(res_->CreatePolicy(MakePolicy({{"name", "ml-a"}})).status().code(), StatusCode::kAlreadyExists);
  const int64_t before = Rows("reservations");
  auto bob = res_->Create(bob_, Req({0}, Now(), Now() + kHour));
  EXPECT_EQ(bob.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(bob.status().message().find("policy 'ml-a' (subjects)"), std::string::npos);
  auto long_one = res_->Create(alice_, Req({0}, Now(), Now() + 3 * kHour));
  EXPECT_EQ(long_one.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(long_one.status().message().find("(max_duration)"), std::string::npos);
  EXPECT_EQ(Rows("reservations"), before);
  EXPECT_TRUE(res_->Create(alice_, Req({0}, Now(), Now() + 2 * kHour)).ok());
  EXPECT_TRUE(res_->Create(bob_, Req({0}, Now(), Now() + 5 * kHour, "gpu-b")).ok());
  EXPECT_TRUE(res_->Create(root_, Req({1}, Now(), Now() + 5 * kHour)).ok());  // admin exempt

  // Extending past the policy's maximum is refused too.
  auto r = res_->Create(alice_, Req({2}, Now() + kHour, Now() + 2 * kHour));
  ASSERT_TRUE(r.ok());
  Patch extend;
  extend.end_ms = Now() + 4 * kHour;
  EXPECT_EQ(res_->Update(alice_, r->id, extend).status().code(), StatusCode::kPermissionDenied);

  auto list = res_->ListPolicies();
  ASSERT_EQ(list->size(), 1u);
  reserve::Policy changed = list->front();
  changed.max_duration_ms = 8 * kHour;
  ASSERT_TRUE(res_->UpdatePolicy(changed.id, changed).ok());
  EXPECT_TRUE(res_->Update(alice_, r->id, extend).ok());
  EXPECT_TRUE(res_->DeletePolicy(changed.id).ok());
  EXPECT_EQ(res_->DeletePolicy(changed.id).code(), StatusCode::kNotFound);
  EXPECT_EQ(res_->GetPolicy(changed.id).status().code(), StatusCode::kNotFound);
}

TEST_F(ReservationsTest, LiveUtilisationIsAveragedAndStoredAtTheEnd) {
  auto r = res_->Create(alice_, Req({0, 1}, Now(), Now() + 10 * kMin));
  ASSERT_TRUE(r.ok());
  const uint64_t session = 1;  // gpu-a
  cluster_.RecordSample("gpu-a", session, Sample(Now() + 1000, 40), Now());
  cluster_.RecordSample("gpu-a", session, Sample(Now() + 2000, 80), Now());
  auto usage = res_->Usage(r->id);
  ASSERT_TRUE(usage.has_value());
  EXPECT_EQ(usage->samples, 2);
  EXPECT_DOUBLE_EQ(usage->avg_util_gpu, 60);
  EXPECT_DOUBLE_EQ(usage->avg_util_mem, 30);  // MakeSample: util_mem = util / 2
  clock_.AdvanceMs(11 * kMin);
  res_->Tick(Now());
  auto done = res_->Get(r->id);
  ASSERT_TRUE(done->avg_util_gpu.has_value());
  EXPECT_DOUBLE_EQ(*done->avg_util_gpu, 60);
  EXPECT_DOUBLE_EQ(*done->avg_util_mem, 30);
  EXPECT_FALSE(res_->Usage(r->id).has_value());
}

TEST_F(ReservationsTest, IdleReservationIsNotifiedThenReleasedByPolicy) {
  ASSERT_TRUE(res_->CreatePolicy(MakePolicy({{"name", "idle"}, {"subjects", {{"users", {"alice"}}}},
                                             {"idle", {{"threshold_pct", 5}, {"after", "10m"}, {"release", true}}}})).ok());
  auto r = res_->Create(alice_, Req({0}, Now(), Now() + 2 * kHour));
  ASSERT_TRUE(r.ok());
  const int64_t t0 = Now();
  cluster_.RecordSample("gpu-a", 1, Sample(t0 + 1000, 50), t0);  // busy
  SamplesEveryMinute(t0, 1, 10, 2);  // idle from minute 1
  clock_.AdvanceMs(10 * kMin);
  res_->Tick(Now());
  ASSERT_TRUE(notices_.empty());  // idle for 9 minutes of samples
  clock_.AdvanceMs(kMin);
  cluster_.RecordSample("gpu-a", 1, Sample(t0 + 11 * kMin, 1), Now());
  res_->Tick(Now());
  ASSERT_EQ(notices_.size(), 1u);
  EXPECT_TRUE(notices_[0].released);
  EXPECT_EQ(notices_[0].owner_email, "alice@example.com");
  EXPECT_EQ(notices_[0].policy, "idle");
  EXPECT_EQ(notices_[0].idle_since_ms, t0 + kMin);
  EXPECT_EQ(notices_[0].end_ms, Now());
  // The mean of the idle samples (ten at 2 %, one at 1 %), not of the busy one.
  EXPECT_NEAR(notices_[0].avg_util_gpu, 21.0 / 11, 1e-9);
  // The owner's mail: that average, and released now (not "will be released").
  const notify::Email mail = IdleEmail(notices_[0], "");
  EXPECT_NE(mail.text.find("average GPU utilization 1.9 %"), std::string::npos) << mail.text;
  EXPECT_NE(mail.text.find("rota released it at " + FormatRfc3339(Now())), std::string::npos)
      << mail.text;
  EXPECT_EQ(mail.text.find("will release"), std::string::npos) << mail.text;
  EXPECT_NE(mail.subject.find("has been released"), std::string::npos) << mail.subject;
  auto got = res_->Get(r->id);
  EXPECT_EQ(got->end_ms, Now());
  EXPECT_TRUE(got->idle_notified_ms.has_value());
  res_->Tick(Now() + 1);
  EXPECT_EQ(notices_.size(), 1u);  // once
  // The slot is free again.
  EXPECT_TRUE(res_->Create(alice_, Req({0}, Now(), Now() + kHour)).ok());
}

TEST_F(ReservationsTest, IdleRuleWithoutReleaseNotifiesOnceAndKeepsTheReservation) {
  ASSERT_TRUE(
      res_->CreatePolicy(
              MakePolicy({{"name", "nudge"},
                          {"subjects", {{"users", {"alice"}}}},
                          {"idle", {{"threshold_pct", 10}, {"after", "5m"}, {"release", false}}}}))
          .ok());
  const int64_t end = Now() + 2 * kHour;
  auto r = res_->Create(alice_, Req({0}, Now(), end));
  ASSERT_TRUE(r.ok());
  const int64_t t0 = Now();
  SamplesEveryMinute(t0, 1, 6, 4);
  clock_.AdvanceMs(6 * kMin);
  res_->Tick(Now());
  ASSERT_EQ(notices_.size(), 1u);
  EXPECT_FALSE(notices_[0].released);
  EXPECT_EQ(notices_[0].policy, "nudge");
  EXPECT_EQ(notices_[0].end_ms, end);
  EXPECT_DOUBLE_EQ(notices_[0].avg_util_gpu, 4);
  const notify::Email mail = IdleEmail(notices_[0], "");
  EXPECT_NE(mail.text.find("average GPU utilization 4.0 %"), std::string::npos) << mail.text;
  EXPECT_NE(mail.text.find("will not be released automatically"), std::string::npos) << mail.text;
  EXPECT_EQ(mail.text.find("released it"), std::string::npos) << mail.text;
  // Not released: same end, still running, the GPU still taken.
  auto got = res_->Get(r->id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->end_ms, end);
  EXPECT_EQ(got->StateAt(Now()), reserve::State::kRunning);
  EXPECT_TRUE(got->idle_notified_ms.has_value());
  EXPECT_EQ(res_->Create(alice_, Req({0}, Now(), Now() + kHour)).status().code(),
            StatusCode::kConflict);
  // Once: more idle samples bring no second notice.
  SamplesEveryMinute(t0, 7, 20, 4);
  clock_.AdvanceMs(15 * kMin);
  res_->Tick(Now());
  EXPECT_EQ(notices_.size(), 1u);
  EXPECT_EQ(res_->Get(r->id)->end_ms, end);
}

// Regression: a notify-only rule that fired first kept a releasing rule (of
// another policy, with a longer wait) from ever acting.
TEST_F(ReservationsTest, AReleasingRuleStillActsAfterANotifyOnlyOne) {
  ASSERT_TRUE(res_->CreatePolicy(MakePolicy({{"name", "nudge"}, {"subjects", {{"users", {"alice"}}}},
                                             {"idle", {{"threshold_pct", 10}, {"after", "5m"}, {"release", false}}}}))
                  .ok());
  ASSERT_TRUE(res_->CreatePolicy(MakePolicy({{"name", "reclaim"}, {"subjects", {{"users", {"alice"}}}},
                                             {"idle", {{"threshold_pct", 10}, {"after", "10m"}, {"release", true}}}}))
                  .ok());
  auto r = res_->Create(alice_, Req({0}, Now(), Now() + 2 * kHour));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const int64_t t0 = Now();
  SamplesEveryMinute(t0, 1, 6, 4);
  clock_.AdvanceMs(6 * kMin);
  res_->Tick(Now());
  ASSERT_EQ(notices_.size(), 1u);
  EXPECT_FALSE(notices_[0].released);
  EXPECT_EQ(notices_[0].policy, "nudge");
  SamplesEveryMinute(t0, 7, 11, 4);
  clock_.AdvanceMs(5 * kMin);
  res_->Tick(Now());
  ASSERT_EQ(notices_.size(), 2u);
  EXPECT_TRUE(notices_[1].released);
  EXPECT_EQ(notices_[1].policy, "reclaim");
  EXPECT_EQ(res_->Get(r->id)->end_ms, Now());
  res_->Tick(Now() + 1);
  EXPECT_EQ(notices_.size(), 2u);  // nothing after the release
}

TEST_F(ReservationsTest, TrackingSurvivesARestart) {
  auto r = res_->Create(alice_, Req({0}, Now(), Now() + kHour));
  ASSERT_TRUE(r.ok());
  res_.reset();
  res_ = std::make_unique<Reservations>(store_.get(), &cluster_, &clock_);
  ASSERT_TRUE(res_->Start().ok());
  cluster_.RecordSample("gpu-a", 1, Sample(Now() + 1000, 70), Now());
  EXPECT_DOUBLE_EQ(res_->Usage(r->id)->avg_util_gpu, 70);
}

}  // namespace
}  // namespace rota::server
