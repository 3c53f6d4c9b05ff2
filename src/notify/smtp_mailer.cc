#include "notify/smtp_mailer.h"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>

#include "common/file_util.h"
#include "common/strings.h"
#include "notify/mime.h"

namespace rota::notify {
namespace {

constexpr size_t kMaxRecipients = 100;
constexpr size_t kMaxSubjectBytes = 998;
constexpr size_t kMaxBodyBytes = 10 << 20;

void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

bool HasControl(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    unsigned char u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

bool IsHostChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

// Checks "smtp[s]://host[:port][/ehlo-name]"; InvalidArgument naming smtp.url.
Status ValidateUrl(const std::string& url) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("smtp.url '" + url + "': " + why);
  };
  std::string_view rest;
  if (url.rfind("smtp://", 0) == 0) {
    rest = std::string_view(url).substr(7);
  } else if (url.rfind("smtps://", 0) == 0) {
    rest = std::string_view(url).substr(8);
  } else {
    return bad("must start with smtp:// or smtps://");
  }
  if (HasControl(url) || url.find(' ') != std::string::npos) {
    return bad("must not contain spaces or control characters");
  }
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  if (authority.find('@') != std::string_view::npos) {
    return bad("must not contain credentials; use smtp.username and smtp.password");
  }
  std::string_view host = authority, port;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("unterminated IPv6 address");
    host = authority.substr(0, close + 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("junk after IPv6 address");
      port = after.substr(1);
    }
  } else {
    size_t colon = authority.find(':');
    if (colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
    }
    if (!std::all_of(host.begin(), host.end(), IsHostChar)) return bad("invalid host name");
  }
  if (host.empty()) return bad("missing host");
  if (authority.find(':') != std::string_view::npos && host.front() != '[' && port.empty()) {
    return bad("empty port");
  }
  if (!port.empty()) {
    if (port.size() > 5 ||
        !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return bad("port must be a number");
    }
    int p = std::stoi(std::string(port));
    if (p < 1 || p > 65535) return bad("port must be in [1, 65535]");
  }
  if (!std::all_of(path.begin(), path.end(), IsHostChar)) {
    return bad("the path may only hold the EHLO host name");
  }
  return Status::Ok();
}

// State shared with curl's callbacks during one Send.
struct Transfer {
  const std::string* message = nullptr;
  size_t offset = 0;
  const std::atomic<bool>* cancelled = nullptr;
  std::string last_command;  // SMTP verb of the last command sent (never its arguments)
  std::string last_rcpt;     // address of the last RCPT TO
  std::string last_reply;    // last reply line received before QUIT
  bool quit = false;         // QUIT sent (curl sends it after a failure too)
};

size_t ReadMessage(char* buf, size_t size, size_t nitems, void* userdata) {
  auto* t = static_cast<Transfer*>(userdata);
  size_t n = std::min(size * nitems, t->message->size() - t->offset);
  std::memcpy(buf, t->message->data() + t->offset, n);
  t->offset += n;
  return n;
}

int OnProgress(void* userdata, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(userdata);
  return t->cancelled->load() ? 1 : 0;
}

std::string StripCrlf(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
  return std::string(s);
}

