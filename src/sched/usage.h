#pragma once
// What the scheduler carries from one pass to the next, advanced with time as
// a value: fair-share usage (decayed GPU-ms per user and group) and when each
// running reservation's owner last used its GPUs. Pure: the live server
// (server/jobs) and `rota simulate` (sim/replay.cc) advance usage with the
// same function, so a replay runs what the server runs. See
// docs/design-sched.md ("Fair share", "Idle reservations").

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace rota::sched {

// Decayed GPU-ms by user and by group.
struct Usage {
  std::map<std::string, double> user, group;
};

// What one job holds while usage accrues: its owner, the owner's primary
// group ("" none) and the GPUs its current run holds. The names are borrowed
// for the call.
struct UsageHolder {
  std::string_view user, group;
  double gpus = 0;
};

// Usage `elapsed_ms` later: every entry decayed by the half-life (0: no
// decay), entries that fell under 1 GPU-ms dropped, then each holder's
// gpus * elapsed_ms added to its user and (when set) its group. elapsed_ms
// <= 0 changes nothing.
void AdvanceUsage(Usage* usage, int64_t elapsed_ms, int64_t half_life_ms, const std::vector<UsageHolder>& holders);
// The entries of `usage` decayed by `elapsed_ms` (nothing dropped or added):
// what a stored usage is worth later.
std::map<std::string, double> Decayed(const std::map<std::string, double>& usage, int64_t elapsed_ms,
                                      int64_t half_life_ms);

// A reservation running now, and whether its owner uses its GPUs now (a
// process of the owner's on them, by hand or through a job).
struct ReservationUse {
  int64_t id = 0;
  int64_t start_ms = 0, end_ms = 0;
  bool used_now = false;
};
// When each running reservation's owner last used its GPUs, from the previous
// pass's `last_used`: now when used now, else the previous value, never
// before the reservation's start nor before `tracking_since_ms` (when the
// caller began watching: a restarted server does not count idle time it did
// not see). Reservations not running at now_ms are dropped. Those unused for
// at least idle_ms (> 0) are added to *idle.
std::map<int64_t, int64_t> TrackReservationUse(const std::vector<ReservationUse>& reservations,
                                               const std::map<int64_t, int64_t>& last_used,
                                               int64_t tracking_since_ms, int64_t now_ms, int64_t idle_ms,
                                               std::set<int64_t>* idle);

}  // namespace rota::sched
