#pragma once
// Outbox: the bounded, thread-safe queue of outgoing messages of one connection (WebSocket
// sessions, event streams, WebSocket clients). Any thread pushes; one writer (the connection's
// strand) pops. The writer is either busy (a write in flight or about to start) or idle; Push
// tells the caller when it must start the writer. No Boost.

#include "common/mutex.h"
#include <cstddef>
#include <deque>
#include <string>

namespace rota::net {

class Outbox {
 public:
  // `max_bytes` bounds the queued bytes; a push beyond it closes the outbox (the slow peer is
  // to be dropped). With `writer_busy` the writer starts busy: pushes only queue until the
  // owner starts popping (used to hold messages until response headers are written).
  explicit Outbox(size_t max_bytes, bool writer_busy = false)
      : max_bytes_(max_bytes), writer_busy_(writer_busy) {}

  enum class PushResult {
    kQueuedStartWriter,  // queued; the writer was idle and is now marked busy: start it
    kQueued,             // queued; the busy writer will pick it up
    kClosed,             // dropped: the outbox was already closed
    kOverflow,           // dropped and the outbox is now closed: close the connection
  };
  PushResult Push(std::string message) {
    MutexLock lock(&mu_);
    if (closed_ || sealed_) return PushResult::kClosed;
    if (bytes_ + message.size() > max_bytes_) {
      closed_ = true;
      queue_.clear();
      bytes_ = 0;
      return PushResult::kOverflow;
    }
    bytes_ += message.size();
    queue_.push_back(std::move(message));
    if (writer_busy_) return PushResult::kQueued;
    writer_busy_ = true;
    return PushResult::kQueuedStartWriter;
  }

  // Writer side: moves the next message into `out` and returns true, or returns false and
  // marks the writer idle (also when closed).
  bool Pop(std::string* out) {
    MutexLock lock(&mu_);
    if (closed_ || queue_.empty()) {
      writer_busy_ = false;
      return false;
    }
    *out = std::move(queue_.front());
    queue_.pop_front();
    bytes_ -= out->size();
    return true;
  }

  // Drops queued messages; later pushes return kClosed. Returns false if already closed.
  bool Close() {
    MutexLock lock(&mu_);
    if (closed_) return false;
    closed_ = true;
    queue_.clear();
    bytes_ = 0;
    return true;
  }

  // Refuses further pushes but keeps the queued messages for the writer (graceful close).
  void Seal() {
    MutexLock lock(&mu_);
    sealed_ = true;
  }

  // True after Close() or Seal().
  bool closed() const {
    MutexLock lock(&mu_);
    return closed_ || sealed_;
  }
  size_t queued_bytes() const {
    MutexLock lock(&mu_);
    return bytes_;
  }

 private:
  mutable Mutex mu_;
  const size_t max_bytes_;
  std::deque<std::string> queue_ ROTA_GUARDED_BY(mu_);
  size_t bytes_ ROTA_GUARDED_BY(mu_) = 0;
  bool writer_busy_ ROTA_GUARDED_BY(mu_);
  bool closed_ ROTA_GUARDED_BY(mu_) = false;
  bool sealed_ ROTA_GUARDED_BY(mu_) = false;
};

}  // namespace rota::net
