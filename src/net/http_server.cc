// HttpServer: listener, HTTP/1.1 sessions and event-stream sessions (Beast). The WebSocket
// session is in ws_session.cc. One of the two Beast translation units of the server: keep Beast
// out of other files (each such file costs ~45 s and ~1 GB to compile).

// clang-format off
#include <utility>  // must precede Boost.Asio with GCC 12 + C++20 (see PLATFORM.md)
// clang-format on

#include "net/http_server.h"

#include <algorithm>
#include <array>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <cctype>
#include <future>
#include <optional>
#include <thread>

#include "common/clock.h"
#include "common/log.h"
#include "common/strings.h"
#include "common/mutex.h"
#include "net/server_internal.h"
#include "net/tls_context.h"
#include "net/transport.h"
#include "net/url.h"

namespace rota::net {
namespace internal {
namespace {

constexpr size_t kReadChunk = 4096;
constexpr size_t kShrinkAbove = 64 << 10;
constexpr auto kLingerTimeout = std::chrono::seconds(2);
constexpr size_t kLingerMaxBytes = 4 << 20;
constexpr char kServerName[] = "rota";

std::string RemoteAddress(const tcp::socket& socket) {
  beast::error_code ec;
  tcp::endpoint ep = socket.remote_endpoint(ec);
  if (ec) return "unknown";
  std::string addr = ep.address().to_string();
  if (ep.address().is_v6()) addr = "[" + addr + "]";
  return addr + ":" + std::to_string(ep.port());
}

// Fills method, target, path, query and headers from Beast's request header. Returns an error
// message when the target is unusable.
template <class Fields>
std::optional<std::string> FillHeader(const http::request_header<Fields>& req, HttpRequest* out) {
  out->method = std::string(req.method_string());
  out->target = std::string(req.target());
  for (const auto& field : req) {
    auto [it, inserted] = out->headers.emplace(ToLower(field.name_string()), field.value());
    if (!inserted) (it->second += ", ").append(field.value());
  }
  if (out->target.empty() || out->target[0] != '/') {
    return "request target must start with '/' (got \"" + out->target.substr(0, 64) + "\")";
  }
  size_t q = out->target.find('?');
  out->path = out->target.substr(0, q);
  if (q != std::string::npos) {
    Result<std::map<std::string, std::string>> query = ParseQuery(out->target.substr(q + 1));
    if (!query.ok()) return query.status().message();
    out->query = std::move(query).value();
  }
  return std::nullopt;
}

bool IsHttpParseError(const beast::error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_method).category();
}

// ---------------------------------------------------------------------------------------------
// Event streams.

class EventSinkImpl final : public EventSink {
 public:
  EventSinkImpl(size_t max_bytes, std::string remote)
      : link_(max_bytes, /*writer_busy=*/true, std::move(remote)) {}
  bool Send(const std::string& event, const std::string& data) override {
    return link_.Push(FormatEvent(event, data), 0);
  }
  void End() override { link_.End(); }
  bool is_open() const override { return link_.is_open(); }
  const std::string& remote_addr() const override { return link_.remote(); }
  SessionLink& link() { return link_; }

 private:
  SessionLink link_;
};

// Writes the event-stream headers, then whatever the sink queues, plus keep-alive comments.
// Reads only to notice the client leaving.
class StreamSession final : public Session, public std::enable_shared_from_this<StreamSession> {
 public:
  StreamSession(Transport stream, std::shared_ptr<EventSinkImpl> sink,
                std::shared_ptr<ServerState> state, ConnectionSlot slot, HttpRequest request,
                SteadyTime request_time)
      : exec_(stream.get_executor()),
        stream_(std::move(stream)),
        timer_(exec_),
        sink_(std::move(sink)),
        state_(std::move(state)),
        slot_(std::move(slot)),
        request_(std::move(request)),
        request_time_(request_time) {}

  // REQUIRES: on the socket's strand.
  void Start() {
    slot_.Attach(shared_from_this());
    sink_->link().Bind(weak_from_this());
    current_ =
        "HTTP/1.1 200 OK\r\nServer: rota\r\nContent-Type: text/event-stream\r\n"
        "Cache-Control: no-cache\r\nConnection: close\r\nX-Accel-Buffering: no\r\n\r\n";
    StartWrite([](StreamSession* self) {
      self->state_->Observe(self->request_, 200, self->request_time_);
      self->ReadForClose();
      self->ArmKeepAlive();
      self->PumpWrites();  // the writer started busy: events queued so far go out now
    });
  }

