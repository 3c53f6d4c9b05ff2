// Notifier end to end against a real SMTP server on loopback: delivery, the per-recipient
// rate limit driven by a FakeClock, failures counted and not retried, and a server that
// hangs not blocking Enqueue.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>

#include "notify/notifier.h"
#include "notify/notify_test_util.h"

namespace rota::notify {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;
using testing::ReceivedMail;
using testing::SinkOptions;
using testing::SmtpSink;

constexpr int64_t kHourMs = 3'600'000;

Email Mail(std::vector<std::string> to, const std::string& subject) {
  return Email{std::move(to), subject, "body of " + subject, "<p>" + subject + "</p>"};
}

class NotifierSmtpTest : public ::testing::Test {
 protected:
  std::unique_ptr<SmtpSink> StartSink(const SinkOptions& options = {}) {
    Result<std::unique_ptr<SmtpSink>> sink = SmtpSink::Start(dir_.path(), options);
    EXPECT_TRUE(sink.ok()) << sink.status().ToString();
    return sink.ok() ? std::move(sink).value() : nullptr;
  }
  static SmtpConfig Config(const std::string& url) {
    SmtpConfig c;
    c.url = url;
    c.from = "rota@example.com";
    c.timeout_ms = 5000;
    return c;
  }

  testing::TempDir dir_;
  FakeClock clock_;
};

TEST_F(NotifierSmtpTest, RateLimitsEachRecipientByTheClock) {
  auto sink = StartSink();
  ASSERT_NE(sink, nullptr);
  SmtpConfig c = Config(sink->Url());
  c.rate_limit_per_hour = 2;
  Notifier notifier(c, clock_);
  ASSERT_TRUE(notifier.enabled());

  notifier.Enqueue(Mail({"alice@example.com"}, "m1"));
  clock_.AdvanceMs(60'000);
  notifier.Enqueue(Mail({"Alice@Example.com"}, "m2"));  // same recipient, other case
  notifier.Enqueue(Mail({"alice@example.com"}, "m3"));  // over the limit: not sent
  notifier.Enqueue(Mail({"alice@example.com", "bob@example.com"}, "m4"));  // only bob
  ASSERT_TRUE(notifier.Flush(10'000));
  NotifierStats s = notifier.Stats();
  EXPECT_EQ(s.queued, 3u);
  EXPECT_EQ(s.sent, 3u);
  EXPECT_EQ(s.rate_limited, 2u);
  EXPECT_EQ(s.failed + s.dropped, 0u);

  std::vector<ReceivedMail> got = sink->WaitMessages(3);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].rcpt_tos, std::vector<std::string>{"alice@example.com"});
  EXPECT_EQ(got[1].rcpt_tos, std::vector<std::string>{"Alice@Example.com"});
  EXPECT_EQ(got[2].rcpt_tos, std::vector<std::string>{"bob@example.com"});
  EXPECT_NE(got[2].data.find("m4"), std::string::npos);

  // One hour after the first email, one slot is free again; the second still counts.
  clock_.AdvanceMs(kHourMs - 60'000);
  notifier.Enqueue(Mail({"alice@example.com"}, "m5"));
  notifier.Enqueue(Mail({"alice@example.com"}, "m6"));
  ASSERT_TRUE(notifier.Flush(10'000));
  s = notifier.Stats();
  EXPECT_EQ(s.sent, 4u);
  EXPECT_EQ(s.rate_limited, 3u);
  got = sink->WaitMessages(4);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_NE(got[3].data.find("m5"), std::string::npos);
}

// Each email's callback learns its fate once: sent, refused with the SMTP
// reply, or held back by the rate limit.
TEST_F(NotifierSmtpTest, CallbacksReportEachEmailsOutcome) {
  auto sink = StartSink({.refuse = {"ghost@example.org"}});
  ASSERT_NE(sink, nullptr);
  SmtpConfig c = Config(sink->Url());
  c.rate_limit_per_hour = 1;
  Notifier notifier(c, clock_);
  std::mutex mu;
  std::map<std::string, std::vector<DeliveryReport>> reports;  // by subject
  auto record = [&](const std::string& subject) {
    return [&, subject](const DeliveryReport& r) {
      std::lock_guard<std::mutex> lock(mu);
      reports[subject].push_back(r);
    };
  };
  notifier.Enqueue(Mail({"alice@example.com"}, "fine"), record("fine"));
  notifier.Enqueue(Mail({"ghost@example.org"}, "refused"), record("refused"));
  notifier.Enqueue(Mail({"alice@example.com"}, "limited"), record("limited"));
  notifier.Enqueue(Mail({"alice@example.com", "bob@example.com"}, "half"), record("half"));
  ASSERT_TRUE(notifier.Flush(10'000));
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(reports["fine"].size(), 1u);
  EXPECT_EQ(reports["fine"][0].outcome, "sent");
  ASSERT_EQ(reports["refused"].size(), 1u);
  EXPECT_EQ(reports["refused"][0].outcome, "failed");
  EXPECT_NE(reports["refused"][0].detail.find("550"), std::string::npos)
      << reports["refused"][0].detail;
  ASSERT_EQ(reports["limited"].size(), 1u);
  EXPECT_EQ(reports["limited"][0].outcome, "rate_limited");
  EXPECT_EQ(reports["limited"][0].rate_limited, std::vector<std::string>{"alice@example.com"});
  ASSERT_EQ(reports["half"].size(), 1u);
  EXPECT_EQ(reports["half"][0].outcome, "sent");
  EXPECT_EQ(reports["half"][0].to, std::vector<std::string>{"bob@example.com"});
  EXPECT_EQ(reports["half"][0].rate_limited, std::vector<std::string>{"alice@example.com"});
}

TEST_F(NotifierSmtpTest, ClosedPortIsReportedFailed) {
  Notifier notifier(Config("smtp://127.0.0.1:" + std::to_string(testing::UnusedPort())), clock_);
  std::atomic<int> calls{0};
  DeliveryReport report;
  notifier.Enqueue(Mail({"alice@example.com"}, "m"), [&](const DeliveryReport& r) {
    report = r;
    ++calls;
  });
  ASSERT_TRUE(notifier.Flush(10'000));  // the callback has run when Flush returns
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(report.outcome, "failed");
  EXPECT_FALSE(report.detail.empty());
  EXPECT_EQ(notifier.Stats().failed, 1u);
}

TEST_F(NotifierSmtpTest, FailuresAreCountedAndNotRetried) {
  auto sink = StartSink({.refuse = {"ghost@example.org"}});
  ASSERT_NE(sink, nullptr);
  Notifier notifier(Config(sink->Url()), clock_);
  notifier.Enqueue(Mail({"ghost@example.org"}, "refused"));
  notifier.Enqueue(Mail({"alice@example.com"}, "fine"));
  ASSERT_TRUE(notifier.Flush(10'000));
  NotifierStats s = notifier.Stats();
  EXPECT_EQ(s.queued, 2u);
  EXPECT_EQ(s.failed, 1u);
  EXPECT_EQ(s.sent, 1u);
  std::vector<ReceivedMail> got = sink->WaitMessages(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].rcpt_tos, std::vector<std::string>{"alice@example.com"});
}

// A server that accepts connections but never answers holds the worker in its first
// send; Enqueue still returns at once, the queue bound drops the excess, and the
// destructor aborts the hung send instead of waiting out the 10 s timeout.
TEST_F(NotifierSmtpTest, HungServerDoesNotBlockEnqueueOrShutdown) {
  testing::SilentServer silent;
  SmtpConfig c = Config("smtp://127.0.0.1:" + std::to_string(silent.port()));
  c.timeout_ms = 10'000;
  c.rate_limit_per_hour = 0;
  NotifierOptions options;
  options.queue_capacity = 5;
  options.drain_timeout_ms = 200;
  auto notifier = std::make_unique<Notifier>(c, clock_, options);

  auto start = steady_clock::now();
  for (int i = 0; i < 20; ++i) notifier->Enqueue(Mail({"alice@example.com"}, "m"));
  EXPECT_LT(steady_clock::now() - start, milliseconds(500));
  EXPECT_FALSE(notifier->Flush(100));
  NotifierStats s = notifier->Stats();
  EXPECT_EQ(s.queued + s.dropped, 20u);
  EXPECT_GE(s.dropped, 14u);  // 5 queued + at most 1 taken by the worker
  EXPECT_EQ(s.sent, 0u);

  start = steady_clock::now();
  notifier.reset();
  EXPECT_LT(steady_clock::now() - start, milliseconds(3000));
}

TEST_F(NotifierSmtpTest, DestructorDeliversWhatIsQueued) {
  auto sink = StartSink();
  ASSERT_NE(sink, nullptr);
  {
    Notifier notifier(Config(sink->Url()), clock_);
    for (int i = 0; i < 3; ++i) {
      notifier.Enqueue(Mail({"u" + std::to_string(i) + "@example.com"}, "m"));
    }
  }
  EXPECT_EQ(sink->WaitMessages(3, milliseconds(100)).size(), 3u);
}

}  // namespace
}  // namespace rota::notify
