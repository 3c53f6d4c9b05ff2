#include "service/service_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "common/clock.h"
#include "common/log.h"

extern char** environ;

namespace rota::service {

Result<NotifyTarget> ReadNotifyTarget(const std::map<std::string, std::string>& env, int64_t pid) {
  NotifyTarget target;
  auto socket = env.find("NOTIFY_SOCKET");
  if (socket == env.end() || socket->second.empty()) return target;
  const std::string& path = socket->second;
  if (path[0] != '/' && path[0] != '@') {
    return Status::InvalidArgument("NOTIFY_SOCKET '" + path + "' is neither a path nor @abstract");
  }
  if (path.size() >= sizeof(sockaddr_un::sun_path)) {
    return Status::InvalidArgument("NOTIFY_SOCKET is longer than a socket address holds");
  }
  target.socket = path;
  auto usec = env.find("WATCHDOG_USEC");
  if (usec == env.end()) return target;
  char* end = nullptr;
  errno = 0;
  long long value = std::strtoll(usec->second.c_str(), &end, 10);
  if (errno != 0 || end == usec->second.c_str() || *end != '\0' || value <= 0) {
    return Status::InvalidArgument("WATCHDOG_USEC '" + usec->second + "' is not a positive number");
  }
  auto owner = env.find("WATCHDOG_PID");
  if (owner != env.end() && owner->second != std::to_string(pid)) return target;  // not ours
  target.watchdog_usec = value;
  return target;
}

NotifyTarget NotifyTargetFromEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  auto target = ReadNotifyTarget(env, ::getpid());
  if (!target.ok()) {
    ROTA_LOG(WARNING) << "service manager notifications off: " << target.status().message();
    return {};
  }
  return *target;
}

Status Notify(const std::string& socket, const std::string& state) {
  if (socket.empty()) return Status::Ok();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket.size() >= sizeof(addr.sun_path)) return Status::InvalidArgument("notify socket path too long");
  std::memcpy(addr.sun_path, socket.data(), socket.size());
  if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';  // abstract namespace
  const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket.size());
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError(std::string("notify socket: ") + std::strerror(errno));
  ssize_t sent = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&addr), len);
  int err = errno;
  ::close(fd);
  if (sent < 0) return Status::IoError("notify " + socket + ": " + std::strerror(err));
  return Status::Ok();
}

ServiceNotifier::~ServiceNotifier() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

void ServiceNotifier::Send(const std::string& state) {
  if (Status st = Notify(target_.socket, state); !st.ok()) {
    ROTA_LOG(WARNING) << "service manager notification: " << st.message();
  }
}

void ServiceNotifier::Ready(const std::string& status) { Send("READY=1\nSTATUS=" + status); }
void ServiceNotifier::SetStatus(const std::string& status) { Send("STATUS=" + status); }
void ServiceNotifier::Stopping() { Send("STOPPING=1"); }

void ServiceNotifier::Reloading() {
  // systemd 253+ wants MONOTONIC_USEC beside RELOADING=1; older ones ignore it.
  Send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(MonotonicNs() / 1000));
}

void ServiceNotifier::StartWatchdog(std::function<bool()> alive) {
  if (target_.socket.empty() || target_.watchdog_usec <= 0 || thread_.joinable()) return;
  thread_ = std::thread([this, alive = std::move(alive)]() mutable { WatchdogLoop(std::move(alive)); });
}

void ServiceNotifier::WatchdogLoop(std::function<bool()> alive) {
  const auto period = std::chrono::microseconds(target_.watchdog_usec / 4);
  bool warned = false;
  MutexLock lock(&mu_);
  while (!stop_) {
    lock.Unlock();
    const bool ok = alive();
    if (ok) {
      Send("WATCHDOG=1");
      warned = false;
    } else if (!warned) {
      ROTA_LOG(WARNING) << "main loop not answering: no watchdog ping (systemd restarts the service "
                        << "when it stays so)";
      warned = true;
    }
    lock.Lock();
    cv_.WaitFor(&mu_, period, [this]() ROTA_REQUIRES(mu_) { return stop_; });
  }
}

}  // namespace rota::service
