#include "net/net_test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <thread>

namespace rota::net::testing {

bool WaitFor(const std::function<bool()>& cond, milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return cond();
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

std::string LocalUrl(uint16_t port, const std::string& path, const std::string& scheme) {
  return scheme + "://127.0.0.1:" + std::to_string(port) + path;
}

std::unique_ptr<RawConn> RawConn::Connect(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return nullptr;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return nullptr;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return std::unique_ptr<RawConn>(new RawConn(fd));
}

RawConn::~RawConn() { ::close(fd_); }

void RawConn::SetReceiveBuffer(int bytes) {
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
}

bool RawConn::Write(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string RawConn::ReadUntil(const std::function<bool(const std::string&)>& done,
                               milliseconds timeout) {
  std::string out = std::move(leftover_);
  leftover_.clear();
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done(out) && !eof_) {
    auto left =
        std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd_, POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(left.count()));
    if (rc <= 0) continue;
    char buf[8192];
    ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      eof_ = true;
      break;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

std::string RawConn::ReadResponse(milliseconds timeout) {
  auto complete = [](const std::string& s) -> size_t {
    size_t head_end = s.find("\r\n\r\n");
    if (head_end == std::string::npos) return 0;
    size_t length = 0;
    size_t pos = s.find("Content-Length: ");
    if (pos != std::string::npos && pos < head_end) {
      length = std::strtoul(s.c_str() + pos + 16, nullptr, 10);
    }
    size_t total = head_end + 4 + length;
    return s.size() >= total ? total : 0;
  };
  std::string data = ReadUntil([&](const std::string& s) { return complete(s) != 0; }, timeout);
  size_t n = complete(data);
  if (n == 0) return data;
  leftover_ = data.substr(n);
  return data.substr(0, n);
}

bool RawConn::WaitClosed(milliseconds timeout) {
  ReadUntil([](const std::string&) { return false; }, timeout);
  return eof_;
}

std::string RawWsHandshake(RawConn& conn, const std::string& path,
                           const std::string& extra_headers) {
  conn.Write("GET " + path +
             " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n" +
             extra_headers + "\r\n");
  return conn.ReadResponse();
}

std::string MaskedFrame(uint8_t opcode, std::string_view payload, bool fin) {
  std::string f;
  f += static_cast<char>((fin ? 0x80 : 0) | opcode);
  const uint8_t mask[4] = {0x12, 0x34, 0x56, 0x78};
  if (payload.size() < 126) {
    f += static_cast<char>(0x80 | payload.size());
  } else if (payload.size() < 65536) {
    f += static_cast<char>(0x80 | 126);
    f += static_cast<char>((payload.size() >> 8) & 0xff);
    f += static_cast<char>(payload.size() & 0xff);
  } else {
    f += static_cast<char>(0x80 | 127);
    for (int i = 7; i >= 0; --i) f += static_cast<char>((payload.size() >> (8 * i)) & 0xff);
  }
  for (uint8_t m : mask) f += static_cast<char>(m);
  for (size_t i = 0; i < payload.size(); ++i) {
    f += static_cast<char>(static_cast<uint8_t>(payload[i]) ^ mask[i % 4]);
  }
  return f;
}

}  // namespace rota::net::testing
