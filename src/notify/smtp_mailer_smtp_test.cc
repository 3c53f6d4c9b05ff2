// SmtpMailer against a real SMTP server on loopback (aiosmtpd via testdata/smtp_sink.py):
// plain, STARTTLS, implicit TLS, AUTH, refusals, unreachable and silent servers.

#include <gtest/gtest.h>

#include <chrono>

#include "notify/notify_test_util.h"
#include "notify/smtp_mailer.h"

namespace rota::notify {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;
using testing::CertFiles;
using testing::DecodeHeaderValue;
using testing::ParseMessage;
using testing::ReceivedMail;
using testing::SinkOptions;
using testing::SmtpSink;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

class SmtpMailerSmtpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    Result<CertFiles> cert = testing::MakeSelfSignedCert(dir_.path());
    ASSERT_TRUE(cert.ok()) << cert.status().ToString();
    cert_ = *cert;
  }

  // Starts the sink; TLS modes get the test certificate.
  std::unique_ptr<SmtpSink> StartSink(SinkOptions options = {}) {
    options.cert = cert_;
    Result<std::unique_ptr<SmtpSink>> sink = SmtpSink::Start(dir_.path(), options);
    EXPECT_TRUE(sink.ok()) << sink.status().ToString();
    return sink.ok() ? std::move(sink).value() : nullptr;
  }

  SmtpConfig Config(const std::string& url) {
    SmtpConfig c;
    c.url = url;
    c.from = "Rota Cluster <rota@example.com>";
    c.timeout_ms = 5000;
    c.ca_file = cert_.cert;
    return c;
  }

  static Email SimpleEmail() {
    return Email{{"alice@example.com"}, "hello", "plain text", "<p>html</p>"};
  }

  testing::TempDir dir_;
  CertFiles cert_;
  FakeClock clock_{1'700'000'000'000};
};

TEST_F(SmtpMailerSmtpTest, PlainSendDeliversHeadersBothPartsAndRecipients) {
  auto sink = StartSink();
  ASSERT_NE(sink, nullptr);
  SmtpConfig c = Config(sink->Url());
  c.tls = "off";
  SmtpMailer mailer(c, clock_);
  const std::string subject =
      "GPU 3 on n\xC3\xB6"
      "de-a \xE2\x80\x94 please stop \xE2\x9C\x8B";
  const std::string text =
      "Hello bob,\n.\n. starts with a dot\nline with \xC3\xBC\n" + std::string(120, 'x') + "\n";
  const std::string html = "<p>Hello <b>bob</b> \xE2\x80\x94 caf\xC3\xA9</p>";
  Email e{{"bob@example.com", "admin@example.org", "BOB@example.com"}, subject, text, html};
  Status st = mailer.Send(e);
  ASSERT_TRUE(st.ok()) << st.ToString();

  std::vector<ReceivedMail> got = sink->WaitMessages(1);
  ASSERT_EQ(got.size(), 1u);
  const ReceivedMail& m = got[0];
  EXPECT_EQ(m.mail_from, "rota@example.com");
  // Case-insensitive duplicates get one RCPT.
  EXPECT_EQ(m.rcpt_tos, (std::vector<std::string>{"bob@example.com", "admin@example.org"}));
  EXPECT_FALSE(m.tls);
  EXPECT_EQ(m.auth_login, "");

  testing::ParsedMessage p = ParseMessage(m.data);
  EXPECT_EQ(DecodeHeaderValue(p.headers["subject"]), subject);
  EXPECT_TRUE(Contains(p.headers["subject"], "=?UTF-8?B?")) << p.headers["subject"];
  EXPECT_EQ(p.headers["from"], "Rota Cluster <rota@example.com>");
  EXPECT_EQ(p.headers["to"], "bob@example.com, admin@example.org");
  EXPECT_EQ(p.headers["date"], "Tue, 14 Nov 2023 22:13:20 +0000");
  EXPECT_TRUE(Contains(p.headers["message-id"], "@example.com>")) << p.headers["message-id"];
  EXPECT_EQ(p.headers["mime-version"], "1.0");
  EXPECT_EQ(p.headers["content-type"].rfind("multipart/alternative; boundary=", 0), 0u);
  std::string want_text;
  for (char ch : text) want_text += ch == '\n' ? std::string("\r\n") : std::string(1, ch);
  EXPECT_EQ(p.parts["text/plain"], want_text);
  EXPECT_EQ(p.parts["text/html"], html);
  EXPECT_TRUE(Contains(m.data, "Content-Type: text/plain; charset=UTF-8"));
  EXPECT_TRUE(Contains(m.data, "Content-Type: text/html; charset=UTF-8"));

  // A second message gets a different Message-ID.
  ASSERT_TRUE(mailer.Send(SimpleEmail()).ok());
  got = sink->WaitMessages(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NE(ParseMessage(got[1].data).headers["message-id"], p.headers["message-id"]);
}

TEST_F(SmtpMailerSmtpTest, StartTlsRequired) {
  auto sink = StartSink({.tls = "starttls"});
  ASSERT_NE(sink, nullptr);
  SmtpConfig c = Config(sink->Url());
  c.tls = "starttls";
  Status st = SmtpMailer(c, clock_).Send(SimpleEmail());
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<ReceivedMail> got = sink->WaitMessages(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].tls);
}

