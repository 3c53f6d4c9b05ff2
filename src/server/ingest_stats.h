#pragma once
// Counters the server exports on /metrics. Thread-safe (atomics).

#include <atomic>
#include <cstdint>

namespace rota::server {

struct IngestStats {
  std::atomic<uint64_t> samples_received{0};    // node samples decoded from agents
  std::atomic<uint64_t> samples_committed{0};   // node samples committed to the store
  std::atomic<uint64_t> samples_rejected{0};    // store refused (queue full, I/O error)
  std::atomic<uint64_t> messages_rejected{0};   // malformed or wrong-version agent messages
  std::atomic<uint64_t> auth_failures{0};       // agent connections with a wrong token
  std::atomic<uint64_t> agent_connections_total{0};
};

}  // namespace rota::server
