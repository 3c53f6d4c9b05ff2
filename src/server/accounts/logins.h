#pragma once
// Logins: password checks off the network threads, throttled. Owns the hashing pool (a
// few threads; argon2id costs ~0.3 s of CPU and 64 MiB each) and the login throttle
// (login_throttle.h), counts what it refused for /metrics, and records each throttling
// in the accounts trail (audit.h).
//
// Every request that hashes or verifies a password goes through here: sign-in, the
// current password of a password change, and setting a password.
//
// Thread-safe. Borrowed pointers outlive it. The destructor finishes queued checks.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "common/worker_pool.h"
#include "server/accounts/accounts.h"
#include "server/accounts/login_throttle.h"

namespace rota::server {

class AuditLog;

struct LoginsOptions {
  int hash_threads = 2;     // password_hash_threads
  size_t hash_queue = 64;   // password_hash_queue: checks waiting beyond it get 503
  LoginThrottleOptions throttle;
};

class Logins {
 public:
  // `audit` may be null (no trail).
  Logins(Accounts* accounts, AuditLog* audit, const Clock* clock, LoginsOptions options = {});

  // How a refused check ends: retry_after_ms > 0 with a ResourceExhausted (throttled,
  // 429) or Unavailable (hashing queue full, 503) status.
  struct Outcome {
    Result<User> user = Status::Internal("unset");
    int64_t retry_after_ms = 0;
  };
  using Done = std::function<void(Outcome)>;

  // Checks `password` of `username` for a client at `remote_addr`, throttled per address
  // and account, on a pool thread. `done` runs exactly once: on the pool thread with the
  // result (Unauthenticated for a wrong password), or at once on the calling thread when
  // refused (throttled, or the queue is full).
  void CheckPassword(const std::string& remote_addr, const std::string& username,
                     std::string password, Done done);

  // Runs `work` (which hashes a new password) on the pool. Unavailable when the queue is
  // full; `work` is then not run.
  Status RunHashing(std::function<void()> work);

  // Seconds a client is told to wait when the hashing queue is full.
  static constexpr int64_t kBusyRetryMs = 1'000;

  struct Counters {
    int64_t throttled_address = 0;  // refusals (429) by address
    int64_t throttled_account = 0;  // refusals (429) by account
    int64_t failed = 0;             // wrong passwords
    int64_t busy = 0;               // refused with 503: hashing queue full
    size_t hash_queued = 0;         // waiting for a hashing thread now
    size_t tracked_addresses = 0;
    size_t tracked_accounts = 0;
  };
  Counters counters() const;

 private:
  Accounts* const accounts_;
  AuditLog* const audit_;
  const Clock* const clock_;
  mutable Mutex mu_;
  LoginThrottle throttle_ ROTA_GUARDED_BY(mu_);
  std::atomic<int64_t> throttled_address_{0};
  std::atomic<int64_t> throttled_account_{0};
  std::atomic<int64_t> failed_{0};
  std::atomic<int64_t> busy_{0};
  WorkerPool pool_;  // last: its threads stop before the members they use go
};

}  // namespace rota::server
