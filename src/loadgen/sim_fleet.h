#pragma once
// SimAgentFleet: many simulated agents in one process, each one agent connection (the
// agent protocol over WebSocket) that behaves as `rota agent` does towards the server:
//  - one sample every interval into a bounded agent::SampleBuffer (the agent's own), sent
//    in batches and dropped from the buffer only when the server acks it (ack after
//    commit), the oldest dropped (and counted) when the buffer is full;
//  - several server URLs tried in turn, by the agent's rule (agent/reconnect.h): after a
//    failed connect, a refusal or a lost connection, the next one after 200 ms; once every
//    server failed in a row, 1 s when a follower answered, else a backoff (0.5 s doubling,
//    here to 4 s); on each registration, everything not yet acked is sent again.
// What each agent made, had acked and dropped is readable at any time (Counts), so a test
// can compare it with what the store holds.
//
// Threads: one driver thread (sampling, connecting, sending) and the WebSocket loop's
// threads (callbacks). Each agent's state is guarded by its own mutex. Thread-safe.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "net/tls.h"

namespace rota::net {
class WsClientLoop;
}

namespace rota::loadgen {

struct FleetOptions {
  std::string servers;  // http(s):// or ws(s):// base URLs, comma-separated
  std::string token;    // the join token
  int agents = 100;
  int gpus = 8;
  int64_t interval_ms = 1000;
  std::string name_prefix = "sim-";  // agent i is node <prefix><i>
  size_t buffer_samples = 600;       // per agent (the agent's: buffer_ms / interval_ms)
  size_t max_samples_per_message = 32;
  int loop_threads = 1;
  net::TlsClientConfig tls;
};

struct SimAgentCounts {
  std::string name;
  uint64_t produced = 0;  // samples made (seq 1..produced)
  uint64_t acked = 0;     // the highest seq the server acked (all up to it are stored)
  uint64_t dropped = 0;   // dropped unsent because the buffer was full
  size_t buffered = 0;    // waiting for an ack
  int registrations = 0;  // times it registered (1 + reconnections)
  int errors = 0;         // error messages from the server
  bool registered = false;
};

class SimAgentFleet {
 public:
  explicit SimAgentFleet(FleetOptions options);
  ~SimAgentFleet();  // Stop()
  SimAgentFleet(const SimAgentFleet&) = delete;
  SimAgentFleet& operator=(const SimAgentFleet&) = delete;

  // Checks the options (InvalidArgument naming the bad one) and starts the driver thread,
  // which connects every agent (spread over the first interval) and samples from then on.
  Status Start();
  // Stops sampling and closes every connection; Counts() stays readable.
  void Stop();
  // Stops making new samples (connections stay, buffers keep being sent), or resumes.
  void PauseSampling(bool paused) { paused_ = paused; }

  std::vector<SimAgentCounts> Counts() const;
  int registered() const;
  size_t buffered() const;  // samples not yet acked, all agents

  struct Agent;  // sim_fleet.cc

 private:
  void Drive();

  const FleetOptions options_;
  std::vector<std::string> ws_urls_;
  std::unique_ptr<net::WsClientLoop> loop_;
  std::vector<std::unique_ptr<Agent>> agents_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> paused_{false};
  std::thread driver_;
};

}  // namespace rota::loadgen