  void Shutdown() override {
    asio::post(exec_, [self = shared_from_this()] { self->Finish(); });
  }
  void CloseWith(int, std::string reason) override {
    asio::post(exec_, [self = shared_from_this(), reason = std::move(reason)] {
      if (!self->finished_) {
        ROTA_LOG(WARNING) << "dropping event-stream client " << self->request_.remote_addr << " on "
                          << self->request_.path << ": " << reason;
      }
      self->Finish();
    });
  }
  void Kick() override {
    asio::post(exec_, [self = shared_from_this()] { self->PumpWrites(); });
  }
  void Detach() override { sink_->link().Detach(); }

 private:
  template <class Then>
  void StartWrite(Then then) {
    writing_ = true;
    write_started_ = SteadyNow();
    asio::async_write(stream_, asio::buffer(current_),
                      [self = shared_from_this(), then](beast::error_code ec, size_t) {
                        self->writing_ = false;
                        if (ec || self->finished_) return self->Finish();
                        then(self.get());
                      });
  }

  void PumpWrites() {
    if (finished_ || writing_) return;
    if (!sink_->link().outbox().Pop(&current_)) {
      // Nothing left to write: a stream the sink ended (or whose outbox closed) is over.
      if (sink_->link().outbox().closed()) Finish();
      return;
    }
    StartWrite([](StreamSession* self) { self->PumpWrites(); });
  }

  void ReadForClose() {
    stream_.async_read_some(asio::buffer(read_buf_),
                            [self = shared_from_this()](beast::error_code ec, size_t) {
                              if (ec || self->finished_) return self->Finish();
                              self->ReadForClose();
                            });
  }

  void ArmKeepAlive() {
    timer_.expires_after(state_->options.sse_keepalive_interval);
    timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->finished_) return;
      auto stuck = SteadyNow() - self->write_started_;
      if (self->writing_ && stuck > self->state_->options.request_timeout) {
        ROTA_LOG(WARNING) << "dropping event-stream client " << self->request_.remote_addr
                          << ": a write has not completed for "
                          << std::chrono::duration_cast<std::chrono::seconds>(stuck).count()
                          << " s";
        return self->Finish();
      }
      self->sink_->link().Push(": keep-alive\n\n", 0);
      self->ArmKeepAlive();
    });
  }

  void Finish() {
    if (finished_) return;
    finished_ = true;
    sink_->link().outbox().Close();
    timer_.cancel();
    beast::error_code ec;
    stream_.next_layer().socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.next_layer().socket().close(ec);
    slot_.Release();
  }

  asio::any_io_executor exec_;
  Transport stream_;
  asio::steady_timer timer_;
  std::shared_ptr<EventSinkImpl> sink_;
  std::shared_ptr<ServerState> state_;
  ConnectionSlot slot_;
  HttpRequest request_;
  SteadyTime request_time_;
  std::string current_;
  std::array<char, 256> read_buf_{};
  bool writing_ = false;
  bool finished_ = false;
  SteadyTime write_started_{};
};

// ---------------------------------------------------------------------------------------------
// HTTP sessions.