TEST_F(SmtpMailerSmtpTest, AutoUpgradesWhenStartTlsIsOffered) {
  auto sink = StartSink({.tls = "starttls"});
  ASSERT_NE(sink, nullptr);
  Status st = SmtpMailer(Config(sink->Url()), clock_).Send(SimpleEmail());
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<ReceivedMail> got = sink->WaitMessages(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].tls);
}

TEST_F(SmtpMailerSmtpTest, StartTlsRequiredButNotOffered) {
  auto sink = StartSink();
  ASSERT_NE(sink, nullptr);
  SmtpConfig c = Config(sink->Url());
  c.tls = "starttls";
  Status st = SmtpMailer(c, clock_).Send(SimpleEmail());
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "STARTTLS")) << st.message();
  EXPECT_TRUE(sink->Messages().empty());
}

TEST_F(SmtpMailerSmtpTest, ImplicitTls) {
  auto sink = StartSink({.tls = "implicit"});
  ASSERT_NE(sink, nullptr);
  Status st = SmtpMailer(Config(sink->Url("smtps")), clock_).Send(SimpleEmail());
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<ReceivedMail> got = sink->WaitMessages(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].tls);
}

// Without our CA the self-signed certificate is refused; insecure_skip_verify accepts it.
TEST_F(SmtpMailerSmtpTest, CertificateIsVerified) {
  auto sink = StartSink({.tls = "implicit"});
  ASSERT_NE(sink, nullptr);
  SmtpConfig c = Config(sink->Url("smtps"));
  c.ca_file = "";
  Status st = SmtpMailer(c, clock_).Send(SimpleEmail());
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "TLS handshake failed")) << st.message();
  EXPECT_TRUE(sink->Messages().empty());

  c.insecure_skip_verify = true;
  st = SmtpMailer(c, clock_).Send(SimpleEmail());
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(sink->WaitMessages(1).size(), 1u);
}

TEST_F(SmtpMailerSmtpTest, AuthOverStartTls) {
  auto sink = StartSink({.tls = "starttls", .auth_user = "rota", .auth_pass = "s3cret pw"});
  ASSERT_NE(sink, nullptr);
  SmtpConfig c = Config(sink->Url());
  c.tls = "starttls";
  c.username = "rota";
  c.password = "s3cret pw";
  Status st = SmtpMailer(c, clock_).Send(SimpleEmail());
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<ReceivedMail> got = sink->WaitMessages(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].auth_login, "rota");
  EXPECT_TRUE(got[0].tls);
}

