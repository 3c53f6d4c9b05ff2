#include "server/reservations/reservations.h"

#include <algorithm>

#include "common/log.h"
#include "common/strings.h"
#include "common/time_util.h"
#include "server/store/accounts.h"
#include "server/store/reservations.h"

namespace rota::server {

using reserve::Busy;
using reserve::NodeGpu;
using reserve::Policy;
using reserve::Requester;
using store::Db;

namespace {

constexpr int64_t kWeekMs = 7 * reserve::kDayMs;

// The owner's other live reservations that matter to policies on [start, end):
// those of the ISO weeks it touches.
Result<std::vector<Reservation>> OwnersWeeks(Db& db, int64_t owner_id, int64_t start_ms,
                                             int64_t end_ms, int64_t exclude_id) {
  const int64_t lo = reserve::IsoWeekStart(start_ms);
  const int64_t hi = reserve::IsoWeekStart(end_ms - 1) + kWeekMs;
  return store::OwnerReservations(db, owner_id, lo, hi, exclude_id);
}

std::vector<NodeGpu> Select(const std::vector<NodeGpu>& all, const std::vector<uint32_t>& idx) {
  std::vector<NodeGpu> out;
  for (const auto& g : all) {
    if (std::find(idx.begin(), idx.end(), g.index) != idx.end()) out.push_back(g);
  }
  return out;
}

Status CheckOwner(const Requester& who, const Reservation& r) {
  if (who.admin || who.user_id == r.owner_id) return Status::Ok();
  return Status::PermissionDenied("reservation " + std::to_string(r.id) + " belongs to " +
                                  r.owner + "; only its owner or an admin may change it");
}

}  // namespace

Reservations::Reservations(store::Store* store, ClusterState* cluster, const Clock* clock)
    : store_(store), cluster_(cluster), clock_(clock) {}

Reservations::~Reservations() {
  if (listener_ != 0) cluster_->RemoveListener(listener_);
}

std::vector<NodeGpu> Reservations::NodeGpus(const std::string& node) const {
  std::vector<NodeGpu> out;
  auto view = cluster_->Node(node);
  if (!view) return out;
  for (const auto& g : view->info->gpus) out.push_back(NodeGpu{g.index, g.uuid, g.name});
  std::sort(out.begin(), out.end(), [](const NodeGpu& a, const NodeGpu& b) { return a.index < b.index; });
  return out;
}

reserve::ModelOf Reservations::ModelLookup() const {
  auto nodes = std::make_shared<std::map<std::string, std::vector<NodeGpu>>>();
  for (const auto& n : cluster_->Nodes()) nodes->emplace(n.info->name, NodeGpus(n.info->name));
  return [nodes](const std::string& node, uint32_t gpu) -> std::string {
    auto it = nodes->find(node);
    if (it == nodes->end()) return "";
    for (const auto& g : it->second) {
      if (g.index == gpu) return g.model;
    }
    return "";
  };
}

Status Reservations::Start() {
  const int64_t now = clock_->NowMs();
  std::vector<Reservation> rows;
  std::vector<Policy> policies;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(rows, store::RecentReservations(db, now));
    ASSIGN_OR_RETURN(policies, store::LoadReservationPolicies(db));
    return Status::Ok();
  }));
  for (const auto& r : rows) TrackReservation(r, policies);
  listener_ = cluster_->AddListener([this](const std::string& event, const NodeView& view) {
    if (event == "sample" && view.latest) tracker_.OnSample(view.info->name, *view.latest);
  });
  return Status::Ok();
}

void Reservations::TrackReservation(const Reservation& r, const std::vector<Policy>& policies) {
  version_.fetch_add(1, std::memory_order_acq_rel);
  std::vector<std::string> groups;
  if (!policies.empty()) {
    Status st = store_->Read([&](Db& db) -> Status {
      ASSIGN_OR_RETURN(groups, store::UserGroups(db, r.owner_id));
      return Status::Ok();
    });
    if (!st.ok()) ROTA_LOG(WARNING) << "reservation " << r.id << ": " << st.message();
  }
  TrackedReservation t;
  t.id = r.id;
  t.node = r.node;
  t.gpus = r.gpus;
  t.start_ms = r.start_ms;
  t.end_ms = r.end_ms;
  t.idle_rules = reserve::IdleRulesFor(policies, r.owner, groups, r.node, Select(NodeGpus(r.node), r.gpus));
  t.idle_notified = r.idle_notified_ms.has_value();
  tracker_.Track(t);
  if (change_hook_) change_hook_();
}

