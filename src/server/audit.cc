#include "server/audit.h"

#include <sqlite3.h>

#include <set>
#include <utility>

#include "common/time_util.h"

namespace rota::server {
namespace {

using api::Json;
using enforce::OffendingProcess;
using store::Db;
using store::Stmt;

// Stored JSON is ours, but a damaged row must not make the log unreadable:
// entries that do not parse are skipped.
Json ParseStored(const std::string& text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_array() ? j : Json::array();
}

int64_t IntField(const Json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

std::string TextField(const Json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : "";
}

Json ProcessesJson(const std::vector<OffendingProcess>& ps) {
  Json a = Json::array();
  for (const auto& p : ps) {
    a.push_back({{"pid", p.pid}, {"start_time_ms", p.start_time_ms}, {"command", p.command}});
  }
  return a;
}

std::vector<OffendingProcess> ProcessesFrom(const std::string& text) {
  std::vector<OffendingProcess> out;
  for (const auto& o : ParseStored(text)) {
    if (!o.is_object()) continue;
    out.push_back({static_cast<uint32_t>(IntField(o, "pid")), IntField(o, "start_time_ms"),
                   TextField(o, "command")});
  }
  return out;
}

Json EventPidsJson(const std::vector<EventPid>& ps) {
  Json a = Json::array();
  for (const auto& p : ps) {
    Json o{{"pid", p.pid}, {"start_time_ms", p.start_time_ms}};
    if (!p.outcome.empty()) o["outcome"] = p.outcome;
    if (!p.detail.empty()) o["detail"] = p.detail;
    a.push_back(std::move(o));
  }
  return a;
}

std::vector<EventPid> EventPidsFrom(const std::string& text) {
  std::vector<EventPid> out;
  for (const auto& o : ParseStored(text)) {
    if (!o.is_object()) continue;
    out.push_back({static_cast<uint32_t>(IntField(o, "pid")), IntField(o, "start_time_ms"),
                   TextField(o, "outcome"), TextField(o, "detail")});
  }
  return out;
}

std::string PidList(const std::vector<OffendingProcess>& ps) {
  std::string s;
  for (const auto& p : ps) s += (s.empty() ? "" : ", ") + std::to_string(p.pid);
  return s;
}

std::string OpenDetail(const enforce::Offence& o) {
  std::string who = (o.unix_user.empty() ? "uid " + std::to_string(o.uid)
                                         : o.unix_user + " (uid " + std::to_string(o.uid) + ")");
  std::string where = "GPU " + std::to_string(o.gpu) + " of " + o.node;
  std::string s = who + " uses " + where;
  if (o.reservation_id != 0) {
    s += ", reserved by " + o.reservation_owner_username + " (reservation " +
         std::to_string(o.reservation_id) + ")";
  } else {
    s += ", unreserved (strict mode)";
  }
  return s + ": pids " + PidList(o.processes);
}

constexpr const char* kSelect = R"sql(
SELECT v.id, v.node, v.gpu, v.gpu_uuid, v.uid, v.unix_user, v.user_id, coalesce(u.username, ''),
       coalesce(v.reservation_id, 0), coalesce(v.reservation_owner_id, 0), coalesce(o.username, ''),
       v.mode, v.dry_run, v.state, v.opened_ms, v.closed_ms, v.processes_json, v.resolution,
       coalesce((SELECT e.action FROM violation_events e WHERE e.violation_id = v.id
                 ORDER BY e.t_ms DESC, e.id DESC LIMIT 1), '')
FROM violations v
LEFT JOIN users u ON u.id = v.user_id
LEFT JOIN users o ON o.id = v.reservation_owner_id
)sql";

ViolationRecord ReadRecord(const Stmt& s) {
  ViolationRecord r;
  r.id = s.Int(0);
  r.node = s.Text(1);
  r.gpu = static_cast<uint32_t>(s.Int(2));
  r.gpu_uuid = s.Text(3);
  if (!s.IsNull(4)) r.uid = static_cast<uint32_t>(s.Int(4));
  r.unix_user = s.Text(5);
  r.user_id = s.OptInt(6);
  r.username = s.Text(7);
  r.reservation_id = s.Int(8);
  r.reservation_owner_id = s.Int(9);
  r.reservation_owner = s.Text(10);
  r.mode = s.Text(11);
  r.dry_run = s.Int(12) != 0;
  r.state = s.Text(13);
  r.opened_ms = s.Int(14);
  r.closed_ms = s.OptInt(15);
  r.processes = ProcessesFrom(s.Text(16));
  r.resolution = s.Text(17);
  r.last_action = s.Text(18);
  return r;
}

Status LoadEvents(Db& db, ViolationRecord& r) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT id, t_ms, action, outcome, detail, pids_json "
                                      "FROM violation_events WHERE violation_id = ?1 "
                                      "ORDER BY t_ms, id"));
  s.Bind(1, r.id);
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    r.events.push_back(
        {s.Int(0), s.Int(1), s.Text(2), s.Text(3), s.Text(4), EventPidsFrom(s.Text(5))});
  }
  return Status::Ok();
}

