#include "loadgen/sim_fleet.h"

#include <algorithm>
#include <chrono>
#include <random>

#include "agent/agent.h"
#include "agent/reconnect.h"
#include "agent/sample_buffer.h"
#include "api/codec.h"
#include "api/protocol.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "loadgen/sim_messages.h"
#include "net/ws_client.h"

namespace rota::loadgen {
namespace {

constexpr int64_t kMaxBackoffMs = 4000;

}  // namespace

struct SimAgentFleet::Agent {
  Agent(size_t capacity, std::string n, int i) : buffer(capacity), name(std::move(n)), index(i) {}

  Mutex mu;
  agent::SampleBuffer buffer ROTA_GUARDED_BY(mu);
  const std::string name;
  const int index;
  std::unique_ptr<net::WsClient> client ROTA_GUARDED_BY(mu);
  uint64_t attempt ROTA_GUARDED_BY(mu) = 0;
  bool connecting ROTA_GUARDED_BY(mu) = false;
  bool registered ROTA_GUARDED_BY(mu) = false;
  uint64_t sent_up_to ROTA_GUARDED_BY(mu) = 0;
  uint64_t acked ROTA_GUARDED_BY(mu) = 0;
  int64_t next_connect_ms ROTA_GUARDED_BY(mu) = 0;
  agent::ReconnectState reconnect ROTA_GUARDED_BY(mu);  // server_index: into ws_urls_
  int registrations ROTA_GUARDED_BY(mu) = 0;
  int errors ROTA_GUARDED_BY(mu) = 0;
  int64_t last_t_ms ROTA_GUARDED_BY(mu) = 0;

