#include "agent/reconnect.h"

#include <algorithm>

namespace rota::agent {

ReconnectDelay AfterFailure(ReconnectState* s, size_t servers, bool answered, const ReconnectPolicy& p) {
  if (servers == 0) servers = 1;
  s->round_answered = s->round_answered || answered;
  if (servers > 1) {
    s->server_index = (s->server_index + 1) % servers;
    if (++s->failed_in_round < servers) return {std::min(p.next_server_ms, p.min_backoff_ms), false};
  }
  const bool answered_round = s->round_answered;
  s->failed_in_round = 0;
  s->round_answered = false;
  if (answered_round && servers > 1) {
    s->backoff_ms = 0;  // the cluster is up: no growing backoff
    return {p.answered_retry_ms, false};
  }
  s->backoff_ms = s->backoff_ms == 0 ? p.min_backoff_ms : std::min(p.max_backoff_ms, s->backoff_ms * 2);
  return {s->backoff_ms, true};
}

void AfterRegistration(ReconnectState* s) {
  s->backoff_ms = 0;
  s->failed_in_round = 0;
  s->round_answered = false;
}

}  // namespace rota::agent
