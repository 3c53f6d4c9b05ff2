// Usage and energy accounting, power limits and power policies.
// Part of the OpenAPI description (openapi.cc puts it together).

#include "server/openapi/dsl.h"
#include "server/openapi/paths.h"

namespace rota::server::openapi {

Json UsagePaths(Json& schemas) {
  Json shares = Closed({{"counter", T("number")}, {"integrated", T("number")}, {"estimated", T("number")}});
  auto figures = [&](bool keyed) {
    Json f = Closed({{"gpu_hours", T("number")}, {"busy_gpu_hours", T("number")}, {"used_gpu_hours", T("number")},
                  {"avg_util_pct", T("number")}, {"idle_gpu_hours", T("number")},
                  {"reserved_idle_gpu_hours", T("number")}, {"energy_kwh", T("number")},
                  {"cpu_energy_kwh", T("number")}, {"total_energy_kwh", T("number")},
                  {"idle_energy_kwh", T("number")}, {"unmeasured_gpu_hours", T("number")},
                  {"energy_method", Enum({"counter", "integrated", "estimated", "mixed", "none"})},
                  {"energy_shares", shares}, {"cost", T("number")}, {"currency", T("string")},
                  {"co2_kg", T("number")}, {"avg_power_w", T("number")}, {"measured_hours", T("number")}},
                 {"energy_shares", "cost", "currency", "co2_kg", "avg_power_w", "measured_hours"});
    if (keyed) {
      f["properties"]["key"] = T("string");
      f["required"].push_back("key");
    }
    return f;
  };
  schemas["UsageFigures"] = figures(false);
  schemas["UsageReportRow"] = figures(true);
  schemas["UsageReport"] = Closed({{"by", Enum({"user", "group", "job", "reservation", "node", "area"})},
                                  {"from", Time()}, {"to", Time()}, {"label", T("string")}, {"user", T("string")},
                                  {"rows", Arr(Ref("UsageReportRow"))}, {"total", Ref("UsageFigures")}},
                                 {"label", "user"});
  return Json{
      {"/api/v1/usage",
       {{"get", Op("GPU time, utilisation and energy summed by user, group, job, reservation, node or area "
                   "(kept by hour: an hour the window covers in part counts pro rata of its elapsed part); "
                   "energy_kwh is the GPUs' energy and energy_method says "
                   "how it was measured (counter, integrated, estimated, mixed, none); cpu_energy_kwh is "
                   "the CPU packages' (RAPL), total_energy_kwh both, and cost and co2_kg count both; "
                   "node and area rows carry avg_power_w over the time the node was measured "
                   "(measured_hours); non-admins get only their own figures",
                   Ref("UsageReport"),
                   {400, 401, 403},
                   {QueryParam("by", "string", "user (default), group, job, reservation, node or area"),
                    QueryParam("from", "string", "RFC 3339 (default: 30 days before to)"),
                    QueryParam("to", "string", "RFC 3339 (default: now)"),
                    QueryParam("node", "string", "only this node"),
                    QueryParam("label", "string", "by=area: the node label naming areas (default: the first "
                                                  "of the server's area_labels)"),
                    QueryParam("user", "string", "only this user (admins; others get only their own)")})}}},
  };
}

Json PowerPaths(Json& schemas) {
  schemas["PowerScope"] = Closed({{"nodes", Arr(T("string"))}, {"gpu_models", Arr(T("string"))},
                                  {"labels", Map(T("string"))}});
  schemas["PowerPolicy"] = Closed(
      {{"id", T("integer")}, {"name", T("string")}, {"description", T("string")},
       {"kind", Enum({"limit", "budget"})}, {"watts", T("number")}, {"limit", T("number")},
       {"budget", T("number")}, {"scope", Ref("PowerScope")}, {"windows", Ref("WeeklyWindows")},
       {"created", Time()}, {"updated", Time()}},
      {"limit", "budget", "windows"});
  schemas["PowerPolicySpec"] = Body(
      {{"name", T("string")}, {"description", T("string")},
       {"scope",
        Body({{"nodes", Arr(T("string"))}, {"gpu_models", Arr(T("string"))}, {"labels", Map(T("string"))}})},
       {"limit", Watts()}, {"budget", Watts()}, {"windows", WindowsBody()}, {"id", T("integer")},
       {"kind", Enum({"limit", "budget"})}, {"watts", T("number")}, {"created", T("string")},
       {"updated", T("string")}},
      {"name"});
  const Json watts = Nullable(T("number"));
  schemas["PowerGpu"] = Closed(
      {{"node", T("string")}, {"index", T("integer")}, {"uuid", T("string")}, {"model", T("string")},
       {"min_w", watts}, {"max_w", watts}, {"default_w", watts}, {"target_w", watts}, {"in_force_w", watts},
       {"power_w", watts}, {"busy", T("boolean")}, {"policies", Arr(T("string"))}, {"reason", T("string")},
       {"outcome", Enum({"", "set", "restored", "unchanged", "refused", "error"})}, {"detail", T("string")},
       {"reported", Nullable(Time())}});
  schemas["PowerBudget"] = Closed({{"policy", T("string")}, {"budget_w", T("number")}, {"gpus", T("integer")},
                                   {"busy", T("integer")}, {"left_out", T("integer")},
                                   {"min_total_w", T("number")}, {"assigned_w", T("number")},
                                   {"feasible", T("boolean")}});
  schemas["PowerState"] = Closed({{"planned", Nullable(Time())}, {"gpus", Arr(Ref("PowerGpu"))},
                                  {"budgets", Arr(Ref("PowerBudget"))}});
  schemas["PowerEvent"] = Closed(
      {{"id", T("integer")}, {"time", Time()}, {"action", T("string")}, {"node", T("string")},
       {"gpu", Nullable(T("integer"))}, {"uuid", T("string")}, {"limit_w", watts}, {"previous_w", watts},
       {"requested_w", watts}, {"policy", T("string")}, {"actor", T("string")}, {"detail", T("string")}});
  const Json policy = Ref("PowerPolicy");
  Json id = Json::array({PathParam("id", "integer", "power policy id")});
  return Json{
      {"/api/v1/power",
       {{"get", Op("Every GPU's power range, the limit the policies give it (target_w; null: its default), "
                   "the limit in force, its draw and the agent's last outcome (set, restored, unchanged, "
                   "refused, error) with why; the active budgets and how they are divided",
                   Ref("PowerState"), {401})}}},
      {"/api/v1/power/policies",
       {{"get", Op("Power policies", Closed({{"policies", Arr(policy)}}), {401})},
        {"post", WithBody(Answers(201, Op("Create a power policy (admin): {name, description?, scope?: {nodes?, "
                                          "gpu_models?, labels?}, limit (W per GPU) | budget (W for all GPUs in "
                                          "scope), windows?: {zone?, allow: [{days, from, to}]}}; 400 for limits "
                                          "outside a GPU's range, unknown nodes or labels, no GPU in scope, "
                                          "overlapping windows; 409 for a taken name or a second budget on the "
                                          "same GPUs at the same time",
                                          policy, {400, 401, 403, 409})),
                          Ref("PowerPolicySpec"))}}},
      {"/api/v1/power/policies/{id}",
       {{"get", Op("A power policy", policy, {400, 401, 404}, id)},
        {"put", WithBody(Op("Replace a power policy (admin); checked as on create", policy,
                            {400, 401, 403, 404, 409}, id),
                         Ref("PowerPolicySpec"))},
        {"delete", Answers(204, Op("Delete a power policy (admin); its GPUs get their default back", T("object"),
                                   {400, 401, 403, 404}, id))}}},
      {"/api/v1/power/events",
       {{"get", Op("The power audit log, newest first: limits set, restored, refused or failed on each GPU, "
                   "and policy changes with the admin who made them",
                   Closed({{"events", Arr(Ref("PowerEvent"))}}), {400, 401},
                   {QueryParam("node", "string", "only this node"),
                    QueryParam("from", "string", "RFC 3339: events at or after"),
                    QueryParam("to", "string", "RFC 3339: events before"),
                    QueryParam("limit", "integer", "at most this many (1..1000, default 100)")})}}},
  };
}

}  // namespace rota::server::openapi
