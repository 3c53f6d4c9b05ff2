#include "notify/notifier.h"

#include <cctype>
#include <chrono>
#include <set>
#include <utility>

#include "common/log.h"
#include "common/mutex.h"
#include "common/strings.h"

namespace rota::notify {
namespace {

bool ConfigUsable(const SmtpConfig& config) {
  if (config.url.empty()) {
    ROTA_LOG(INFO) << "mail disabled (smtp.url is empty)";
    return false;
  }
  Status st = Validate(config);
  if (!st.ok()) {
    ROTA_LOG(ERROR) << "mail disabled: invalid smtp config: " << st.message();
    return false;
  }
  return true;
}

bool IsPowerOfTwo(uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }

// For log lines: control characters (a CR/LF in a rejected subject) as escapes, so a
// hostile value cannot forge log records.
std::string ForLog(const std::string& s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

std::string Recipients(const std::vector<std::string>& to) { return ForLog(Join(to, ", ")); }

void Report(const DeliveryCallback& done, std::string outcome, std::string detail,
            std::vector<std::string> to, std::vector<std::string> rate_limited = {}) {
  if (!done) return;
  done(DeliveryReport{std::move(outcome), std::move(detail), std::move(to),
                      std::move(rate_limited)});
}

}  // namespace

Notifier::Notifier(SmtpConfig config, Clock& clock, NotifierOptions options)
    : clock_(clock),
      options_(options),
      enabled_(ConfigUsable(config)),
      mailer_(config, clock),
      limiter_(config.rate_limit_per_hour, options.rate_window_ms) {
  if (enabled_) worker_ = std::thread([this] { Run(); });
}

Notifier::~Notifier() {
  if (!worker_.joinable()) return;
  const bool drained = Flush(options_.drain_timeout_ms);
  std::deque<Queued> left;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    left.swap(queue_);
    stats_.dropped += left.size();
  }
  if (!drained) mailer_.Cancel();
  if (!left.empty()) {
    ROTA_LOG(WARNING) << "mail: shutting down with " << left.size() << " unsent email(s); dropped";
  }
  for (Queued& q : left) {
    Report(q.done, "dropped", "the server shut down before it was sent", q.email.to,
           q.rate_limited);
  }
  work_cv_.NotifyAll();
  worker_.join();
}

void Notifier::Enqueue(Email email, DeliveryCallback done) {
  if (!enabled_) {
    {
      MutexLock lock(&mu_);
      ++stats_.disabled;
    }
    ROTA_LOG(INFO) << "mail disabled: not sending '" << ForLog(email.subject) << "' to "
                   << Recipients(email.to);
    return Report(done, "disabled", "mail is disabled (no smtp_url configured)", email.to);
  }
  if (Status st = Validate(email); !st.ok()) {
    {
      MutexLock lock(&mu_);
      ++stats_.failed;
    }
    ROTA_LOG(ERROR) << "mail: invalid email '" << ForLog(email.subject)
                    << "' not queued: " << ForLog(st.message());
    return Report(done, "failed", "invalid email: " + st.message(), email.to);
  }
  std::vector<std::string> limited;
  uint64_t dropped = 0;
  {
    MutexLock lock(&mu_);
    if (stopping_ || queue_.size() >= options_.queue_capacity) {
      dropped = ++stats_.dropped;
    } else {
      const int64_t now = clock_.MonotonicMs();
      std::vector<std::string> allowed;
      std::set<std::string> seen;
      for (std::string& addr : email.to) {
        std::string key = ToLower(addr);
        if (!seen.insert(key).second) continue;
        if (limiter_.Allow(key, now)) {
          allowed.push_back(std::move(addr));
        } else {
          ++stats_.rate_limited;
          limited.push_back(std::move(addr));
        }
      }
      email.to = std::move(allowed);
      if (!email.to.empty()) {
        ++stats_.queued;
        queue_.push_back(Queued{email, done, limited});
        work_cv_.NotifyOne();
      }
    }
  }
  if (dropped > 0) {
    // Logged for the 1st, 2nd, 4th, 8th, ... drop so a flood does not flood the log.
    if (IsPowerOfTwo(dropped)) {
      ROTA_LOG(WARNING) << "mail queue full (" << options_.queue_capacity << "): dropped '"
                        << ForLog(email.subject) << "' to " << Recipients(email.to) << " ("
                        << dropped << " dropped so far)";
    }
    return Report(done, "dropped",
                  "the mail queue is full (" + std::to_string(options_.queue_capacity) + ")",
                  email.to);
  }
  if (!limited.empty()) {
    ROTA_LOG(WARNING) << "mail rate limit (" << mailer_.config().rate_limit_per_hour
                      << " per recipient per " << options_.rate_window_ms / 60'000
                      << " min): not sending '" << ForLog(email.subject) << "' to "
                      << Recipients(limited)
                      << (email.to.empty() ? " (no recipient left; not sent)" : "");
  }
  if (email.to.empty()) {
    Report(done, "rate_limited",
           "over the limit of " + std::to_string(mailer_.config().rate_limit_per_hour) +
               " emails per recipient per " + std::to_string(options_.rate_window_ms / 60'000) +
               " min: " + Join(limited, ", "),
           {}, limited);
  }
}

bool Notifier::Flush(int64_t timeout_ms) {
  MutexLock lock(&mu_);
  return idle_cv_.WaitFor(&mu_, std::chrono::milliseconds(timeout_ms),
                          [this]() ROTA_REQUIRES(mu_) { return queue_.empty() && !busy_; });
}

NotifierStats Notifier::Stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

void Notifier::Run() {
  MutexLock lock(&mu_);
  while (true) {
    work_cv_.Wait(&mu_, [this]() ROTA_REQUIRES(mu_) { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) break;  // stopping
    Queued q = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.Unlock();

    const Email& email = q.email;
    Status st = mailer_.Send(email);
    if (st.ok()) {
      ROTA_LOG(INFO) << "mail sent: '" << email.subject << "' to " << Recipients(email.to);
    } else {
      ROTA_LOG(ERROR) << "mail '" << email.subject << "' to " << Recipients(email.to)
                      << " failed (not retried): " << st.message();
    }
    Report(q.done, st.ok() ? "sent" : "failed", st.ok() ? "" : st.message(), email.to,
           q.rate_limited);

    lock.Lock();
    busy_ = false;
    if (st.ok()) {
      ++stats_.sent;
    } else {
      ++stats_.failed;
    }
    if (queue_.empty()) idle_cv_.NotifyAll();
  }
}

}  // namespace rota::notify
