#pragma once
// SQL of reservations (tables reservations and reservation_gpus) and their
// policies (table policies). The rules (who may reserve what, how edits
// change a reservation) are in reserve/, the service that applies them in
// server/reservations*.cc. Called inside Store::Write / Store::Read tasks.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "reserve/policy.h"
#include "reserve/reservation.h"
#include "server/store/sql.h"

namespace rota::store {

// ---- reservations (with their GPUs, owner's username filled in) ----

// NotFound naming the id when there is none.
Result<reserve::Reservation> GetReservation(Db& db, int64_t id);
// Not cancelled, and ending after `now_ms` - 1 day: those still followed for
// idle rules, or whose averages are not stored yet.
Result<std::vector<reserve::Reservation>> RecentReservations(Db& db, int64_t now_ms);
// Not cancelled, running on `node` at `now_ms`, by id.
Result<std::vector<reserve::Reservation>> ActiveReservationsOn(Db& db, const std::string& node,
                                                               int64_t now_ms);
// Not cancelled, overlapping [from_ms, to_ms), by start.
Result<std::vector<reserve::Reservation>> OverlappingReservations(Db& db, int64_t from_ms, int64_t to_ms);
// The owner's reservations, not cancelled, overlapping [from_ms, to_ms), but `exclude_id`.
Result<std::vector<reserve::Reservation>> OwnerReservations(Db& db, int64_t owner_id, int64_t from_ms,
                                                            int64_t to_ms, int64_t exclude_id);

struct ReservationFilter {
  std::optional<int64_t> owner_id;
  std::string node;  // "": any
  std::optional<int64_t> from_ms, to_ms;  // overlapping [from, to)
  std::optional<reserve::State> state;    // at now_ms
  int64_t now_ms = 0;
  int64_t limit = 100;
};
// Matching reservations, latest start first, at most `limit`.
Result<std::vector<reserve::Reservation>> ListReservations(Db& db, const ReservationFilter& f);

// Other live reservations holding any of `gpus` of `node` during [start, end).
Result<std::vector<reserve::Busy>> BusyGpus(Db& db, const std::string& node,
                                            const std::vector<uint32_t>& gpus, int64_t start_ms,
                                            int64_t end_ms, int64_t exclude_id);
// Inserts r (owner_id, node, gpus with gpu_uuids, title, description, times,
// enforcement; created_ms is also its updated_ms); returns its id.
Result<int64_t> InsertReservation(Db& db, const reserve::Reservation& r);
// Writes an edit: title, description, times, cancellation, enforcement,
// updated_ms. A cancelled reservation keeps its GPU rows (history) with an
// empty slot that matches no time range.
Status UpdateReservation(Db& db, const reserve::Reservation& r);
// Marks an idle reservation told at `now_ms`; with `release`, it ends at
// `end_ms` (its GPUs from now_ms).
Status MarkReservationIdle(Db& db, int64_t id, int64_t now_ms, int64_t end_ms, bool release);
// Stores the averages of an ended reservation.
Status StoreReservationAverages(Db& db, int64_t id, std::optional<double> util_gpu,
                                std::optional<double> util_mem);
// Average GPU and memory utilisation of `gpus` of `node` over the minutes of
// [from_ms, to_ms) (from the minute aggregates); nullopt where none is stored.
Result<std::pair<std::optional<double>, std::optional<double>>> GpuUtilFromMinutes(
    Db& db, const std::string& node, const std::vector<uint32_t>& gpus, int64_t from_ms, int64_t to_ms);

// ---- policies ----

// Every policy, by id. Internal for a stored spec that does not read.
Result<std::vector<reserve::Policy>> LoadReservationPolicies(Db& db);
// NotFound naming the id.
Result<reserve::Policy> GetReservationPolicy(Db& db, int64_t id);
// AlreadyExists when the name is taken; returns the stored policy.
Result<reserve::Policy> InsertReservationPolicy(Db& db, const reserve::Policy& p, int64_t now_ms);
// NotFound for an unknown id; AlreadyExists when the name is another policy's.
Result<reserve::Policy> UpdateReservationPolicy(Db& db, int64_t id, const reserve::Policy& p,
                                                int64_t now_ms);
// NotFound for an unknown id.
Status DeleteReservationPolicy(Db& db, int64_t id);

}  // namespace rota::store
