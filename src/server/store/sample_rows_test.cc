// The writer's sample ingest when many appends share one transaction: on
// PostgreSQL their samples go in multi-row INSERTs (sample_rows.h), on SQLite one
// statement each; both must store, count and aggregate the same.

#include <gtest/gtest.h>

#include <future>
#include <vector>

#include "server/store/store.h"
#include "server/store/store_test_backend.h"
#include "server/store/store_test_util.h"

namespace rota::store {
namespace {

using testing::Backend;
using testing::MakeNode;
using testing::MakeSample;

constexpr int64_t kT0 = testing::kMinuteT0;

class SampleRowsTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { ROTA_SKIP_WITHOUT_BACKEND(loc_); }
  int64_t Query(const std::string& sql) {
    auto db = loc_.Connect();
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    if (!db.ok()) return -1;
    auto v = db->QueryInt(sql);
    EXPECT_TRUE(v.ok()) << sql << ": " << v.status().ToString();
    return v.ok() ? *v : -1;
  }
  testing::TestStoreLocation loc_{GetParam()};
  FakeClock clock_{kT0 + 3'600'000};
};
INSTANTIATE_TEST_SUITE_P(, SampleRowsTest, ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         testing::BackendParamName<::testing::TestParamInfo<Backend>>);

// 1,300 samples of one node (more than one statement's 512 rows, and a remainder
// of odd size), duplicates inside the transaction and of rows stored before it,
// samples without GPUs, and an unknown node's append, all in one transaction.
TEST_P(SampleRowsTest, ManyAppendsInOneTransactionStoreCountAndAggregateEverySampleOnce) {
  StoreOptions opt;
  opt.linger_ms = 200;  // the appends below share a transaction
  opt.max_batch_ms = 5'000;
  auto s = loc_.Open(opt, clock_);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  Store& store = **s;
  ASSERT_TRUE(store.UpsertNode(MakeNode("gpu", 2), 1).ok());
  ASSERT_TRUE(store.UpsertNode(MakeNode("cpu", 0), 1).ok());
  // Stored before: samples 0..9 of "gpu".
  std::vector<api::NodeSample> before;
  for (int i = 0; i < 10; ++i) before.push_back(MakeSample(kT0 + i * 1000, 2, 10));
  ASSERT_TRUE(testing::AppendSync(store, "gpu", before).ok());
  const StoreStats base = store.Stats();

  std::vector<std::future<Status>> acks;
  auto append = [&](const std::string& node, std::vector<api::NodeSample> v) {
    auto p = std::make_shared<std::promise<Status>>();
    acks.push_back(p->get_future());
    store.Append(node, std::move(v), [p](Status st) { p->set_value(st); });
  };
  // 1,300 samples in appends of 100: 0..9 are duplicates of stored rows.
  for (int a = 0; a < 13; ++a) {
    std::vector<api::NodeSample> v;
    for (int i = a * 100; i < (a + 1) * 100; ++i) v.push_back(MakeSample(kT0 + i * 1000, 2, 20));
    append("gpu", std::move(v));
  }
  // Samples 100..149 again with other readings, in the same transaction: the
  // first stored wins.
  {
    std::vector<api::NodeSample> v;
    for (int i = 100; i < 150; ++i) v.push_back(MakeSample(kT0 + i * 1000, 2, 90));
    append("gpu", std::move(v));
  }
  append("nobody", {MakeSample(kT0, 2, 30)});
  {
    std::vector<api::NodeSample> v;  // 7 host-only samples, one twice
    for (int i = 0; i < 7; ++i) v.push_back(MakeSample(kT0 + i * 1000, 0, 40));
    v.push_back(MakeSample(kT0 + 3000, 0, 41));
    append("cpu", std::move(v));
  }
  std::vector<Status> results;
  for (auto& f : acks) results.push_back(f.get());
  for (size_t i = 0; i < results.size(); ++i) {
    if (i == 14) {
      EXPECT_EQ(results[i].code(), StatusCode::kNotFound) << results[i].ToString();
    } else {
      EXPECT_TRUE(results[i].ok()) << i << ": " << results[i].ToString();
    }
  }
  ASSERT_TRUE(store.AggregateMinutes().ok());

  EXPECT_EQ(Query("SELECT count(*) FROM node_gpu_samples"), 1300);
  EXPECT_EQ(Query("SELECT count(*) FROM node_samples"), 7);
  // Readings of the first write: 10 for 0..9, 20 for the rest (not 90).
  EXPECT_EQ(Query("SELECT count(*) FROM node_gpu_samples WHERE cpu_percent = 10"), 10);
  EXPECT_EQ(Query("SELECT count(*) FROM node_gpu_samples WHERE cpu_percent = 90"), 0);
  EXPECT_EQ(Query("SELECT count(*) FROM node_samples WHERE cpu_percent = 41"), 0);
  // Every stored sample counted once in the minutes.
  EXPECT_EQ(Query("SELECT sum(n) FROM node_minutes"), 1307);
  EXPECT_EQ(Query("SELECT sum(n) FROM gpu_minutes"), 2600);
  EXPECT_EQ(Query("SELECT sum(util_gpu_sum) FROM gpu_minutes"), 2 * (10 * 10 + 1290 * 20));

  const StoreStats st = store.Stats();
  EXPECT_EQ(st.gpu_rows - base.gpu_rows, 2 * 1290);
  EXPECT_EQ(st.node_rows - base.node_rows, 1290 + 7);
  // 10 + 50 duplicate GPU samples (2 readings and a host row each), 1 host-only.
  EXPECT_EQ(st.duplicate_rows - base.duplicate_rows, 60 * 3 + 1);
}

}  // namespace
}  // namespace rota::store
