// WebSocket client (Beast). The only Beast translation unit on the client side.

// clang-format off
#include <utility>  // must precede Boost.Asio with GCC 12 + C++20 (see PLATFORM.md)
// clang-format on

#include "net/ws_client.h"

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <deque>
#include <optional>
#include <thread>

#include "common/log.h"
#include "common/mutex.h"
#include "net/http_types.h"
#include "net/outbox.h"
#include "net/tls_context.h"
#include "net/transport.h"
#include "net/url.h"

namespace rota::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

// Maps a close frame from the server to on_closed's reason.
Status CloseReasonToStatus(const websocket::close_reason& cr, const std::string& url) {
  std::string msg =
      "connection to " + url + " closed by the server with code " + std::to_string(cr.code);
  if (!cr.reason.empty()) msg += " (" + std::string(cr.reason.data(), cr.reason.size()) + ")";
  switch (cr.code) {
    case websocket::close_code::normal:
      return Status::Ok();
    case websocket::close_code::too_big:
      return Status::ResourceExhausted(msg);
    case websocket::close_code::policy_error:
      return Status::ResourceExhausted(msg);
    case websocket::close_code::unknown_data:
      return Status::InvalidArgument(msg);
    default:
      return Status::Unavailable(msg);
  }
}

}  // namespace

struct WsClient::Impl : public std::enable_shared_from_this<WsClient::Impl> {
  enum class State { kIdle, kConnecting, kOpen, kClosing, kDone };

  Impl(asio::io_context& ioc, WsClientOptions o)
      : exec(asio::make_strand(ioc)),
        resolver(exec),
        ws(std::in_place, internal::Transport(beast::tcp_stream(exec))),
        options(o),
        outbox(o.max_queued_bytes, /*writer_busy=*/true) {}

  // ---- Called from WsClient (any thread).

  void Connect(const std::string& url_text, Headers extra,
               std::function<void(const Status&)> on_connected) {
    {
      MutexLock lock(&cb_mu);
      if (connect_called) {
        asio::post(exec, [self = shared_from_this(), cb = std::move(on_connected)] {
          self->Call([&] { return cb; }, Status::InvalidArgument("WsClient::Connect called twice"));
        });
        return;
      }
      connect_called = true;
      this->on_connected = std::move(on_connected);
    }
    url = url_text;
    Result<Url> parsed = ParseUrl(url_text);
    Status error;
    if (!parsed.ok()) {
      error = parsed.status();
    } else if (parsed->scheme != "ws" && parsed->scheme != "wss") {
      error = Status::InvalidArgument("bad WebSocket URL \"" + url_text +
                                      "\": only ws:// and wss:// are supported");
    }
    asio::post(exec, [self = shared_from_this(), error, parsed = std::move(parsed),
                      extra = std::move(extra)]() mutable {
      if (!error.ok()) return self->FailConnect(error);
      if (parsed->scheme == "wss") {
        Result<std::shared_ptr<asio::ssl::context>> context =
            internal::MakeClientTlsContext(self->options.tls);
        if (!context.ok()) return self->FailConnect(context.status());
        self->ws.emplace(internal::Transport(beast::tcp_stream(self->exec), *std::move(context)));
        self->tls = true;
        Status prepared = internal::PrepareClientTls(*self->ws->next_layer().tls(),
                                                     parsed->host, self->options.tls);
        if (!prepared.ok()) return self->FailConnect(prepared);
      }
      self->headers = std::move(extra);
      self->Resolve(*parsed);
    });
  }

  bool Send(std::string text) {
    switch (outbox.Push(std::move(text))) {
      case Outbox::PushResult::kQueuedStartWriter:
        asio::post(exec, [self = shared_from_this()] { self->PumpWrites(); });
        return true;
      case Outbox::PushResult::kQueued:
        return true;
      case Outbox::PushResult::kClosed:
        return false;
      case Outbox::PushResult::kOverflow:
        asio::post(exec, [self = shared_from_this()] {
          self->DoClose(Status::ResourceExhausted("send queue to " + self->url + " exceeds " +
                                                  std::to_string(self->options.max_queued_bytes) +
                                                  " bytes"));
        });
        return false;
    }
    return false;
  }

