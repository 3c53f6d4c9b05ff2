#include "notify/notify_test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/file_util.h"
#include "common/strings.h"
#include "common/process.h"

namespace rota::notify::testing {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Splits "headers CRLF CRLF body"; headers unfolded, names lower-cased.
std::map<std::string, std::string> ParseHeaders(const std::string& head) {
  std::map<std::string, std::string> out;
  std::string last;
  std::istringstream in(head);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if ((line[0] == ' ' || line[0] == '\t') && !last.empty()) {
      out[last] += "\r\n" + line;
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    last = ToLower(line.substr(0, colon));
    size_t v = line.find_first_not_of(' ', colon + 1);
    out[last] = v == std::string::npos ? "" : line.substr(v);
  }
  return out;
}

void AddPart(const std::string& entity, ParsedMessage* msg) {
  size_t sep = entity.find("\r\n\r\n");
  if (sep == std::string::npos) return;
  auto headers = ParseHeaders(entity.substr(0, sep));
  std::string type = headers["content-type"];
  type = ToLower(type.substr(0, type.find(';')));
  std::string body = entity.substr(sep + 4);
  if (ToLower(headers["content-transfer-encoding"]) == "quoted-printable") {
    body = DecodeQuotedPrintable(body);
  }
  msg->parts[type] = body;
}

}  // namespace

std::string DecodeQuotedPrintable(const std::string& qp) {
  std::string out;
  for (size_t i = 0; i < qp.size(); ++i) {
    if (qp[i] != '=') {
      out += qp[i];
    } else if (qp.compare(i, 3, "=\r\n") == 0) {
      i += 2;
    } else if (i + 2 < qp.size() && HexValue(qp[i + 1]) >= 0 && HexValue(qp[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(qp[i + 1]) * 16 + HexValue(qp[i + 2]));
      i += 2;
    } else {
      out += '=';
    }
  }
  return out;
}

std::string DecodeBase64(const std::string& b64) {
  static const std::string kTable =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : b64) {
    size_t v = kTable.find(c);
    if (v == std::string::npos) continue;  // '=', whitespace
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

std::string DecodeHeaderValue(const std::string& value) {
  std::string unfolded;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value.compare(i, 2, "\r\n") == 0) {
      ++i;
      continue;
    }
    unfolded += value[i];
  }
  // Whitespace between adjacent encoded words is dropped (RFC 2047 section 6.2).
  std::string out;
  size_t i = 0;
  bool prev_word = false;
  while (i < unfolded.size()) {
    size_t start = unfolded.find("=?UTF-8?B?", i);
    if (start == std::string::npos) {
      out += unfolded.substr(i);
      break;
    }
    std::string between = unfolded.substr(i, start - i);
    if (!(prev_word && between.find_first_not_of(" \t") == std::string::npos)) out += between;
    size_t end = unfolded.find("?=", start + 10);
    if (end == std::string::npos) {
      out += unfolded.substr(start);
      break;
    }
    out += DecodeBase64(unfolded.substr(start + 10, end - start - 10));
    i = end + 2;
    prev_word = true;
  }
  return out;
}

