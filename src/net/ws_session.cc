// The server side of a WebSocket connection (Beast). The second Beast translation unit of
// HttpServer; http_server.cc hands accepted upgrade requests over to StartWebSocketSession.

// clang-format off
#include <utility>  // must precede Boost.Asio with GCC 12 + C++20 (see PLATFORM.md)
// clang-format on

#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include "common/log.h"
#include "net/server_internal.h"

namespace rota::net::internal {
namespace {

namespace websocket = beast::websocket;

constexpr int kCloseNormal = 1000;
constexpr int kCloseGoingAway = 1001;
constexpr int kCloseUnsupportedData = 1003;
constexpr int kClosePolicy = 1008;
constexpr int kCloseInternalError = 1011;

class WsConnectionImpl final : public WsConnection {
 public:
  WsConnectionImpl(size_t max_bytes, std::string remote)
      : link_(max_bytes, /*writer_busy=*/false, std::move(remote)) {}
  bool Send(std::string text) override { return link_.Push(std::move(text), kClosePolicy); }
  void Close(const std::string& reason) override { link_.RequestClose(kCloseNormal, reason); }
  bool is_open() const override { return link_.is_open(); }
  const std::string& remote_addr() const override { return link_.remote(); }
  SessionLink& link() { return link_; }

 private:
  SessionLink link_;
};

class WsSession final : public Session, public std::enable_shared_from_this<WsSession> {
 public:
  WsSession(Transport stream, http::request<http::string_body> upgrade, HttpRequest request,
            SteadyTime request_time, std::shared_ptr<WsHandler> handler,
            std::shared_ptr<ServerState> state, ConnectionSlot slot)
      : exec_(stream.get_executor()),
        ws_(std::move(stream)),
        upgrade_(std::move(upgrade)),
        request_(std::move(request)),
        request_time_(request_time),
        handler_(std::move(handler)),
        state_(std::move(state)),
        slot_(std::move(slot)),
        conn_(std::make_shared<WsConnectionImpl>(state_->options.ws_max_queued_bytes,
                                                 request_.remote_addr)) {}

  ~WsSession() override { NotifyClose(); }  // only when Stop() cut the session short

