// The SQL of jobs, their history and fair-share usage, against a real store.
#include "server/store/jobs.h"

#include <gtest/gtest.h>

#include "common/clock.h"
#include "server/store/sched_settings.h"
#include "server/store/store_test_backend.h"
#include "server/store/store_test_util.h"

namespace rota::store {
namespace {

using testing::Backend;

// Runs on SQLite and on PostgreSQL (store_test_backend.h).
class StoreJobsTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    ROTA_SKIP_WITHOUT_BACKEND(loc_);
    auto s = loc_.Open({}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    ASSERT_TRUE(store_->Write([](Db& db) {
      return db.Exec("INSERT INTO users (id, username, role, created_ms, updated_ms) VALUES "
                     "(1, 'alice', 'user', 0, 0), (2, 'bob', 'user', 0, 0)");
    }).ok());
  }

  template <class F>
  auto Read(F f) {
    decltype(f(std::declval<Db&>())) out = Status::Internal("not read");
    EXPECT_TRUE(store_->Read([&](Db& db) -> Status {
      out = f(db);
      return Status::Ok();
    }).ok());
    return out;
  }

  Result<int64_t> Insert(int64_t owner, const std::string& name, int64_t t) {
    JobRow r;
    r.owner_id = owner;
    r.name = name;
    r.spec_json = "{\"name\":\"" + name + "\"}";
    r.state = "pending";
    r.reason = "submitted";
    r.created_ms = r.updated_ms = r.queued_ms = t;
    Result<int64_t> id = Status::Internal("not written");
    EXPECT_TRUE(store_->Write([&](Db& db) -> Status {
      id = InsertJob(db, r);
      return id.status();
    }).ok());
    return id;
  }

  testing::TestStoreLocation loc_{GetParam()};
  FakeClock clock_{1'700'000'000'000};
  std::unique_ptr<Store> store_;
};
INSTANTIATE_TEST_SUITE_P(, StoreJobsTest, ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         testing::BackendParamName<::testing::TestParamInfo<Backend>>);

TEST_P(StoreJobsTest, AJobIsInsertedUpdatedReadAndListedWithItsHistory) {
  auto a = Insert(1, "a", 1000), b = Insert(2, "b", 2000), c = Insert(1, "c", 3000);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_LT(*a, *b);
  auto row = Read([&](Db& db) { return GetJob(db, *a); });
  ASSERT_TRUE(row.ok() && row->has_value());
  EXPECT_EQ((*row)->owner, "alice");
  EXPECT_EQ((*row)->name, "a");
  EXPECT_EQ((*row)->state, "pending");
  EXPECT_EQ((*row)->tasks_json, "[]");
  EXPECT_EQ((*row)->queued_ms, 1000);
  EXPECT_FALSE((*row)->ended_ms);

  JobRow done = **row;
  done.state = "succeeded";
  done.reason = "exit 0";
  done.restart_count = 2;
  done.tasks_json = R"([{"id":"t"}])";
  done.updated_ms = done.queued_ms = 5000;
  done.ended_ms = 5000;
  done.attained_gpu_ms = 7000;
  done.preemptions = 1;
  done.lost_gpu_ms = 30;
  done.spec_json = "changed";  // not written by an update
  const JobEventRow ev{5000, "succeeded", "exit 0"};
  ASSERT_TRUE(store_->Write([&](Db& db) { return UpdateJob(db, done, &ev); }).ok());
  row = Read([&](Db& db) { return GetJob(db, *a); });
  ASSERT_TRUE(row.ok() && row->has_value());
  EXPECT_EQ((*row)->spec_json, R"({"name":"a"})");
  EXPECT_EQ((*row)->restart_count, 2);
  EXPECT_EQ((*row)->tasks_json, R"([{"id":"t"}])");
  EXPECT_EQ((*row)->ended_ms, 5000);
  EXPECT_EQ((*row)->attained_gpu_ms, 7000);
  EXPECT_EQ((*row)->preemptions, 1);
  EXPECT_EQ((*row)->lost_gpu_ms, 30);
  auto events = Read([&](Db& db) { return JobEvents(db, *a); });
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].state, "pending");
  EXPECT_EQ((*events)[0].reason, "submitted");
  EXPECT_EQ((*events)[0].t_ms, 1000);
  EXPECT_EQ((*events)[1].state, "succeeded");

  EXPECT_FALSE(Read([&](Db& db) { return GetJob(db, 999); })->has_value());
  auto all = Read([&](Db& db) { return ListJobs(db, {}, 10); });
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].id, *c);  // newest first
  auto alices = Read([&](Db& db) { return ListJobs(db, {.owner_id = 1, .state = "pending"}, 10); });
  ASSERT_EQ(alices->size(), 1u);
  EXPECT_EQ((*alices)[0].id, *c);
  EXPECT_EQ(Read([&](Db& db) { return ListJobs(db, {}, 1); })->size(), 1u);
  // Id boundaries: below c newest first; above a oldest first.
  auto below = Read([&](Db& db) { return ListJobs(db, {.before = *c}, 1); });
  ASSERT_EQ(below->size(), 1u);
  EXPECT_EQ((*below)[0].id, *b);
  auto above = Read([&](Db& db) { return ListJobs(db, {.after = *a}, 1); });
  ASSERT_EQ(above->size(), 1u);
  EXPECT_EQ((*above)[0].id, *b);
  auto open = Read([&](Db& db) { return UnfinishedJobs(db); });
  ASSERT_EQ(open->size(), 2u);
  auto ended = Read([&](Db& db) { return EndedUsageSince(db, 5000, INT64_MAX); });
  EXPECT_EQ(ended->gpu_ms_by_owner, (std::map<std::string, double>{{"alice", 7000}}));
  EXPECT_TRUE(ended->recent_ids.empty());
  ended = Read([&](Db& db) { return EndedUsageSince(db, 5001, 5000); });
  EXPECT_TRUE(ended->gpu_ms_by_owner.empty());
  EXPECT_EQ(ended->recent_ids, std::set<int64_t>{*a});
  EXPECT_TRUE(Read([&](Db& db) { return EndedUsageSince(db, 0, 5001); })->recent_ids.empty());
}

