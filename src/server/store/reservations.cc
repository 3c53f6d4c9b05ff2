#include "server/store/reservations.h"

#include <functional>

#include "common/strings.h"

namespace rota::store {

using reserve::Policy;
using reserve::Reservation;

namespace {

// Reservation rows; `where_and_order` is SQL over alias r.
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

std::string GpuList(const std::vector<uint32_t>& gpus) {
  std::vector<std::string> list;
  for (uint32_t g : gpus) list.push_back(std::to_string(g));
  return Join(list, ",");
}

}  // namespace

Result<Reservation> GetReservation(Db& db, int64_t id) {
  ASSIGN_OR_RETURN(auto rows, Query(db, "WHERE r.id = ?1", [id](Stmt& s) { s.Bind(1, id); }));
  if (rows.empty()) return Status::NotFound("reservation " + std::to_string(id) + " not found");
  return rows.front();
}

Result<std::vector<Reservation>> RecentReservations(Db& db, int64_t now_ms) {
  return Query(db,
               "WHERE r.cancelled_ms IS NULL AND r.end_ms > ?1 AND "
               "(r.end_ms > ?2 OR r.avg_util_gpu IS NULL)",
               [&](Stmt& s) { s.Bind(1, now_ms - reserve::kDayMs).Bind(2, now_ms); });
}

Result<std::vector<Reservation>> ActiveReservationsOn(Db& db, const std::string& node, int64_t now_ms) {
  return Query(db,
               "WHERE r.node = ?1 AND r.cancelled_ms IS NULL AND "
               "r.start_ms <= ?2 AND r.end_ms > ?2 ORDER BY r.id",
               [&](Stmt& s) { s.Bind(1, node).Bind(2, now_ms); });
}

Result<std::vector<Reservation>> OverlappingReservations(Db& db, int64_t from_ms, int64_t to_ms) {
  return Query(db,
               "WHERE r.cancelled_ms IS NULL AND r.start_ms < ?2 AND r.end_ms > ?1 "
               "ORDER BY r.start_ms, r.id",
               [&](Stmt& s) { s.Bind(1, from_ms).Bind(2, to_ms); });
}

Result<std::vector<Reservation>> OwnerReservations(Db& db, int64_t owner_id, int64_t from_ms,
                                                   int64_t to_ms, int64_t exclude_id) {
  return Query(db,
               "WHERE r.owner_id = ?1 AND r.cancelled_ms IS NULL AND r.end_ms > ?2 AND "
               "r.start_ms < ?3 AND r.id <> ?4",
               [&](Stmt& s) { s.Bind(1, owner_id).Bind(2, from_ms).Bind(3, to_ms).Bind(4, exclude_id); });
}

Result<std::vector<Reservation>> ListReservations(Db& db, const ReservationFilter& f) {
  std::vector<std::string> where;
  if (f.owner_id) where.push_back("r.owner_id = ?1");
  if (!f.node.empty()) where.push_back("r.node = ?2");
  if (f.from_ms) where.push_back("r.end_ms > ?3");
  if (f.to_ms) where.push_back("r.start_ms < ?4");
  if (f.state) {
    switch (*f.state) {
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
  // Every parameter is bound; SQLite accepts unused ones up to the highest used (?6), and
  // the PostgreSQL backend gives them a type of their own.
  std::string sql = where.empty() ? "" : "WHERE " + Join(where, " AND ");
  sql += " ORDER BY r.start_ms DESC, r.id DESC LIMIT ?6";
  return Query(db, sql, [&](Stmt& s) {
    s.Bind(1, f.owner_id.value_or(0)).Bind(2, f.node).Bind(3, f.from_ms.value_or(0));
    s.Bind(4, f.to_ms.value_or(0)).Bind(5, f.now_ms).Bind(6, f.limit);
  });
}

Result<std::vector<reserve::Busy>> BusyGpus(Db& db, const std::string& node,
                                            const std::vector<uint32_t>& gpus, int64_t start_ms,
                                            int64_t end_ms, int64_t exclude_id) {
  ASSIGN_OR_RETURN(
      Stmt s, db.Prepare("SELECT rg.gpu, r.id, coalesce(u.username, 'user ' || r.owner_id), "
                         "r.start_ms, r.end_ms FROM reservation_gpus rg "
                         "JOIN reservations r ON r.id = rg.reservation_id "
                         "LEFT JOIN users u ON u.id = r.owner_id "
                         "WHERE rg.node = ?1 AND rg.gpu IN (" + GpuList(gpus) + ") "
                         "AND rg.end_ms > ?2 AND rg.start_ms < ?3 AND rg.reservation_id <> ?4 "
                         "AND r.cancelled_ms IS NULL"));
  s.Bind(1, node).Bind(2, start_ms).Bind(3, end_ms).Bind(4, exclude_id);
  std::vector<reserve::Busy> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(reserve::Busy{static_cast<uint32_t>(s.Int(0)), s.Int(1), s.Text(2), s.Int(3), s.Int(4)});
  }
  return out;
}

Result<int64_t> InsertReservation(Db& db, const Reservation& r) {
  ASSIGN_OR_RETURN(Stmt ins, db.Prepare("INSERT INTO reservations (owner_id, node, title, "
                                        "description, start_ms, end_ms, created_ms, "
                                        "updated_ms, enforcement_json) VALUES "
                                        "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8) RETURNING id"));
  ASSIGN_OR_RETURN(const int64_t id, ins.Bind(1, r.owner_id)
                                         .Bind(2, r.node)
                                         .Bind(3, r.title)
                                         .Bind(4, r.description)
                                         .Bind(5, r.start_ms)
                                         .Bind(6, r.end_ms)
                                         .Bind(7, r.created_ms)
                                         .Bind(8, r.enforcement.dump())
                                         .RunReturningId());
  ASSIGN_OR_RETURN(Stmt g, db.Prepare("INSERT INTO reservation_gpus (reservation_id, node, gpu, "
                                      "uuid, start_ms, end_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
  for (size_t i = 0; i < r.gpus.size(); ++i) {
    g.Reset();
    RETURN_IF_ERROR(g.Bind(1, id).Bind(2, r.node).Bind(3, int64_t{r.gpus[i]})
                        .Bind(4, i < r.gpu_uuids.size() ? r.gpu_uuids[i] : std::string())
                        .Bind(5, r.start_ms).Bind(6, r.end_ms).Run());
  }
  return id;
}

Status UpdateReservation(Db& db, const Reservation& r) {
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
  ASSIGN_OR_RETURN(Stmt g, db.Prepare("UPDATE reservation_gpus SET start_ms = ?2, end_ms = ?3 "
                                      "WHERE reservation_id = ?1"));
  const bool cancelled = r.cancelled_ms.has_value();
  return g.Bind(1, r.id)
      .Bind(2, cancelled ? int64_t{0} : r.start_ms)
      .Bind(3, cancelled ? int64_t{0} : r.end_ms)
      .Run();
}

Status MarkReservationIdle(Db& db, int64_t id, int64_t now_ms, int64_t end_ms, bool release) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("UPDATE reservations SET idle_notified_ms = ?2, "
                                      "end_ms = ?3, updated_ms = ?2 WHERE id = ?1"));
  RETURN_IF_ERROR(s.Bind(1, id).Bind(2, now_ms).Bind(3, end_ms).Run());
  if (!release) return Status::Ok();
  ASSIGN_OR_RETURN(Stmt g, db.Prepare("UPDATE reservation_gpus SET end_ms = ?2 WHERE "
                                      "reservation_id = ?1"));
  return g.Bind(1, id).Bind(2, now_ms).Run();
}

Status StoreReservationAverages(Db& db, int64_t id, std::optional<double> util_gpu,
                                std::optional<double> util_mem) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("UPDATE reservations SET avg_util_gpu = ?2, "
                                      "avg_util_mem = ?3 WHERE id = ?1"));
  return s.Bind(1, id).Bind(2, util_gpu).Bind(3, util_mem).Run();
}

