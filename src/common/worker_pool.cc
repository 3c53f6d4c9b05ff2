#include "common/worker_pool.h"

#include <utility>

namespace rota {

WorkerPool::WorkerPool(std::string name, int threads, size_t max_queued)
    : name_(std::move(name)), max_queued_(max_queued < 1 ? 1 : max_queued) {
  for (int i = 0; i < (threads < 1 ? 1 : threads); ++i) threads_.emplace_back([this] { Loop(); });
}

WorkerPool::~WorkerPool() {
  std::deque<std::function<void()>> dropped;
  {
    MutexLock lock(&mu_);
    stop_ = true;
    dropped.swap(queue_);
    cv_.NotifyAll();
  }
  dropped.clear();  // outside the lock: destroying work may run its callbacks
  for (auto& t : threads_) t.join();
}

Status WorkerPool::Submit(std::function<void()> work) {
  MutexLock lock(&mu_);
  if (stop_) return Status::Unavailable(name_ + " is stopping");
  if (queue_.size() >= max_queued_) {
    ++rejected_;
    return Status::Unavailable(name_ + " is busy: " + std::to_string(queue_.size()) +
                               " requests are waiting");
  }
  queue_.push_back(std::move(work));
  cv_.NotifyOne();
  return Status::Ok();
}

WorkerPool::Stats WorkerPool::stats() const {
  MutexLock lock(&mu_);
  return Stats{queue_.size(), completed_, rejected_};
}

void WorkerPool::Loop() {
  while (true) {
    std::function<void()> work;
    {
      MutexLock lock(&mu_);
      cv_.Wait(&mu_, [&]() ROTA_REQUIRES(mu_) { return stop_ || !queue_.empty(); });
      if (stop_) return;
      work = std::move(queue_.front());
      queue_.pop_front();
    }
    work();
    MutexLock lock(&mu_);
    ++completed_;
  }
}

}  // namespace rota