// NotFound unless violation `id` exists; returns its state.
Result<std::string> StateOf(Db& db, int64_t id) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT state FROM violations WHERE id = ?1"));
  s.Bind(1, id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Status::NotFound("violation " + std::to_string(id) + " not found");
  return s.Text(0);
}

Status InsertEvent(Db& db, int64_t id, int64_t t_ms, const std::string& action,
                   const std::string& outcome, const std::string& detail,
                   const std::vector<EventPid>& pids) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("INSERT INTO violation_events "
                                      "(violation_id, t_ms, action, outcome, detail, pids_json) "
                                      "VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
  s.Bind(1, id)
      .Bind(2, t_ms)
      .Bind(3, action)
      .Bind(4, outcome)
      .Bind(5, detail)
      .Bind(6, EventPidsJson(pids).dump());
  return s.Run();
}

std::vector<EventPid> ToEventPids(const std::vector<OffendingProcess>& ps) {
  std::vector<EventPid> out;
  for (const auto& p : ps) out.push_back({p.pid, p.start_time_ms, "", ""});
  return out;
}

}  // namespace

Status ValidateViolationQuery(const ViolationQuery& q) {
  if (!q.node.empty() && !api::IsValidNodeName(q.node)) {
    return Status::InvalidArgument("node: '" + q.node + "' is not a valid node name");
  }
  if (q.user.size() > 64) return Status::InvalidArgument("user: at most 64 characters");
  if (!q.state.empty() && q.state != "open" && q.state != "resolved") {
    return Status::InvalidArgument("state: must be open or resolved, got '" + q.state + "'");
  }
  if (q.from_ms && q.to_ms && *q.from_ms >= *q.to_ms) {
    return Status::InvalidArgument("from (" + FormatRfc3339Ms(*q.from_ms) +
                                   ") must be before to (" + FormatRfc3339Ms(*q.to_ms) + ")");
  }
  if (q.limit < 1 || q.limit > kMaxViolationListLimit) {
    return Status::InvalidArgument("limit: must be in [1, " +
                                   std::to_string(kMaxViolationListLimit) + "], got " +
                                   std::to_string(q.limit));
  }
  if (q.offset < 0) return Status::InvalidArgument("offset: must not be negative");
  return Status::Ok();
}

namespace {

// A decimal integer of at most `max_digits` digits, or InvalidArgument naming `field`.
Result<int64_t> ParseCount(const std::string& field, const std::string& text, size_t max_digits) {
  bool ok = !text.empty() && text.size() <= max_digits;
  for (char c : text) ok = ok && c >= '0' && c <= '9';
  if (!ok) {
    return Status::InvalidArgument(field + ": '" + text +
                                   "' must be a non-negative integer of at most " +
                                   std::to_string(max_digits) + " digits");
  }
  return static_cast<int64_t>(std::stoll(text));
}

}  // namespace