  void Close() {
    asio::post(exec, [self = shared_from_this()] { self->DoClose(Status::Ok()); });
  }

  // No callback starts after this returns, and none still runs (unless this thread is the one
  // running it: a callback destroying its own client is the last one).
  void DetachCallbacks() ROTA_EXCLUDES(cb_mu) {
    std::function<void(const std::string&)> m;
    std::function<void(const Status&)> c, cc;
    MutexLock lock(&cb_mu);
    detached = true;
    m = std::move(on_message);  // destroyed after the lock is released
    c = std::move(on_closed);
    cc = std::move(on_connected);
    cb_cv.Wait(&cb_mu, [&]() ROTA_REQUIRES(cb_mu) {
      return callback_thread == std::thread::id() ||
             callback_thread == std::this_thread::get_id();
    });
  }

  // ---- Strand only.

  // Calls the callback that pick() returns (picked with cb_mu held) with `args`, unless the
  // client was destroyed. The callback runs WITHOUT cb_mu: it may take its own locks while
  // another thread holding them calls this client, and may call or destroy this client.
  template <class Pick, class... Args>
  void Call(Pick pick, const Args&... args) ROTA_EXCLUDES(cb_mu) {
    {
      decltype(pick()) cb;
      {
        MutexLock lock(&cb_mu);
        if (detached) return;
        cb = pick();
        if (!cb) return;
        callback_thread = std::this_thread::get_id();
      }
      cb(args...);
    }  // the copy (and what it captured) goes before ~WsClient may return
    MutexLock lock(&cb_mu);
    callback_thread = std::thread::id();
    cb_cv.NotifyAll();
  }

  void Resolve(const Url& u) {
    if (close_requested) {
      return FailConnect(Status::Unavailable("connection to " + url + " closed before connecting"));
    }
    state = State::kConnecting;
    host_header = u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host;
    host_header += ":" + std::to_string(u.port);
    target = u.target;
    resolver.async_resolve(
        u.host, std::to_string(u.port),
        [self = shared_from_this()](beast::error_code ec, tcp::resolver::results_type results) {
          if (ec) {
            return self->FailConnect(
                Status::Unavailable("cannot resolve " + self->url + ": " + ec.message()));
          }
          self->ConnectTcp(results);
        });
  }

  void ConnectTcp(const tcp::resolver::results_type& results) {
    if (close_requested) {
      return FailConnect(Status::Unavailable("connection to " + url + " closed before connecting"));
    }
    beast::get_lowest_layer(*ws).expires_after(options.connect_timeout);
    beast::get_lowest_layer(*ws).async_connect(
        results, [self = shared_from_this()](beast::error_code ec, const tcp::endpoint&) {
          if (ec) {
            std::string why = ec == beast::error::timeout ? "timed out" : ec.message();
            return self->FailConnect(
                Status::Unavailable("cannot connect to " + self->url + ": " + why));
          }
          if (self->tls) return self->TlsHandshake();
          self->Handshake();
        });
  }

  void TlsHandshake() {
    beast::get_lowest_layer(*ws).expires_after(options.handshake_timeout);
    ws->next_layer().tls()->async_handshake(
        asio::ssl::stream_base::client, [self = shared_from_this()](beast::error_code ec) {
          if (ec) {
            std::string why = ec == beast::error::timeout ? "timed out" : ec.message();
            return self->FailConnect(
                Status::Unavailable("TLS handshake with " + self->url + " failed: " + why));
          }
          Status pinned =
              internal::CheckServerPin(*self->ws->next_layer().tls(), self->options.tls, self->url);
          if (!pinned.ok()) return self->FailConnect(pinned);
          self->Handshake();
        });
  }

