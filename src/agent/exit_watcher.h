#pragma once
// ExitWatcher: says at once when a watched process ends, so the agent reports a
// task's end without waiting for its next poll. One thread waits on Linux
// pidfds (pidfd_open, Linux >= 5.3) with epoll.
//
// Thread-safe: Watch may be called from any thread. `on_exit` runs on the
// watcher's thread with no lock of the watcher held; it must not call back
// into the watcher's destructor.

#include <sys/types.h>

#include <functional>
#include <set>
#include <thread>

#include "common/mutex.h"

namespace rota::agent {

class ExitWatcher {
 public:
  // `on_exit(pid)` is called once for each watched process that ended.
  explicit ExitWatcher(std::function<void(pid_t)> on_exit);
  ~ExitWatcher();  // stops the thread; processes still watched are forgotten
  ExitWatcher(const ExitWatcher&) = delete;
  ExitWatcher& operator=(const ExitWatcher&) = delete;

  // Watches `pid`. False when it cannot (no pidfd support, or the process is
  // already gone and reaped): the caller then finds the end by polling.
  bool Watch(pid_t pid) ROTA_EXCLUDES(mu_);

 private:
  void Run() ROTA_EXCLUDES(mu_);

  std::function<void(pid_t)> on_exit_;
  int epoll_fd_ = -1;
  int stop_fd_ = -1;  // eventfd: the destructor wakes the thread
  Mutex mu_;
  std::set<int> pidfds_ ROTA_GUARDED_BY(mu_);  // open, watched
  std::thread thread_;                         // last
};

}  // namespace rota::agent