Result<std::pair<std::optional<double>, std::optional<double>>> GpuUtilFromMinutes(
    Db& db, const std::string& node, const std::vector<uint32_t>& gpus, int64_t from_ms, int64_t to_ms) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(
      "SELECT sum(m.util_gpu_sum), sum(m.util_gpu_n), sum(m.util_mem_sum), sum(m.util_mem_n) "
      "FROM gpu_minutes m JOIN nodes n ON n.id = m.node WHERE n.name = ?1 AND m.gpu IN (" +
      GpuList(gpus) + ") AND m.minute_ms >= ?2 AND m.minute_ms < ?3"));
  s.Bind(1, node).Bind(2, from_ms / 60'000 * 60'000).Bind(3, to_ms);
  std::pair<std::optional<double>, std::optional<double>> out;
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (row && s.OptInt(1).value_or(0) > 0) out.first = s.Double(0) / static_cast<double>(s.Int(1));
  if (row && s.OptInt(3).value_or(0) > 0) out.second = s.Double(2) / static_cast<double>(s.Int(3));
  return out;
}

namespace {

Result<Policy> PolicyFromRow(Stmt& s) {
  auto spec = api::ParseJson(s.Text(2));
  if (!spec.ok() || !spec->is_object()) {
    return Status::Internal("policy " + std::to_string(s.Int(0)) + ": stored spec is not JSON");
  }
  (*spec)["name"] = s.Text(1);
  auto p = reserve::PolicyFromJson(*spec);
  if (!p.ok()) return p.status().WithContext("stored policy " + std::to_string(s.Int(0)));
  p->id = s.Int(0);
  p->created_ms = s.Int(3);
  p->updated_ms = s.Int(4);
  return p;
}

Status CheckNameFree(Db& db, const std::string& name, int64_t self) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT id FROM policies WHERE name = ?1 AND id <> ?2"));
  s.Bind(1, name).Bind(2, self);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (row) {
    return Status::AlreadyExists("a policy named '" + name + "' exists already (policy " +
                                 std::to_string(s.Int(0)) + ")");
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<Policy>> LoadReservationPolicies(Db& db) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT id, name, spec_json, created_ms, updated_ms FROM "
                                      "policies ORDER BY id"));
  std::vector<Policy> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    ASSIGN_OR_RETURN(Policy p, PolicyFromRow(s));
    out.push_back(std::move(p));
  }
  return out;
}