TEST_P(StoreJobsTest, AnArrayAndItsMembersAreStoredInOneWriteAndCounted) {
  ArrayRow a;
  a.owner_id = 1;
  a.name = "sweep";
  a.indices = "0-2%1";
  a.max_running = 1;
  a.size = 3;
  a.spec_json = "{}";
  a.created_ms = 5;
  std::vector<int64_t> members;
  ASSERT_TRUE(store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(a.id, InsertArray(db, a));
    for (int64_t i = 0; i < 3; ++i) {
      JobRow r;
      r.owner_id = 1;
      r.name = "sweep";
      r.spec_json = "{}";
      r.state = i == 0 ? "running" : "pending";
      r.created_ms = r.updated_ms = 5;
      r.array_id = a.id;
      r.array_index = i;
      r.array_cap = 1;
      ASSIGN_OR_RETURN(int64_t id, InsertJob(db, r));
      members.push_back(id);
    }
    return Status::Ok();
  }).ok());
  ASSERT_TRUE(Insert(2, "plain", 6).ok());
  auto got = Read([&](Db& db) { return GetArray(db, a.id); });
  ASSERT_TRUE(got.ok() && got->has_value()) << got.status().ToString();
  EXPECT_EQ((*got)->owner, "alice");
  EXPECT_EQ((*got)->indices, "0-2%1");
  EXPECT_EQ((*got)->max_running, 1);
  EXPECT_EQ((*got)->counts, (std::map<std::string, int64_t>{{"pending", 2}, {"running", 1}}));
  auto none = Read([&](Db& db) { return GetArray(db, a.id + 100); });
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  // Members in index order; the rest of the jobs without them.
  auto listed = Read([&](Db& db) { return ListJobs(db, JobListFilter{.array_id = a.id}, 10); });
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*listed)[i].id, members[i]);
    EXPECT_EQ((*listed)[i].array_index, static_cast<int64_t>(i));
    EXPECT_EQ((*listed)[i].array_cap, 1);
  }
  auto plain = Read([&](Db& db) { return ListJobs(db, JobListFilter{.array_id = -1}, 10); });
  ASSERT_TRUE(plain.ok());
  ASSERT_EQ(plain->size(), 1u);
  EXPECT_EQ((*plain)[0].name, "plain");
  auto arrays = Read([&](Db& db) { return ListArrays(db, 2, 10); });
  ASSERT_TRUE(arrays.ok());
  EXPECT_TRUE(arrays->empty());  // bob has none
  arrays = Read([&](Db& db) { return ListArrays(db, 0, 10); });
  ASSERT_TRUE(arrays.ok());
  ASSERT_EQ(arrays->size(), 1u);
  EXPECT_EQ((*arrays)[0].counts.at("pending"), 2);
}