// A server (or a man in the middle) that offers no STARTTLS never gets the credentials, even
// with tls "auto": the send fails instead of logging in in clear text.
TEST_F(SmtpMailerSmtpTest, CredentialsAreNeverSentWithoutTlsEvenWithAuto) {
  auto sink = StartSink({.auth_user = "rota", .auth_pass = "pw"});
  ASSERT_NE(sink, nullptr);
  SmtpConfig c = Config(sink->Url());
  ASSERT_EQ(c.tls, "auto");
  c.username = "rota";
  c.password = "pw";
  Status st = SmtpMailer(c, clock_).Send(SimpleEmail());
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_TRUE(sink->Messages().empty());
}

TEST_F(SmtpMailerSmtpTest, AuthWrongPasswordReports535) {
  auto sink = StartSink({.tls = "starttls", .auth_user = "rota", .auth_pass = "right"});
  ASSERT_NE(sink, nullptr);
  SmtpConfig c = Config(sink->Url());
  c.username = "rota";
  c.password = "wrong";
  Status st = SmtpMailer(c, clock_).Send(SimpleEmail());
  EXPECT_EQ(st.code(), StatusCode::kUnauthenticated) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "535")) << st.message();
  EXPECT_TRUE(Contains(st.message(), "authentication failed")) << st.message();
  EXPECT_TRUE(Contains(st.message(), sink->Url())) << st.message();
  EXPECT_FALSE(Contains(st.message(), "wrong")) << "never echo the password: " << st.message();
  EXPECT_TRUE(sink->Messages().empty());
}

TEST_F(SmtpMailerSmtpTest, AuthRequiredButNoCredentials) {
  auto sink = StartSink({.auth_user = "rota", .auth_pass = "pw"});
  ASSERT_NE(sink, nullptr);
  Status st = SmtpMailer(Config(sink->Url()), clock_).Send(SimpleEmail());
  EXPECT_EQ(st.code(), StatusCode::kUnauthenticated) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "530")) << st.message();
  EXPECT_TRUE(Contains(st.message(), "sender refused")) << st.message();
}

TEST_F(SmtpMailerSmtpTest, RefusedRecipientCarries550AndSendsNothing) {
  auto sink = StartSink({.refuse = {"ghost@example.org"}});
  ASSERT_NE(sink, nullptr);
  Email e = SimpleEmail();
  e.to = {"alice@example.com", "ghost@example.org"};
  Status st = SmtpMailer(Config(sink->Url()), clock_).Send(e);
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied) << st.ToString();
  EXPECT_EQ(st.message().rfind(sink->Url() + ": recipient ghost@example.org refused: 550 ", 0), 0u)
      << st.message();
  EXPECT_TRUE(Contains(st.message(), "recipient refused by smtp_sink")) << st.message();
  EXPECT_TRUE(Contains(st.message(), "curl:")) << st.message();
  EXPECT_TRUE(sink->Messages().empty());
}

TEST_F(SmtpMailerSmtpTest, UnreachableServerFailsFast) {
  SmtpConfig c = Config("smtp://127.0.0.1:" + std::to_string(testing::UnusedPort()));
  c.timeout_ms = 2000;
  auto start = steady_clock::now();
  Status st = SmtpMailer(c, clock_).Send(SimpleEmail());
  auto elapsed = steady_clock::now() - start;
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "cannot connect")) << st.message();
  EXPECT_LE(elapsed, milliseconds(c.timeout_ms));
}

// The server accepts the TCP connection but never greets: the timeout bounds the send.
TEST_F(SmtpMailerSmtpTest, SilentServerTimesOut) {
  testing::SilentServer silent;
  SmtpConfig c = Config("smtp://127.0.0.1:" + std::to_string(silent.port()));
  c.timeout_ms = 500;
  auto start = steady_clock::now();
  Status st = SmtpMailer(c, clock_).Send(SimpleEmail());
  auto elapsed = steady_clock::now() - start;
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "timed out after 500 ms")) << st.message();
  EXPECT_GE(elapsed, milliseconds(450));
  EXPECT_LE(elapsed, milliseconds(2500));
}

}  // namespace
}  // namespace rota::notify
