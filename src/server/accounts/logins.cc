#include "server/accounts/logins.h"

#include <utility>

#include "server/audit.h"

namespace rota::server {
namespace {

// "try again in 3 s" / "in 2 min"
std::string WaitText(int64_t ms) {
  const int64_t s = (ms + 999) / 1000;
  if (s < 120) return std::to_string(s) + " s";
  return std::to_string((s + 59) / 60) + " min";
}

}  // namespace

Logins::Logins(Accounts* accounts, AuditLog* audit, const Clock* clock, LoginsOptions options)
    : accounts_(accounts),
      audit_(audit),
      clock_(clock),
      throttle_(options.throttle),
      pool_("password hashing", options.hash_threads, options.hash_queue) {}

void Logins::CheckPassword(const std::string& remote_addr, const std::string& username,
                           std::string password, Done done) {
  const std::string address = LoginThrottle::AddressKey(remote_addr);
  // Only the first 64 bytes name an account: a longer one cannot exist.
  const std::string account = username.substr(0, 64);
  const int64_t now = clock_->NowMs();
  LoginThrottle::Decision d;
  {
    MutexLock lock(&mu_);
    d = throttle_.Admit(address, account, now);
  }
  if (!d.allowed) {
    const bool by_address = d.scope == ThrottleScope::kAddress;
    (by_address ? throttled_address_ : throttled_account_).fetch_add(1);
    const std::string why = std::string("too many failed sign-ins ") +
                            (by_address ? "from " + address : "for this account") +
                            "; try again in " + WaitText(d.retry_after_ms);
    if (d.first_refusal && audit_ != nullptr) {
      audit_->RecordAuthEvent({0, now, "login_throttled", address, account, "",
                               std::string("by ") + ThrottleScopeName(d.scope) + " for " +
                                   WaitText(d.retry_after_ms)});
    }
    done(Outcome{Status::ResourceExhausted(why), d.retry_after_ms});
    return;
  }
  auto work = [this, address, account, password = std::move(password), done]() {
    Result<User> user = accounts_->CheckPassword(account, password);
    const int64_t at = clock_->NowMs();
    {
      MutexLock lock(&mu_);
      if (user.ok()) {
        throttle_.Succeeded(address, account, at);
      } else {
        throttle_.Failed(address, account, at);
      }
    }
    if (!user.ok() && user.status().code() == StatusCode::kUnauthenticated) failed_.fetch_add(1);
    done(Outcome{std::move(user), 0});
  };
  Status queued = pool_.Submit(std::move(work));
  if (!queued.ok()) {
    {
      MutexLock lock(&mu_);
      throttle_.Abandoned(address, account);
    }
    busy_.fetch_add(1);
    done(Outcome{Status::Unavailable(queued.message() + "; try again in " + WaitText(kBusyRetryMs)),
                 kBusyRetryMs});
  }
}

Status Logins::RunHashing(std::function<void()> work) {
  Status st = pool_.Submit(std::move(work));
  if (!st.ok()) busy_.fetch_add(1);
  return st;
}

Logins::Counters Logins::counters() const {
  Counters c;
  c.throttled_address = throttled_address_.load();
  c.throttled_account = throttled_account_.load();
  c.failed = failed_.load();
  c.busy = busy_.load();
  c.hash_queued = pool_.stats().queued;
  MutexLock lock(&mu_);
  c.tracked_addresses = throttle_.tracked(ThrottleScope::kAddress);
  c.tracked_accounts = throttle_.tracked(ThrottleScope::kAccount);
  return c;
}

}  // namespace rota::server