TEST_P(StoreJobsTest, FairShareUsageIsReplacedWhole) {
  auto none = Read([](Db& db) { return LoadFairShareUsage(db); });
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->at_ms, 0);
  FairShareUsage u{{{"alice", 1.5}, {"bob", 2}}, {{"ml", 3.5}}, 100};
  ASSERT_TRUE(store_->Write([&](Db& db) { return SaveFairShareUsage(db, u); }).ok());
  u = {{{"carol", 4}}, {}, 200};
  ASSERT_TRUE(store_->Write([&](Db& db) { return SaveFairShareUsage(db, u); }).ok());
  auto got = Read([](Db& db) { return LoadFairShareUsage(db); });
  EXPECT_EQ(got->user, (std::map<std::string, double>{{"carol", 4}}));
  EXPECT_TRUE(got->group.empty());
  EXPECT_EQ(got->at_ms, 200);
}

TEST_P(StoreJobsTest, QueuesAndQuotasAreStoredReplacedAndDeleted) {
  ASSERT_TRUE(store_->Write([](Db& db) { return InsertQueue(db, {"ml", "{}", 1, 1}); }).ok());
  EXPECT_FALSE(store_->Write([](Db& db) { return InsertQueue(db, {"ml", "{}", 2, 2}); }).ok())
      << "a taken name is refused";
  ASSERT_TRUE(store_->Write([](Db& db) { return PutQueue(db, {"ml", "{\"p\":1}", 9, 3}); }).ok());
  auto queues = Read([](Db& db) { return LoadQueues(db); });
  ASSERT_EQ(queues->size(), 1u);
  EXPECT_EQ((*queues)[0].spec_json, "{\"p\":1}");
  EXPECT_EQ((*queues)[0].created_ms, 1) << "kept by a replacement";
  EXPECT_EQ((*queues)[0].updated_ms, 3);
  ASSERT_TRUE(store_->Write([](Db& db) { return DeleteQueue(db, "ml"); }).ok());
  EXPECT_TRUE(Read([](Db& db) { return LoadQueues(db); })->empty());

  ASSERT_TRUE(store_->Write([](Db& db) { return PutQuota(db, {"user", "alice", "{}", 1}); }).ok());
  ASSERT_TRUE(store_->Write([](Db& db) { return PutQuota(db, {"user", "alice", "{\"g\":2}", 2}); }).ok());
  ASSERT_TRUE(store_->Write([](Db& db) { return PutQuota(db, {"group", "alice", "{}", 3}); }).ok());
  auto quotas = Read([](Db& db) { return LoadQuotas(db); });
  ASSERT_EQ(quotas->size(), 2u);
  ASSERT_TRUE(store_->Write([](Db& db) { return DeleteQuota(db, "group", "alice"); }).ok());
  quotas = Read([](Db& db) { return LoadQuotas(db); });
  ASSERT_EQ(quotas->size(), 1u);
  EXPECT_EQ((*quotas)[0].spec_json, "{\"g\":2}");
}

}  // namespace
}  // namespace rota::store
