#include "server/reservations.h"

#include <algorithm>

#include "common/log.h"
#include "common/strings.h"
#include "common/time_util.h"

namespace rota::server {

using reserve::Busy;
using reserve::NodeGpu;
using reserve::Policy;
using reserve::Requester;
using store::Db;
using store::Stmt;

namespace reservations_internal {

Result<std::vector<Reservation>> Query(Db& db, const std::string& where_and_order,
                                       const std::function<void(Stmt&)>& bind) {
  ASSIGN_OR_RETURN(
      Stmt s,
      db.Prepare("SELECT r.id, r.owner_id, coalesce(u.username, ''), r.node, r.title, "
                 "r.description, r.start_ms, r.end_ms, r.cancelled_ms, r.created_ms, "
                 "r.updated_ms, r.enforcement_json, r.avg_util_gpu, r.avg_util_mem, "
                 "r.idle_notified_ms FROM reservations r LEFT JOIN users u ON u.id = r.owner_id " +
                 where_and_order));
  if (bind) bind(s);
  std::vector<Reservation> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    Reservation r;
    r.id = s.Int(0);
    r.owner_id = s.Int(1);
    r.owner = s.Text(2);
    r.node = s.Text(3);
    r.title = s.Text(4);
    r.description = s.Text(5);
    r.start_ms = s.Int(6);
    r.end_ms = s.Int(7);
    r.cancelled_ms = s.OptInt(8);
    r.created_ms = s.Int(9);
    r.updated_ms = s.Int(10);
    auto enforcement = api::ParseJson(s.Text(11));
    r.enforcement = enforcement.ok() && enforcement->is_object() ? *enforcement : api::Json::object();
    r.avg_util_gpu = s.OptDouble(12);
    r.avg_util_mem = s.OptDouble(13);
    r.idle_notified_ms = s.OptInt(14);
    out.push_back(std::move(r));
  }
  ASSIGN_OR_RETURN(Stmt g, db.Prepare("SELECT gpu, uuid FROM reservation_gpus "
                                      "WHERE reservation_id = ?1 ORDER BY gpu"));
  for (auto& r : out) {
    g.Reset();
    g.Bind(1, r.id);
    while (true) {
      ASSIGN_OR_RETURN(bool row, g.Step());
      if (!row) break;
      r.gpus.push_back(static_cast<uint32_t>(g.Int(0)));
      r.gpu_uuids.push_back(g.Text(1));
    }
  }
  return out;
}

Result<std::vector<std::string>> UserGroups(Db& db, int64_t user_id) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT g.name FROM group_members m JOIN groups g ON "
                                      "g.id = m.group_id WHERE m.user_id = ?1 ORDER BY g.name"));
  s.Bind(1, user_id);
  std::vector<std::string> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(s.Text(0));
  }
  return out;
}

}  // namespace reservations_internal

namespace {

using reservations_internal::LoadPolicies;
using reservations_internal::Query;
using reservations_internal::UserGroups;

constexpr int64_t kWeekMs = 7 * reserve::kDayMs;

Result<Reservation> GetOne(Db& db, int64_t id) {
  ASSIGN_OR_RETURN(auto rows, Query(db, "WHERE r.id = ?1", [id](Stmt& s) { s.Bind(1, id); }));
  if (rows.empty()) return Status::NotFound("reservation " + std::to_string(id) + " not found");
  return rows.front();
}

// Other reservations holding any of `gpus` of `node` during [start, end).
Result<std::vector<Busy>> LoadBusy(Db& db, const std::string& node, const std::vector<uint32_t>& gpus,
                                   int64_t start_ms, int64_t end_ms, int64_t exclude_id) {
  std::vector<std::string> list;
  for (uint32_t g : gpus) list.push_back(std::to_string(g));
  ASSIGN_OR_RETURN(
      Stmt s, db.Prepare("SELECT rg.gpu, r.id, coalesce(u.username, 'user ' || r.owner_id), "
                         "r.start_ms, r.end_ms FROM reservation_gpus rg "
                         "JOIN reservations r ON r.id = rg.reservation_id "
                         "LEFT JOIN users u ON u.id = r.owner_id "
                         "WHERE rg.node = ?1 AND rg.gpu IN (" + Join(list, ",") + ") "
                         "AND rg.end_ms > ?2 AND rg.start_ms < ?3 AND rg.reservation_id <> ?4 "
                         "AND r.cancelled_ms IS NULL"));
  s.Bind(1, node).Bind(2, start_ms).Bind(3, end_ms).Bind(4, exclude_id);
  std::vector<Busy> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(Busy{static_cast<uint32_t>(s.Int(0)), s.Int(1), s.Text(2), s.Int(3), s.Int(4)});
  }
  return out;
}