Result<Policy> GetReservationPolicy(Db& db, int64_t id) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT id, name, spec_json, created_ms, updated_ms FROM "
                                      "policies WHERE id = ?1"));
  s.Bind(1, id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Status::NotFound("policy " + std::to_string(id) + " not found");
  return PolicyFromRow(s);
}

Result<Policy> InsertReservationPolicy(Db& db, const Policy& p, int64_t now_ms) {
  RETURN_IF_ERROR(CheckNameFree(db, p.name, 0));
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("INSERT INTO policies (name, spec_json, created_ms, "
                                      "updated_ms) VALUES (?1, ?2, ?3, ?3) RETURNING id"));
  ASSIGN_OR_RETURN(const int64_t id, s.Bind(1, p.name)
                                         .Bind(2, reserve::PolicySpecJson(p).dump())
                                         .Bind(3, now_ms)
                                         .RunReturningId());
  return GetReservationPolicy(db, id);
}

Result<Policy> UpdateReservationPolicy(Db& db, int64_t id, const Policy& p, int64_t now_ms) {
  RETURN_IF_ERROR(GetReservationPolicy(db, id).status());
  RETURN_IF_ERROR(CheckNameFree(db, p.name, id));
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("UPDATE policies SET name = ?2, spec_json = ?3, "
                                      "updated_ms = ?4 WHERE id = ?1"));
  RETURN_IF_ERROR(s.Bind(1, id).Bind(2, p.name).Bind(3, reserve::PolicySpecJson(p).dump())
                      .Bind(4, now_ms).Run());
  return GetReservationPolicy(db, id);
}

Status DeleteReservationPolicy(Db& db, int64_t id) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("DELETE FROM policies WHERE id = ?1"));
  RETURN_IF_ERROR(s.Bind(1, id).Run());
  if (db.Changes() == 0) return Status::NotFound("policy " + std::to_string(id) + " not found");
  return Status::Ok();
}

}  // namespace rota::store