  void Handshake() {
    auto& lowest = beast::get_lowest_layer(*ws);
    beast::error_code ignored;
    lowest.socket().set_option(tcp::no_delay(true), ignored);
    lowest.expires_never();
    websocket::stream_base::timeout timeout{};
    timeout.handshake_timeout = options.handshake_timeout;
    timeout.idle_timeout = options.idle_timeout.count() > 0
                               ? websocket::stream_base::duration(options.idle_timeout)
                               : websocket::stream_base::none();
    timeout.keep_alive_pings = options.idle_timeout.count() > 0;
    ws->set_option(timeout);
    ws->set_option(
        websocket::stream_base::decorator([extra = headers](websocket::request_type& req) {
          req.set(http::field::user_agent, "rota");
          for (const auto& [name, value] : extra) req.set(name, value);
        }));
    ws->read_message_max(options.max_message_bytes);
    ws->async_handshake(
        response, host_header, target,
        [self = shared_from_this()](beast::error_code ec) { self->OnHandshake(ec); });
  }

  void OnHandshake(beast::error_code ec) {
    if (ec) {
      unsigned code = response.result_int();
      if (ec == websocket::error::upgrade_declined) {
        return FailConnect(StatusFromHttp(static_cast<int>(code),
                                          "WebSocket handshake with " + url + " refused",
                                          response.body()));
      }
      std::string why = ec == beast::error::timeout ? "timed out" : ec.message();
      return FailConnect(
          Status::Unavailable("WebSocket handshake with " + url + " failed: " + why));
    }
    response = {};
    state = State::kOpen;
    Call([this]() ROTA_REQUIRES(cb_mu) { return on_connected; }, Status::Ok());
    if (state != State::kOpen) return;  // the callback closed us
    Read();
    PumpWrites();
  }

  void FailConnect(const Status& status) {
    state = State::kDone;
    outbox.Close();
    beast::error_code ignored;
    beast::get_lowest_layer(*ws).socket().close(ignored);
    Call([this]() ROTA_REQUIRES(cb_mu) { return on_connected; }, status);
  }

