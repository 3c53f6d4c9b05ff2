#pragma once
// WorkerPool: a few threads that run queued work, with a bound on the queue. For work
// that must not run on a network thread (argon2id password hashing): the caller submits
// and answers from the work itself; a full queue is refused at once, so a flood costs
// the caller a cheap refusal instead of a growing backlog.
//
// Thread-safe. The destructor stops taking work, drops what is still queued (destroyed
// unrun: a callback it holds must cope, as net::Responder does by answering 500), waits
// for what is running and joins.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"

namespace rota {

class WorkerPool {
 public:
  // REQUIRES: threads >= 1, max_queued >= 1. `name` names the pool in messages.
  WorkerPool(std::string name, int threads, size_t max_queued);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `work` to run on a pool thread. Unavailable ("<name> is busy: N waiting")
  // when max_queued items wait already, or the pool is stopping; `work` is then not run.
  Status Submit(std::function<void()> work);

  struct Stats {
    size_t queued = 0;       // waiting now
    int64_t completed = 0;   // run since start
    int64_t rejected = 0;    // refused since start (queue full)
  };
  Stats stats() const;

 private:
  void Loop();

  const std::string name_;
  const size_t max_queued_;
  mutable Mutex mu_;
  CondVar cv_;
  std::deque<std::function<void()>> queue_ ROTA_GUARDED_BY(mu_);
  bool stop_ ROTA_GUARDED_BY(mu_) = false;
  int64_t completed_ ROTA_GUARDED_BY(mu_) = 0;
  int64_t rejected_ ROTA_GUARDED_BY(mu_) = 0;
  std::vector<std::thread> threads_;
};

}  // namespace rota
