#pragma once
// A stand-in for `rota server`'s agent endpoint, for tests of what a real `rota agent` does
// with what a server sends: it answers every register with `registered` (under the leader
// epoch it is given), keeps the command results it receives, and lets the test send any
// text. Header-only; thread-safe.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>

#include "api/protocol.h"
#include "net/http_server.h"

namespace rota::testing {

class FakeAgentServer : public net::WsHandler {
 public:
  explicit FakeAgentServer(uint64_t epoch = 0) : epoch_(epoch) {}

  // Serves /api/v1/agent/connect on a loopback port; the URL an agent is given.
  // `self`: this object (the endpoint hands it to each connection; held weakly here).
  Result<std::string> Start(const std::shared_ptr<FakeAgentServer>& self) {
    std::weak_ptr<FakeAgentServer> weak = self;
    RETURN_IF_ERROR(http_.AddWebSocket("/api/v1/agent/connect", [weak](const net::HttpRequest&)
                                           -> std::variant<net::HttpResponse, std::shared_ptr<net::WsHandler>> {
      if (auto s = weak.lock()) return std::shared_ptr<net::WsHandler>(s);
      return net::HttpResponse::FromStatus(Status::Unavailable("stopping"));
    }));
    ASSIGN_OR_RETURN(uint16_t port, http_.Start());
    return "http://127.0.0.1:" + std::to_string(port);
  }
  void Stop() { http_.Stop(); }

  void set_epoch(uint64_t e) { epoch_.store(e); }

  void OnOpen(std::shared_ptr<net::WsConnection> c) override {
    std::lock_guard<std::mutex> lock(mu_);
    conn_ = std::move(c);
    closed_ = false;
  }
  void OnMessage(const std::string& text) override {
    auto msg = api::DecodeAgentMessage(text);
    std::lock_guard<std::mutex> lock(mu_);
    if (msg.ok() && std::holds_alternative<api::RegisterMsg>(*msg)) {
      api::RegisteredMsg reg{std::get<api::RegisterMsg>(*msg).node.name, 0};
      reg.epoch = epoch_.load();
      conn_->Send(api::Encode(reg));
      ++registrations_;
    } else if (msg.ok() && std::holds_alternative<api::CommandResultMsg>(*msg)) {
      results_.push_back(std::get<api::CommandResultMsg>(*msg));
    }
    cv_.notify_all();
  }
  void OnClose() override {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }

  // Waits until `n` registrations were answered in all.
  bool WaitRegistrations(int n, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return registrations_ >= n; });
  }
  bool WaitRegistered(std::chrono::milliseconds timeout) { return WaitRegistrations(1, timeout); }
  // Waits until the current connection has closed.
  bool WaitClosed(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return closed_; });
  }
  int registrations() {
    std::lock_guard<std::mutex> lock(mu_);
    return registrations_;
  }
  bool Send(std::string text) {
    std::lock_guard<std::mutex> lock(mu_);
    return conn_ && conn_->Send(std::move(text));
  }
  // Closes the current connection, as a server going away does.
  void CloseConnection() {
    std::lock_guard<std::mutex> lock(mu_);
    if (conn_) conn_->Close("going away");
  }
  std::optional<api::CommandResultMsg> NextResult(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, timeout, [&] { return !results_.empty(); })) return std::nullopt;
    auto r = results_.front();
    results_.pop_front();
    return r;
  }

 private:
  std::atomic<uint64_t> epoch_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<net::WsConnection> conn_;
  int registrations_ = 0;
  bool closed_ = false;
  std::deque<api::CommandResultMsg> results_;
  net::HttpServer http_;  // last: stopped before the rest goes
};

}  // namespace rota::testing
