// rota power: GPU power limits in force and the power policies behind them
// (GET /api/v1/power, /api/v1/power/policies, /api/v1/power/events).
#include <cstdio>
#include <iostream>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/format.h"
#include "common/strings.h"
#include "net/url.h"

namespace rota::cli {
namespace {

using api::Json;

std::string W(const Json& v) {
  if (!v.is_number()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f W", v.get<double>());
  return buf;
}

std::string Str(const Json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string ScopeText(const Json& scope) {
  std::vector<std::string> parts;
  if (!scope.is_object()) return "cluster";
  if (auto it = scope.find("nodes"); it != scope.end() && it->is_array()) {
    for (const auto& n : *it) parts.push_back("node=" + n.get<std::string>());
  }
  if (auto it = scope.find("gpu_models"); it != scope.end() && it->is_array()) {
    for (const auto& m : *it) parts.push_back("model~" + m.get<std::string>());
  }
  if (auto it = scope.find("labels"); it != scope.end() && it->is_object()) {
    for (auto l = it->begin(); l != it->end(); ++l) parts.push_back(l.key() + "=" + l.value().get<std::string>());
  }
  return parts.empty() ? "cluster" : Join(parts, ",");
}

std::string WindowsText(const Json& p) {
  if (!p.contains("windows") || !p["windows"].is_object()) return "always";
  std::vector<std::string> parts;
  for (const auto& w : p["windows"].value("allow", Json::array())) {
    std::vector<std::string> days;
    for (const auto& d : w.value("days", Json::array())) days.push_back(d.get<std::string>());
    parts.push_back(Join(days, ",") + " " + Str(w, "from") + "-" + Str(w, "to"));
  }
  return Join(parts, "; ") + " " + Str(p["windows"], "zone");
}

// "mon-fri 09:00-18:00" -> {days: ["mon-fri"], from: "09:00", to: "18:00"}.
Result<Json> ParseWindow(const std::string& text) {
  auto space = text.find(' ');
  auto dash = text.rfind('-');
  if (space == std::string::npos || dash == std::string::npos || dash < space) {
    return Status::InvalidArgument("--window '" + text + "' must look like 'mon-fri 09:00-18:00'");
  }
  Json days = Json::array();
  for (const auto& d : Split(text.substr(0, space), ',')) days.push_back(d);
  return Json{{"days", days},
              {"from", std::string(Trim(text.substr(space + 1, dash - space - 1)))},
              {"to", std::string(Trim(text.substr(dash + 1)))}};
}

int ShowGpus(const ApiClient& api, const OutputOptions& out, const std::string& node) {
  auto state = api.Get("/api/v1/power");
  if (!state.ok()) return Fail(state.status());
  if (out.format == "json") {
    std::cout << state->dump(2) << "\n";
    return 0;
  }
  Table t({"NODE", "GPU", "MODEL", "DRAW", "TARGET", "IN FORCE", "RANGE", "LAST", "POLICIES"});
  for (const auto& g : state->value("gpus", Json::array())) {
    if (!node.empty() && Str(g, "node") != node) continue;
    std::vector<std::string> policies;
    for (const auto& p : g.value("policies", Json::array())) policies.push_back(p.get<std::string>());
    std::string last = Str(g, "outcome");
    if (last == "refused" || last == "error") last += ": " + Str(g, "detail");
    t.Add({Str(g, "node"), std::to_string(g.value("index", 0)), Str(g, "model"), W(g["power_w"]),
           g["target_w"].is_number() ? W(g["target_w"]) : "default", W(g["in_force_w"]),
           g["min_w"].is_number() ? W(g["min_w"]) + "-" + W(g["max_w"]) : "-", last.empty() ? "-" : last,
           policies.empty() ? "-" : Join(policies, ",")});
  }
  std::cout << t.Render();
  const Json budgets = state->value("budgets", Json::array());
  if (!budgets.empty()) {
    Table b({"BUDGET", "WATTS", "ASSIGNED", "GPUS", "BUSY", "LEFT OUT", "NOTE"});
    for (const auto& x : budgets) {
      b.Add({Str(x, "policy"), W(x["budget_w"]), W(x["assigned_w"]), std::to_string(x.value("gpus", 0)),
             std::to_string(x.value("busy", 0)), std::to_string(x.value("left_out", 0)),
             x.value("feasible", true) ? "" : "below the GPUs' minimum total " + W(x["min_total_w"])});
    }
    std::cout << "\n" << b.Render();
  }
  return 0;
}

int ListPolicies(const ApiClient& api, const OutputOptions& out) {
  auto list = api.Get("/api/v1/power/policies");
  if (!list.ok()) return Fail(list.status());
  if (out.format == "json") {
    std::cout << list->dump(2) << "\n";
    return 0;
  }
  Table t({"ID", "NAME", "KIND", "WATTS", "SCOPE", "WHEN"});
  for (const auto& p : list->value("policies", Json::array())) {
    t.Add({std::to_string(p.value("id", 0)), Str(p, "name"), Str(p, "kind"), W(p["watts"]),
           ScopeText(p.value("scope", Json::object())), WindowsText(p)});
  }
  std::cout << t.Render();
  return 0;
}

// The id of policy `name_or_id`.
Result<int64_t> PolicyId(const ApiClient& api, const std::string& name_or_id) {
  ASSIGN_OR_RETURN(Json list, api.Get("/api/v1/power/policies"));
  for (const auto& p : list.value("policies", Json::array())) {
    if (Str(p, "name") == name_or_id || std::to_string(p.value("id", 0)) == name_or_id) {
      return p.value("id", int64_t{0});
    }
  }
  return Status::NotFound("no power policy '" + name_or_id + "'");
}

int Events(const ApiClient& api, const OutputOptions& out, const PowerOptions& o) {
  std::vector<std::string> params = {"limit=" + std::to_string(o.limit)};
  if (!o.node.empty()) params.push_back("node=" + net::PercentEncode(o.node));
  auto events = api.Get("/api/v1/power/events?" + Join(params, "&"));
  if (!events.ok()) return Fail(events.status());
  if (out.format == "json") {
    std::cout << events->dump(2) << "\n";
    return 0;
  }
  Table t({"TIME", "ACTION", "NODE", "GPU", "LIMIT", "WAS", "POLICY", "BY", "DETAIL"});
  for (const auto& e : events->value("events", Json::array())) {
    t.Add({Str(e, "time"), Str(e, "action"), Str(e, "node").empty() ? "-" : Str(e, "node"),
           e["gpu"].is_number() ? std::to_string(e["gpu"].get<int>()) : "-", W(e["limit_w"]),
           W(e["previous_w"]), Str(e, "policy").empty() ? "-" : Str(e, "policy"),
           Str(e, "actor").empty() ? "-" : Str(e, "actor"), Str(e, "detail")});
  }
  std::cout << t.Render();
  return 0;
}

int AddPolicy(const ApiClient& api, const OutputOptions& out, const PowerOptions& o) {
  if (o.limit_w.empty() == o.budget_w.empty()) return Usage("give exactly one of --limit and --budget");
  Json body{{"name", o.name}};
  if (!o.description.empty()) body["description"] = o.description;
  if (!o.limit_w.empty()) body["limit"] = o.limit_w;
  if (!o.budget_w.empty()) body["budget"] = o.budget_w;
  Json scope = Json::object();
  if (!o.nodes.empty()) scope["nodes"] = o.nodes;
  if (!o.models.empty()) scope["gpu_models"] = o.models;
  for (const auto& l : o.labels) {
    auto eq = l.find('=');
    if (eq == std::string::npos || eq == 0) return Usage("--label '" + l + "' must be KEY=VALUE");
    scope["labels"][l.substr(0, eq)] = l.substr(eq + 1);
  }
  if (!scope.empty()) body["scope"] = scope;
  if (!o.windows.empty()) {
    Json allow = Json::array();
    for (const auto& w : o.windows) {
      auto parsed = ParseWindow(w);
      if (!parsed.ok()) return Usage(parsed.status().message());
      allow.push_back(*parsed);
    }
    body["windows"] = {{"zone", o.zone.empty() ? "UTC" : o.zone}, {"allow", allow}};
  } else if (!o.zone.empty()) {
    return Usage("--zone needs --window");
  }
  auto created = api.Post("/api/v1/power/policies", body);
  if (!created.ok()) return Fail(created.status());
  if (out.format == "json") {
    std::cout << created->dump(2) << "\n";
  } else {
    std::cout << "power policy " << Str(*created, "name") << " (id " << created->value("id", 0) << "): "
              << Str(*created, "kind") << " " << W((*created)["watts"]) << " on "
              << ScopeText(created->value("scope", Json::object())) << ", " << WindowsText(*created) << "\n";
  }
  return 0;
}

}  // namespace

int RunPower(const ClientOptions& client, const OutputOptions& out, const PowerOptions& o) {
  if (!ValidOutput(out)) return 2;
  auto api = ApiClient::Create(client);
  if (!api.ok()) return Fail(api.status());
  if (o.action == "show") return ShowGpus(*api, out, o.node);
  if (o.action == "policies") return ListPolicies(*api, out);
  if (o.action == "events") return Events(*api, out, o);
  if (o.action == "add") return AddPolicy(*api, out, o);
  if (o.action == "rm") {
    auto id = PolicyId(*api, o.name);
    if (!id.ok()) return Fail(id.status());
    auto gone = api->Delete("/api/v1/power/policies/" + std::to_string(*id));
    if (!gone.ok()) return Fail(gone.status());
    std::cout << "power policy " << o.name << " deleted\n";
    return 0;
  }
  return Usage("unknown power action '" + o.action + "'");
}

}  // namespace rota::cli
