#pragma once
// Reservations as values, and the pure rules about them: request decoding and
// validation, GPU choice, edit rules. No store, no clock: `now_ms` is passed
// in. See docs/design-reservations.md.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/codec.h"
#include "common/status.h"

namespace rota::reserve {

inline constexpr int64_t kDayMs = 86'400'000;
// Hard limits, whatever the policies say.
inline constexpr int64_t kMaxAheadMs = 366 * kDayMs;   // start at most this far ahead
inline constexpr int64_t kMaxLengthMs = 366 * kDayMs;  // end - start at most this
// A start (or a running reservation's new end) up to this far in the past is
// taken as "now" (client clocks and round trips); earlier is refused.
inline constexpr int64_t kPastGraceMs = 60'000;
inline constexpr size_t kMaxTitleChars = 200;          // code points
inline constexpr size_t kMaxDescriptionChars = 4000;   // code points
inline constexpr size_t kMaxEnforcementBytes = 16 * 1024;

enum class State { kUpcoming, kRunning, kEnded, kCancelled };
const char* StateName(State state);  // "upcoming", "running", "ended", "cancelled"
Result<State> ParseState(const std::string& text);

struct Reservation {
  int64_t id = 0;
  int64_t owner_id = 0;
  std::string owner;  // username (filled by the store from users)
  std::string node;
  std::vector<uint32_t> gpus;          // ascending GPU indices on `node`
  std::vector<std::string> gpu_uuids;  // parallel to gpus ("" when unknown)
  std::string title;
  std::string description;
  int64_t start_ms = 0;  // [start_ms, end_ms), UTC
  int64_t end_ms = 0;
  std::optional<int64_t> cancelled_ms;  // set only for reservations cancelled before they started
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
  api::Json enforcement = api::Json::object();
  std::optional<double> avg_util_gpu;  // stored when it ended
  std::optional<double> avg_util_mem;
  std::optional<int64_t> idle_notified_ms;

  State StateAt(int64_t now_ms) const;
  // True when [start_ms, end_ms) intersects [from_ms, to_ms) and not cancelled.
  bool Overlaps(int64_t from_ms, int64_t to_ms) const;
};

// How a create names its GPUs (exactly one way).
enum class GpuChoice { kIndices, kUuids, kCount, kWholeNode };

struct CreateRequest {
  std::string node;
  GpuChoice choice = GpuChoice::kIndices;
  std::vector<uint32_t> gpus;          // kIndices
  std::vector<std::string> gpu_uuids;  // kUuids
  uint32_t count = 0;                  // kCount
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  std::string title;
  std::string description;
  api::Json enforcement = api::Json::object();
};

// Changes to an existing reservation; absent fields keep their value.
struct Patch {
  std::optional<int64_t> start_ms;
  std::optional<int64_t> end_ms;
  std::optional<std::string> title;
  std::optional<std::string> description;
  std::optional<api::Json> enforcement;
};

// Decodes POST /api/v1/reservations bodies: {node, gpus | gpu_uuids | count |
// whole_node, start, end (RFC 3339), title, description?, enforcement?}.
// InvalidArgument naming the field for wrong types, unknown fields, malformed
// times, bad titles, none or several GPU choices. Interval rules are checked by
// CheckNewInterval, not here.
Result<CreateRequest> CreateRequestFromJson(const api::Json& j);
// Decodes PATCH bodies: {start?, end?, title?, description?, enforcement?}.
Result<Patch> PatchFromJson(const api::Json& j);

// Field checks (InvalidArgument naming the field).
Status ValidateTitle(const std::string& title);  // 1..200 code points, UTF-8, no control chars
Status ValidateDescription(const std::string& text);  // <= 4000 code points, UTF-8
Status ValidateEnforcement(const api::Json& j);  // a JSON object of <= 16 KiB

// Checks [start_ms, end_ms) of a new reservation requested at now_ms: end after
// start, start not in the past (beyond kPastGraceMs), not more than kMaxAheadMs
// ahead, not longer than kMaxLengthMs. Returns the start to store (a start within
// the grace becomes now_ms).
Result<int64_t> CheckNewInterval(int64_t start_ms, int64_t end_ms, int64_t now_ms);

// Edit rules (ownership is the caller's business). Nothing ended or cancelled
// changes. A running reservation keeps its start; its end may move to any time
// >= now (shorten or extend). An upcoming one may move anywhere not in the past.
// Returns the reservation as it would be after the patch: Conflict when its state
// forbids the change, InvalidArgument for bad values.
Result<Reservation> ApplyPatch(const Reservation& current, const Patch& patch, int64_t now_ms);
// Cancel: an upcoming reservation becomes cancelled (cancelled_ms = now); a
// running one ends now (end_ms = now). Conflict when ended or cancelled already.
Result<Reservation> ApplyCancel(const Reservation& current, int64_t now_ms);

// A GPU of a node as the cluster knows it.
struct NodeGpu {
  uint32_t index = 0;
  std::string uuid;
  std::string model;  // e.g. "NVIDIA A100-SXM4-80GB"
};
// A slot held by another reservation that overlaps the requested interval.
// A GPU taken in a time range: by a reservation, or (job_id > 0) by a running
// job of another user that will not make way for one (not preemptible; end_ms
// INT64_MAX when it has no time limit).
struct Busy {
  uint32_t gpu = 0;
  int64_t reservation_id = 0;
  std::string owner;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  int64_t job_id = 0;
};

// Resolves the GPU choice of `req` on a node with GPUs `node_gpus`, given the
// overlapping slots `busy`. Returns ascending indices. NotFound for an unknown
// index or UUID; InvalidArgument for a count above the node's GPUs or a node
// without GPUs; Conflict (see ConflictMessage) when a named GPU is busy or too
// few are free.
Result<std::vector<uint32_t>> ChooseGpus(const CreateRequest& req,
                                         const std::vector<NodeGpu>& node_gpus,
                                         const std::vector<Busy>& busy);
// Checks that none of `gpus` is in `busy`; Conflict naming them otherwise.
Status CheckFree(const std::string& node, const std::vector<uint32_t>& gpus,
                 const std::vector<Busy>& busy);
// "gpu-a/1 is reserved by alice from 2026-11-23T09:00:00Z to 2026-11-23T11:00:00Z
// (reservation 17)", several joined by "; ".
std::string ConflictMessage(const std::string& node, const std::vector<Busy>& busy);

// The API view: ids, owner, node, gpus, gpu_uuids, title, description, start,
// end (RFC 3339), start_ms, end_ms, state (at now_ms), created, updated,
// cancelled?, enforcement, avg_util_gpu?, avg_util_mem?.
api::Json ToJson(const Reservation& r, int64_t now_ms);

// "2h", "1d 4h", "45m", "30s".
std::string FormatDurationMs(int64_t ms);

}  // namespace rota::reserve