ParsedMessage ParseMessage(const std::string& data) {
  ParsedMessage msg;
  size_t sep = data.find("\r\n\r\n");
  if (sep == std::string::npos) return msg;
  msg.headers = ParseHeaders(data.substr(0, sep));
  const std::string& type = msg.headers["content-type"];
  size_t b = type.find("boundary=\"");
  if (b == std::string::npos) {
    AddPart(data, &msg);
    return msg;
  }
  std::string boundary = type.substr(b + 10, type.find('"', b + 10) - b - 10);
  const std::string delim = "\r\n--" + boundary;
  size_t pos = data.find(delim, sep);
  while (pos != std::string::npos) {
    size_t start = pos + delim.size();
    if (data.compare(start, 2, "--") == 0) break;
    start += 2;  // CRLF after the delimiter
    size_t next = data.find(delim, start);
    if (next == std::string::npos) break;
    AddPart(data.substr(start, next - start), &msg);
    pos = next;
  }
  return msg;
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string templ =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/rota-notify-XXXXXX";
  if (::mkdtemp(templ.data()) != nullptr) path_ = templ;
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

Result<CertFiles> MakeSelfSignedCert(const std::string& dir) {
  CertFiles files{dir + "/cert.pem", dir + "/key.pem"};
  SpawnOptions opts;
  opts.output_path = dir + "/openssl.log";
  ASSIGN_OR_RETURN(pid_t pid,
                   SpawnProcess({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                                 "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", files.key,
                                 "-out", files.cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                                 "-addext", "subjectAltName=IP:127.0.0.1"},
                                opts));
  Result<int> status = WaitProcess(pid, 30'000);
  if (!status.ok()) {
    StopProcess(pid, 0);
    return status.status();
  }
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    Result<std::string> log = ReadFile(opts.output_path);
    return Status::Internal("openssl req failed: " + (log.ok() ? *log : std::string()));
  }
  return files;
}

Result<std::unique_ptr<SmtpSink>> SmtpSink::Start(const std::string& dir,
                                                  const SinkOptions& options) {
  std::unique_ptr<SmtpSink> sink(new SmtpSink());
  sink->maildir_ = dir + "/mail";
  const std::string ready = dir + "/sink.port";
  const std::string log = dir + "/sink.log";
  std::vector<std::string> argv = {"/usr/bin/python3",
                                   ROTA_NOTIFY_TESTDATA "/smtp_sink.py",
                                   "--maildir",
                                   sink->maildir_,
                                   "--ready-file",
                                   ready,
                                   "--tls",
                                   options.tls};
  if (options.tls != "none") {
    argv.insert(argv.end(), {"--cert", options.cert.cert, "--key", options.cert.key});
  }
  if (!options.auth_user.empty()) {
    argv.insert(argv.end(), {"--auth-user", options.auth_user, "--auth-pass", options.auth_pass});
  }
  for (const std::string& r : options.refuse) argv.insert(argv.end(), {"--refuse", r});
  SpawnOptions opts;
  opts.output_path = log;
  opts.die_with_parent = true;
  ASSIGN_OR_RETURN(sink->pid_, SpawnProcess(argv, opts));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    Result<std::string> port = ReadFile(ready);
    if (port.ok() && !port->empty()) {
      sink->port_ = static_cast<uint16_t>(std::stoi(*port));
      return sink;
    }
    if (WaitProcess(sink->pid_, 0).ok()) {  // exited
      sink->pid_ = -1;
      Result<std::string> text = ReadFile(log);
      return Status::Unavailable(
          "smtp_sink.py exited (is python3-aiosmtpd installed? scripts/install-deps.sh): " +
          (text.ok() ? *text : std::string()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Status::Unavailable("smtp_sink.py did not become ready within 20 s");
}

SmtpSink::~SmtpSink() {
  if (pid_ > 0) StopProcess(pid_, 3000);
}

std::string SmtpSink::Url(const std::string& scheme) const {
  return scheme + "://127.0.0.1:" + std::to_string(port_);
}

std::vector<ReceivedMail> SmtpSink::Messages() const {
  std::vector<ReceivedMail> out;
  for (int n = 1;; ++n) {
    char base[16];
    std::snprintf(base, sizeof(base), "/%04d", n);
    Result<std::string> meta = ReadFile(maildir_ + base + ".json");
    if (!meta.ok()) break;
    Result<std::string> data = ReadFile(maildir_ + base + ".eml");
    nlohmann::json j = nlohmann::json::parse(*meta, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) break;
    ReceivedMail m;
    m.mail_from = j.value("mail_from", "");
    for (const auto& r : j["rcpt_tos"]) m.rcpt_tos.push_back(r.get<std::string>());
    m.tls = j.value("tls", false);
    if (j["auth_login"].is_string()) m.auth_login = j["auth_login"].get<std::string>();
    m.data = data.ok() ? *data : "";
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<ReceivedMail> SmtpSink::WaitMessages(size_t n,
                                                 std::chrono::milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    std::vector<ReceivedMail> got = Messages();
    if (got.size() >= n || std::chrono::steady_clock::now() >= deadline) return got;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

namespace {

int ListenLoopback(uint16_t* port, bool keep_listening) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      (keep_listening && ::listen(fd, 16) != 0) ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return -1;
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

}  // namespace

SilentServer::SilentServer() { fd_ = ListenLoopback(&port_, true); }

SilentServer::~SilentServer() {
  if (fd_ >= 0) ::close(fd_);
}

uint16_t UnusedPort() {
  uint16_t port = 0;
  int fd = ListenLoopback(&port, false);
  if (fd >= 0) ::close(fd);
  return port;
}

}  // namespace rota::notify::testing
