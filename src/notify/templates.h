#pragma once
// Email templates: violation and idle-reservation notices as subject + text + HTML.
// Every user-supplied value is HTML-escaped in the HTML part and stripped of control
// characters everywhere (so it cannot forge lines or headers). Times are RFC 3339 UTC.
// Pure functions; thread-safe. The returned Email has an empty `to`: the caller adds
// the recipients.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "notify/smtp_mailer.h"

namespace rota::notify {

// A process using a reserved GPU that it is not entitled to.
struct ViolationNotice {
  std::string node;
  uint32_t gpu_index = 0;
  std::string gpu_uuid;
  std::string offender_user;
  std::vector<std::pair<int64_t, std::string>> processes;  // pid, command
  std::string reservation_title, reservation_owner;
  int64_t reservation_start_ms = 0, reservation_end_ms = 0;
  std::string next_action;     // what rota does next, e.g. "stop the processes"; "" = nothing
  int64_t next_action_ms = 0;  // when (Unix ms); 0 = not scheduled
  bool dry_run = false;        // enforcement in dry-run mode: nothing is done automatically
  std::string server_url;      // "https://rota.example.com"; links only for http(s)
  int64_t violation_id = 0;
};

// A reservation whose GPUs sit idle.
struct IdleReservationNotice {
  int64_t reservation_id = 0;
  std::string title, owner, node;
  std::vector<uint32_t> gpus;
  int64_t idle_since_ms = 0;
  double avg_util = 0;          // average GPU utilization over the idle period, percent
  int64_t will_release_ms = 0;  // when rota releases it; 0 = no automatic release
  int64_t released_ms = 0;      // when rota released it (ended it early); 0 = not released
  std::string server_url;
};

// To the user whose processes use the GPU: stop, what happens next and when.
Email RenderViolationForOffender(const ViolationNotice& n);
// To the reservation owner and admins: who uses the GPU, what rota did and does next.
Email RenderViolationForOwner(const ViolationNotice& n);
// To the reservation owner: the reservation is idle (and when it will be released).
Email RenderIdleReservation(const IdleReservationNotice& n);

// &, <, >, " and ' as entities.
std::string HtmlEscape(std::string_view text);

}  // namespace rota::notify