// The owner's other live reservations that matter to policies on [start, end).
Result<std::vector<Reservation>> OwnerReservations(Db& db, int64_t owner_id, int64_t start_ms,
                                                   int64_t end_ms, int64_t exclude_id) {
  const int64_t lo = reserve::IsoWeekStart(start_ms);
  const int64_t hi = reserve::IsoWeekStart(end_ms - 1) + kWeekMs;
  return Query(db,
               "WHERE r.owner_id = ?1 AND r.cancelled_ms IS NULL AND r.end_ms > ?2 AND "
               "r.start_ms < ?3 AND r.id <> ?4",
               [&](Stmt& s) { s.Bind(1, owner_id).Bind(2, lo).Bind(3, hi).Bind(4, exclude_id); });
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

Status WriteTimes(Db& db, const Reservation& r) {
  ASSIGN_OR_RETURN(Stmt u, db.Prepare("UPDATE reservations SET title = ?2, description = ?3, "
                                      "start_ms = ?4, end_ms = ?5, cancelled_ms = ?6, "
                                      "enforcement_json = ?7, updated_ms = ?8 WHERE id = ?1"));
  RETURN_IF_ERROR(u.Bind(1, r.id)
                      .Bind(2, r.title)
                      .Bind(3, r.description)
                      .Bind(4, r.start_ms)
                      .Bind(5, r.end_ms)
                      .Bind(6, r.cancelled_ms)
                      .Bind(7, r.enforcement.dump())
                      .Bind(8, r.updated_ms)
                      .Run());
  // A cancelled reservation keeps its GPU rows (history) with an empty slot that
  // matches no time range.
  ASSIGN_OR_RETURN(Stmt g, db.Prepare("UPDATE reservation_gpus SET start_ms = ?2, end_ms = ?3 "
                                      "WHERE reservation_id = ?1"));
  const bool cancelled = r.cancelled_ms.has_value();
  return g.Bind(1, r.id)
      .Bind(2, cancelled ? int64_t{0} : r.start_ms)
      .Bind(3, cancelled ? int64_t{0} : r.end_ms)
      .Run();
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
    ASSIGN_OR_RETURN(rows, Query(db,
                                 "WHERE r.cancelled_ms IS NULL AND r.end_ms > ?1 AND "
                                 "(r.end_ms > ?2 OR r.avg_util_gpu IS NULL)",
                                 [&](Stmt& s) { s.Bind(1, now - reserve::kDayMs).Bind(2, now); }));
    ASSIGN_OR_RETURN(policies, LoadPolicies(db));
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
      ASSIGN_OR_RETURN(groups, UserGroups(db, r.owner_id));
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
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(auto busy, LoadBusy(db, r.node, all, r.start_ms, r.end_ms, 0));
    ASSIGN_OR_RETURN(auto chosen, reserve::ChooseGpus(r, node_gpus, busy));
    ASSIGN_OR_RETURN(policies, LoadPolicies(db));
    if (!who.admin && !policies.empty()) {
      ASSIGN_OR_RETURN(auto existing, OwnerReservations(db, who.user_id, r.start_ms, r.end_ms, 0));
      reserve::PolicyRequest preq{r.node, Select(node_gpus, chosen), r.start_ms, r.end_ms, 0};
      RETURN_IF_ERROR(reserve::EvaluatePolicies(policies, who, preq, existing, model_of, now));
    }
    if (enforcement_check_ && !r.enforcement.empty()) {
      RETURN_IF_ERROR(enforcement_check_(who, r.node, Select(node_gpus, chosen), r.enforcement,
                                         policies));
    }
    ASSIGN_OR_RETURN(Stmt ins, db.Prepare("INSERT INTO reservations (owner_id, node, title, "
                                          "description, start_ms, end_ms, created_ms, "
                                          "updated_ms, enforcement_json) VALUES "
                                          "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8)"));
    RETURN_IF_ERROR(ins.Bind(1, who.user_id)
                        .Bind(2, r.node)
                        .Bind(3, r.title)
                        .Bind(4, r.description)
                        .Bind(5, r.start_ms)
                        .Bind(6, r.end_ms)
                        .Bind(7, now)
                        .Bind(8, r.enforcement.dump())
                        .Run());
    const int64_t id = sqlite3_last_insert_rowid(db.raw());
    ASSIGN_OR_RETURN(Stmt g, db.Prepare("INSERT INTO reservation_gpus (reservation_id, node, gpu, "
                                        "uuid, start_ms, end_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
    for (uint32_t gpu : chosen) {
      std::string uuid;
      for (const auto& ng : node_gpus) {
        if (ng.index == gpu) uuid = ng.uuid;
      }
      g.Reset();
      RETURN_IF_ERROR(g.Bind(1, id).Bind(2, r.node).Bind(3, int64_t{gpu}).Bind(4, uuid)
                          .Bind(5, r.start_ms).Bind(6, r.end_ms).Run());
    }
    ASSIGN_OR_RETURN(out, GetOne(db, id));
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
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Reservation cur, GetOne(db, id));
    RETURN_IF_ERROR(CheckOwner(who, cur));
    ASSIGN_OR_RETURN(Reservation next, reserve::ApplyPatch(cur, patch, now));
    ASSIGN_OR_RETURN(policies, LoadPolicies(db));
    const bool grows = next.start_ms < cur.start_ms || next.end_ms > cur.end_ms ||
                       next.start_ms >= cur.end_ms || next.end_ms <= cur.start_ms;
    if (grows) {
      ASSIGN_OR_RETURN(auto busy, LoadBusy(db, next.node, next.gpus, next.start_ms, next.end_ms, id));
      RETURN_IF_ERROR(reserve::CheckFree(next.node, next.gpus, busy));
    }
    if (grows && !who.admin && !policies.empty()) {
      // Policies apply to the owner (who is `who`: only admins edit others').
      ASSIGN_OR_RETURN(auto existing, OwnerReservations(db, cur.owner_id, next.start_ms, next.end_ms, id));
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
    RETURN_IF_ERROR(WriteTimes(db, next));
    ASSIGN_OR_RETURN(out, GetOne(db, id));
    return Status::Ok();
  }));
  TrackReservation(out, policies);
  return out;
}

