#pragma once
// Quotas: per-user and per-group limits and fair-share weights, set by admins and
// kept in the store (table quotas, schema v6). The scheduler (sched::Snapshot)
// enforces them: a job whose start would exceed its owner's or group's limit waits
// with the reason ("user quota: 8 GPUs in use, limit 8").
//
//   max_gpus       GPUs held at once by the user's (group's) jobs; 0: no limit
//   max_gpu_hours  GPU-hours per quota period (setting quota_period, default 30 d:
//                  jobs that ended in the last period or still run); 0: no limit
//   share          fair-share weight (default 1): usage counts 1/share
//
// Thread-safe: every method may be called from any thread. The list is cached in
// memory; writes go through the store.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "api/codec.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "sched/snapshot.h"
#include "server/store/store.h"

namespace rota::server {

inline constexpr size_t kMaxQuotas = 10'000;
inline constexpr double kMaxShare = 1'000'000;
inline constexpr double kMinShare = 0.001;

struct QuotaDef {
  std::string kind;  // "user" | "group"
  std::string name;
  sched::Quota limits;
  double share = 1;
  int64_t updated_ms = 0;
};

// Body of PUT /api/v1/quotas/{kind}/{name}: {max_gpus?, max_gpu_hours?, share?}.
// Unknown keys and out-of-range values are InvalidArgument naming the field; so
// are a kind other than user/group and a badly formed name.
Result<QuotaDef> QuotaFromJson(const std::string& kind, const std::string& name,
                               const api::Json& body);
api::Json ToJson(const QuotaDef& q);

// What the scheduler takes from the quotas.
struct QuotaView {
  std::map<std::string, sched::Quota> user_quotas, group_quotas;
  std::map<std::string, double> user_shares, group_shares;
};

class Quotas {
 public:
  // Borrowed; they must outlive this.
  Quotas(store::Store* store, const Clock* clock);

  // Loads the stored quotas.
  Status Start();

  // Users first, then groups, each by name.
  std::vector<QuotaDef> List() const;
  Result<QuotaDef> Get(const std::string& kind, const std::string& name) const;
  QuotaView ForScheduler() const;
  // Creates or replaces. ResourceExhausted beyond kMaxQuotas.
  Result<QuotaDef> Set(const QuotaDef& q);
  // NotFound when there is none.
  Status Delete(const std::string& kind, const std::string& name);
  // Called after a change, on the thread that made it, with no lock of this
  // object held (the scheduler passes at once). Set before serving requests.
  void SetChangeHook(std::function<void()> hook) { change_hook_ = std::move(hook); }

 private:
  store::Store* const store_;
  const Clock* const clock_;
  mutable Mutex mu_;
  std::map<std::pair<std::string, std::string>, QuotaDef> quotas_ ROTA_GUARDED_BY(mu_);
  std::function<void()> change_hook_;
};

}  // namespace rota::server