class HttpSession final : public Session, public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(Transport stream, std::shared_ptr<ServerState> state, ConnectionSlot slot)
      : exec_(stream.get_executor()),
        remote_(RemoteAddress(stream.next_layer().socket())),
        stream_(std::move(stream)),
        state_(std::move(state)),
        opts_(state_->options),
        slot_(std::move(slot)) {}

  void Start() {
    slot_.Attach(shared_from_this());
    asio::dispatch(exec_, [self = shared_from_this()] {
      if (!self->stream_.is_tls()) return self->WaitForRequest();
      // The TLS handshake counts as reading a request (same timeout, closed by Shutdown).
      self->phase_ = Phase::kReading;
      self->stream_.next_layer().expires_after(self->opts_.request_timeout);
      self->stream_.tls()->async_handshake(
          boost::asio::ssl::stream_base::server, [self](beast::error_code ec) {
            if (ec) {
              ROTA_LOG(DEBUG) << "TLS handshake with " << self->remote_ << " failed: "
                              << ec.message();
              return self->CloseNow();
            }
            self->WaitForRequest();
          });
    });
  }

  void Shutdown() override {
    asio::post(exec_, [self = shared_from_this()] {
      self->shutting_down_ = true;
      // Mid-handler or mid-write: finish that response, then close (see OnWritten).
      if (self->phase_ == Phase::kIdle || self->phase_ == Phase::kReading ||
          self->phase_ == Phase::kLingering) {
        self->CloseNow();
      }
    });
  }
  void CloseWith(int, std::string) override { Shutdown(); }
  void Kick() override {}
  // Stop, after the io threads are joined: an answer still awaited is dropped.
  void Detach() override {
    if (std::shared_ptr<AnswerLink> link = answer_link_) link->Detach();
    answer_link_.reset();
  }

 private:
  enum class Phase { kIdle, kReading, kHandling, kWriting, kLingering, kDone, kHandedOff };

  // Keep-alive wait: the idle timeout applies until the first byte of the next request.
  void WaitForRequest() {
    if (shutting_down_) return CloseNow();
    phase_ = Phase::kIdle;
    if (buffer_.size() > 0) return ReadHeader();  // a pipelined request is already here
    if (buffer_.capacity() > kShrinkAbove) buffer_.shrink_to_fit();
    stream_.next_layer().expires_after(opts_.idle_timeout);
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              self->buffer_.commit(n);
                              if (ec) return self->CloseNow();
                              self->ReadHeader();
                            });
  }

  // The request timeout covers header and body together.
  void ReadHeader() {
    phase_ = Phase::kReading;
    parser_.emplace();
    parser_->header_limit(
        static_cast<uint32_t>(std::min<size_t>(opts_.max_header_bytes, UINT32_MAX)));
    parser_->body_limit(opts_.max_body_bytes);
    stream_.next_layer().expires_after(opts_.request_timeout);
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(beast::error_code ec) {
    if (ec) return OnReadError(ec);
    const auto& req = parser_->get();
    if (!parser_->is_done() && beast::iequals(req[http::field::expect], "100-continue")) {
      continue_ = http::response<http::empty_body>(http::status::continue_, req.version());
      http::async_write(stream_, continue_,
                        [self = shared_from_this()](beast::error_code ec, size_t) {
                          if (ec) return self->CloseNow();
                          self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    if (parser_->is_done()) return OnRequest();
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return self->OnReadError(ec);
                       self->OnRequest();
                     });
  }

  void OnReadError(beast::error_code ec) {
    if (ec == http::error::body_limit) {
      return SendError(413,
                       "request body exceeds " + std::to_string(opts_.max_body_bytes) + " bytes");
    }
    if (ec == http::error::header_limit) {
      return SendError(
          431, "request header exceeds " + std::to_string(opts_.max_header_bytes) + " bytes");
    }
    if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
        !IsHttpParseError(ec)) {
      return CloseNow();  // peer gone, timeout (slowloris), reset, cancelled
    }
    SendError(400, "malformed HTTP request: " + ec.message());
  }

  // Answers a request the server refused to read, then closes.
  void SendError(int status, const std::string& message) {
    request_ = HttpRequest{};
    request_.remote_addr = remote_;
    request_time_ = SteadyNow();
    version_ = 11;
    if (parser_ && parser_->is_header_done()) {
      (void)FillHeader(parser_->get(), &request_);
      version_ = parser_->get().version();
    }
    parser_.reset();
    Respond(HttpResponse::Error(status, message), /*keep_alive=*/false);
  }

  void OnRequest() {
    phase_ = Phase::kHandling;
    request_time_ = SteadyNow();
    http::request<http::string_body> req = parser_->release();
    parser_.reset();
    version_ = req.version();
    bool keep_alive = req.keep_alive();
    request_ = HttpRequest{};
    request_.remote_addr = remote_;
    if (std::optional<std::string> error = FillHeader(req, &request_)) {
      return Respond(HttpResponse::Error(400, *error), false);
    }
    request_.body = std::move(req.body());
    if (state_->options.prepare_request) state_->options.prepare_request(&request_);

    for (const auto& [pattern, acceptor] : state_->ws_routes) {
      std::string error;
      switch (pattern.Match(request_.path, &request_.path_params, &error)) {
        case PathPattern::MatchResult::kNoMatch:
          continue;
        case PathPattern::MatchResult::kBadEscape:
          return Respond(HttpResponse::Error(400, error), false);
        case PathPattern::MatchResult::kMatch:
          return HandleUpgrade(std::move(req), acceptor, keep_alive);
      }
    }
    for (const auto& [pattern, acceptor] : state_->sse_routes) {
      std::string error;
      switch (pattern.Match(request_.path, &request_.path_params, &error)) {
        case PathPattern::MatchResult::kNoMatch:
          continue;
        case PathPattern::MatchResult::kBadEscape:
          return Respond(HttpResponse::Error(400, error), false);
        case PathPattern::MatchResult::kMatch:
          return HandleStream(acceptor, keep_alive);
      }
    }

    // HEAD: the GET route's answer, headers only (its Content-Length kept).
    const bool head = request_.method == "HEAD";
    if (head) request_.method = "GET";
    // The handler answers through the Responder, now (a plain Handler) or later from any
    // thread (an AsyncHandler waiting on an agent or a pool). An answer given during
    // Dispatch on this thread is taken inline; a later one is posted to this strand.
    auto link = std::make_shared<AnswerLink>(shared_from_this());
    answer_link_ = link;
    Responder respond([link](HttpResponse res) { link->Deliver(std::move(res)); });
    link->BeginInline();
    try {
      state_->router.Dispatch(&request_, respond);
    } catch (const std::exception& e) {
      ROTA_LOG(ERROR) << "handler for " << request_.method << " " << request_.path
                      << " threw: " << e.what();
      respond(HttpResponse::Error(500, "internal error while handling " + request_.path));
    } catch (...) {
      ROTA_LOG(ERROR) << "handler for " << request_.method << " " << request_.path
                      << " threw a non-exception";
      respond(HttpResponse::Error(500, "internal error while handling " + request_.path));
    }
    head_ = head;
    keep_alive_ = keep_alive;
    if (std::optional<HttpResponse> res = link->EndInline()) OnAnswer(std::move(*res));
  }

  // The handler's answer, on this session's strand.
  void OnAnswer(HttpResponse res) {
    answer_link_.reset();
    if (phase_ != Phase::kHandling) return;  // cut by Stop meanwhile
    if (head_) request_.method = "HEAD";  // whatever the handler did: no body follows
    Respond(std::move(res), keep_alive_);
  }

  // Carries one request's answer from its Responder (any thread) back to the session. It
  // holds the session alive while the answer is awaited (no I/O is pending then); Detach
  // (Stop, after the io threads are joined) lets go of it.
  class AnswerLink {
   public:
    explicit AnswerLink(std::shared_ptr<HttpSession> session) : session_(std::move(session)) {}
    void BeginInline() {
      MutexLock lock(&mu_);
      inline_thread_ = std::this_thread::get_id();
    }
    std::optional<HttpResponse> EndInline() {
      MutexLock lock(&mu_);
      inline_thread_ = std::thread::id();
      if (inline_answer_) session_.reset();
      return std::move(inline_answer_);
    }
    void Deliver(HttpResponse res) {
      MutexLock lock(&mu_);
      if (inline_thread_ == std::this_thread::get_id()) {
        inline_answer_ = std::move(res);
        return;
      }
      std::shared_ptr<HttpSession> session = std::move(session_);
      if (!session) return;  // detached
      asio::any_io_executor exec = session->exec_;
      asio::post(exec, [session = std::move(session), res = std::move(res)]() mutable {
        session->OnAnswer(std::move(res));
      });
    }
    void Detach() {
      std::shared_ptr<HttpSession> session;
      MutexLock lock(&mu_);
      session = std::move(session_);
      lock.Unlock();
    }

   private:
    Mutex mu_;
    std::shared_ptr<HttpSession> session_ ROTA_GUARDED_BY(mu_);
    std::thread::id inline_thread_ ROTA_GUARDED_BY(mu_);
    std::optional<HttpResponse> inline_answer_ ROTA_GUARDED_BY(mu_);
  };

  void HandleUpgrade(http::request<http::string_body> req, const WsAcceptor& acceptor,
                     bool keep_alive) {
    if (!beast::websocket::is_upgrade(req)) {
      HttpResponse res = HttpResponse::Error(426, request_.path + " expects a WebSocket upgrade");
      res.headers.emplace_back("Upgrade", "websocket");
      return Respond(std::move(res), keep_alive);
    }
    std::shared_ptr<WsHandler> handler;
    try {
      auto decision = acceptor(request_);
      if (auto* refusal = std::get_if<HttpResponse>(&decision)) {
        return Respond(std::move(*refusal), false);
      }
      handler = std::get<std::shared_ptr<WsHandler>>(std::move(decision));
    } catch (const std::exception& e) {
      ROTA_LOG(ERROR) << "WebSocket acceptor for " << request_.path << " threw: " << e.what();
    } catch (...) {
      ROTA_LOG(ERROR) << "WebSocket acceptor for " << request_.path << " threw";
    }
    if (!handler) {
      return Respond(HttpResponse::Error(500, "cannot accept WebSocket on " + request_.path),
                     false);
    }
    phase_ = Phase::kHandedOff;
    stream_.next_layer().expires_never();
    slot_.PromoteToWebSocket();
    StartWebSocketSession(std::move(stream_), std::move(req), std::move(request_), request_time_,
                          std::move(handler), state_, std::move(slot_));
  }

  void HandleStream(const StreamAcceptor& acceptor, bool keep_alive) {
    if (request_.method != "GET") {
      HttpResponse res = HttpResponse::Error(
          405, "method " + request_.method + " not allowed on " + request_.path);
      res.headers.emplace_back("Allow", "GET");
      return Respond(std::move(res), keep_alive);
    }
    auto sink = std::make_shared<EventSinkImpl>(opts_.sse_max_queued_bytes, remote_);
    std::optional<HttpResponse> refusal;
    try {
      refusal = acceptor(request_, sink);
    } catch (const std::exception& e) {
      ROTA_LOG(ERROR) << "event-stream acceptor for " << request_.path << " threw: " << e.what();
      refusal = HttpResponse::Error(500, "cannot open event stream " + request_.path);
    } catch (...) {
      ROTA_LOG(ERROR) << "event-stream acceptor for " << request_.path << " threw";
      refusal = HttpResponse::Error(500, "cannot open event stream " + request_.path);
    }
    if (refusal) {
      sink->link().Detach();
      return Respond(std::move(*refusal), keep_alive);
    }
    phase_ = Phase::kHandedOff;
    auto session =
        std::make_shared<StreamSession>(std::move(stream_), std::move(sink), state_,
                                        std::move(slot_), std::move(request_), request_time_);
    session->Start();
  }

  void Respond(HttpResponse res, bool keep_alive) {
    phase_ = Phase::kWriting;
    if (res.status < 100 || res.status > 599) {
      ROTA_LOG(ERROR) << "handler for " << request_.path << " returned HTTP status " << res.status;
      res = HttpResponse::Error(500, "handler returned an invalid HTTP status");
    }
    keep_alive = keep_alive && !shutting_down_;
    try {
      BuildResponse(res, keep_alive);
    } catch (const std::exception& e) {  // e.g. a header name Beast rejects
      ROTA_LOG(ERROR) << "cannot build response for " << request_.path << ": " << e.what();
      BuildResponse(HttpResponse::Error(500, "handler returned an unusable response"), false);
    }
    status_ = static_cast<int>(res_.result_int());
    close_after_write_ = !res_.keep_alive();
    stream_.next_layer().expires_after(opts_.request_timeout);
    http::async_write(stream_, res_, [self = shared_from_this()](beast::error_code ec, size_t) {
      self->OnWritten(ec);
    });
  }

  void BuildResponse(const HttpResponse& res, bool keep_alive) {
    res_ = {};
    res_.version(version_ == 10 ? 10 : 11);
    res_.result(static_cast<unsigned>(res.status));
    res_.set(http::field::server, kServerName);
    if (res.status != 204 && res.status != 304) {
      res_.set(http::field::content_type, res.content_type);
    }
    for (const auto& [name, value] : res.headers) res_.insert(name, value);
    res_.body() = res.body;
    res_.keep_alive(keep_alive);
    res_.prepare_payload();
    if (request_.method == "HEAD") res_.body().clear();  // Content-Length stays the GET answer's
  }

  void OnWritten(beast::error_code ec) {
    state_->Observe(request_, status_, request_time_);
    if (ec) return CloseNow();
    if (close_after_write_ || shutting_down_) return Linger();
    WaitForRequest();
  }

  // Half-closes, then reads and discards what the client still sends (e.g. the rest of a
  // refused body) for a while, so the kernel does not answer it with a reset that could destroy
  // the response before the client reads it.
  void Linger() {
    phase_ = Phase::kLingering;
    beast::error_code ec;
    stream_.next_layer().socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec) return CloseNow();
    stream_.next_layer().expires_after(kLingerTimeout);
    lingered_ = 0;
    Drain();
  }

  void Drain() {
    buffer_.consume(buffer_.size());
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              self->lingered_ += n;
                              if (ec || self->lingered_ > kLingerMaxBytes) return self->CloseNow();
                              self->buffer_.commit(n);
                              self->Drain();
                            });
  }

  void CloseNow() {
    if (phase_ == Phase::kHandedOff || phase_ == Phase::kDone) return;
    phase_ = Phase::kDone;
    stream_.next_layer().close();
    slot_.Release();
  }

  asio::any_io_executor exec_;
  std::string remote_;
  Transport stream_;
  std::shared_ptr<ServerState> state_;
  const HttpServerOptions& opts_;
  ConnectionSlot slot_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::empty_body> continue_;
  http::response<http::string_body> res_;
  HttpRequest request_;
  SteadyTime request_time_{};
  unsigned version_ = 11;
  int status_ = 0;
  size_t lingered_ = 0;
  Phase phase_ = Phase::kIdle;
  bool close_after_write_ = false;
  bool shutting_down_ = false;
  // The request being handled: awaited answer, and how to write it.
  std::shared_ptr<AnswerLink> answer_link_;
  bool head_ = false;
  bool keep_alive_ = false;
};

