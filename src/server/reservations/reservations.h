#pragma once
// Reservations: the reservation calendar and its policies, kept in the store
// (tables reservations, reservation_gpus, policies; schema v2), with the live
// utilisation of running reservations and idle handling.
// See docs/design-reservations.md.
//
// No two reservations overlap on a GPU: every create and edit runs its checks
// and its insert in ONE Store::Write task, and the store runs tasks one at a
// time, so a check-then-insert cannot interleave with another.
//
// Thread-safe: every method may be called from any thread. Blocking (store).

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "reserve/policy.h"
#include "reserve/reservation.h"
#include "server/nodes/cluster_state.h"
#include "server/reservations/reservation_usage.h"
#include "server/store/store.h"

namespace rota::server {

using reserve::Reservation;

// Told to the owner when a running reservation has been idle long enough
// (once per reservation), and when policy released it.
struct IdleNotice {
  int64_t reservation_id = 0;
  int64_t owner_id = 0;
  std::string owner;        // username
  std::string owner_email;  // "" when the user has none
  std::string node;
  std::vector<uint32_t> gpus;
  std::string title;
  std::string policy;  // the policy whose idle rule fired
  double threshold_pct = 0;
  int64_t idle_since_ms = 0;
  double avg_util_gpu = 0;  // mean GPU utilisation since idle_since_ms, percent
  int64_t end_ms = 0;     // the reservation's end (now, when released)
  bool released = false;  // the reservation was ended early
  std::string reason;     // readable, for mail and audit
};

// Filters for List; unset fields do not filter.
struct ReservationQuery {
  std::optional<int64_t> owner_id;
  std::string node;
  std::optional<int64_t> from_ms;  // reservations overlapping [from_ms, to_ms)
  std::optional<int64_t> to_ms;
  std::optional<reserve::State> state;  // at now
  int limit = 100;                      // 1..kMaxReservationListLimit
};
inline constexpr int kMaxReservationListLimit = 1000;

class Reservations {
 public:
  using IdleHook = std::function<void(const IdleNotice&)>;
  // Checks a reservation's enforcement overrides against the policies in force
  // (EnforcementSettingsFor, enforcement_binding.h). Runs inside the write task
  // of a create or an edit that sets non-empty overrides; an error refuses it.
  using EnforcementCheck = std::function<Status(
      const reserve::Requester& who, const std::string& node,
      const std::vector<reserve::NodeGpu>& gpus, const api::Json& overrides,
      const std::vector<reserve::Policy>& policies)>;

  // All pointers borrowed; they must outlive this object.
  Reservations(store::Store* store, ClusterState* cluster, const Clock* clock);
  // Removes the ClusterState listener.
  ~Reservations();
  Reservations(const Reservations&) = delete;
  Reservations& operator=(const Reservations&) = delete;

  // The GPUs of `node` that running jobs of users other than `owner_id` hold
  // past `from_ms` and will not give up (reserve::Busy with job_id). A new
  // reservation (or one moved earlier or made longer) does not take them:
  // Conflict naming the job. Called with no lock of this object held.
  using JobHolds = std::function<std::vector<reserve::Busy>(const std::string& node, int64_t owner_id,
                                                             int64_t from_ms)>;
  void SetJobHolds(JobHolds holds) { job_holds_ = std::move(holds); }
  // Called for idle notices (on the thread calling Tick). Set before Start.
  void SetIdleHook(IdleHook hook) { idle_hook_ = std::move(hook); }
  // Set before serving requests.
  void SetEnforcementCheck(EnforcementCheck check) { enforcement_check_ = std::move(check); }
  // Called after a reservation is created, edited, cancelled or released, on the
  // thread that changed it, with no lock of this object held (the scheduler
  // plans around reservations: it passes at once). Set before serving requests.
  void SetChangeHook(std::function<void()> hook) { change_hook_ = std::move(hook); }
  // Loads running and upcoming reservations (and those that ended unfinalized
  // in the last day) for utilisation tracking, and listens to ClusterState.
  Status Start();
  // Stores the averages of reservations that ended and applies idle rules
  // (notify; release = end now). Call periodically (every few seconds).
  void Tick(int64_t now_ms);

  // ---- reservations ----

  // Creates a reservation for `who`. InvalidArgument for bad fields or times;
  // NotFound for an unknown node or GPU; Conflict naming the overlapping
  // reservations; PermissionDenied naming the refusing policy and rule.
  Result<Reservation> Create(const reserve::Requester& who, const reserve::CreateRequest& req);
  // Edits reservation `id` (reserve::ApplyPatch rules; policies and overlap
  // checked again when the time changes). PermissionDenied unless `who` owns it
  // or is an admin; NotFound for an unknown id.
  Result<Reservation> Update(const reserve::Requester& who, int64_t id, const reserve::Patch& patch);
  // Cancels an upcoming reservation or ends a running one now (ApplyCancel).
  Result<Reservation> Cancel(const reserve::Requester& who, int64_t id);
  Result<Reservation> Get(int64_t id);
  // The `limit` matching reservations with the latest starts, in start order; `truncated`
  // when more matched. InvalidArgument for a bad limit or range.
  struct ListResult {
    std::vector<Reservation> reservations;
    bool truncated = false;
  };
  Result<ListResult> List(const ReservationQuery& q);
  // Reservations running on `node` at `now_ms` (for enforcement).
  Result<std::vector<Reservation>> ActiveOn(const std::string& node, int64_t now_ms);
  // Every reservation, not cancelled, overlapping [from_ms, to_ms), by start.
  Result<std::vector<Reservation>> Overlapping(int64_t from_ms, int64_t to_ms);
  // Changes whenever a reservation is created, edited, cancelled or ended early
  // (readers of Overlapping refresh when it moved).
  uint64_t Version() const { return version_.load(std::memory_order_acquire); }
  // Reservations of `user_id` running on `node` at `now_ms` (for `rota exec`).
  Result<std::vector<Reservation>> HeldBy(int64_t user_id, const std::string& node, int64_t now_ms);
  // Live utilisation of a tracked (upcoming or running) reservation.
  std::optional<LiveUsage> Usage(int64_t id) const { return tracker_.Usage(id); }

  // ---- policies (reservations_policies.cc) ----

  // InvalidArgument for a bad spec; AlreadyExists when the name is taken.
  Result<reserve::Policy> CreatePolicy(const reserve::Policy& policy);
  // Replaces policy `id`'s name and spec. NotFound, AlreadyExists.
  Result<reserve::Policy> UpdatePolicy(int64_t id, const reserve::Policy& policy);
  Status DeletePolicy(int64_t id);
  Result<reserve::Policy> GetPolicy(int64_t id);
  Result<std::vector<reserve::Policy>> ListPolicies();

 private:
  std::vector<reserve::NodeGpu> NodeGpus(const std::string& node) const;
  reserve::ModelOf ModelLookup() const;
  // (Re)tracks `r` with the idle rules of the current policies.
  void TrackReservation(const Reservation& r, const std::vector<reserve::Policy>& policies);
  void RefreshIdleRules();
  void Finalize(const TrackedReservation& r, const LiveUsage& usage);
  void HandleIdle(const IdleDue& due, int64_t now_ms);

  store::Store* const store_;
  ClusterState* const cluster_;
  const Clock* const clock_;
  IdleHook idle_hook_;
  EnforcementCheck enforcement_check_;
  UsageTracker tracker_;
  int listener_ = 0;
  std::atomic<uint64_t> version_{0};
  std::function<void()> change_hook_;
  JobHolds job_holds_;
};


}  // namespace rota::server
