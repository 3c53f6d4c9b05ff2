#pragma once
// Test helpers for net_test: a raw TCP client (to send malformed or partial requests and to hold
// idle connections) and a polling wait for conditions reached by real sockets.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace rota::net::testing {

using std::chrono::milliseconds;

// Polls `cond` every few milliseconds until true or `timeout`; returns its last value.
bool WaitFor(const std::function<bool()>& cond, milliseconds timeout = milliseconds(5000));

std::string LocalUrl(uint16_t port, const std::string& path, const std::string& scheme = "http");

class RawConn {
 public:
  // Connects to 127.0.0.1:port; nullptr on failure.
  static std::unique_ptr<RawConn> Connect(uint16_t port);
  ~RawConn();

  bool Write(std::string_view bytes);
  // Reads until `done(received_so_far)` is true, EOF/reset, or timeout. Returns all bytes read
  // by this call (plus anything left over from earlier calls).
  std::string ReadUntil(const std::function<bool(const std::string&)>& done,
                        milliseconds timeout = milliseconds(5000));
  // Reads one HTTP response (headers and a Content-Length body).
  std::string ReadResponse(milliseconds timeout = milliseconds(5000));
  // True when the peer closes (EOF or reset) within `timeout`; data read meanwhile is dropped.
  bool WaitClosed(milliseconds timeout = milliseconds(5000));
  bool eof() const { return eof_; }
  int fd() const { return fd_; }
  // Shrinks the receive buffer (to make a peer that does not read fill up quickly).
  void SetReceiveBuffer(int bytes);

 private:
  explicit RawConn(int fd) : fd_(fd) {}
  int fd_;
  bool eof_ = false;
  std::string leftover_;
};

// Performs a WebSocket upgrade on `conn` (fixed key) and returns the server's response head.
std::string RawWsHandshake(RawConn& conn, const std::string& path,
                           const std::string& extra_headers = "");
// Builds one masked client frame.
std::string MaskedFrame(uint8_t opcode, std::string_view payload, bool fin = true);

}  // namespace rota::net::testing