Result<ViolationQuery> ParseViolationQuery(const std::map<std::string, std::string>& params) {
  ViolationQuery q;
  for (const auto& [key, value] : params) {
    if (key == "node") {
      q.node = value;
    } else if (key == "user") {
      q.user = value;
    } else if (key == "state") {
      q.state = value;
    } else if (key == "from" || key == "to") {
      auto t = ParseRfc3339(value);
      if (!t.ok()) return t.status().WithContext(key);
      (key == "from" ? q.from_ms : q.to_ms) = *t;
    } else if (key == "limit") {
      ASSIGN_OR_RETURN(int64_t n, ParseCount(key, value, 4));
      q.limit = static_cast<int>(n);
    } else if (key == "offset") {
      ASSIGN_OR_RETURN(int64_t n, ParseCount(key, value, 9));
      q.offset = static_cast<int>(n);
    } else {
      return Status::InvalidArgument(
          key + ": unknown parameter (use node, user, state, from, to, limit, offset)");
    }
  }
  RETURN_IF_ERROR(ValidateViolationQuery(q));
  return q;
}

Result<int64_t> ParseViolationId(const std::string& text) {
  auto id = ParseCount("violation id", text, 16);
  if (!id.ok() || *id < 1 || *id > (int64_t{1} << 53)) {
    return Status::InvalidArgument("violation id '" + text + "' must be a positive integer");
  }
  return id;
}

Result<int64_t> AuditLog::OpenViolation(const enforce::Offence& offence, const std::string& mode,
                                        bool dry_run, int64_t now_ms,
                                        std::optional<int64_t> offender_user_id) {
  int64_t id = 0;
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(
        Stmt s,
        db.Prepare(
            "INSERT INTO violations (node, gpu, gpu_uuid, uid, unix_user, user_id, reservation_id, "
            "reservation_owner_id, mode, dry_run, state, opened_ms, processes_json) VALUES "
            "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'open', ?11, ?12)"));
    std::optional<int64_t> rid, owner;
    if (offence.reservation_id != 0) rid = offence.reservation_id;
    if (offence.reservation_owner_id != 0) owner = offence.reservation_owner_id;
    s.Bind(1, offence.node)
        .Bind(2, int64_t{offence.gpu})
        .Bind(3, offence.gpu_uuid)
        .Bind(4, int64_t{offence.uid})
        .Bind(5, offence.unix_user)
        .Bind(6, offender_user_id)
        .Bind(7, rid)
        .Bind(8, owner)
        .Bind(9, mode)
        .Bind(10, int64_t{dry_run ? 1 : 0})
        .Bind(11, now_ms)
        .Bind(12, ProcessesJson(offence.processes).dump());
    RETURN_IF_ERROR(s.Run());
    id = sqlite3_last_insert_rowid(db.raw());
    return InsertEvent(db, id, now_ms, "open", dry_run ? "dry_run" : "", OpenDetail(offence),
                       ToEventPids(offence.processes));
  }));
  return id;
}

Status AuditLog::AddEvent(int64_t violation_id, int64_t t_ms, const std::string& action,
                          const std::string& outcome, const std::string& detail,
                          const std::vector<EventPid>& pids) {
  return store_->Write([&](Db& db) -> Status {
    RETURN_IF_ERROR(StateOf(db, violation_id).status());
    return InsertEvent(db, violation_id, t_ms, action, outcome, detail, pids);
  });
}

Status AuditLog::UpdateProcesses(int64_t violation_id, int64_t t_ms,
                                 const std::vector<OffendingProcess>& current) {
  return store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT processes_json FROM violations WHERE id = ?1"));
    s.Bind(1, violation_id);
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return Status::NotFound("violation " + std::to_string(violation_id) + " not found");
    std::vector<OffendingProcess> all = ProcessesFrom(s.Text(0));
    std::set<std::pair<uint32_t, int64_t>> known;
    for (const auto& p : all) known.insert({p.pid, p.start_time_ms});
    for (const auto& p : current) {
      if (known.insert({p.pid, p.start_time_ms}).second) all.push_back(p);
    }
    ASSIGN_OR_RETURN(Stmt u, db.Prepare("UPDATE violations SET processes_json = ?2 WHERE id = ?1"));
    u.Bind(1, violation_id).Bind(2, ProcessesJson(all).dump());
    RETURN_IF_ERROR(u.Run());
    return InsertEvent(db, violation_id, t_ms, "update", "", "processes now: " + PidList(current),
                       ToEventPids(current));
  });
}

