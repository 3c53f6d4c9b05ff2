#include "net/server_state.h"

#include <algorithm>

#include "common/clock.h"
#include "common/log.h"
#include "common/mutex.h"
#include "net/url.h"

namespace rota::net::internal {

void ServerState::Observe(const HttpRequest& request, int status, SteadyTime since) const {
  if (!observer) return;
  double seconds = std::chrono::duration<double>(SteadyNow() - since).count();
  try {
    observer(request, status, seconds);
  } catch (const std::exception& e) {
    ROTA_LOG(ERROR) << "access observer threw: " << e.what();
  } catch (...) {
    ROTA_LOG(ERROR) << "access observer threw a non-exception";
  }
}

ConnectionSlot ConnectionSlot::Acquire(const std::shared_ptr<ServerState>& state,
                                       const std::string& address, std::string* why) {
  ConnectionSlot slot;
  const HttpServerOptions& o = state->options;
  const bool limited = o.max_connections_per_address > 0 && !address.empty() && !IsLoopbackHost(address);
  MutexLock lock(&state->mu);
  auto refuse = [&](std::string reason) {
    if (why != nullptr) *why = std::move(reason);
    return ConnectionSlot();
  };
  if (state->connections >= o.max_connections) {
    return refuse(std::to_string(o.max_connections) + " connections are open");
  }
  const int others = state->connections - state->websockets;
  const int other_budget = o.max_connections - std::max(0, o.reserved_websocket_connections);
  if (others >= other_budget) {
    return refuse(std::to_string(others) + " non-WebSocket connections are open (the other " +
                  std::to_string(o.max_connections - other_budget) + " are kept for agents)");
  }
  if (limited) {
    int& mine = state->per_address[address];
    if (mine >= o.max_connections_per_address) {
      return refuse(std::to_string(mine) + " connections from " + address + " are open");
    }
    ++mine;
    slot.address_ = address;
  }
  ++state->connections;
  slot.state_ = state;
  slot.id_ = ++state->next_id;
  return slot;
}

void ConnectionSlot::PromoteToWebSocket() {
  if (!state_ || websocket_) return;
  MutexLock lock(&state_->mu);
  websocket_ = true;
  ++state_->websockets;
  ForgetAddress();
}

void ConnectionSlot::ForgetAddress() {
  if (address_.empty()) return;
  auto it = state_->per_address.find(address_);
  if (it != state_->per_address.end() && --it->second <= 0) state_->per_address.erase(it);
  address_.clear();
}

ConnectionSlot& ConnectionSlot::operator=(ConnectionSlot&& other) noexcept {
  if (this != &other) {
    Release();
    state_ = std::move(other.state_);
    id_ = other.id_;
    address_ = std::move(other.address_);
    websocket_ = other.websocket_;
    other.state_ = nullptr;
    other.id_ = 0;
    other.address_.clear();
    other.websocket_ = false;
  }
  return *this;
}

void ConnectionSlot::Attach(const std::shared_ptr<Session>& session) {
  if (!state_) return;
  {
    MutexLock lock(&state_->mu);
    state_->live[id_] = session;
  }
  // Stop() sets `stopping` before it snapshots `live`: a session registered after the snapshot
  // sees the flag here.
  if (state_->stopping) session->Shutdown();
}

void ConnectionSlot::Release() {
  if (!state_) return;
  {
    MutexLock lock(&state_->mu);
    state_->live.erase(id_);
    --state_->connections;
    if (websocket_) --state_->websockets;
    ForgetAddress();
  }
  state_->cv.NotifyAll();
  state_.reset();
  id_ = 0;
  websocket_ = false;
}

void SessionLink::Bind(std::weak_ptr<Session> session) {
  std::shared_ptr<Session> bound;  // dropped after the lock, as in Push
  MutexLock lock(&mu_);
  if (detached_) return;
  session_ = std::move(session);
  if (unbound_overflow_code_) {
    bound = session_.lock();
    if (bound) bound->CloseWith(*unbound_overflow_code_, "send queue overflow");
  }
}

bool SessionLink::Push(std::string message, int overflow_code) {
  std::shared_ptr<Session> session;  // dropped after the lock: its destructor may run here
  bool queued = false;
  {
    MutexLock lock(&mu_);
    if (detached_) return false;
    switch (outbox_.Push(std::move(message))) {
      case Outbox::PushResult::kQueuedStartWriter:
        session = session_.lock();
        if (session) session->Kick();
        queued = true;
        break;
      case Outbox::PushResult::kQueued:
        queued = true;
        break;
      case Outbox::PushResult::kClosed:
        break;
      case Outbox::PushResult::kOverflow:
        session = session_.lock();
        if (session) {
          session->CloseWith(overflow_code, "send queue overflow");
        } else {
          unbound_overflow_code_ = overflow_code;  // Bind closes it
        }
        break;
    }
  }
  return queued;
}

void SessionLink::RequestClose(int code, std::string reason) {
  std::shared_ptr<Session> session;
  MutexLock lock(&mu_);
  if (detached_) return;
  session = session_.lock();
  if (session) session->CloseWith(code, std::move(reason));
}

void SessionLink::End() {
  std::shared_ptr<Session> session;  // dropped after the lock, as in Push
  MutexLock lock(&mu_);
  // Closed already (the session finished, or overflowed): nothing to end, and the session
  // (its io_context may be going away with a stopping server) is not touched, as Push.
  if (detached_ || outbox_.closed()) return;
  outbox_.Seal();
  session = session_.lock();
  if (session) session->Kick();
}

void SessionLink::Detach() {
  std::weak_ptr<Session> old;
  MutexLock lock(&mu_);
  detached_ = true;
  old = std::move(session_);
  outbox_.Close();
}

std::string FormatEvent(const std::string& event, const std::string& data) {
  std::string out;
  out.reserve(event.size() + data.size() + 16);
  if (!event.empty()) {
    out += "event: ";
    for (char c : event) out += (c == '\n' || c == '\r') ? ' ' : c;
    out += '\n';
  }
  size_t start = 0;
  while (true) {
    size_t end = data.find('\n', start);
    std::string_view line = std::string_view(data).substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out += "data: ";
    out += line;
    out += '\n';
    if (end == std::string::npos) break;
    start = end + 1;
  }
  out += '\n';
  return out;
}

}  // namespace rota::net::internal
