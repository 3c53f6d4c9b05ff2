#include "server/store/power.h"

namespace rota::store {
namespace {

constexpr const char* kColumns = "id, name, spec_json, created_ms, updated_ms";

Result<power::PowerPolicy> PolicyFromRow(const Stmt& s) {
  auto spec = api::ParseJson(s.Text(2));
  if (!spec.ok() || !spec->is_object()) {
    return Status::Internal("stored power policy " + std::to_string(s.Int(0)) + " is not JSON");
  }
  (*spec)["name"] = s.Text(1);
  auto p = power::PowerPolicyFromJson(*spec);
  if (!p.ok()) return p.status().WithContext("stored power policy " + s.Text(1));
  p->id = s.Int(0);
  p->created_ms = s.Int(3);
  p->updated_ms = s.Int(4);
  return p;
}

Result<power::PowerPolicy> GetPolicy(Db& db, int64_t id) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string("SELECT ") + kColumns +
                                      " FROM power_policies WHERE id = ?1"));
  s.Bind(1, id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Status::NotFound("no power policy " + std::to_string(id));
  return PolicyFromRow(s);
}

Status CheckNameFree(Db& db, const std::string& name, int64_t id) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT id FROM power_policies WHERE name = ?1 AND id != ?2"));
  s.Bind(1, name).Bind(2, id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (row) return Status::Conflict("a power policy named '" + name + "' exists already");
  return Status::Ok();
}

std::optional<int64_t> Opt(const std::optional<uint32_t>& v) {
  if (!v) return std::nullopt;
  return static_cast<int64_t>(*v);
}

std::optional<uint32_t> OptU32(const Stmt& s, int col) {
  auto v = s.OptInt(col);
  if (!v) return std::nullopt;
  return static_cast<uint32_t>(*v);
}

}  // namespace

Result<std::vector<power::PowerPolicy>> LoadPowerPolicies(Db& db) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string("SELECT ") + kColumns +
                                      " FROM power_policies ORDER BY name"));
  std::vector<power::PowerPolicy> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    ASSIGN_OR_RETURN(auto p, PolicyFromRow(s));
    out.push_back(std::move(p));
  }
  return out;
}

Result<power::PowerPolicy> InsertPowerPolicy(Db& db, const power::PowerPolicy& p, int64_t now_ms) {
  RETURN_IF_ERROR(CheckNameFree(db, p.name, 0));
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("INSERT INTO power_policies (name, spec_json, created_ms, "
                                      "updated_ms) VALUES (?1, ?2, ?3, ?3) RETURNING id"));
  ASSIGN_OR_RETURN(const int64_t id, s.Bind(1, p.name)
                                         .Bind(2, power::PowerPolicySpecJson(p).dump())
                                         .Bind(3, now_ms)
                                         .RunReturningId());
  return GetPolicy(db, id);
}

Result<power::PowerPolicy> UpdatePowerPolicy(Db& db, int64_t id, const power::PowerPolicy& p,
                                             int64_t now_ms) {
  RETURN_IF_ERROR(GetPolicy(db, id).status());
  RETURN_IF_ERROR(CheckNameFree(db, p.name, id));
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("UPDATE power_policies SET name = ?2, spec_json = ?3, "
                                      "updated_ms = ?4 WHERE id = ?1"));
  RETURN_IF_ERROR(s.Bind(1, id).Bind(2, p.name).Bind(3, power::PowerPolicySpecJson(p).dump())
                      .Bind(4, now_ms).Run());
  return GetPolicy(db, id);
}

Result<power::PowerPolicy> DeletePowerPolicy(Db& db, int64_t id) {
  ASSIGN_OR_RETURN(auto p, GetPolicy(db, id));
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("DELETE FROM power_policies WHERE id = ?1"));
  RETURN_IF_ERROR(s.Bind(1, id).Run());
  return p;
}

Status AddPowerEvents(Db& db, const std::vector<PowerEvent>& events) {
  if (events.empty()) return Status::Ok();
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(
      "INSERT INTO power_events (t_ms, action, node, gpu, uuid, limit_mw, previous_mw, requested_mw, "
      "policy, actor, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"));
  for (const auto& e : events) {
    s.Reset();
    RETURN_IF_ERROR(s.Bind(1, e.t_ms).Bind(2, e.action).Bind(3, e.node).Bind(4, Opt(e.gpu))
                        .Bind(5, e.uuid).Bind(6, Opt(e.limit_mw)).Bind(7, Opt(e.previous_mw))
                        .Bind(8, Opt(e.requested_mw)).Bind(9, e.policy).Bind(10, e.actor)
                        .Bind(11, e.detail).Run());
  }
  return Status::Ok();
}

Result<std::vector<PowerEvent>> ListPowerEvents(Db& db, const PowerEventQuery& q) {
  if (q.limit < 1 || q.limit > kMaxPowerEventLimit) {
    return Status::InvalidArgument("limit must be 1.." + std::to_string(kMaxPowerEventLimit));
  }
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(
      "SELECT id, t_ms, action, node, gpu, uuid, limit_mw, previous_mw, requested_mw, policy, actor, "
      "detail FROM power_events WHERE (?1 = '' OR node = ?1) AND t_ms >= ?2 AND t_ms < ?3 "
      "ORDER BY t_ms DESC, id DESC LIMIT ?4"));
  s.Bind(1, q.node).Bind(2, q.from_ms.value_or(INT64_MIN)).Bind(3, q.to_ms.value_or(INT64_MAX))
      .Bind(4, static_cast<int64_t>(q.limit));
  std::vector<PowerEvent> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    PowerEvent e;
    e.id = s.Int(0);
    e.t_ms = s.Int(1);
    e.action = s.Text(2);
    e.node = s.Text(3);
    e.gpu = OptU32(s, 4);
    e.uuid = s.Text(5);
    e.limit_mw = OptU32(s, 6);
    e.previous_mw = OptU32(s, 7);
    e.requested_mw = OptU32(s, 8);
    e.policy = s.Text(9);
    e.actor = s.Text(10);
    e.detail = s.Text(11);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace rota::store