  void Read() {
    ws->async_read(buffer,
                  [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

  void OnRead(beast::error_code ec) {
    if (ec) {
      if (state == State::kClosing) return;  // our close handshake's completion finishes
      if (ec == websocket::error::closed) return Finish(CloseReasonToStatus(ws->reason(), url));
      if (ec == websocket::error::message_too_big) {
        return Finish(Status::ResourceExhausted("message from " + url + " exceeds " +
                                                std::to_string(options.max_message_bytes) +
                                                " bytes"));
      }
      std::string why = ec == beast::error::timeout ? "timed out" : ec.message();
      return Finish(Status::Unavailable("connection to " + url + " lost: " + why));
    }
    std::string text = beast::buffers_to_string(buffer.data());
    buffer.consume(buffer.size());
    Call([this]() ROTA_REQUIRES(cb_mu) { return on_message; }, text);
    if (state == State::kOpen) Read();
  }

  void PumpWrites() {
    if (writing || state != State::kOpen) return;
    if (!outbox.Pop(&current)) {
      if (close_requested) StartClose();
      return;
    }
    writing = true;
    ws->text(true);
    ws->async_write(asio::buffer(current),
                   [self = shared_from_this()](beast::error_code ec, size_t) {
                     self->writing = false;
                     if (ec) {
                       self->outbox.Close();
                       return;  // the read side reports the broken connection
                     }
                     self->PumpWrites();
                   });
  }

  // Graceful (OK): flush the queue first. Otherwise close at once.
  void DoClose(const Status& why) {
    if (close_requested && why.ok()) return;
    close_requested = true;
    close_status = why;
    switch (state) {
      case State::kIdle:
        outbox.Close();
        return;  // Resolve() reports "closed before connecting"
      case State::kConnecting: {
        beast::error_code ignored;
        resolver.cancel();
        beast::get_lowest_layer(*ws).socket().close(ignored);
        return;
      }
      case State::kOpen:
        if (why.ok()) {
          outbox.Seal();
          PumpWrites();
        } else {
          StartClose();
        }
        return;
      case State::kClosing:
      case State::kDone:
        return;
    }
  }

  void StartClose() {
    if (state != State::kOpen) return;
    state = State::kClosing;
    outbox.Close();
    websocket::close_code code =
        close_status.ok() ? websocket::close_code::normal : websocket::close_code::policy_error;
    ws->async_close(
        code, [self = shared_from_this()](beast::error_code) { self->Finish(self->close_status); });
  }

  void Finish(const Status& why) {
    if (state == State::kDone) return;
    bool was_open = state == State::kOpen || state == State::kClosing;
    state = State::kDone;
    outbox.Close();
    beast::error_code ignored;
    beast::get_lowest_layer(*ws).socket().close(ignored);
    if (!was_open) return;
    Call([this]() ROTA_REQUIRES(cb_mu) { return on_closed; }, why);
  }

  asio::strand<asio::io_context::executor_type> exec;
  tcp::resolver resolver;
  // Always engaged: plain until Connect() finds a wss:// URL.
  std::optional<websocket::stream<internal::Transport>> ws;
  bool tls = false;
  const WsClientOptions options;
  Outbox outbox;
  beast::flat_buffer buffer;
  websocket::response_type response;
  std::string current;
  std::string url;  // set before the first post; read-only afterwards
  std::string host_header;
  std::string target;
  Headers headers;
  State state = State::kIdle;
  bool writing = false;
  bool close_requested = false;
  Status close_status;

  // Never held while a callback runs (see Call).
  Mutex cb_mu;
  CondVar cb_cv;                                       // callback_thread became empty
  bool connect_called ROTA_GUARDED_BY(cb_mu) = false;
  bool detached ROTA_GUARDED_BY(cb_mu) = false;
  std::thread::id callback_thread ROTA_GUARDED_BY(cb_mu);  // the thread running a callback
  std::function<void(const std::string&)> on_message ROTA_GUARDED_BY(cb_mu);
  std::function<void(const Status&)> on_closed ROTA_GUARDED_BY(cb_mu);
  std::function<void(const Status&)> on_connected ROTA_GUARDED_BY(cb_mu);
};

// ---------------------------------------------------------------------------------------------

WsClient::WsClient(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

WsClient::~WsClient() {
  impl_->DetachCallbacks();
  impl_->Close();
}

void WsClient::SetOnMessage(std::function<void(const std::string&)> on_message) {
  MutexLock lock(&impl_->cb_mu);
  impl_->on_message = std::move(on_message);
}

void WsClient::SetOnClosed(std::function<void(const Status&)> on_closed) {
  MutexLock lock(&impl_->cb_mu);
  impl_->on_closed = std::move(on_closed);
}

void WsClient::Connect(const std::string& url, Headers headers,
                       std::function<void(const Status&)> on_connected) {
  impl_->Connect(url, std::move(headers), std::move(on_connected));
}

bool WsClient::Send(std::string text) { return impl_->Send(std::move(text)); }

void WsClient::Close() { impl_->Close(); }

// ---------------------------------------------------------------------------------------------

struct WsClientLoop::Impl {
  asio::io_context ioc;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  Mutex mu;
  CondVar cv;
  int running ROTA_GUARDED_BY(mu) = 0;
};

WsClientLoop::WsClientLoop(int threads) : impl_(std::make_unique<Impl>()) {
  if (threads < 1) threads = 1;
  impl_->work.emplace(asio::make_work_guard(impl_->ioc));
  {
    MutexLock lock(&impl_->mu);
    impl_->running = threads;
  }
  for (int i = 0; i < threads; ++i) {
    impl_->threads.emplace_back([impl = impl_.get()] {
      while (true) {
        try {
          impl->ioc.run();
          break;
        } catch (const std::exception& e) {
          ROTA_LOG(ERROR) << "WebSocket client loop: uncaught exception: " << e.what();
        }
      }
      MutexLock lock(&impl->mu);
      --impl->running;
      impl->cv.NotifyAll();
    });
  }
}

WsClientLoop::~WsClientLoop() {
  // Give close handshakes started by destroyed clients a moment, then cut the rest.
  impl_->work.reset();
  {
    Impl* impl = impl_.get();
    MutexLock lock(&impl->mu);
    impl->cv.WaitFor(&impl->mu, std::chrono::seconds(2),
                     [impl]() ROTA_REQUIRES(impl->mu) { return impl->running == 0; });
  }
  impl_->ioc.stop();
  for (std::thread& t : impl_->threads) t.join();
}

std::unique_ptr<WsClient> WsClientLoop::NewClient(WsClientOptions options) {
  return std::unique_ptr<WsClient>(
      new WsClient(std::make_shared<WsClient::Impl>(impl_->ioc, options)));
}

// ---------------------------------------------------------------------------------------------

struct BlockingWsClient::State {
  Mutex mu;
  CondVar cv;
  std::deque<std::string> messages ROTA_GUARDED_BY(mu);
  std::optional<Status> connected ROTA_GUARDED_BY(mu);
  std::optional<Status> closed ROTA_GUARDED_BY(mu);
};

BlockingWsClient::BlockingWsClient(WsClientOptions options)
    : state_(std::make_shared<State>()),
      loop_(std::make_unique<WsClientLoop>(1)),
      client_(loop_->NewClient(options)) {
  client_->SetOnMessage([s = state_](const std::string& text) {
    MutexLock lock(&s->mu);
    s->messages.push_back(text);
    s->cv.NotifyAll();
  });
  client_->SetOnClosed([s = state_](const Status& why) {
    MutexLock lock(&s->mu);
    s->closed = why;
    s->cv.NotifyAll();
  });
}

BlockingWsClient::~BlockingWsClient() {
  client_.reset();
  loop_.reset();
}

Status BlockingWsClient::Connect(const std::string& url, WsClient::Headers headers) {
  client_->Connect(url, std::move(headers), [s = state_](const Status& st) {
    MutexLock lock(&s->mu);
    s->connected = st;
    s->cv.NotifyAll();
  });
  State* s = state_.get();
  MutexLock lock(&s->mu);
  // The client's own timeouts bound this; the wait is a safety net.
  if (!s->cv.WaitFor(&s->mu, std::chrono::minutes(2),
                     [s]() ROTA_REQUIRES(s->mu) { return s->connected.has_value(); })) {
    return Status::Unavailable("timed out connecting to " + url);
  }
  return *s->connected;
}

bool BlockingWsClient::Send(std::string text) { return client_->Send(std::move(text)); }

Result<std::string> BlockingWsClient::Receive(std::chrono::milliseconds timeout) {
  State* s = state_.get();
  MutexLock lock(&s->mu);
  s->cv.WaitFor(&s->mu, timeout, [s]() ROTA_REQUIRES(s->mu) {
    return !s->messages.empty() || s->closed.has_value();
  });
  if (!s->messages.empty()) {
    std::string text = std::move(s->messages.front());
    s->messages.pop_front();
    return text;
  }
  if (s->closed) return Status::Unavailable("connection closed: " + s->closed->ToString());
  return Status::Unavailable("no message within " + std::to_string(timeout.count()) + " ms");
}

std::optional<Status> BlockingWsClient::WaitClosed(std::chrono::milliseconds timeout) {
  State* s = state_.get();
  MutexLock lock(&s->mu);
  s->cv.WaitFor(&s->mu, timeout, [s]() ROTA_REQUIRES(s->mu) { return s->closed.has_value(); });
  return s->closed;
}

void BlockingWsClient::Close() { client_->Close(); }

}  // namespace rota::net