Result<Reservation> Reservations::Cancel(const Requester& who, int64_t id) {
  const int64_t now = clock_->NowMs();
  Reservation out;
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Reservation cur, GetOne(db, id));
    RETURN_IF_ERROR(CheckOwner(who, cur));
    ASSIGN_OR_RETURN(Reservation next, reserve::ApplyCancel(cur, now));
    RETURN_IF_ERROR(WriteTimes(db, next));
    ASSIGN_OR_RETURN(out, GetOne(db, id));
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
    ASSIGN_OR_RETURN(out, GetOne(db, id));
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
  const int64_t now = clock_->NowMs();
  std::vector<std::string> where;
  if (q.owner_id) where.push_back("r.owner_id = ?1");
  if (!q.node.empty()) where.push_back("r.node = ?2");
  if (q.from_ms) where.push_back("r.end_ms > ?3");
  if (q.to_ms) where.push_back("r.start_ms < ?4");
  if (q.state) {
    switch (*q.state) {
      case reserve::State::kUpcoming:
        where.push_back("r.cancelled_ms IS NULL AND r.start_ms > ?5");
        break;
      case reserve::State::kRunning:
        where.push_back("r.cancelled_ms IS NULL AND r.start_ms <= ?5 AND r.end_ms > ?5");
        break;
      case reserve::State::kEnded:
        where.push_back("r.cancelled_ms IS NULL AND r.end_ms <= ?5");
        break;
      case reserve::State::kCancelled:
        where.push_back("r.cancelled_ms IS NOT NULL");
        break;
    }
  }
  // Every parameter is bound; SQLite accepts unused ones up to the highest used (?6).
  std::string sql = where.empty() ? "" : "WHERE " + Join(where, " AND ");
  sql += " ORDER BY r.start_ms DESC, r.id DESC LIMIT ?6";
  std::vector<Reservation> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(out, Query(db, sql, [&](Stmt& s) {
      s.Bind(1, q.owner_id.value_or(0)).Bind(2, q.node).Bind(3, q.from_ms.value_or(0));
      s.Bind(4, q.to_ms.value_or(0)).Bind(5, now).Bind(6, int64_t{q.limit} + 1);
    }));
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
    ASSIGN_OR_RETURN(out, Query(db,
                                "WHERE r.node = ?1 AND r.cancelled_ms IS NULL AND "
                                "r.start_ms <= ?2 AND r.end_ms > ?2 ORDER BY r.id",
                                [&](Stmt& s) { s.Bind(1, node).Bind(2, now_ms); }));
    return Status::Ok();
  }));
  return out;
}

Result<std::vector<Reservation>> Reservations::Overlapping(int64_t from_ms, int64_t to_ms) {
  std::vector<Reservation> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(out, Query(db,
                                "WHERE r.cancelled_ms IS NULL AND r.start_ms < ?2 AND r.end_ms > ?1 "
                                "ORDER BY r.start_ms, r.id",
                                [&](Stmt& s) { s.Bind(1, from_ms).Bind(2, to_ms); }));
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