  // As the agent (agent/reconnect.h): the next server soon; after a round of all, 1 s if a
  // follower answered, else a growing backoff.
  void ScheduleReconnect(size_t servers, bool answered, int64_t now) ROTA_REQUIRES(mu) {
    agent::ReconnectPolicy p;
    p.max_backoff_ms = kMaxBackoffMs;
    const agent::ReconnectDelay d = agent::AfterFailure(&reconnect, servers, answered, p);
    static thread_local std::mt19937 rng(std::random_device{}());
    const int64_t jitter = d.backoff ? std::uniform_int_distribution<int64_t>(0, d.delay_ms / 4)(rng) : 0;
    next_connect_ms = now + d.delay_ms + jitter;
  }
};

SimAgentFleet::SimAgentFleet(FleetOptions options) : options_(std::move(options)) {}

SimAgentFleet::~SimAgentFleet() { Stop(); }

Status SimAgentFleet::Start() {
  if (options_.agents < 1 || options_.agents > 100'000) return Status::InvalidArgument("agents must be 1..100000");
  if (options_.gpus < 0 || options_.gpus > 64) return Status::InvalidArgument("gpus must be 0..64");
  if (options_.interval_ms < 100) return Status::InvalidArgument("interval must be at least 100 ms");
  if (options_.token.empty()) return Status::InvalidArgument("a join token is needed");
  ASSIGN_OR_RETURN(ws_urls_, agent::AgentConnectUrls(options_.servers));
  loop_ = std::make_unique<net::WsClientLoop>(options_.loop_threads);
  for (int i = 0; i < options_.agents; ++i) {
    agents_.push_back(std::make_unique<Agent>(options_.buffer_samples, options_.name_prefix + std::to_string(i), i));
    MutexLock lock(&agents_.back()->mu);
    agents_.back()->reconnect.server_index = static_cast<size_t>(i) % ws_urls_.size();
    // Connections spread over the first interval.
    agents_.back()->next_connect_ms =
        RealClock::Get().MonotonicMs() + options_.interval_ms * i / options_.agents;
  }
  driver_ = std::thread([this] { Drive(); });
  return Status::Ok();
}

void SimAgentFleet::Stop() {
  stop_ = true;
  if (driver_.joinable()) driver_.join();
  for (auto& a : agents_) {
    std::unique_ptr<net::WsClient> client;
    {
      MutexLock lock(&a->mu);
      ++a->attempt;  // callbacks of the last connection are ignored from now on
      a->registered = false;
      client = std::move(a->client);
    }
    client.reset();  // no callback runs after this
  }
  loop_.reset();
}

void SimAgentFleet::Drive() {
  const size_t servers = ws_urls_.size();
  const std::string bearer = "Bearer " + options_.token;
  int64_t next_sample = RealClock::Get().MonotonicMs() + options_.interval_ms;
  while (!stop_) {
    const int64_t now = RealClock::Get().MonotonicMs();
    const bool sample = now >= next_sample && !paused_;
    if (now >= next_sample) next_sample += options_.interval_ms;
    // One time per round, the same for every agent; never the same twice for one agent.
    const int64_t wall = RealClock::Get().NowMs() / options_.interval_ms * options_.interval_ms;
    for (auto& owned : agents_) {
      Agent* a = owned.get();
      MutexLock lock(&a->mu);
      if (sample) {
        const int64_t t = std::max(wall, a->last_t_ms + options_.interval_ms);
        a->last_t_ms = t;
        a->buffer.Push(SimSample(options_.gpus, t, a->index));
      }
      if (!a->client && !a->connecting && now >= a->next_connect_ms) {
        const uint64_t attempt = ++a->attempt;
        a->connecting = true;
        a->registered = false;
        net::WsClientOptions ws;
        ws.tls = options_.tls;
        a->client = loop_->NewClient(ws);
        a->client->SetOnMessage([a, attempt](const std::string& text) {
          auto msg = api::DecodeServerMessage(text);
          MutexLock l(&a->mu);
          if (attempt != a->attempt || !msg.ok()) return;
          if (std::holds_alternative<api::RegisteredMsg>(*msg)) {
            a->registered = true;
            a->registrations++;
            agent::AfterRegistration(&a->reconnect);
            a->sent_up_to = a->buffer.first_seq() - 1;  // everything not yet acked, again
          } else if (auto* ack = std::get_if<api::AckMsg>(&*msg)) {
            a->buffer.Ack(ack->seq);
            a->acked = std::max(a->acked, ack->seq);
          } else if (std::holds_alternative<api::ErrorMsg>(*msg)) {
            a->errors++;
          }
        });
        a->client->SetOnClosed([a, attempt, servers](const Status&) {
          MutexLock l(&a->mu);
          if (attempt != a->attempt) return;
          a->registered = false;
          a->connecting = false;
          a->client.reset();  // from inside its own callback: allowed, and the last one
          a->ScheduleReconnect(servers, false, RealClock::Get().MonotonicMs());
        });
        const std::string reg = api::Encode(
            SimRegistration(a->name, "sim-id-" + a->name, a->index, options_.gpus, options_.interval_ms));
        net::WsClient* raw = a->client.get();
        raw->Connect(ws_urls_[a->reconnect.server_index % servers], {{"Authorization", bearer}},
                     [a, attempt, servers, reg](const Status& st) {
                       MutexLock l(&a->mu);
                       if (attempt != a->attempt) return;
                       a->connecting = false;
                       if (!st.ok()) {
                         a->client.reset();
                         a->ScheduleReconnect(servers, agent::IsFollowerRefusal(st),
                                              RealClock::Get().MonotonicMs());
                         return;
                       }
                       if (a->client) a->client->Send(reg);
                     });
      }
      while (a->registered && a->client && a->sent_up_to + 1 < a->buffer.next_seq()) {
        uint64_t first = 0;
        auto batch = a->buffer.From(a->sent_up_to + 1, options_.max_samples_per_message, &first);
        if (batch.empty()) break;
        const size_t n = batch.size();
        if (!a->client->Send(api::Encode(api::SamplesMsg{first, std::move(batch)}))) break;
        a->sent_up_to = first + n - 1;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::vector<SimAgentCounts> SimAgentFleet::Counts() const {
  std::vector<SimAgentCounts> out;
  for (const auto& a : agents_) {
    MutexLock lock(&a->mu);
    SimAgentCounts c;
    c.name = a->name;
    c.produced = a->buffer.next_seq() - 1;
    c.acked = a->acked;
    c.dropped = a->buffer.dropped();
    c.buffered = a->buffer.size();
    c.registrations = a->registrations;
    c.errors = a->errors;
    c.registered = a->registered;
    out.push_back(std::move(c));
  }
  return out;
}

int SimAgentFleet::registered() const {
  int n = 0;
  for (const auto& a : agents_) {
    MutexLock lock(&a->mu);
    n += a->registered ? 1 : 0;
  }
  return n;
}

size_t SimAgentFleet::buffered() const {
  size_t n = 0;
  for (const auto& a : agents_) {
    MutexLock lock(&a->mu);
    n += a->buffer.size();
  }
  return n;
}

}  // namespace rota::loadgen
