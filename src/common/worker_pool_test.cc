#include "common/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>

namespace rota {
namespace {

TEST(WorkerPoolTest, RunsSubmittedWorkOffTheCallingThread) {
  WorkerPool pool("test pool", 2, 8);
  std::promise<std::thread::id> ran;
  ASSERT_TRUE(pool.Submit([&] { ran.set_value(std::this_thread::get_id()); }).ok());
  EXPECT_NE(ran.get_future().get(), std::this_thread::get_id());
}

TEST(WorkerPoolTest, FullQueueIsRefusedAtOnceAsUnavailable) {
  // Everything the work refers to outlives the pool (declared before it): the pool's
  // destructor runs while the first item may still be leaving gate.wait().
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::promise<void> started;
  std::atomic<int> ran{0};
  WorkerPool pool("password hashing", 1, 2);
  ASSERT_TRUE(pool.Submit([&] {
    started.set_value();
    gate.wait();
  }).ok());
  started.get_future().wait();  // the one thread is busy; the queue is empty
  ASSERT_TRUE(pool.Submit([&] { ++ran; }).ok());
  ASSERT_TRUE(pool.Submit([&] { ++ran; }).ok());
  Status full = pool.Submit([&] { ++ran; });
  EXPECT_EQ(full.code(), StatusCode::kUnavailable);
  EXPECT_NE(full.message().find("password hashing is busy"), std::string::npos) << full.message();
  EXPECT_EQ(pool.stats().rejected, 1);
  EXPECT_EQ(pool.stats().queued, 2u);
  release.set_value();
}

TEST(WorkerPoolTest, DestructorDropsQueuedWorkAndWaitsForRunningWork) {
  std::atomic<int> ran{0};
  auto dropped = std::make_shared<int>(0);
  {
    WorkerPool pool("test pool", 1, 100);
    std::promise<void> started;
    ASSERT_TRUE(pool.Submit([&] {
      started.set_value();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      ++ran;
    }).ok());
    started.get_future().wait();
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(pool.Submit([&ran, keep = dropped] {
      ++ran;
      (void)keep;
    }).ok());
    EXPECT_EQ(dropped.use_count(), 51);
  }
  EXPECT_EQ(ran.load(), 1);  // the running item finished; the queued ones were destroyed
  EXPECT_EQ(dropped.use_count(), 1);
}

}  // namespace
}  // namespace rota
