#pragma once
// Telling a service manager (systemd) how the process is doing: the sd_notify(3)
// protocol, written here (one datagram on the AF_UNIX socket named by NOTIFY_SOCKET,
// docs/packaging.md says why not libsystemd), and a watchdog thread that pings only
// while a liveness check of the process's main loop passes.
//
// Outside systemd (no NOTIFY_SOCKET) everything here is a no-op.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <thread>

#include "common/mutex.h"
#include "common/status.h"

namespace rota::service {

// Where notifications go and how often the watchdog wants a ping, read from the
// environment given (NOTIFY_SOCKET, WATCHDOG_USEC, WATCHDOG_PID).
struct NotifyTarget {
  std::string socket;         // "" : no service manager listens
  int64_t watchdog_usec = 0;  // 0: no watchdog for this process
};
// InvalidArgument for a malformed NOTIFY_SOCKET or WATCHDOG_USEC. WATCHDOG_PID naming
// another process means the watchdog is not ours (watchdog_usec 0).
Result<NotifyTarget> ReadNotifyTarget(const std::map<std::string, std::string>& env, int64_t pid);
// The same from this process's environment; a malformed one is logged and ignored.
NotifyTarget NotifyTargetFromEnvironment();

// Sends `state` ("READY=1", "WATCHDOG=1", "STATUS=...", newline-separated) to `socket`
// (a path, or "@name" for the abstract namespace). OK without doing anything when
// `socket` is empty. Thread-safe.
Status Notify(const std::string& socket, const std::string& state);

// The process's notifier: READY/STOPPING/STATUS and the watchdog thread.
// Thread-safe; the destructor stops the watchdog thread.
class ServiceNotifier {
 public:
  explicit ServiceNotifier(NotifyTarget target) : target_(std::move(target)) {}
  ~ServiceNotifier();
  ServiceNotifier(const ServiceNotifier&) = delete;
  ServiceNotifier& operator=(const ServiceNotifier&) = delete;

  bool active() const { return !target_.socket.empty(); }
  // Each logs a failure to send (systemd gone) and goes on.
  void Ready(const std::string& status);
  void SetStatus(const std::string& status);
  void Reloading();
  void Stopping();

  // Starts the watchdog thread (no-op without a watchdog): every watchdog_usec/4 it calls
  // `alive` (which must return within watchdog_usec/4: a probe with a timeout) and pings
  // WATCHDOG=1 only when it returns true, so a stuck main loop is restarted by systemd.
  // REQUIRES: called at most once.
  void StartWatchdog(std::function<bool()> alive);

 private:
  void Send(const std::string& state);
  void WatchdogLoop(std::function<bool()> alive) ROTA_EXCLUDES(mu_);

  NotifyTarget target_;
  Mutex mu_;
  CondVar cv_;
  bool stop_ ROTA_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace rota::service