// Sees the SMTP dialogue. Keeps only command verbs (AUTH arguments and AUTH LOGIN's
// base64 lines hold credentials) and the last reply line.
int OnDebug(CURL*, curl_infotype type, char* data, size_t size, void* userdata) {
  auto* t = static_cast<Transfer*>(userdata);
  std::string_view text(data, size);
  if (type == CURLINFO_HEADER_IN && !t->quit) {
    size_t start = 0;
    while (start < text.size()) {
      size_t nl = text.find('\n', start);
      std::string line =
          StripCrlf(text.substr(start, nl == std::string_view::npos ? nl : nl - start + 1));
      if (!line.empty()) t->last_reply = line;
      if (nl == std::string_view::npos) break;
      start = nl + 1;
    }
  } else if (type == CURLINFO_HEADER_OUT) {
    if (StripCrlf(text) == "QUIT") {
      t->quit = true;
      return 0;
    }
    static constexpr std::string_view kVerbs[] = {"EHLO", "HELO", "STARTTLS", "AUTH",
                                                  "MAIL", "RCPT", "DATA"};
    for (std::string_view verb : kVerbs) {
      if (text.size() >= verb.size() && text.substr(0, verb.size()) == verb &&
          (text.size() == verb.size() || text[verb.size()] == ' ' || text[verb.size()] == '\r')) {
        t->last_command = std::string(verb);
        if (verb == "RCPT") {
          size_t lt = text.find('<'), gt = text.find('>');
          if (lt != std::string_view::npos && gt != std::string_view::npos && gt > lt) {
            t->last_rcpt = std::string(text.substr(lt + 1, gt - lt - 1));
          }
        }
        break;
      }
    }
  }
  return 0;
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

Status FailureStatus(const SmtpConfig& config, CURLcode rc, long code, const char* errbuf,
                     const Transfer& t, bool cancelled) {
  const std::string& url = config.url;
  if (cancelled) return Status::Unavailable(url + ": cancelled");
  std::string curl_error = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(rc);
  std::string stage;
  switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
      stage = "timed out after " + std::to_string(config.timeout_ms) + " ms" +
              (t.last_command.empty() ? "" : " (after " + t.last_command + ")");
      break;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
      stage = "cannot connect";
      break;
    case CURLE_USE_SSL_FAILED:
      stage = "server does not offer STARTTLS (smtp.tls=starttls)";
      break;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
      stage = "TLS handshake failed";
      break;
    case CURLE_LOGIN_DENIED:
      stage = "authentication failed";
      break;
    default:
      if (t.last_command == "RCPT") {
        stage = "recipient " + t.last_rcpt + " refused";
      } else if (t.last_command == "MAIL") {
        stage = "sender refused";
      } else if (t.last_command == "DATA") {
        stage = "message refused";
      } else if (t.last_command == "AUTH") {
        stage = "authentication failed";
      } else if (t.last_command == "STARTTLS") {
        stage = "STARTTLS failed";
      } else if (t.last_command == "EHLO" || t.last_command == "HELO") {
        stage = "greeting refused";
      } else {
        stage = "connection failed";
      }
  }
  std::string msg = url + ": " + stage + ": ";
  if (code > 0 && rc != CURLE_USE_SSL_FAILED) {  // (that reply is just EHLO's last line)
    std::string code_text = std::to_string(code);
    msg += t.last_reply.rfind(code_text, 0) == 0 ? t.last_reply : code_text;
    msg += " (curl: " + curl_error + ")";
  } else {
    msg += curl_error;
  }
  if (rc == CURLE_LOGIN_DENIED || code == 530 || code == 535) {
    return Status::Unauthenticated(msg);
  }
  if (code >= 500 && code <= 599) return Status::PermissionDenied(msg);
  return Status::Unavailable(msg);
}

}  // namespace

Status Validate(const SmtpConfig& config) {
  if (config.url.empty()) return Status::Ok();
  RETURN_IF_ERROR(ValidateUrl(config.url));
  const bool smtps = config.url.rfind("smtps://", 0) == 0;
  if (config.tls != "off" && config.tls != "starttls" && config.tls != "auto") {
    return Status::InvalidArgument("smtp.tls '" + config.tls +
                                   "' must be one of off, starttls, auto");
  }
  if (smtps && config.tls != "auto") {
    return Status::InvalidArgument("smtp.tls '" + config.tls +
                                   "' conflicts with an smtps:// url (always TLS); use auto");
  }
  if (config.from.empty()) return Status::InvalidArgument("smtp.from is required");
  RETURN_IF_ERROR(ParseMailbox(config.from, "smtp.from").status());
  if (HasControl(config.username)) {
    return Status::InvalidArgument("smtp.username must not contain control characters");
  }
  if (HasControl(config.password)) {
    return Status::InvalidArgument("smtp.password must not contain control characters");
  }
  if (config.username.empty() && !config.password.empty()) {
    return Status::InvalidArgument("smtp.password is set but smtp.username is empty");
  }
  if (!config.username.empty() && config.tls == "off") {
    return Status::InvalidArgument(
        "smtp.tls off would send smtp.username's password in clear text: use starttls, auto "
        "or an smtps:// url");
  }
  if (!config.ca_file.empty() && ::access(config.ca_file.c_str(), R_OK) != 0) {
    return Status::InvalidArgument("smtp.ca_file '" + config.ca_file +
                                   "': " + std::strerror(errno));
  }
  if (config.timeout_ms < 100 || config.timeout_ms > 600'000) {
    return Status::InvalidArgument("smtp.timeout_ms " + std::to_string(config.timeout_ms) +
                                   " must be in [100, 600000]");
  }
  if (config.rate_limit_per_hour < 0) {
    return Status::InvalidArgument("smtp.rate_limit_per_hour " +
                                   std::to_string(config.rate_limit_per_hour) +
                                   " must be >= 0 (0 = unlimited)");
  }
  return Status::Ok();
}

