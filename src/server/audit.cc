#include "server/audit.h"

#include <set>
#include <utility>

#include "common/log.h"
#include "common/time_util.h"
#include "server/store/auth_events.h"
#include "server/store/violations.h"

namespace rota::server {
namespace {

using api::Json;
using enforce::OffendingProcess;
using store::Db;

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

ViolationRecord RecordOf(const store::ViolationRow& row) {
  ViolationRecord r;
  r.id = row.id;
  r.node = row.node;
  r.gpu = static_cast<uint32_t>(row.gpu);
  r.gpu_uuid = row.gpu_uuid;
  if (row.uid) r.uid = static_cast<uint32_t>(*row.uid);
  r.unix_user = row.unix_user;
  r.user_id = row.user_id;
  r.username = row.username;
  r.reservation_id = row.reservation_id;
  r.reservation_owner_id = row.reservation_owner_id;
  r.reservation_owner = row.reservation_owner;
  r.mode = row.mode;
  r.dry_run = row.dry_run;
  r.state = row.state;
  r.opened_ms = row.opened_ms;
  r.closed_ms = row.closed_ms;
  r.processes = ProcessesFrom(row.processes_json);
  r.resolution = row.resolution;
  r.last_action = row.last_action;
  return r;
}

Status LoadEvents(Db& db, ViolationRecord& r) {
  ASSIGN_OR_RETURN(auto rows, store::ViolationEvents(db, r.id));
  for (const auto& e : rows) {
    r.events.push_back({e.id, e.t_ms, e.action, e.outcome, e.detail, EventPidsFrom(e.pids_json)});
  }
  return Status::Ok();
}

Status InsertEvent(Db& db, int64_t id, int64_t t_ms, const std::string& action,
                   const std::string& outcome, const std::string& detail,
                   const std::vector<EventPid>& pids) {
  return store::InsertViolationEvent(db, id, {0, t_ms, action, outcome, detail, EventPidsJson(pids).dump()});
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
  store::ViolationRow row;
  row.node = offence.node;
  row.gpu = offence.gpu;
  row.gpu_uuid = offence.gpu_uuid;
  row.uid = offence.uid;
  row.unix_user = offence.unix_user;
  row.user_id = offender_user_id;
  row.reservation_id = offence.reservation_id;
  row.reservation_owner_id = offence.reservation_owner_id;
  row.mode = mode;
  row.dry_run = dry_run;
  row.opened_ms = now_ms;
  row.processes_json = ProcessesJson(offence.processes).dump();
  RETURN_IF_ERROR(store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(id, store::InsertViolation(db, row));
    return InsertEvent(db, id, now_ms, "open", dry_run ? "dry_run" : "", OpenDetail(offence),
                       ToEventPids(offence.processes));
  }));
  return id;
}

Status AuditLog::AddEvent(int64_t violation_id, int64_t t_ms, const std::string& action,
                          const std::string& outcome, const std::string& detail,
                          const std::vector<EventPid>& pids) {
  return store_->Write([&](Db& db) -> Status {
    RETURN_IF_ERROR(store::GetViolation(db, violation_id).status());
    return InsertEvent(db, violation_id, t_ms, action, outcome, detail, pids);
  });
}

Status AuditLog::UpdateProcesses(int64_t violation_id, int64_t t_ms,
                                 const std::vector<OffendingProcess>& current) {
  return store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(store::ViolationRow row, store::GetViolation(db, violation_id));
    std::vector<OffendingProcess> all = ProcessesFrom(row.processes_json);
    std::set<std::pair<uint32_t, int64_t>> known;
    for (const auto& p : all) known.insert({p.pid, p.start_time_ms});
    for (const auto& p : current) {
      if (known.insert({p.pid, p.start_time_ms}).second) all.push_back(p);
    }
    RETURN_IF_ERROR(store::SetViolationProcesses(db, violation_id, ProcessesJson(all).dump()));
    return InsertEvent(db, violation_id, t_ms, "update", "", "processes now: " + PidList(current),
                       ToEventPids(current));
  });
}

Status AuditLog::Resolve(int64_t violation_id, int64_t t_ms, const std::string& reason) {
  return store_->Write([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(store::ViolationRow row, store::GetViolation(db, violation_id));
    if (row.state != "open") {
      return Status::Conflict("violation " + std::to_string(violation_id) + " is resolved already");
    }
    RETURN_IF_ERROR(store::ResolveViolation(db, violation_id, t_ms, reason));
    return InsertEvent(db, violation_id, t_ms, "resolve", "", reason, {});
  });
}

Result<std::vector<ViolationRecord>> AuditLog::List(const ViolationQuery& q) {
  RETURN_IF_ERROR(ValidateViolationQuery(q));
  const store::ViolationFilter f{q.node, q.user, q.state, q.from_ms, q.to_ms, q.limit, q.offset};
  std::vector<store::ViolationRow> rows;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(rows, store::ListViolations(db, f));
    return Status::Ok();
  }));
  std::vector<ViolationRecord> out;
  for (const auto& r : rows) out.push_back(RecordOf(r));
  return out;
}

Result<ViolationRecord> AuditLog::Get(int64_t id) {
  ViolationRecord out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(store::ViolationRow row, store::GetViolation(db, id));
    out = RecordOf(row);
    return LoadEvents(db, out);
  }));
  return out;
}

Result<std::vector<ViolationRecord>> AuditLog::ListOpen() {
  std::vector<ViolationRecord> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(auto rows, store::OpenViolations(db));
    for (const auto& r : rows) {
      out.push_back(RecordOf(r));
      RETURN_IF_ERROR(LoadEvents(db, out.back()));
    }
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

void AuditLog::RecordAuthEvent(AuthEvent event) {
  store::AuthEventRow row{0, event.t_ms, event.action, event.address, event.username,
                          event.actor, event.detail};
  store_->WriteAsync([row = std::move(row)](Db& db) { return store::InsertAuthEvent(db, row); },
                     [action = event.action](Status st) {
                       if (!st.ok()) {
                         ROTA_LOG(WARNING) << "cannot record " << action << " in the accounts trail: "
                                           << st.message();
                       }
                     });
}

Result<std::vector<AuthEvent>> AuditLog::ListAuthEvents(int64_t before_id, int limit) {
  if (limit < 1 || limit > kMaxAuthEventListLimit) {
    return Status::InvalidArgument("limit must be between 1 and " +
                                   std::to_string(kMaxAuthEventListLimit));
  }
  if (before_id < 0) return Status::InvalidArgument("before must not be negative");
  std::vector<AuthEvent> out;
  RETURN_IF_ERROR(store_->Read([&](Db& db) -> Status {
    ASSIGN_OR_RETURN(auto rows, store::ListAuthEvents(db, before_id, limit));
    for (auto& r : rows) {
      out.push_back({r.id, r.t_ms, std::move(r.action), std::move(r.address), std::move(r.username),
                     std::move(r.actor), std::move(r.detail)});
    }
    return Status::Ok();
  }));
  return out;
}

api::Json AuthEventJson(const AuthEvent& e) {
  return api::Json{{"id", e.id},           {"at", FormatRfc3339(e.t_ms)}, {"action", e.action},
                   {"address", e.address}, {"username", e.username},     {"actor", e.actor},
                   {"detail", e.detail}};
}

}  // namespace rota::server