  // REQUIRES: on the stream's strand.
  void Start() {
    slot_.Attach(shared_from_this());
    conn_->link().Bind(weak_from_this());
    const HttpServerOptions& o = state_->options;
    websocket::stream_base::timeout timeout{};
    timeout.handshake_timeout = o.ws_handshake_timeout;
    timeout.idle_timeout = o.ws_idle_timeout.count() > 0
                               ? websocket::stream_base::duration(o.ws_idle_timeout)
                               : websocket::stream_base::none();
    timeout.keep_alive_pings = true;
    ws_.set_option(timeout);
    ws_.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& res) { res.set(http::field::server, "rota"); }));
    ws_.read_message_max(o.ws_max_message_bytes);
    ws_.async_accept(upgrade_,
                     [self = shared_from_this()](beast::error_code ec) { self->OnAccept(ec); });
  }

  void Shutdown() override { CloseWith(kCloseGoingAway, "server stopping"); }
  void CloseWith(int code, std::string reason) override {
    asio::post(exec_, [self = shared_from_this(), code, reason = std::move(reason)]() mutable {
      self->RequestClose(code, std::move(reason));
    });
  }
  void Kick() override {
    asio::post(exec_, [self = shared_from_this()] { self->PumpWrites(); });
  }
  void Detach() override { conn_->link().Detach(); }

 private:
  void OnAccept(beast::error_code ec) {
    if (ec) {
      ROTA_LOG(DEBUG) << "WebSocket handshake with " << request_.remote_addr << " on "
                      << request_.path << " failed: " << ec.message();
      return Finish();
    }
    opened_ = true;
    upgrade_ = {};
    state_->Observe(request_, 101, request_time_);
    if (!Call("OnOpen", [this] { handler_->OnOpen(conn_); })) return;
    if (pending_close_) return PumpWrites();  // Close() from inside OnOpen
    Read();
  }

  void Read() {
    ws_.async_read(buffer_,
                   [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

  void OnRead(beast::error_code ec) {
    if (ec) {
      // Peer closed, message too big (Beast already answered 1009), idle timeout, reset...
      // While our own close handshake runs, its completion finishes the session.
      if (!closing_) Finish();
      return;
    }
    if (!ws_.got_text()) {
      buffer_.consume(buffer_.size());
      return StartClose(kCloseUnsupportedData, "binary frames are not supported");
    }
    std::string text = beast::buffers_to_string(buffer_.data());
    buffer_.consume(buffer_.size());
    if (closing_) return;
    if (!Call("OnMessage", [this, &text] { handler_->OnMessage(text); })) return;
    Read();
  }

  // Runs a handler callback; on exception closes with 1011 and returns false.
  template <class F>
  bool Call(const char* what, F&& f) {
    try {
      f();
      return true;
    } catch (const std::exception& e) {
      ROTA_LOG(ERROR) << "WebSocket " << what << " on " << request_.path << " threw: " << e.what();
    } catch (...) {
      ROTA_LOG(ERROR) << "WebSocket " << what << " on " << request_.path << " threw";
    }
    StartClose(kCloseInternalError, "internal error");
    return false;
  }

  // From WsConnection::Close (1000): stop accepting messages, flush the queue, then close.
  // Anything else closes at once and drops the queue.
  void RequestClose(int code, std::string reason) {
    if (finished_ || closing_) return;
    if (!opened_) {
      beast::error_code ec;
      beast::get_lowest_layer(ws_).socket().close(ec);  // the handshake fails -> Finish
      return;
    }
    if (code == kCloseNormal) {
      conn_->link().outbox().Seal();
      pending_close_ = true;
      pending_reason_ = std::move(reason);
      PumpWrites();
      return;
    }
    if (code == kClosePolicy) {
      // The peer does not read: a close handshake would stall behind the unsent data.
      ROTA_LOG(WARNING) << "dropping WebSocket " << request_.remote_addr << " on " << request_.path
                        << ": " << reason;
      return Finish();
    }
    StartClose(code, std::move(reason));
  }

  void PumpWrites() {
    if (writing_ || finished_ || closing_ || !opened_) return;
    if (!conn_->link().outbox().Pop(&current_)) {
      if (pending_close_) StartClose(kCloseNormal, pending_reason_);
      return;
    }
    writing_ = true;
    ws_.text(true);
    ws_.async_write(asio::buffer(current_),
                    [self = shared_from_this()](beast::error_code ec, size_t) {
                      self->writing_ = false;
                      if (ec) {
                        self->conn_->link().outbox().Close();
                        return;  // the read side notices the broken connection
                      }
                      self->PumpWrites();
                    });
  }

  void StartClose(int code, std::string reason) {
    if (finished_ || closing_) return;
    closing_ = true;
    conn_->link().outbox().Close();
    if (reason.size() > 123) reason.resize(123);  // RFC 6455: the close payload is <= 125
    websocket::close_reason why;
    why.code = static_cast<uint16_t>(code);
    why.reason = reason;
    ws_.async_close(why, [self = shared_from_this()](beast::error_code) { self->Finish(); });
  }

  void Finish() {
    if (finished_) return;
    finished_ = true;
    conn_->link().outbox().Close();
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().close(ec);
    NotifyClose();
    slot_.Release();
  }

  void NotifyClose() {
    if (!opened_ || close_notified_) return;
    close_notified_ = true;
    try {
      handler_->OnClose();
    } catch (const std::exception& e) {
      ROTA_LOG(ERROR) << "WebSocket OnClose on " << request_.path << " threw: " << e.what();
    } catch (...) {
      ROTA_LOG(ERROR) << "WebSocket OnClose on " << request_.path << " threw";
    }
  }

  asio::any_io_executor exec_;
  websocket::stream<Transport> ws_;
  http::request<http::string_body> upgrade_;
  HttpRequest request_;
  SteadyTime request_time_;
  std::shared_ptr<WsHandler> handler_;
  std::shared_ptr<ServerState> state_;
  ConnectionSlot slot_;
  std::shared_ptr<WsConnectionImpl> conn_;
  beast::flat_buffer buffer_;
  std::string current_;
  std::string pending_reason_;
  bool opened_ = false;
  bool writing_ = false;
  bool closing_ = false;
  bool pending_close_ = false;
  bool finished_ = false;
  bool close_notified_ = false;
};

}  // namespace

void StartWebSocketSession(Transport stream, http::request<http::string_body> upgrade,
                           HttpRequest request, SteadyTime request_time,
                           std::shared_ptr<WsHandler> handler, std::shared_ptr<ServerState> state,
                           ConnectionSlot slot) {
  std::make_shared<WsSession>(std::move(stream), std::move(upgrade), std::move(request),
                              request_time, std::move(handler), std::move(state), std::move(slot))
      ->Start();
}

}  // namespace rota::net::internal