// ---------------------------------------------------------------------------------------------
// Listener.

constexpr char kBusyResponse[] =
    "HTTP/1.1 503 Service Unavailable\r\nServer: rota\r\nContent-Type: application/json\r\n"
    "Connection: close\r\nContent-Length: 78\r\n\r\n"
    "{\"error\":{\"code\":\"unavailable\",\"message\":\"too many connections, retry later\"}}";

// The listener's TLS context (none: plain TCP). ReloadTls swaps it; a connection keeps the one
// it started with.
class TlsContextHolder {
 public:
  std::shared_ptr<asio::ssl::context> Get() const {
    MutexLock lock(&mu_);
    return context_;
  }
  void Set(std::shared_ptr<asio::ssl::context> context) {
    MutexLock lock(&mu_);
    context_ = std::move(context);
  }

 private:
  mutable Mutex mu_;
  std::shared_ptr<asio::ssl::context> context_ ROTA_GUARDED_BY(mu_);
};

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  Listener(asio::io_context& ioc, std::shared_ptr<ServerState> state,
           std::shared_ptr<TlsContextHolder> tls)
      : ioc_(ioc),
        tls_(std::move(tls)),
        acceptor_(asio::make_strand(ioc)),
        retry_timer_(acceptor_.get_executor()),
        state_(std::move(state)) {}

  Result<uint16_t> Open(const std::string& address, uint16_t port) {
    beast::error_code ec;
    asio::ip::address addr = asio::ip::make_address(address, ec);
    if (ec) return Status::InvalidArgument("bad bind address \"" + address + "\"");
    tcp::endpoint endpoint(addr, port);
    std::string where = address + ":" + std::to_string(port);
    acceptor_.open(endpoint.protocol(), ec);
    if (ec) return Status::Unavailable("cannot open socket for " + where + ": " + ec.message());
    acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    acceptor_.bind(endpoint, ec);
    if (ec) return Status::Unavailable("cannot bind " + where + ": " + ec.message());
    acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return Status::Unavailable("cannot listen on " + where + ": " + ec.message());
    return acceptor_.local_endpoint().port();
  }

  void Run() {
    asio::dispatch(acceptor_.get_executor(), [self = shared_from_this()] { self->Accept(); });
  }

  void Close() {
    asio::post(acceptor_.get_executor(), [self = shared_from_this()] {
      self->closed_ = true;
      beast::error_code ec;
      self->acceptor_.close(ec);
      self->retry_timer_.cancel();
    });
  }

 private:
  void Accept() {
    if (closed_) return;
    acceptor_.async_accept(asio::make_strand(ioc_),
                           [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
                             self->OnAccept(ec, std::move(socket));
                           });
  }

  void OnAccept(beast::error_code ec, tcp::socket socket) {
    if (closed_ || state_->stopping) return;
    if (ec) {
      // EMFILE and friends: back off instead of spinning.
      ROTA_LOG(WARNING) << "accept failed: " << ec.message();
      retry_timer_.expires_after(std::chrono::milliseconds(100));
      retry_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
        if (!ec) self->Accept();
      });
      return;
    }
    socket.set_option(tcp::no_delay(true), ec);
    beast::error_code ignored;
    tcp::endpoint peer = socket.remote_endpoint(ignored);
    std::string why;
    ConnectionSlot slot = ConnectionSlot::Acquire(state_, ignored ? "" : peer.address().to_string(), &why);
    std::shared_ptr<asio::ssl::context> tls = tls_->Get();
    if (slot.valid()) {
      Transport stream = tls ? Transport(beast::tcp_stream(std::move(socket)), std::move(tls))
                             : Transport(beast::tcp_stream(std::move(socket)));
      std::make_shared<HttpSession>(std::move(stream), state_, std::move(slot))->Start();
    } else {
      Reject(socket, /*tls=*/tls != nullptr, why);
    }
    Accept();
  }

  // Best effort, without blocking: the reply fits in an empty socket buffer. A TLS client
  // could not read it: it is only closed.
  void Reject(tcp::socket& socket, bool tls, const std::string& why) {
    auto now = SteadyNow();
    if (now - last_reject_log_ > std::chrono::seconds(10)) {
      last_reject_log_ = now;
      ROTA_LOG(WARNING) << "refusing connection from " << RemoteAddress(socket) << ": " << why;
    }
    beast::error_code ec;
    socket.non_blocking(true, ec);
    if (!tls) socket.write_some(asio::buffer(kBusyResponse, sizeof(kBusyResponse) - 1), ec);
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
  }

  asio::io_context& ioc_;
  std::shared_ptr<TlsContextHolder> tls_;
  tcp::acceptor acceptor_;
  asio::steady_timer retry_timer_;
  std::shared_ptr<ServerState> state_;
  bool closed_ = false;
  SteadyTime last_reject_log_{};
};

}  // namespace
}  // namespace internal

