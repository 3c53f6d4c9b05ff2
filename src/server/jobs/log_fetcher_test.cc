// LogFetcher over a fake transport: answers complete reads on the answering thread, only the
// node asked may answer, reads time out, a refused send fails at once, and the number of
// waiting reads is bounded.

#include "server/jobs/log_fetcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <vector>

namespace rota::server {
namespace {

using std::chrono::milliseconds;

class FakeTransport : public TaskTransport {
 public:
  void SetTaskListeners(TaskStatusListener, TaskLogListener) override {}
  Status SendTask(const std::string&, const api::TaskStartMsg&) override { return Status::Ok(); }
  Status SendTask(const std::string&, const api::TaskSignalMsg&) override { return Status::Ok(); }
  Status SendTask(const std::string& node, const api::TaskLogsMsg& m) override {
    MutexLock lock(&mu_);
    sent.emplace_back(node, m);
    return refuse ? Status::Unavailable("node " + node + " is not connected") : Status::Ok();
  }
  Mutex mu_;
  std::vector<std::pair<std::string, api::TaskLogsMsg>> sent ROTA_GUARDED_BY(mu_);
  bool refuse = false;
};

// Collects one read's outcome.
struct Outcome {
  Mutex mu;
  CondVar cv;
  std::optional<Result<api::TaskLogMsg>> got ROTA_GUARDED_BY(mu);
  LogFetcher::Done Sink() {
    return [this](Result<api::TaskLogMsg> r) {
      MutexLock lock(&mu);
      got = std::move(r);
      cv.NotifyAll();
    };
  }
  bool Wait(milliseconds timeout) {
    MutexLock lock(&mu);
    return cv.WaitFor(&mu, timeout, [this]() ROTA_REQUIRES(mu) { return got.has_value(); });
  }
  bool done() {
    MutexLock lock(&mu);
    return got.has_value();
  }
  Result<api::TaskLogMsg> value() {
    MutexLock lock(&mu);
    return *got;
  }
};

api::TaskLogsMsg Read(const std::string& task) { return api::TaskLogsMsg{0, task, "stdout", 0, 100}; }

uint64_t LastReq(FakeTransport& t) {
  MutexLock lock(&t.mu_);
  return t.sent.back().second.req;
}

TEST(LogFetcherTest, TheNodesAnswerCompletesTheRead) {
  FakeTransport transport;
  LogFetcher fetcher(&transport, milliseconds(5000), 16);
  Outcome out;
  fetcher.Fetch("node-a", Read("job-1.r0.worker-0"), out.Sink());
  EXPECT_FALSE(out.done());
  api::TaskLogMsg answer;
  answer.req = LastReq(transport);
  answer.data = "hello";
  fetcher.OnAnswer("node-a", answer);
  ASSERT_TRUE(out.done());
  ASSERT_TRUE(out.value().ok());
  EXPECT_EQ(out.value()->data, "hello");
  EXPECT_EQ(fetcher.pending(), 0u);
}

// Regression: log answers were not tied to the node that was asked: any connected node could
// answer (forge) another node's log read by its request id.
TEST(LogFetcherTest, AnAnswerFromAnotherNodeIsDropped) {
  FakeTransport transport;
  LogFetcher fetcher(&transport, milliseconds(5000), 16);
  Outcome out;
  fetcher.Fetch("node-a", Read("job-1.r0.worker-0"), out.Sink());
  api::TaskLogMsg forged;
  forged.req = LastReq(transport);
  forged.data = "forged";
  fetcher.OnAnswer("node-b", forged);
  EXPECT_FALSE(out.done());
  EXPECT_EQ(fetcher.foreign_answers(), 1u);
  api::TaskLogMsg real = forged;
  real.data = "real";
  fetcher.OnAnswer("node-a", real);
  ASSERT_TRUE(out.done());
  EXPECT_EQ(out.value()->data, "real");
}

TEST(LogFetcherTest, ANodeThatDoesNotAnswerTimesOut) {
  FakeTransport transport;
  LogFetcher fetcher(&transport, milliseconds(50), 16);
  Outcome out;
  fetcher.Fetch("node-a", Read("job-1.r0.worker-0"), out.Sink());
  ASSERT_TRUE(out.Wait(milliseconds(5000)));
  EXPECT_EQ(out.value().status().code(), StatusCode::kUnavailable);
  EXPECT_NE(out.value().status().message().find("node-a did not send the log in time"),
            std::string::npos);
  EXPECT_EQ(fetcher.pending(), 0u);
}

TEST(LogFetcherTest, ARefusedSendAndAnAgentErrorFailTheRead) {
  FakeTransport transport;
  LogFetcher fetcher(&transport, milliseconds(5000), 16);
  transport.refuse = true;
  Outcome refused;
  fetcher.Fetch("node-a", Read("job-1.r0.worker-0"), refused.Sink());
  ASSERT_TRUE(refused.done());
  EXPECT_EQ(refused.value().status().code(), StatusCode::kUnavailable);
  transport.refuse = false;
  Outcome missing;
  fetcher.Fetch("node-a", Read("job-1.r0.worker-0"), missing.Sink());
  api::TaskLogMsg answer;
  answer.req = LastReq(transport);
  answer.error = "task job-1.r0.worker-0 is not known";
  fetcher.OnAnswer("node-a", answer);
  ASSERT_TRUE(missing.done());
  EXPECT_EQ(missing.value().status().code(), StatusCode::kNotFound);
}

TEST(LogFetcherTest, WaitingReadsAreBoundedAndStopCompletesThem) {
  FakeTransport transport;
  std::vector<std::unique_ptr<Outcome>> outs;
  {
    LogFetcher fetcher(&transport, milliseconds(60000), 2);
    for (int i = 0; i < 3; ++i) {
      outs.push_back(std::make_unique<Outcome>());
      fetcher.Fetch("node-a", Read("job-1.r0.worker-0"), outs.back()->Sink());
    }
    ASSERT_TRUE(outs[2]->done());
    EXPECT_EQ(outs[2]->value().status().code(), StatusCode::kResourceExhausted);
    EXPECT_FALSE(outs[0]->done());
  }
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(outs[i]->done());
    EXPECT_EQ(outs[i]->value().status().code(), StatusCode::kUnavailable);
  }
}

}  // namespace
}  // namespace rota::server
