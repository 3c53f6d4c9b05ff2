#pragma once
// Transport: one connection's byte stream, plain TCP or TLS over TCP, chosen at run time.
// Internal to the Beast translation units (includes Boost and OpenSSL): never include this
// from a public header.
//
// The HTTP, event-stream and WebSocket sessions (server side) and the WebSocket client are
// written once against Transport instead of twice against tcp_stream and
// ssl_stream<tcp_stream>. It is an AsyncReadStream and AsyncWriteStream for Beast's
// algorithms; its next layer (and lowest layer) is the tcp_stream underneath in both cases,
// so timeouts (`expires_after`) and socket calls work the same. `websocket::stream<Transport>`
// finds the teardown functions below by argument-dependent lookup.
//
// Thread safety: as the streams it wraps (one connection's operations on one strand).

// clang-format off
#include <utility>  // must precede Boost.Asio with GCC 12 + C++20 (see PLATFORM.md)
// clang-format on

#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/role.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/teardown.hpp>
#include <memory>

namespace rota::net::internal {

class Transport {
 public:
  using tcp_stream = boost::beast::tcp_stream;
  using tls_stream = boost::beast::ssl_stream<tcp_stream>;
  using executor_type = tcp_stream::executor_type;
  using next_layer_type = tcp_stream;

  // Plain TCP.
  explicit Transport(tcp_stream stream) : tcp_(std::move(stream)) {}
  // TLS over `stream` with `context`, which the transport keeps alive. The handshake is the
  // caller's (tls()->async_handshake).
  Transport(tcp_stream stream, std::shared_ptr<boost::asio::ssl::context> context)
      : context_(std::move(context)),
        tls_(std::make_unique<tls_stream>(std::move(stream), *context_)),
        tcp_(tls_->get_executor()) {}

  Transport(Transport&&) = default;

  executor_type get_executor() { return tcp_.get_executor(); }
  bool is_tls() const { return tls_ != nullptr; }
  tls_stream* tls() { return tls_.get(); }
  // The TCP stream under it: timeouts, socket(), close().
  tcp_stream& next_layer() { return tls_ ? tls_->next_layer() : tcp_; }

  template <class MutableBuffers, class Handler>
  void async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_read_some(buffers, std::forward<Handler>(handler));
    } else {
      tcp_.async_read_some(buffers, std::forward<Handler>(handler));
    }
  }

  template <class ConstBuffers, class Handler>
  void async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_write_some(buffers, std::forward<Handler>(handler));
    } else {
      tcp_.async_write_some(buffers, std::forward<Handler>(handler));
    }
  }

 private:
  std::shared_ptr<boost::asio::ssl::context> context_;  // outlives tls_ (declared first)
  std::unique_ptr<tls_stream> tls_;
  tcp_stream tcp_;  // plain TCP; unused (never opened) with TLS
};

// WebSocket closing (found by argument-dependent lookup): TLS close_notify, then TCP.
inline void teardown(boost::beast::role_type role, Transport& transport,
                     boost::beast::error_code& ec) {
  if (transport.is_tls()) {
    boost::beast::teardown(role, *transport.tls(), ec);
  } else {
    boost::beast::websocket::teardown(role, transport.next_layer().socket(), ec);
  }
}

template <class Handler>
void async_teardown(boost::beast::role_type role, Transport& transport, Handler&& handler) {
  if (transport.is_tls()) {
    boost::beast::async_teardown(role, *transport.tls(), std::forward<Handler>(handler));
  } else {
    boost::beast::websocket::async_teardown(role, transport.next_layer().socket(),
                                            std::forward<Handler>(handler));
  }
}

}  // namespace rota::net::internal
