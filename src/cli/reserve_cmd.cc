// rota reserve, rota reservations, rota reservation show|edit|cancel,
// rota policies, rota policy create|update|delete.

#include <yaml-cpp/yaml.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/format.h"
#include "cli/yaml_json.h"
#include "common/clock.h"
#include "common/file_util.h"
#include "common/strings.h"
#include "common/time_util.h"
#include "net/url.h"
#include "reserve/cli_time.h"
#include "reserve/reservation.h"

namespace rota::cli {
namespace {

using api::Json;

Result<int64_t> WhenFlag(const char* flag, const std::string& text, int64_t now_ms,
                         const reserve::TimeZone& zone) {
  auto t = reserve::ParseCliTime(text, now_ms, zone);
  if (!t.ok()) return t.status().WithContext(flag);
  return t;
}

std::string Local(const Json& r, const char* key, const reserve::TimeZone& zone) {
  if (!r.contains(key) || !r[key].is_number_integer()) return "-";
  return reserve::FormatLocal(r[key].get<int64_t>(), zone);
}

std::string Gpus(const Json& r) {
  std::vector<std::string> parts;
  for (const auto& g : r.value("gpus", Json::array())) parts.push_back(std::to_string(g.get<int>()));
  return parts.empty() ? "-" : Join(parts, ",");
}

std::string Util(const Json& r) {
  char buf[32];
  if (r.contains("live")) {
    std::snprintf(buf, sizeof buf, "%.0f%% (live)", r["live"].value("avg_util_gpu", 0.0));
    return buf;
  }
  if (r.contains("avg_util_gpu")) {
    std::snprintf(buf, sizeof buf, "%.0f%%", r["avg_util_gpu"].get<double>());
    return buf;
  }
  return "-";
}

std::string Cut(std::string s, size_t n) {
  if (s.size() > n) s = s.substr(0, n - 3) + "...";
  return s;
}

void PrintTable(const Json& list) {
  const reserve::TimeZone zone = reserve::TimeZone::Local();
  Table t({"ID", "NODE", "GPUS", "OWNER", "STATE", "START", "END", "UTIL", "TITLE"});
  for (const auto& r : list) {
    t.Add({std::to_string(r.value("id", 0)), Str(r, "node"), Gpus(r), Str(r, "owner"),
           Str(r, "state"), Local(r, "start_ms", zone), Local(r, "end_ms", zone), Util(r),
           Cut(r.value("title", ""), 40)});
  }
  std::cout << t.Render();
}

void PrintOne(const Json& r) {
  const reserve::TimeZone zone = reserve::TimeZone::Local();
  std::cout << "Reservation " << r.value("id", 0) << ": " << r.value("title", "") << "\n"
            << "  owner:   " << Str(r, "owner") << "\n"
            << "  node:    " << Str(r, "node") << "  GPUs " << Gpus(r) << "\n"
            << "  state:   " << Str(r, "state") << "\n"
            << "  start:   " << Local(r, "start_ms", zone) << " (" << Str(r, "start") << ")\n"
            << "  end:     " << Local(r, "end_ms", zone) << " (" << Str(r, "end") << ")\n"
            << "  util:    " << Util(r) << "\n";
  if (!r.value("description", "").empty()) std::cout << "  description: " << r["description"].get<std::string>() << "\n";
}

int PrintReservation(const OutputOptions& out, const Json& r) {
  if (out.format == "json") {
    std::cout << r.dump(2) << "\n";
  } else {
    PrintOne(r);
  }
  return 0;
}

Result<int64_t> ParseId(const std::string& text) {
  bool ok = !text.empty() && text.size() <= 18;
  for (char c : text) ok = ok && c >= '0' && c <= '9';
  if (!ok) return Status::InvalidArgument("'" + text + "' is not a reservation id");
  return std::stoll(text);
}

Result<Json> ReadPolicyFile(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("--file: required (a JSON or YAML policy)");
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  try {
    auto converted = YamlToJson(YAML::Load(text), YamlNumbers::kAll);
    if (!converted.ok()) return converted.status().WithContext(path);
    Json j = std::move(*converted);
    if (!j.is_object()) return Status::InvalidArgument(path + ": a policy must be a mapping/object");
    return j;
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(path + ": " + e.what());
  }
}

// A policy given by id or by name.
Result<int64_t> PolicyId(const ApiClient& client, const std::string& ref) {
  if (auto id = ParseId(ref); id.ok()) return *id;
  ASSIGN_OR_RETURN(Json body, client.Get("/api/v1/policies"));
  for (const auto& p : body["policies"]) {
    if (p.value("name", "") == ref) return p.value("id", int64_t{0});
  }
  return Status::NotFound("no policy named '" + ref + "'");
}

}  // namespace

int RunReserve(const ClientOptions& options, const OutputOptions& out, const ReserveOptions& o) {
  if (!ValidOutput(out)) return 2;
  const int ways = (!o.gpus.empty() ? 1 : 0) + (o.count > 0 ? 1 : 0) + (o.whole_node ? 1 : 0);
  if (o.node.empty()) return Usage("--node is required");
  if (ways != 1) return Usage("give exactly one of --gpus 0,1, --count N or --whole-node");
  if (o.end.empty() == o.duration.empty()) return Usage("give exactly one of --end or --duration");
  if (o.title.empty()) return Usage("--title is required");
  const int64_t now = RealClock::Get().NowMs();
  const reserve::TimeZone zone = reserve::TimeZone::Local();
  auto start = WhenFlag("--start", o.start, now, zone);
  if (!start.ok()) return Usage(start.status().message());
  int64_t end_ms;
  if (!o.end.empty()) {
    auto end = WhenFlag("--end", o.end, now, zone);
    if (!end.ok()) return Usage(end.status().message());
    end_ms = *end;
  } else {
    auto d = reserve::ParseCliDuration(o.duration);
    if (!d.ok()) return Usage("--duration: " + d.status().message());
    end_ms = *start + *d;
  }
  Json body{{"node", o.node}, {"start", FormatRfc3339Ms(*start)}, {"end", FormatRfc3339Ms(end_ms)},
            {"title", o.title}};
  if (!o.description.empty()) body["description"] = o.description;
  if (o.whole_node) body["whole_node"] = true;
  if (o.count > 0) body["count"] = o.count;
  if (!o.gpus.empty()) {
    Json gpus = Json::array();
    for (const auto& part : Split(o.gpus, ',', true)) {
      auto id = ParseId(std::string(Trim(part)));
      if (!id.ok()) return Usage("--gpus: '" + part + "' is not a GPU index (use e.g. 0,1)");
      gpus.push_back(*id);
    }
    body["gpus"] = gpus;
  }
  auto client = ApiClient::Create(options);
  if (!client.ok()) return Fail(client.status());
  auto r = client->Post("/api/v1/reservations", body);
  if (!r.ok()) return Fail(r.status());
  if (out.format == "json") return PrintReservation(out, *r);
  std::cout << "Reserved " << r->value("node", "") << " GPUs " << Gpus(*r) << " from "
            << Local(*r, "start_ms", zone) << " to " << Local(*r, "end_ms", zone)
            << " (reservation " << r->value("id", 0) << ")\n";
  return 0;
}

int RunReservations(const ClientOptions& options, const OutputOptions& out,
                    const ReservationListOptions& o) {
  if (!ValidOutput(out)) return 2;
  const int64_t now = RealClock::Get().NowMs();
  const reserve::TimeZone zone = reserve::TimeZone::Local();
  std::vector<std::string> params;
  if (o.mine) params.push_back("mine=true");
  if (!o.user.empty()) params.push_back("user=" + net::PercentEncode(o.user));
  if (!o.node.empty()) params.push_back("node=" + net::PercentEncode(o.node));
  if (!o.state.empty()) params.push_back("state=" + net::PercentEncode(o.state));
  std::string from = o.from;
  if (from.empty() && o.to.empty() && o.state.empty() && !o.all) from = "now";  // current and future
  for (auto [flag, text, key] : {std::tuple{"--from", from, "from"}, std::tuple{"--to", o.to, "to"}}) {
    if (text.empty()) continue;
    auto t = WhenFlag(flag, text, now, zone);
    if (!t.ok()) return Usage(t.status().message());
    params.push_back(std::string(key) + "=" + net::PercentEncode(FormatRfc3339Ms(*t)));
  }
  if (o.limit > 0) params.push_back("limit=" + std::to_string(o.limit));
  auto client = ApiClient::Create(options);
  if (!client.ok()) return Fail(client.status());
  std::string path = "/api/v1/reservations";
  if (!params.empty()) path += "?" + Join(params, "&");
  auto body = client->Get(path);
  if (!body.ok()) return Fail(body.status());
  if (out.format == "json") {
    std::cout << (*body)["reservations"].dump(2) << "\n";
    return 0;
  }
  PrintTable((*body)["reservations"]);
  if (body->value("truncated", false)) {
    std::cerr << "(more reservations match: these are the latest-starting; narrow with "
                 "--from/--to or raise --limit)\n";
  }
  return 0;
}

int RunReservationCommand(const ClientOptions& options, const OutputOptions& out,
                          const ReservationEdit& e) {
  if (!ValidOutput(out)) return 2;
  auto id = ParseId(e.id);
  if (!id.ok()) return Usage(id.status().message());
  auto client = ApiClient::Create(options);
  if (!client.ok()) return Fail(client.status());
  const std::string path = "/api/v1/reservations/" + std::to_string(*id);
  Result<Json> r = Status::Internal("no action");
  if (e.action == "show") {
    r = client->Get(path);
  } else if (e.action == "cancel") {
    r = client->Delete(path);
  } else if (e.action == "edit") {
    const int64_t now = RealClock::Get().NowMs();
    const reserve::TimeZone zone = reserve::TimeZone::Local();
    Json patch = Json::object();
    if (e.start) {
      auto t = WhenFlag("--start", *e.start, now, zone);
      if (!t.ok()) return Usage(t.status().message());
      patch["start"] = FormatRfc3339Ms(*t);
    }
    if (e.end) {
      auto t = WhenFlag("--end", *e.end, now, zone);
      if (!t.ok()) return Usage(t.status().message());
      patch["end"] = FormatRfc3339Ms(*t);
    }
    if (e.title) patch["title"] = *e.title;
    if (e.description) patch["description"] = *e.description;
    if (patch.empty()) return Usage("nothing to change: give --start, --end, --title or --description");
    r = client->Call("PATCH", path, patch.dump());
  } else {
    return Usage("unknown action '" + e.action + "' (show, edit or cancel)");
  }
  if (!r.ok()) return Fail(r.status());
  if (e.action == "cancel" && out.format != "json") {
    std::cout << "Reservation " << *id << (r->value("state", "") == "cancelled" ? " cancelled" : " ended now")
              << "\n";
    return 0;
  }
  return PrintReservation(out, *r);
}

int RunPolicies(const ClientOptions& options, const OutputOptions& out) {
  if (!ValidOutput(out)) return 2;
  auto client = ApiClient::Create(options);
  if (!client.ok()) return Fail(client.status());
  auto body = client->Get("/api/v1/policies");
  if (!body.ok()) return Fail(body.status());
  if (out.format == "json") {
    std::cout << (*body)["policies"].dump(2) << "\n";
    return 0;
  }
  Table t({"ID", "NAME", "USERS", "GROUPS", "NODES", "MODELS", "MAX", "GPUS", "WEEKLY GPU-H", "IDLE"});
  for (const auto& p : (*body)["policies"]) {
    auto list = [](const Json& a) {
      std::vector<std::string> v;
      for (const auto& x : a) v.push_back(x.get<std::string>());
      return v.empty() ? std::string("*") : Join(v, ",");
    };
    std::string idle = "-";
    if (p.contains("idle")) {
      idle = "<" + Json(p["idle"].value("threshold_pct", 0.0)).dump() + "% " + p["idle"].value("after", "") +
             (p["idle"].value("release", false) ? " release" : " notify");
    }
    t.Add({std::to_string(p.value("id", 0)), Str(p, "name"), list(p["subjects"]["users"]),
           list(p["subjects"]["groups"]), list(p["targets"]["nodes"]),
           list(p["targets"]["gpu_models"]), p.value("max_duration", "-"),
           p.contains("max_gpus") ? p["max_gpus"].dump() : "-",
           p.contains("weekly_gpu_hours") ? p["weekly_gpu_hours"].dump() : "-", idle});
  }
  std::cout << t.Render();
  return 0;
}

int RunPolicyCommand(const ClientOptions& options, const OutputOptions& out, const PolicyEdit& e) {
  if (!ValidOutput(out)) return 2;
  Json spec;
  if (e.action == "create" || e.action == "update") {
    auto j = ReadPolicyFile(e.file);
    if (!j.ok()) return Usage(j.status().message());
    spec = *j;
  }
  auto client = ApiClient::Create(options);
  if (!client.ok()) return Fail(client.status());
  Result<Json> r = Status::Internal("no action");
  if (e.action == "create") {
    r = client->Post("/api/v1/policies", spec);
  } else if (e.action == "update" || e.action == "delete") {
    if (e.ref.empty()) return Usage("policy " + e.action + " needs a policy id or name");
    auto id = PolicyId(*client, e.ref);
    if (!id.ok()) return Fail(id.status());
    const std::string path = "/api/v1/policies/" + std::to_string(*id);
    if (e.action == "update") {
      if (!spec.contains("name")) {
        auto current = client->Get(path);
        if (!current.ok()) return Fail(current.status());
        spec["name"] = current->value("name", "");
      }
      r = client->Call("PUT", path, spec.dump());
    } else {
      r = client->Delete(path);
      if (r.ok()) {
        std::cout << "Policy " << e.ref << " deleted\n";
        return 0;
      }
    }
  } else {
    return Usage("unknown action '" + e.action + "' (create, update or delete)");
  }
  if (!r.ok()) return Fail(r.status());
  if (out.format == "json") {
    std::cout << r->dump(2) << "\n";
  } else {
    std::cout << "Policy " << r->value("name", "") << " (" << r->value("id", 0) << ") "
              << (e.action == "create" ? "created" : "updated") << "\n";
  }
  return 0;
}

}  // namespace rota::cli