Status Validate(const Email& email) {
  if (email.to.empty()) return Status::InvalidArgument("email has no recipient (to)");
  if (email.to.size() > kMaxRecipients) {
    return Status::InvalidArgument("email has " + std::to_string(email.to.size()) +
                                   " recipients; at most " + std::to_string(kMaxRecipients));
  }
  for (size_t i = 0; i < email.to.size(); ++i) {
    const std::string field = "to[" + std::to_string(i) + "]";
    if (HasControl(email.to[i])) {
      return Status::InvalidArgument(field +
                                     " must not contain CR, LF or other control "
                                     "characters (header injection)");
    }
    if (!IsValidAddress(email.to[i])) {
      return Status::InvalidArgument(field + " '" + email.to[i] +
                                     "' is not a valid email address (want local@domain)");
    }
  }
  if (email.subject.empty()) return Status::InvalidArgument("subject is empty");
  if (HasControl(email.subject)) {
    return Status::InvalidArgument(
        "subject must not contain CR, LF or other control characters (header injection)");
  }
  if (email.subject.size() > kMaxSubjectBytes) {
    return Status::InvalidArgument("subject is " + std::to_string(email.subject.size()) +
                                   " bytes; at most " + std::to_string(kMaxSubjectBytes));
  }
  if (!IsValidUtf8(email.subject)) return Status::InvalidArgument("subject is not valid UTF-8");
  if (email.text.empty() && email.html.empty()) {
    return Status::InvalidArgument("email has neither text nor html body");
  }
  if (email.text.size() + email.html.size() > kMaxBodyBytes) {
    return Status::InvalidArgument("email body is larger than 10 MiB");
  }
  if (!IsValidUtf8(email.text)) return Status::InvalidArgument("text is not valid UTF-8");
  if (!IsValidUtf8(email.html)) return Status::InvalidArgument("html is not valid UTF-8");
  return Status::Ok();
}

SmtpMailer::SmtpMailer(SmtpConfig config, Clock& clock)
    : config_(std::move(config)), clock_(clock) {}

void SmtpMailer::Cancel() { cancelled_ = true; }

Status SmtpMailer::Send(const Email& email) {
  if (config_.url.empty()) return Status::Unavailable("mail disabled (smtp.url is empty)");
  RETURN_IF_ERROR(Validate(config_));
  RETURN_IF_ERROR(Validate(email));
  if (cancelled_) return Status::Unavailable(config_.url + ": cancelled");
  ASSIGN_OR_RETURN(Mailbox from, ParseMailbox(config_.from, "smtp.from"));

  // One RCPT per distinct address (case-insensitive), in the caller's order.
  std::vector<std::string> to;
  std::set<std::string> seen;
  for (const std::string& addr : email.to) {
    if (seen.insert(ToLower(addr)).second) to.push_back(addr);
  }
  ASSIGN_OR_RETURN(std::string unique, RandomHex(12));
  MimeInput mime{from, to, email.subject, email.text, email.html, clock_.NowMs(), unique};
  const std::string message = BuildMimeMessage(mime);

  InitCurlOnce();
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) return Status::Internal("curl_easy_init failed");
  std::unique_ptr<curl_slist, SlistDeleter> rcpts;
  for (const std::string& addr : to) {
    curl_slist* head = curl_slist_append(rcpts.get(), ("<" + addr + ">").c_str());
    if (head == nullptr) return Status::Internal("curl_slist_append failed");
    if (rcpts == nullptr) rcpts.reset(head);  // later appends return the same head
  }
  const std::string mail_from = "<" + from.address + ">";
  Transfer t;
  t.message = &message;
  t.cancelled = &cancelled_;
  char errbuf[CURL_ERROR_SIZE] = {0};

  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, config_.url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
  curl_easy_setopt(c, CURLOPT_MAIL_FROM, mail_from.c_str());
  curl_easy_setopt(c, CURLOPT_MAIL_RCPT, rcpts.get());
  curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(c, CURLOPT_READFUNCTION, ReadMessage);
  curl_easy_setopt(c, CURLOPT_READDATA, &t);
  // With credentials, "auto" requires STARTTLS too: a man in the middle could otherwise strip
  // the server's STARTTLS offer and read the password.
  long use_ssl = CURLUSESSL_TRY;
  if (config_.url.rfind("smtps://", 0) == 0 || config_.tls == "starttls" ||
      !config_.username.empty()) {
    use_ssl = CURLUSESSL_ALL;
  } else if (config_.tls == "off") {
    use_ssl = CURLUSESSL_NONE;
  }
  curl_easy_setopt(c, CURLOPT_USE_SSL, use_ssl);
  if (!config_.username.empty()) {
    curl_easy_setopt(c, CURLOPT_USERNAME, config_.username.c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, config_.password.c_str());
  }
  if (!config_.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, config_.ca_file.c_str());
  if (config_.insecure_skip_verify) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(config_.timeout_ms));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(config_.timeout_ms));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_VERBOSE, 1L);
  curl_easy_setopt(c, CURLOPT_DEBUGFUNCTION, OnDebug);
  curl_easy_setopt(c, CURLOPT_DEBUGDATA, &t);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, OnProgress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);

  CURLcode rc = curl_easy_perform(c);
  if (rc == CURLE_OK) return Status::Ok();
  long code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  return FailureStatus(config_, rc, code, errbuf, t,
                       rc == CURLE_ABORTED_BY_CALLBACK && cancelled_.load());
}

}  // namespace rota::notify