Status AuditLog::Resolve(int64_t violation_id, int64_t t_ms, const std::string& reason) {
  return store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(std::string state, StateOf(db, violation_id));
    if (state != "open") {
      return Status::Conflict("violation " + std::to_string(violation_id) + " is resolved already");
    }
    ASSIGN_OR_RETURN(Stmt u, db.Prepare("UPDATE violations SET state = 'resolved', closed_ms = ?2, "
                                        "resolution = ?3 WHERE id = ?1"));
    u.Bind(1, violation_id).Bind(2, t_ms).Bind(3, reason);
    RETURN_IF_ERROR(u.Run());
    return InsertEvent(db, violation_id, t_ms, "resolve", "", reason, {});
  });
}

Result<std::vector<ViolationRecord>> AuditLog::List(const ViolationQuery& q) {
  RETURN_IF_ERROR(ValidateViolationQuery(q));
  std::vector<ViolationRecord> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string(kSelect) + R"sql(
WHERE (?1 = '' OR v.node = ?1)
  AND (?2 = '' OR v.unix_user = ?2 OR u.username = ?2)
  AND (?3 = '' OR v.state = ?3)
  AND (?4 IS NULL OR coalesce(v.closed_ms, 9223372036854775807) >= ?4)
  AND (?5 IS NULL OR v.opened_ms < ?5)
ORDER BY v.opened_ms DESC, v.id DESC
LIMIT ?6 OFFSET ?7)sql"));
    s.Bind(1, q.node).Bind(2, q.user).Bind(3, q.state).Bind(4, q.from_ms).Bind(5, q.to_ms);
    s.Bind(6, int64_t{q.limit}).Bind(7, int64_t{q.offset});
    while (true) {
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      out.push_back(ReadRecord(s));
    }
    return Status::Ok();
  }));
  return out;
}

Result<ViolationRecord> AuditLog::Get(int64_t id) {
  std::optional<ViolationRecord> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string(kSelect) + "WHERE v.id = ?1"));
    s.Bind(1, id);
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return Status::NotFound("violation " + std::to_string(id) + " not found");
    out = ReadRecord(s);
    return LoadEvents(db, *out);
  }));
  return std::move(*out);
}

Result<std::vector<ViolationRecord>> AuditLog::ListOpen() {
  std::vector<ViolationRecord> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string(kSelect) +
                                        "WHERE v.state = 'open' ORDER BY v.opened_ms, v.id"));
    while (true) {
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      out.push_back(ReadRecord(s));
    }
    for (auto& r : out) RETURN_IF_ERROR(LoadEvents(db, r));
    return Status::Ok();
  }));
  return out;
}

Json ViolationJson(const ViolationRecord& v, bool with_events) {
  Json j{{"id", v.id},
         {"node", v.node},
         {"gpu", v.gpu},
         {"gpu_uuid", v.gpu_uuid},
         {"uid", v.uid ? Json(*v.uid) : Json()},
         {"unix_user", v.unix_user},
         {"user", v.username.empty() ? Json() : Json(v.username)},
         {"reservation_id", v.reservation_id == 0 ? Json() : Json(v.reservation_id)},
         {"reservation_owner", v.reservation_owner.empty() ? Json() : Json(v.reservation_owner)},
         {"mode", v.mode},
         {"dry_run", v.dry_run},
         {"state", v.state},
         {"opened", FormatRfc3339Ms(v.opened_ms)},
         {"opened_ms", v.opened_ms},
         {"closed", v.closed_ms ? Json(FormatRfc3339Ms(*v.closed_ms)) : Json()},
         {"closed_ms", v.closed_ms ? Json(*v.closed_ms) : Json()},
         {"processes", ProcessesJson(v.processes)},
         {"resolution", v.resolution},
         {"last_action", v.last_action}};
  if (with_events) {
    Json events = Json::array();
    for (const auto& e : v.events) {
      events.push_back({{"id", e.id},
                        {"time", FormatRfc3339Ms(e.t_ms)},
                        {"t_ms", e.t_ms},
                        {"action", e.action},
                        {"outcome", e.outcome},
                        {"detail", e.detail},
                        {"pids", EventPidsJson(e.pids)}});
    }
    j["events"] = std::move(events);
  }
  return j;
}

}  // namespace rota::server