// ---------------------------------------------------------------------------------------------
// HttpServer.

namespace asio = internal::asio;
using internal::Listener;
using internal::TlsContextHolder;
using internal::ServerState;
using internal::Session;

struct HttpServer::Impl {
  std::shared_ptr<ServerState> state;
  std::unique_ptr<asio::io_context> ioc;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::shared_ptr<Listener> listener;
  std::shared_ptr<TlsContextHolder> tls = std::make_shared<TlsContextHolder>();
  std::vector<std::thread> threads;
  Mutex mu;  // Start/Stop against each other
  uint16_t port = 0;
  bool started = false;
  bool stopped = false;
};

HttpServer::HttpServer(HttpServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->state = std::make_shared<ServerState>(std::move(options));
}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Route(const std::string& method, const std::string& pattern, Handler handler) {
  MutexLock lock(&impl_->mu);
  if (impl_->started) return Status::Conflict("route " + pattern + ": server already started");
  return impl_->state->router.Add(method, pattern, std::move(handler));
}

Status HttpServer::RouteAsync(const std::string& method, const std::string& pattern,
                              AsyncHandler handler) {
  MutexLock lock(&impl_->mu);
  if (impl_->started) return Status::Conflict("route " + pattern + ": server already started");
  return impl_->state->router.AddAsync(method, pattern, std::move(handler));
}

