#pragma once
// Notifier: asynchronous email delivery. Enqueue() never blocks; one worker thread sends
// through SmtpMailer. Per-recipient rate limit, bounded queue, one attempt per email.
// See docs/design-notify.md.

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "notify/rate_limiter.h"
#include "notify/smtp_mailer.h"

namespace rota::notify {

struct NotifierOptions {
  size_t queue_capacity = 1000;  // emails waiting; more are dropped
  // The destructor waits this long for the queue to drain, then aborts the send in
  // progress and drops what is left.
  int64_t drain_timeout_ms = 2000;
  int64_t rate_window_ms = 3'600'000;  // SmtpConfig::rate_limit_per_hour counts per window
};

// Counters since construction. Each enqueued email ends in exactly one of sent, failed,
// dropped, or (when every recipient was over its limit) nowhere but rate_limited.
struct NotifierStats {
  uint64_t queued = 0;        // emails accepted into the queue
  uint64_t sent = 0;          // emails the server accepted
  uint64_t failed = 0;        // emails rejected as invalid or failed to send (not retried)
  uint64_t rate_limited = 0;  // recipients removed from an email by the rate limit
  uint64_t dropped = 0;       // emails dropped: queue full, or left over at shutdown
  uint64_t disabled = 0;      // emails ignored because mail is disabled (empty smtp.url)
};

// How one enqueued email ended.
struct DeliveryReport {
  // "sent" (the server accepted it), "failed" (invalid, refused or not
  // delivered; not retried), "rate_limited" (every recipient was over its
  // limit), "dropped" (queue full, or left over at shutdown) or "disabled".
  std::string outcome;
  std::string detail;                     // why, e.g. the SMTP reply; "" when sent
  std::vector<std::string> to;            // recipients it was sent (or meant) to
  std::vector<std::string> rate_limited;  // recipients the rate limit removed
};
// Called exactly once per email, never with the Notifier's lock held: from
// Enqueue itself when the email is not queued, else from the worker thread
// after the attempt (or from the destructor when it is dropped). It delays the
// next email while it runs, so it should be quick. No lock of the Notifier is held
// while it runs: it may take its caller's locks and call Enqueue.
using DeliveryCallback = std::function<void(const DeliveryReport&)>;

// Thread-safe: Enqueue, Flush and Stats may be called from any thread.
class Notifier {
 public:
  // An invalid config is logged once and treated like mail disabled. `clock` drives the
  // rate limit (MonotonicMs) and Date headers (NowMs), and must outlive the Notifier.
  Notifier(SmtpConfig config, Clock& clock, NotifierOptions options = {});
  // Drains for up to options.drain_timeout_ms, aborts the send in progress, joins.
  ~Notifier();
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  // Never blocks on the network. Validates the email (invalid: logged, counted failed),
  // applies the per-recipient rate limit at the current clock time (recipients over their
  // limit are removed, counted, logged), and queues it (queue full: logged, dropped).
  // `done` (optional) learns how it ended.
  void Enqueue(Email email, DeliveryCallback done = nullptr);

  // Waits until the queue is empty and no send (nor its callback) is in progress, up to
  // timeout_ms of real time. Returns true when drained.
  bool Flush(int64_t timeout_ms);

  NotifierStats Stats() const;
  bool enabled() const { return enabled_; }

 private:
  struct Queued {
    Email email;
    DeliveryCallback done;
    std::vector<std::string> rate_limited;
  };
  void Run();

  Clock& clock_;
  const NotifierOptions options_;
  const bool enabled_;
  SmtpMailer mailer_;

  mutable Mutex mu_;
  CondVar work_cv_;  // queue non-empty or stopping
  CondVar idle_cv_;  // queue empty and no send in progress
  std::deque<Queued> queue_ ROTA_GUARDED_BY(mu_);
  bool busy_ ROTA_GUARDED_BY(mu_) = false;  // the worker is sending
  bool stopping_ ROTA_GUARDED_BY(mu_) = false;
  RateLimiter limiter_ ROTA_GUARDED_BY(mu_);
  NotifierStats stats_ ROTA_GUARDED_BY(mu_);
  std::thread worker_;               // last: started after everything above exists
};

}  // namespace rota::notify
