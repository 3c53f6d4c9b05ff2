// Notifier without an SMTP server: disabled mail, invalid emails. Delivery, rate limits
// and failing servers are in notifier_smtp_test.cc.

#include "notify/notifier.h"

#include <gtest/gtest.h>

namespace rota::notify {
namespace {

Email Mail(std::vector<std::string> to) { return Email{std::move(to), "subject", "text", ""}; }

TEST(NotifierTest, EmptyUrlMeansDisabledAndCounts) {
  FakeClock clock;
  Notifier notifier(SmtpConfig{}, clock);
  EXPECT_FALSE(notifier.enabled());
  notifier.Enqueue(Mail({"a@example.com"}));
  notifier.Enqueue(Mail({"b@example.com"}));
  EXPECT_TRUE(notifier.Flush(0));
  NotifierStats s = notifier.Stats();
  EXPECT_EQ(s.disabled, 2u);
  EXPECT_EQ(s.queued + s.sent + s.failed + s.dropped + s.rate_limited, 0u);
}

TEST(NotifierTest, CallbackLearnsAtOnceWhatIsNotQueued) {
  FakeClock clock;
  std::vector<DeliveryReport> reports;
  auto record = [&](const DeliveryReport& r) { reports.push_back(r); };
  Notifier disabled(SmtpConfig{}, clock);
  disabled.Enqueue(Mail({"a@example.com"}), record);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].outcome, "disabled");
  EXPECT_EQ(reports[0].to, std::vector<std::string>{"a@example.com"});

  SmtpConfig c;
  c.url = "smtp://127.0.0.1:25";
  c.from = "rota@example.com";
  Notifier notifier(c, clock);
  notifier.Enqueue(Mail({"not an address"}), record);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[1].outcome, "failed");
  EXPECT_NE(reports[1].detail.find("invalid email"), std::string::npos) << reports[1].detail;
}

TEST(NotifierTest, InvalidConfigIsTreatedAsDisabled) {
  FakeClock clock;
  SmtpConfig c;
  c.url = "smtp://127.0.0.1:25";
  c.from = "not-an-address";
  Notifier notifier(c, clock);
  EXPECT_FALSE(notifier.enabled());
  notifier.Enqueue(Mail({"a@example.com"}));
  EXPECT_EQ(notifier.Stats().disabled, 1u);
}

TEST(NotifierTest, InvalidEmailIsCountedFailedNotQueued) {
  FakeClock clock;
  SmtpConfig c;
  c.url = "smtp://127.0.0.1:25";
  c.from = "rota@example.com";
  Notifier notifier(c, clock);
  ASSERT_TRUE(notifier.enabled());
  Email bad = Mail({"a@example.com"});
  bad.subject = "x\r\nBcc: victim@example.org";
  notifier.Enqueue(bad);
  notifier.Enqueue(Mail({"not an address"}));
  NotifierStats s = notifier.Stats();
  EXPECT_EQ(s.failed, 2u);
  EXPECT_EQ(s.queued, 0u);
  EXPECT_TRUE(notifier.Flush(1000));
}

}  // namespace
}  // namespace rota::notify