Status HttpServer::SetFallback(AsyncHandler handler) {
  MutexLock lock(&impl_->mu);
  if (impl_->started) return Status::Conflict("fallback: server already started");
  impl_->state->router.SetFallback(std::move(handler));
  return Status::Ok();
}

namespace {

// Adds an upgrade-style route (WebSocket or event stream) to `routes`, refusing a pattern of
// the same shape as one already there. `kind` names the route in errors.
template <typename Acceptor>
Status AddPatternRoute(const char* kind, const std::string& pattern, Acceptor acceptor,
                       std::vector<std::pair<PathPattern, Acceptor>>* routes) {
  if (!acceptor) return Status::InvalidArgument(std::string(kind) + " route " + pattern + ": no acceptor");
  ASSIGN_OR_RETURN(PathPattern parsed, PathPattern::Parse(pattern));
  for (const auto& [other, unused] : *routes) {
    if (other.SameShape(parsed)) {
      return Status::AlreadyExists(std::string(kind) + " route " + pattern + " conflicts with " +
                                   other.text());
    }
  }
  routes->emplace_back(std::move(parsed), std::move(acceptor));
  return Status::Ok();
}

}  // namespace

Status HttpServer::AddWebSocket(const std::string& pattern, WsAcceptor acceptor) {
  MutexLock lock(&impl_->mu);
  if (impl_->started) return Status::Conflict("route " + pattern + ": server already started");
  return AddPatternRoute("WebSocket", pattern, std::move(acceptor), &impl_->state->ws_routes);
}