Result<Reservation> Reservations::Create(const Requester& who, const reserve::CreateRequest& req) {
  const int64_t now = clock_->NowMs();
  reserve::CreateRequest r = req;
  ASSIGN_OR_RETURN(r.start_ms, reserve::CheckNewInterval(req.start_ms, req.end_ms, now));
  RETURN_IF_ERROR(reserve::ValidateTitle(r.title));
  RETURN_IF_ERROR(reserve::ValidateDescription(r.description));
  RETURN_IF_ERROR(reserve::ValidateEnforcement(r.enforcement));
  if (!cluster_->Node(r.node)) return Status::NotFound("node '" + r.node + "' not found");
  const std::vector<NodeGpu> node_gpus = NodeGpus(r.node);
  std::vector<uint32_t> all;
  for (const auto& g : node_gpus) all.push_back(g.index);
  const reserve::ModelOf model_of = ModelLookup();

  Reservation out;
  std::vector<Policy> policies;
  // Read before the store's write (the job service may wait for the store).
  const std::vector<reserve::Busy> held =
      job_holds_ ? job_holds_(r.node, who.user_id, r.start_ms) : std::vector<reserve::Busy>{};
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(auto busy, store::BusyGpus(db, r.node, all, r.start_ms, r.end_ms, 0));
    busy.insert(busy.end(), held.begin(), held.end());
    ASSIGN_OR_RETURN(auto chosen, reserve::ChooseGpus(r, node_gpus, busy));
    ASSIGN_OR_RETURN(policies, store::LoadReservationPolicies(db));
    if (!who.admin && !policies.empty()) {
      ASSIGN_OR_RETURN(auto existing, OwnersWeeks(db, who.user_id, r.start_ms, r.end_ms, 0));
      reserve::PolicyRequest preq{r.node, Select(node_gpus, chosen), r.start_ms, r.end_ms, 0};
      RETURN_IF_ERROR(reserve::EvaluatePolicies(policies, who, preq, existing, model_of, now));
    }
    if (enforcement_check_ && !r.enforcement.empty()) {
      RETURN_IF_ERROR(enforcement_check_(who, r.node, Select(node_gpus, chosen), r.enforcement,
                                         policies));
    }
    Reservation row;
    row.owner_id = who.user_id;
    row.node = r.node;
    row.gpus = chosen;
    for (uint32_t gpu : chosen) {
      std::string uuid;
      for (const auto& ng : node_gpus) {
        if (ng.index == gpu) uuid = ng.uuid;
      }
      row.gpu_uuids.push_back(uuid);
    }
    row.title = r.title;
    row.description = r.description;
    row.start_ms = r.start_ms;
    row.end_ms = r.end_ms;
    row.created_ms = row.updated_ms = now;
    row.enforcement = r.enforcement;
    ASSIGN_OR_RETURN(const int64_t id, store::InsertReservation(db, row));
    ASSIGN_OR_RETURN(out, store::GetReservation(db, id));
    return Status::Ok();
  }));
  TrackReservation(out, policies);
  return out;
}

Result<Reservation> Reservations::Update(const Requester& who, int64_t id, const reserve::Patch& patch) {
  const int64_t now = clock_->NowMs();
  const reserve::ModelOf model_of = ModelLookup();
  Reservation out;
  std::vector<Policy> policies;
  // Jobs holding GPUs of its node from now on, read before the store's write
  // (the job service may wait for the store).
  std::vector<reserve::Busy> held;
  std::string held_node;
  if (job_holds_) {
    if (auto pre = Get(id); pre.ok()) {
      held_node = pre->node;
      held = job_holds_(pre->node, pre->owner_id, now);
    }
  }
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Reservation cur, store::GetReservation(db, id));
    RETURN_IF_ERROR(CheckOwner(who, cur));
    ASSIGN_OR_RETURN(Reservation next, reserve::ApplyPatch(cur, patch, now));
    ASSIGN_OR_RETURN(policies, store::LoadReservationPolicies(db));
    const bool grows = next.start_ms < cur.start_ms || next.end_ms > cur.end_ms ||
                       next.start_ms >= cur.end_ms || next.end_ms <= cur.start_ms;
    if (grows) {
      ASSIGN_OR_RETURN(auto busy, store::BusyGpus(db, next.node, next.gpus, next.start_ms, next.end_ms, id));
      // Jobs matter only when it starts earlier than before: from its old start
      // on, its GPUs were kept free of them.
      for (const auto& b : held) {
        const bool mine = std::find(next.gpus.begin(), next.gpus.end(), b.gpu) != next.gpus.end();
        if (mine && next.node == held_node && next.start_ms < cur.start_ms && b.end_ms > next.start_ms) {
          busy.push_back(b);
        }
      }
      RETURN_IF_ERROR(reserve::CheckFree(next.node, next.gpus, busy));
    }
    if (grows && !who.admin && !policies.empty()) {
      // Policies apply to the owner (who is `who`: only admins edit others').
      ASSIGN_OR_RETURN(auto existing, OwnersWeeks(db, cur.owner_id, next.start_ms, next.end_ms, id));
      const bool running = cur.StateAt(now) == reserve::State::kRunning;
      reserve::PolicyRequest preq{next.node, Select(NodeGpus(next.node), next.gpus), next.start_ms,
                                  next.end_ms, running ? now : 0};
      if (preq.gpus.empty()) {
        for (uint32_t g : next.gpus) preq.gpus.push_back(NodeGpu{g, "", model_of(next.node, g)});
      }
      RETURN_IF_ERROR(reserve::EvaluatePolicies(policies, who, preq, existing, model_of, now));
    }
    if (enforcement_check_ && patch.enforcement && !next.enforcement.empty()) {
      RETURN_IF_ERROR(enforcement_check_(who, next.node, Select(NodeGpus(next.node), next.gpus),
                                         next.enforcement, policies));
    }
    RETURN_IF_ERROR(store::UpdateReservation(db, next));
    ASSIGN_OR_RETURN(out, store::GetReservation(db, id));
    return Status::Ok();
  }));
  TrackReservation(out, policies);
  return out;
}

