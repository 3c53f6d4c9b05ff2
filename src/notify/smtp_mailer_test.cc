// SmtpConfig/Email validation and the failures SmtpMailer reports before any network I/O.
// The SMTP conversations themselves are in smtp_mailer_smtp_test.cc.

#include "notify/smtp_mailer.h"

#include <gtest/gtest.h>

#include "notify/notify_test_util.h"

namespace rota::notify {
namespace {

SmtpConfig GoodConfig() {
  SmtpConfig c;
  c.url = "smtp://mail.example.com:587";
  c.from = "Rota <rota@example.com>";
  return c;
}

Email GoodEmail() { return Email{{"alice@example.com"}, "subject", "text", "<p>html</p>"}; }

void ExpectInvalid(const Status& st, const std::string& needle) {
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find(needle), std::string::npos)
      << "'" << st.message() << "' should mention '" << needle << "'";
}

TEST(SmtpConfigTest, AcceptsGoodConfigs) {
  EXPECT_TRUE(Validate(GoodConfig()).ok());
  SmtpConfig c = GoodConfig();
  c.url = "smtps://mail.example.com";
  EXPECT_TRUE(Validate(c).ok());
  c.url = "smtp://[::1]:2525/rota.example.com";
  c.tls = "starttls";
  c.username = "u";
  c.password = "p";
  EXPECT_TRUE(Validate(c).ok()) << Validate(c).ToString();
  EXPECT_TRUE(Validate(SmtpConfig{}).ok()) << "empty url = disabled, nothing else checked";
}

TEST(SmtpConfigTest, RejectsBadFieldsNamingThem) {
  struct Case {
    void (*mutate)(SmtpConfig&);
    const char* field;
  };
  const Case cases[] = {
      {[](SmtpConfig& c) { c.url = "http://mail.example.com"; }, "smtp.url"},
      {[](SmtpConfig& c) {
         c.tls = "off";
         c.username = "u";
         c.password = "p";
       },
       "clear text"},
      {[](SmtpConfig& c) { c.url = "smtp://"; }, "smtp.url"},
      {[](SmtpConfig& c) { c.url = "smtp://user:pw@mail.example.com"; }, "credentials"},
      {[](SmtpConfig& c) { c.url = "smtp://mail.example.com:99999"; }, "port"},
      {[](SmtpConfig& c) { c.url = "smtp://mail.example.com:"; }, "port"},
      {[](SmtpConfig& c) { c.url = "smtp://mail.example.com\r\n"; }, "smtp.url"},
      {[](SmtpConfig& c) { c.tls = "yes"; }, "smtp.tls"},
      {[](SmtpConfig& c) {
         c.url = "smtps://m.example.com";
         c.tls = "off";
       },
       "smtp.tls"},
      {[](SmtpConfig& c) {
         c.url = "smtps://m.example.com";
         c.tls = "starttls";
       },
       "smtp.tls"},
      {[](SmtpConfig& c) { c.from = ""; }, "smtp.from"},
      {[](SmtpConfig& c) { c.from = "not an address"; }, "smtp.from"},
      {[](SmtpConfig& c) { c.from = "r@x.org\r\nBcc: y@z.org"; }, "smtp.from"},
      {[](SmtpConfig& c) { c.password = "p"; }, "smtp.username"},
      {[](SmtpConfig& c) { c.username = "u\r\nQUIT"; }, "smtp.username"},
      {[](SmtpConfig& c) { c.ca_file = "/nonexistent/ca.pem"; }, "smtp.ca_file"},
      {[](SmtpConfig& c) { c.timeout_ms = 0; }, "smtp.timeout_ms"},
      {[](SmtpConfig& c) { c.rate_limit_per_hour = -1; }, "smtp.rate_limit_per_hour"},
  };
  for (const Case& tc : cases) {
    SmtpConfig c = GoodConfig();
    tc.mutate(c);
    ExpectInvalid(Validate(c), tc.field);
  }
}

TEST(EmailTest, RejectsHeaderInjectionAndBadInput) {
  EXPECT_TRUE(Validate(GoodEmail()).ok());
  struct Case {
    void (*mutate)(Email&);
    const char* needle;
  };
  const Case cases[] = {
      {[](Email& e) { e.subject = "hi\r\nBcc: victim@example.org"; }, "header injection"},
      {[](Email& e) { e.subject = "hi\nX-Evil: 1"; }, "header injection"},
      {[](Email& e) { e.to = {"alice@example.com\r\nBcc: victim@example.org"}; }, "to[0]"},
      {[](Email& e) {
         e.to = {"alice@example.com", "bob"};
       },
       "to[1]"},
      {[](Email& e) { e.to = {}; }, "recipient"},
      {[](Email& e) { e.to.assign(101, "a@b.c"); }, "recipients"},
      {[](Email& e) { e.subject = ""; }, "subject"},
      {[](Email& e) { e.subject = std::string(999, 's'); }, "subject"},
      {[](Email& e) { e.subject = "bad \xC3"; }, "UTF-8"},
      {[](Email& e) {
         e.text = "";
         e.html = "";
       },
       "body"},
      {[](Email& e) { e.html = "\xFF"; }, "html"},
  };
  for (const Case& tc : cases) {
    Email e = GoodEmail();
    tc.mutate(e);
    ExpectInvalid(Validate(e), tc.needle);
  }
}

// Nothing listens on the port: an InvalidArgument (not Unavailable) proves the email was
// rejected before any connection was tried.
TEST(SmtpMailerTest, InvalidEmailIsRejectedBeforeConnecting) {
  SmtpConfig c = GoodConfig();
  c.url = "smtp://127.0.0.1:" + std::to_string(testing::UnusedPort());
  SmtpMailer mailer(c);
  Email e = GoodEmail();
  e.subject = "x\r\nBcc: victim@example.org";
  ExpectInvalid(mailer.Send(e), "header injection");
  ExpectInvalid(mailer.Send(Email{{"a@b.c>\r\nRCPT TO:<v@x.org"}, "s", "t", ""}), "to[0]");
  // The same mailer does reach the network for a valid email.
  EXPECT_EQ(mailer.Send(GoodEmail()).code(), StatusCode::kUnavailable);
}

TEST(SmtpMailerTest, DisabledAndInvalidConfigsFailClearly) {
  SmtpMailer disabled(SmtpConfig{});
  Status st = disabled.Send(GoodEmail());
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("mail disabled"), std::string::npos) << st.message();

  SmtpConfig c = GoodConfig();
  c.tls = "sometimes";
  ExpectInvalid(SmtpMailer(c).Send(GoodEmail()), "smtp.tls");
}

TEST(SmtpMailerTest, CancelledMailerFailsWithoutSending) {
  SmtpConfig c = GoodConfig();
  c.url = "smtp://127.0.0.1:" + std::to_string(testing::UnusedPort());
  SmtpMailer mailer(c);
  mailer.Cancel();
  Status st = mailer.Send(GoodEmail());
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("cancelled"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace rota::notify