Status HttpServer::AddEventStream(const std::string& pattern, StreamAcceptor acceptor) {
  MutexLock lock(&impl_->mu);
  if (impl_->started) return Status::Conflict("route " + pattern + ": server already started");
  return AddPatternRoute("event-stream", pattern, std::move(acceptor), &impl_->state->sse_routes);
}

void HttpServer::SetObserver(AccessObserver observer) {
  MutexLock lock(&impl_->mu);
  if (!impl_->started) impl_->state->observer = std::move(observer);
}

Result<uint16_t> HttpServer::Start() {
  MutexLock lock(&impl_->mu);
  if (impl_->started) return Status::Conflict("HTTP server already started");
  const HttpServerOptions& o = impl_->state->options;
  if (o.threads < 1) return Status::InvalidArgument("HTTP server threads must be >= 1");
  if (o.max_connections < 1) {
    return Status::InvalidArgument("HTTP server max_connections must be >= 1");
  }
  if (o.tls.enabled()) {
    ASSIGN_OR_RETURN(std::shared_ptr<asio::ssl::context> tls,
                     internal::MakeServerTlsContext(o.tls));
    impl_->tls->Set(std::move(tls));
  }
  impl_->ioc = std::make_unique<asio::io_context>(o.threads);
  impl_->listener = std::make_shared<Listener>(*impl_->ioc, impl_->state, impl_->tls);
  Result<uint16_t> port = impl_->listener->Open(o.bind_address, o.port);
  if (!port.ok()) {
    impl_->listener.reset();
    impl_->ioc.reset();
    return port.status();
  }
  impl_->port = *port;
  impl_->started = true;
  impl_->work.emplace(asio::make_work_guard(*impl_->ioc));
  impl_->listener->Run();
  for (int i = 0; i < o.threads; ++i) {
    impl_->threads.emplace_back([ioc = impl_->ioc.get()] {
      while (true) {
        try {
          ioc->run();
          return;
        } catch (const std::exception& e) {
          ROTA_LOG(ERROR) << "HTTP server io thread: uncaught exception: " << e.what();
        }
      }
    });
  }
  ROTA_LOG(INFO) << "HTTP server listening on " << o.bind_address << ":" << impl_->port
                 << (o.tls.enabled() ? " (TLS)" : "");
  return impl_->port;
}

