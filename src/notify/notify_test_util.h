#pragma once
// Test helpers for notify: decoding what the mailer encodes, a temp dir, and SmtpSink, a
// real SMTP server (testdata/smtp_sink.py on Debian's python3 + aiosmtpd) on loopback.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace rota::notify::testing {

std::string DecodeQuotedPrintable(const std::string& qp);
std::string DecodeBase64(const std::string& b64);
// Unfolds a header value and decodes its "=?UTF-8?B?...?=" words.
std::string DecodeHeaderValue(const std::string& value);

// A parsed message: top-level headers (name lower-cased, value unfolded but not decoded)
// and its text parts, decoded, keyed by content type ("text/plain", "text/html").
struct ParsedMessage {
  std::map<std::string, std::string> headers;
  std::map<std::string, std::string> parts;
};
ParsedMessage ParseMessage(const std::string& data);

// A directory under $TMPDIR (or /tmp) removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Writes a self-signed EC certificate for 127.0.0.1 (CN and IP SAN) with the openssl CLI.
struct CertFiles {
  std::string cert, key;
};
Result<CertFiles> MakeSelfSignedCert(const std::string& dir);

struct SinkOptions {
  std::string tls = "none";  // none | starttls | implicit
  CertFiles cert;            // for starttls / implicit
  std::string auth_user;     // AUTH required when set
  std::string auth_pass;
  std::vector<std::string> refuse;  // answered 550 at RCPT
};

struct ReceivedMail {
  std::string mail_from;
  std::vector<std::string> rcpt_tos;
  bool tls = false;
  std::string auth_login;  // "" when not authenticated
  std::string data;        // the message as received (after dot-unstuffing)
};

// The server process; killed (SIGTERM, then SIGKILL) and reaped on destruction. It also
// dies with the spawning thread (PR_SET_PDEATHSIG).
class SmtpSink {
 public:
  static Result<std::unique_ptr<SmtpSink>> Start(const std::string& dir,
                                                 const SinkOptions& options);
  ~SmtpSink();

  uint16_t port() const { return port_; }
  std::string Url(const std::string& scheme = "smtp") const;
  // Messages received so far, in order.
  std::vector<ReceivedMail> Messages() const;
  // Waits until at least n messages arrived or timeout; returns what is there.
  std::vector<ReceivedMail> WaitMessages(
      size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

 private:
  SmtpSink() = default;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  std::string maildir_;
};

// A TCP listener on 127.0.0.1 that never accepts nor answers: connects succeed (backlog),
// then nothing. Closed on destruction.
class SilentServer {
 public:
  SilentServer();
  ~SilentServer();
  uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

// A loopback port with nothing listening (bound, then closed).
uint16_t UnusedPort();

}  // namespace rota::notify::testing
