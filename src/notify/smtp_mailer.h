#pragma once
// SmtpMailer: sends one email synchronously over SMTP (libcurl). Plain, STARTTLS or
// implicit TLS (smtps), optional AUTH. See docs/design-notify.md.

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace rota::notify {

struct SmtpConfig {
  // smtp://host[:port] (plain or STARTTLS, default port 25) or smtps://host[:port]
  // (implicit TLS, default 465). Empty: mail is disabled.
  std::string url;
  // "off": never TLS (smtp:// only); "starttls": STARTTLS required, the send fails when
  // the server does not offer it (smtp:// only); "auto": STARTTLS when offered for
  // smtp://, implicit TLS for smtps://.
  std::string tls = "auto";
  std::string username;  // AUTH (PLAIN/LOGIN/...) when non-empty
  std::string password;
  std::string from;                   // "rota@example.com" or "Rota <rota@example.com>"
  std::string ca_file;                // PEM bundle to verify the server; empty: system store
  bool insecure_skip_verify = false;  // do not verify the server certificate or name
  int64_t timeout_ms = 10000;         // whole conversation, connect included
  int rate_limit_per_hour = 20;       // per recipient (Notifier); 0 = unlimited
};

// OK, or InvalidArgument naming the offending field ("smtp.url: ..."). An empty url is
// valid (mail disabled) and then nothing else is checked.
Status Validate(const SmtpConfig& config);

struct Email {
  std::vector<std::string> to;  // addresses "local@domain", 1..100
  std::string subject;          // UTF-8, non-empty, no CR/LF; RFC 2047-encoded as needed
  std::string text;             // text/plain part
  std::string html;             // text/html part; at least one of text/html is non-empty
};

// OK, or InvalidArgument naming the field: malformed or duplicate addresses, CR/LF or
// other control characters in the subject (header injection), invalid UTF-8, sizes.
Status Validate(const Email& email);

// Thread-compatible: Send() may be called from one thread at a time; Cancel() from any.
class SmtpMailer {
 public:
  // `clock` stamps the Date header and must outlive the mailer.
  explicit SmtpMailer(SmtpConfig config, Clock& clock = RealClock::Get());

  // Validates config and email, builds the MIME message and delivers it in one SMTP
  // conversation, returning within about config.timeout_ms. Errors (not retried):
  //   InvalidArgument   bad config or email (nothing was sent)
  //   Unauthenticated   AUTH rejected or required (535, 530)
  //   PermissionDenied  a permanent 5xx refusal of sender, recipient or message
  //   Unavailable       connect/TLS failure, timeout, a 4xx reply, mail disabled, cancelled
  // Messages read "<url>: <stage>: <SMTP reply> (curl: <error>)", e.g.
  // "smtp://127.0.0.1:2525: recipient a@b refused: 550 5.1.1 unknown (curl: RCPT failed: 550)".
  // A refused recipient fails the whole message (nobody gets it).
  Status Send(const Email& email);

  // Aborts the Send in progress (it returns Unavailable "cancelled") and makes every later
  // Send fail the same way. Thread-safe.
  void Cancel();

  const SmtpConfig& config() const { return config_; }

 private:
  SmtpConfig config_;
  Clock& clock_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace rota::notify
