#pragma once
// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable with Clang's
// thread-safety annotations, so that lock rules are checked by the compiler
// (-Wthread-safety, in the Clang build of CI) instead of stated in comments.
//
//   class Counter {
//    public:
//     void Add(int n) ROTA_EXCLUDES(mu_) { MutexLock lock(&mu_); total_ += n; cv_.NotifyAll(); }
//     void WaitAbove(int n) ROTA_EXCLUDES(mu_) {
//       MutexLock lock(&mu_);
//       cv_.Wait(&mu_, [&]() ROTA_REQUIRES(mu_) { return total_ > n; });
//     }
//    private:
//     void AddLocked(int n) ROTA_REQUIRES(mu_);   // caller holds mu_
//     Mutex mu_;
//     CondVar cv_;
//     int total_ ROTA_GUARDED_BY(mu_) = 0;
//   };
//
// Predicates given to CondVar run with the mutex held: annotate the lambda with
// ROTA_REQUIRES(the mutex) so that its body is checked too. Under GCC the annotations are empty.

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "common/clock.h"

#if defined(__clang__)
#define ROTA_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define ROTA_THREAD_ANNOTATION(x)
#endif

#define ROTA_CAPABILITY(x) ROTA_THREAD_ANNOTATION(capability(x))
#define ROTA_SCOPED_CAPABILITY ROTA_THREAD_ANNOTATION(scoped_lockable)
#define ROTA_GUARDED_BY(x) ROTA_THREAD_ANNOTATION(guarded_by(x))
#define ROTA_PT_GUARDED_BY(x) ROTA_THREAD_ANNOTATION(pt_guarded_by(x))
#define ROTA_ACQUIRED_BEFORE(...) ROTA_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ROTA_ACQUIRED_AFTER(...) ROTA_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define ROTA_REQUIRES(...) ROTA_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define ROTA_EXCLUDES(...) ROTA_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ROTA_ACQUIRE(...) ROTA_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ROTA_RELEASE(...) ROTA_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define ROTA_ASSERT_CAPABILITY(x) ROTA_THREAD_ANNOTATION(assert_capability(x))
#define ROTA_RETURN_CAPABILITY(x) ROTA_THREAD_ANNOTATION(lock_returned(x))
#define ROTA_NO_THREAD_SAFETY_ANALYSIS ROTA_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace rota {

class CondVar;

// A non-recursive mutex. Prefer MutexLock to Lock/Unlock.
class ROTA_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ROTA_ACQUIRE() { mu_.lock(); }
  void Unlock() ROTA_RELEASE() { mu_.unlock(); }
  // Tells the analysis that the caller holds this mutex (checked by nothing at run time): for
  // code the analysis cannot follow, such as a callback documented to run under the lock.
  void AssertHeld() const ROTA_ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds a Mutex for its scope; Unlock/Lock release and retake it inside the scope.
class ROTA_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ROTA_ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() ROTA_RELEASE() {
    if (locked_) mu_->Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  // REQUIRES: held by this scope (not yet unlocked).
  void Unlock() ROTA_RELEASE() {
    locked_ = false;
    mu_->Unlock();
  }
  // REQUIRES: released by Unlock().
  void Lock() ROTA_ACQUIRE() {
    mu_->Lock();
    locked_ = true;
  }

 private:
  Mutex* const mu_;
  bool locked_ = true;
};

// A condition variable waited on with a Mutex held. Waits release the mutex while blocked
// and hold it again when they return; predicates are evaluated with it held.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

  // Blocks until notified (or spuriously woken).
  void Wait(Mutex* mu) ROTA_REQUIRES(mu) ROTA_NO_THREAD_SAFETY_ANALYSIS {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // Blocks until pred() is true.
  template <class Pred>
  void Wait(Mutex* mu, Pred pred) ROTA_REQUIRES(mu) ROTA_NO_THREAD_SAFETY_ANALYSIS {
    while (!pred()) Wait(mu);
  }
  // Blocks until notified or `timeout` passed. Returns false on timeout.
  template <class Rep, class Period>
  bool WaitFor(Mutex* mu, std::chrono::duration<Rep, Period> timeout) ROTA_REQUIRES(mu)
      ROTA_NO_THREAD_SAFETY_ANALYSIS {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    std::cv_status st = cv_.wait_for(lock, timeout);
    lock.release();
    return st == std::cv_status::no_timeout;
  }
  // Blocks until pred() is true or `timeout` passed. Returns pred().
  template <class Rep, class Period, class Pred>
  bool WaitFor(Mutex* mu, std::chrono::duration<Rep, Period> timeout, Pred pred)
      ROTA_REQUIRES(mu) ROTA_NO_THREAD_SAFETY_ANALYSIS {
    return WaitUntil(mu, SteadyNow() + timeout, std::move(pred));
  }
  // Blocks until pred() is true or `deadline` passed. Returns pred().
  template <class Clock, class Duration, class Pred>
  bool WaitUntil(Mutex* mu, std::chrono::time_point<Clock, Duration> deadline, Pred pred)
      ROTA_REQUIRES(mu) ROTA_NO_THREAD_SAFETY_ANALYSIS {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    bool ok = cv_.wait_until(lock, deadline, std::move(pred));
    lock.release();
    return ok;
  }

 private:
  std::condition_variable cv_;
};

}  // namespace rota
