#pragma once
// When an agent dials again after a failed connection attempt (pure; times as values).
// With several servers (servers sharing one store, docs/design-ha.md) it tries the next one
// soon after a failure and backs off only once every server failed in a row ("a round").
// How it backs off depends on what the round saw:
//  - some server answered, refusing with an HTTP status (a follower's 503 while no leader is
//    known, or while this agent must go to the leader): the cluster is up and a leader is
//    being chosen, so the next round starts after `answered_retry_ms` (the followers'
//    Retry-After), never later: the agent is back within about a second of a new leader,
//    well inside the new leader's grace before it declares tasks lost;
//  - no server answered (all unreachable): exponential backoff from min to max, as with one
//    server.
// The caller adds jitter to backoffs (not to the fixed delays).

#include <cstddef>
#include <cstdint>

namespace rota::agent {

struct ReconnectPolicy {
  int64_t next_server_ms = 200;     // after a failure, before trying the next server
  int64_t min_backoff_ms = 500;
  int64_t max_backoff_ms = 10'000;
  int64_t answered_retry_ms = 1'000;
};

struct ReconnectState {
  size_t server_index = 0;     // the server to dial next
  size_t failed_in_round = 0;  // servers failed in a row since the round began
  bool round_answered = false; // one of them answered with an HTTP refusal
  int64_t backoff_ms = 0;      // the last exponential backoff (0: none yet)
};

struct ReconnectDelay {
  int64_t delay_ms = 0;
  bool backoff = false;  // an exponential backoff (the caller may add jitter)
};

// After a failed attempt (or a lost connection) on s->server_index among `servers` (>= 1);
// `answered`: that server refused with an HTTP status. Moves to the next server.
ReconnectDelay AfterFailure(ReconnectState* s, size_t servers, bool answered, const ReconnectPolicy& p);

// After a registration: the next failure starts a new round from the shortest backoff.
void AfterRegistration(ReconnectState* s);

}  // namespace rota::agent
