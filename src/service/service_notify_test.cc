#include "service/service_notify.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

namespace rota::service {
namespace {

// A datagram socket the test owns, bound to a fresh path.
class NotifySocket {
 public:
  NotifySocket() {
    path_ = "/tmp/rota-notify-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++);
    ::unlink(path_.c_str());
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path_.data(), path_.size());
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << std::strerror(errno);
  }
  ~NotifySocket() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  const std::string& path() const { return path_; }
  // The next datagram, "" after `timeout_ms` without one.
  std::string Receive(int timeout_ms) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) != 1) return "";
    char buf[4096];
    ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }

 private:
  static inline int counter_ = 0;
  std::string path_;
  int fd_ = -1;
};

TEST(ReadNotifyTargetTest, NoSocketMeansNoManager) {
  auto t = ReadNotifyTarget({}, 42);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->socket, "");
  EXPECT_EQ(t->watchdog_usec, 0);
}

TEST(ReadNotifyTargetTest, ReadsSocketAndWatchdogForThisPid) {
  auto t = ReadNotifyTarget({{"NOTIFY_SOCKET", "/run/x"}, {"WATCHDOG_USEC", "30000000"}, {"WATCHDOG_PID", "42"}}, 42);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->socket, "/run/x");
  EXPECT_EQ(t->watchdog_usec, 30000000);
}

TEST(ReadNotifyTargetTest, WatchdogOfAnotherPidIsNotOurs) {
  auto t = ReadNotifyTarget({{"NOTIFY_SOCKET", "@abc"}, {"WATCHDOG_USEC", "1000"}, {"WATCHDOG_PID", "7"}}, 42);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->socket, "@abc");
  EXPECT_EQ(t->watchdog_usec, 0);
}

TEST(ReadNotifyTargetTest, RefusesMalformedValues) {
  EXPECT_FALSE(ReadNotifyTarget({{"NOTIFY_SOCKET", "relative"}}, 1).ok());
  EXPECT_FALSE(ReadNotifyTarget({{"NOTIFY_SOCKET", "/" + std::string(200, 'a')}}, 1).ok());
  EXPECT_FALSE(ReadNotifyTarget({{"NOTIFY_SOCKET", "/x"}, {"WATCHDOG_USEC", "soon"}}, 1).ok());
  EXPECT_FALSE(ReadNotifyTarget({{"NOTIFY_SOCKET", "/x"}, {"WATCHDOG_USEC", "-5"}}, 1).ok());
}

TEST(NotifyTest, SendsTheStateAsOneDatagram) {
  NotifySocket sock;
  ASSERT_TRUE(Notify(sock.path(), "READY=1\nSTATUS=up").ok());
  EXPECT_EQ(sock.Receive(1000), "READY=1\nSTATUS=up");
}

TEST(NotifyTest, EmptySocketIsANoOpAndAMissingOneAnError) {
  EXPECT_TRUE(Notify("", "READY=1").ok());
  EXPECT_FALSE(Notify("/tmp/rota-no-such-notify-socket", "READY=1").ok());
}

TEST(ServiceNotifierTest, WatchdogPingsOnlyWhileAlive) {
  NotifySocket sock;
  std::atomic<bool> alive{true};
  ServiceNotifier notifier(NotifyTarget{sock.path(), 80'000});  // a ping every 20 ms
  notifier.StartWatchdog([&] { return alive.load(); });
  EXPECT_EQ(sock.Receive(1000), "WATCHDOG=1");
  EXPECT_EQ(sock.Receive(1000), "WATCHDOG=1");
  alive = false;
  // Drain what was sent before the switch was seen, then nothing more comes.
  while (!sock.Receive(100).empty()) {
  }
  EXPECT_EQ(sock.Receive(200), "");
  alive = true;
  EXPECT_EQ(sock.Receive(1000), "WATCHDOG=1");
}

TEST(ServiceNotifierTest, NoWatchdogWithoutWatchdogUsec) {
  NotifySocket sock;
  ServiceNotifier notifier(NotifyTarget{sock.path(), 0});
  notifier.StartWatchdog([] { return true; });
  notifier.Ready("serving");
  EXPECT_EQ(sock.Receive(1000), "READY=1\nSTATUS=serving");
  EXPECT_EQ(sock.Receive(200), "");
}

}  // namespace
}  // namespace rota::service