Result<Reservation> Reservations::Cancel(const Requester& who, int64_t id) {
  const int64_t now = clock_->NowMs();
  Reservation out;
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Reservation cur, store::GetReservation(db, id));
    RETURN_IF_ERROR(CheckOwner(who, cur));
    ASSIGN_OR_RETURN(Reservation next, reserve::ApplyCancel(cur, now));
    RETURN_IF_ERROR(store::UpdateReservation(db, next));
    ASSIGN_OR_RETURN(out, store::GetReservation(db, id));
    return Status::Ok();
  }));
  if (out.cancelled_ms) {
    version_.fetch_add(1, std::memory_order_acq_rel);
    tracker_.Forget(id);
    if (change_hook_) change_hook_();
  } else {
    TrackReservation(out, {});  // ended now: finalized by the next Tick
  }
  return out;
}

Result<Reservation> Reservations::Get(int64_t id) {
  Reservation out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(out, store::GetReservation(db, id));
    return Status::Ok();
  }));
  return out;
}

Result<Reservations::ListResult> Reservations::List(const ReservationQuery& q) {
  if (q.limit < 1 || q.limit > kMaxReservationListLimit) {
    return Status::InvalidArgument("limit: must be between 1 and " +
                                   std::to_string(kMaxReservationListLimit));
  }
  if (q.from_ms && q.to_ms && *q.from_ms >= *q.to_ms) {
    return Status::InvalidArgument("from (" + FormatRfc3339(*q.from_ms) + ") must be before to (" +
                                   FormatRfc3339(*q.to_ms) + ")");
  }
  store::ReservationFilter f;
  f.owner_id = q.owner_id;
  f.node = q.node;
  f.from_ms = q.from_ms;
  f.to_ms = q.to_ms;
  f.state = q.state;
  f.now_ms = clock_->NowMs();
  f.limit = int64_t{q.limit} + 1;
  std::vector<Reservation> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(out, store::ListReservations(db, f));
    return Status::Ok();
  }));
  ListResult result;
  result.truncated = out.size() > static_cast<size_t>(q.limit);
  if (result.truncated) out.pop_back();  // one more than asked: the earliest start
  std::reverse(out.begin(), out.end());  // the latest `limit`, in start order
  result.reservations = std::move(out);
  return result;
}

Result<std::vector<Reservation>> Reservations::ActiveOn(const std::string& node, int64_t now_ms) {
  std::vector<Reservation> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(out, store::ActiveReservationsOn(db, node, now_ms));
    return Status::Ok();
  }));
  return out;
}

Result<std::vector<Reservation>> Reservations::Overlapping(int64_t from_ms, int64_t to_ms) {
  std::vector<Reservation> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(out, store::OverlappingReservations(db, from_ms, to_ms));
    return Status::Ok();
  }));
  return out;
}

Result<std::vector<Reservation>> Reservations::HeldBy(int64_t user_id, const std::string& node,
                                                      int64_t now_ms) {
  ASSIGN_OR_RETURN(auto active, ActiveOn(node, now_ms));
  std::erase_if(active, [&](const Reservation& r) { return r.owner_id != user_id; });
  return active;
}

}  // namespace rota::server