Status HttpServer::ReloadTls() {
  const TlsServerConfig& tls = impl_->state->options.tls;
  if (!tls.enabled()) return Status::Conflict("the HTTP server does not use TLS");
  ASSIGN_OR_RETURN(std::shared_ptr<asio::ssl::context> context,
                   internal::MakeServerTlsContext(tls));
  impl_->tls->Set(std::move(context));
  ROTA_LOG(INFO) << "TLS certificate reloaded from " << tls.cert_file;
  return Status::Ok();
}

void HttpServer::Stop() {
  MutexLock lock(&impl_->mu);
  if (!impl_->started || impl_->stopped) return;
  impl_->stopped = true;
  ServerState& state = *impl_->state;
  state.stopping = true;
  impl_->listener->Close();

  auto snapshot = [&state] {
    std::vector<std::shared_ptr<Session>> sessions;
    MutexLock lock(&state.mu);
    for (const auto& [id, weak] : state.live) {
      if (auto session = weak.lock()) sessions.push_back(std::move(session));
    }
    return sessions;
  };
  for (const auto& session : snapshot()) session->Shutdown();
  {
    MutexLock lock(&state.mu);
    if (!state.cv.WaitFor(&state.mu, state.options.stop_timeout,
                          [&state]() ROTA_REQUIRES(state.mu) { return state.connections == 0; })) {
      ROTA_LOG(WARNING) << "HTTP server stop: " << state.connections
                        << " connections did not close in time; cutting them";
    }
  }
  impl_->work.reset();
  impl_->ioc->stop();
  for (std::thread& t : impl_->threads) t.join();
  impl_->threads.clear();
  // No io thread runs now: make user-held handles inert, then destroy the remaining handlers
  // (and with them the sessions).
  for (const auto& session : snapshot()) session->Detach();
  impl_->listener.reset();
  impl_->ioc.reset();
}

uint16_t HttpServer::port() const { return impl_->port; }

bool HttpServer::Responsive(std::chrono::milliseconds timeout) const {
  auto ran = std::make_shared<std::promise<void>>();
  std::future<void> done = ran->get_future();
  {
    MutexLock lock(&impl_->mu);
    if (!impl_->started || impl_->stopped) return false;
    asio::post(*impl_->ioc, [ran] { ran->set_value(); });
  }
  return done.wait_for(timeout) == std::future_status::ready;
}

int HttpServer::connection_count() const {
  MutexLock lock(&impl_->state->mu);
  return impl_->state->connections;
}

}  // namespace rota::net
