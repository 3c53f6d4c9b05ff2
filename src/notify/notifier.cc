#include "notify/notifier.h"

#include <cctype>
#include <chrono>
#include <set>
#include <utility>

#include "common/log.h"
#include "common/strings.h"

namespace rota::notify {
namespace {

std::string Lower(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

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
  size_t left = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    left = queue_.size();
    stats_.dropped += left;
    queue_.clear();
  }
  if (!drained) mailer_.Cancel();
  if (left > 0) {
    ROTA_LOG(WARNING) << "mail: shutting down with " << left << " unsent email(s); dropped";
  }
  work_cv_.notify_all();
  worker_.join();
}

void Notifier::Enqueue(Email email) {
  if (!enabled_) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.disabled;
    }
    ROTA_LOG(INFO) << "mail disabled: not sending '" << ForLog(email.subject) << "' to "
                   << Recipients(email.to);
    return;
  }
  if (Status st = Validate(email); !st.ok()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.failed;
    }
    ROTA_LOG(ERROR) << "mail: invalid email '" << ForLog(email.subject)
                    << "' not queued: " << ForLog(st.message());
    return;
  }
  std::vector<std::string> limited;
  uint64_t dropped = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || queue_.size() >= options_.queue_capacity) {
      dropped = ++stats_.dropped;
    } else {
      const int64_t now = clock_.MonotonicMs();
      std::vector<std::string> allowed;
      std::set<std::string> seen;
      for (std::string& addr : email.to) {
        std::string key = Lower(addr);
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
        queue_.push_back(email);
        work_cv_.notify_one();
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
    return;
  }
  if (!limited.empty()) {
    ROTA_LOG(WARNING) << "mail rate limit (" << mailer_.config().rate_limit_per_hour
                      << " per recipient per " << options_.rate_window_ms / 60'000
                      << " min): not sending '" << ForLog(email.subject) << "' to "
                      << Recipients(limited)
                      << (email.to.empty() ? " (no recipient left; not sent)" : "");
  }
}

bool Notifier::Flush(int64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  return idle_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                           [this] { return queue_.empty() && !busy_; });
}

NotifierStats Notifier::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void Notifier::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    work_cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) break;  // stopping
    Email email = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();

    Status st = mailer_.Send(email);
    if (st.ok()) {
      ROTA_LOG(INFO) << "mail sent: '" << email.subject << "' to " << Recipients(email.to);
    } else {
      ROTA_LOG(ERROR) << "mail '" << email.subject << "' to " << Recipients(email.to)
                      << " failed (not retried): " << st.message();
    }

    lock.lock();
    busy_ = false;
    if (st.ok()) {
      ++stats_.sent;
    } else {
      ++stats_.failed;
    }
    if (queue_.empty()) idle_cv_.notify_all();
  }
}

}  // namespace rota::notify
