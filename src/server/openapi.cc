// The API's own description: GET /api/v1/openapi.json (OpenAPI 3.0) and a
// readable page at GET /api/v1/docs that renders it without external assets.

#include <cctype>

#include "api/codec.h"
#include "net/http_server.h"
#include "server/api_context.h"
#include "server/openapi/dsl.h"
#include "server/openapi/paths.h"

namespace rota::server {
namespace {

using api::Json;
using namespace openapi;  // NOLINT: the spec is written in its vocabulary

// "getNodesByNameGpusByIndexMetrics" for GET /api/v1/nodes/{name}/gpus/{index}/metrics: a
// stable, unique operationId for generated clients, derived from the method and the path.
std::string OperationId(const std::string& method, const std::string& path) {
  std::string id = method;
  std::string rest = path.rfind("/api/v1/", 0) == 0 ? path.substr(8) : path.substr(1);
  bool upper = true;
  for (size_t i = 0; i < rest.size(); ++i) {
    char c = rest[i];
    if (c == '{') {
      id += "By";
      upper = true;
    } else if (c == '/' || c == '-' || c == '_' || c == '}') {
      upper = true;
    } else {
      id += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      upper = false;
    }
  }
  return id;
}

// Fills what every operation needs and the route tables leave implicit: an operationId, 401
// where a caller must be signed in (every route but health, sign-in and the spec itself), and
// 400 where nothing else in 4xx applies (a request line the server cannot route is refused).
void CompleteOperations(Json& paths) {
  for (auto& [path, item] : paths.items()) {
    for (auto& [method, op] : item.items()) {
      if (!op.contains("operationId")) op["operationId"] = OperationId(method, path);
      Json& responses = op["responses"];
      const bool open = path == "/api/v1/auth/login" || path == "/api/v1/openapi.json" ||
                        path == "/api/v1/docs" || path == "/healthz" || path == "/readyz";
      if (!open && !responses.contains("401")) {
        responses["401"] = {{"description", "Unauthenticated"},
                            {"content", JsonContent(Ref("Error"))}};
      }
      bool has_4xx = false;
      for (auto& [code, _] : responses.items()) has_4xx |= code.size() == 3 && code[0] == '4';
      if (!has_4xx) {
        responses["400"] = {{"description", "Malformed request"},
                            {"content", JsonContent(Ref("Error"))}};
      }
    }
  }
}

Json BuildSpec() {
  Json range = Json::array({QueryParam("from", "string", "RFC 3339 start (default: to - 1h)"),
                            QueryParam("to", "string", "RFC 3339 end (default: now)"),
                            QueryParam("step", "string", "bucket size, e.g. 10s, 1m (default: auto, <= 1000 points)")});
  Json gpu_range = range;
  gpu_range.insert(gpu_range.begin(), PathParam("index", "integer", "GPU index on the node"));
  gpu_range.insert(gpu_range.begin(), PathParam("name", "string", "node name"));
  Json node_range = range;
  node_range.insert(node_range.begin(), PathParam("name", "string", "node name"));

  Json schemas = {
      {"Error", Closed({{"error", Closed({{"code", T("string")}, {"message", T("string")}})}})},
      {"GpuProcess", Closed({{"pid", T("integer")}, {"type", Enum({"compute", "graphics"})},
                             {"gpu_memory_bytes", T("integer")}, {"uid", T("integer")}, {"user", T("string")},
                             {"command", T("string")}, {"exe", T("string")}, {"start_time_ms", T("integer")},
                             {"cpu_percent", T("number")}, {"rss_bytes", T("integer")}, {"cgroup", T("string")}},
                            {"gpu_memory_bytes", "uid", "user", "command", "exe", "start_time_ms", "cpu_percent",
                             "rss_bytes", "cgroup"})},
      {"GpuInfo", Closed({{"index", T("integer")}, {"uuid", T("string")}, {"name", T("string")},
                          {"pci_bus_id", T("string")}, {"memory_total_bytes", T("integer")},
                          {"power_limit_mw", T("integer")}, {"power_min_mw", T("integer")},
                          {"power_max_mw", T("integer")}, {"power_default_mw", T("integer")}},
                         {"memory_total_bytes", "power_limit_mw", "power_min_mw", "power_max_mw",
                          "power_default_mw"})},
      {"HostSample", Closed({{"cpu_percent", T("number")}, {"per_core_percent", Arr(T("number"))},
                             {"mem_total_bytes", T("integer")}, {"mem_available_bytes", T("integer")},
                             {"load1", T("number")}, {"load5", T("number")}, {"load15", T("number")},
                             {"cpu_energy_mj", T("integer")}, {"cpu_busy_usec", T("integer")},
                             {"cpu_tasks", Arr(Closed({{"id", T("string")}, {"job_id", T("integer")},
                                                       {"usage_usec", T("integer")}}))}},
                            {"cpu_energy_mj", "cpu_busy_usec", "cpu_tasks"})},
      {"SeriesPoint", Closed({{"time", Time()}, {"t_ms", T("integer")}, {"samples", T("integer")},
                              {"avg", Map(T("number"))}, {"max", Map(T("number"))}, {"last", Map(T("number"))}},
                             {"last"})},
      {"Series", Closed({{"node", T("string")}, {"gpu", T("integer")}, {"from", Time()}, {"to", Time()},
                         {"step_ms", T("integer")}, {"resolution", Enum({"raw", "1m"})},
                         {"points", Arr(Ref("SeriesPoint"))}},
                        {"gpu"})},
  };
  // A GPU's readings, each absent when the GPU does not report it (GPU rows and node samples).
  const Json readings = {{"failed", T("boolean")}, {"error", T("string")},
                         {"memory_total_bytes", T("integer")}, {"memory_used_bytes", T("integer")},
                         {"util_gpu_pct", T("integer")}, {"util_memory_pct", T("integer")},
                         {"temperature_c", T("integer")}, {"power_mw", T("integer")},
                         {"power_limit_mw", T("integer")}, {"energy_mj", T("integer")},
                         {"sm_clock_mhz", T("integer")}, {"mem_clock_mhz", T("integer")},
                         {"fan_pct", T("integer")}};
  const auto optional_readings = {"failed", "error", "memory_total_bytes", "memory_used_bytes", "util_gpu_pct",
                                  "util_memory_pct", "temperature_c", "power_mw", "power_limit_mw", "energy_mj",
                                  "sm_clock_mhz", "mem_clock_mhz", "fan_pct", "time"};
  Json gpu = readings;
  gpu.update(Json{{"node", T("string")}, {"index", T("integer")}, {"uuid", T("string")}, {"name", T("string")},
                  {"pci_bus_id", T("string")}, {"state", Enum({"ok", "failed", "unreachable"})},
                  {"users", Arr(T("string"))}, {"processes", Arr(Ref("GpuProcess"))}, {"time", Time()}});
  schemas["Gpu"] = Closed(std::move(gpu), optional_readings);
  Json sample_gpu = readings;
  sample_gpu.update(Json{{"index", T("integer")}, {"uuid", T("string")}, {"processes", Arr(Ref("GpuProcess"))}});
  // Inline (a nullable $ref is not expressible in OpenAPI 3.0).
  const Json latest = Nullable(Closed({{"time", Time()}, {"time_ms", T("integer")}, {"host", Ref("HostSample")},
                                       {"gpus", Arr(Closed(std::move(sample_gpu), optional_readings))}}));
  schemas["Node"] = Closed(
      {{"name", T("string")}, {"node_id", T("string")}, {"hostname", T("string")},
       {"addresses", Arr(T("string"))}, {"cpus", T("integer")}, {"memory_bytes", T("integer")},
       {"labels", Map(T("string"))}, {"gpus", Arr(Ref("GpuInfo"))}, {"gpu_status", T("string")},
       {"agent_version", T("string")}, {"sample_interval_ms", T("integer")}, {"cpu_energy_status", T("string")},
       {"state", Enum({"ready", "unreachable"})}, {"connected", T("boolean")},
       {"last_seen", Nullable(Time())}, {"state_since", Nullable(Time())},
       {"unreachable_reason", T("string")}, {"gpu_count", T("integer")}, {"failed_gpu_count", T("integer")},
       {"drain", Nullable(Closed({{"reason", T("string")}, {"by", T("string")}, {"since", Time()}}))},
       {"latest", latest}},
      {"cpu_energy_status", "unreachable_reason", "latest"});

  Json paths = {
      {"/healthz",
       {{"get", Op("Liveness, and this server's role among the servers of one store (docs/design-ha.md)",
                   Closed({{"status", T("string")}, {"role", Enum({"leader", "follower"})}, {"epoch", T("integer")},
                           {"server_id", T("string")}, {"leader", T("string")}},
                          {"server_id", "leader"}),
                   {})}}},
      {"/readyz", {{"get", Op("Readiness (a follower: ready, with the leader's URL)",
                              Closed({{"status", T("string")}, {"nodes", T("integer")},
                                      {"connected_agents", T("integer")}, {"role", T("string")},
                                      {"leader", T("string")}},
                                     {"nodes", "connected_agents", "role", "leader"}),
                              {503})}}},
      {"/api/v1/servers",
       {{"get", Op("The servers sharing this store: role, address, version, last renewal (reader)",
                   Closed({{"servers", Arr(Closed({{"id", T("string")}, {"address", T("string")},
                                                   {"version", T("string")}, {"role", Enum({"leader", "follower"})},
                                                   {"started", Nullable(Time())},
                                                   {"last_renewal", Nullable(Time())}}))},
                           {"epoch", T("integer")}, {"replicated", T("boolean")}}),
                   {403})}}},
      {"/metrics", {{"get", Op("Prometheus metrics", T("string"), {}, Json::array(), "text/plain")}}},
      {"/api/v1/nodes",
       {{"get", Op("List nodes (without latest)", Closed({{"nodes", Arr(Ref("Node"))}}), {},
                   Json::array({QueryParam("state", "string", "ready or unreachable")}))}}},
      {"/api/v1/nodes/{name}",
       {{"get", Op("A node with its latest sample (null before the first)", Ref("Node"), {404},
                   Json::array({PathParam("name", "string", "node name")}))}}},
      {"/api/v1/nodes/{name}/drain",
       {{"put", WithBody(Op("Drain a node (admin): no new job starts there, running jobs go on; draining a "
                            "drained node replaces the reason and keeps since when",
                            Ref("Node"), {400, 401, 403, 404},
                            Json::array({PathParam("name", "string", "node name")})),
                         Body({{"reason", T("string")}}))},
        {"delete", Op("End a node's drain (admin); no error when it has none", Ref("Node"), {401, 403, 404},
                      Json::array({PathParam("name", "string", "node name")}))}}},
      {"/api/v1/nodes/{name}/credential",
       {{"delete", Op("Revoke a node's own credential (admin): its agent is disconnected and must enrol "
                      "again with the join token",
                      Closed({{"node", T("string")}, {"revoked", T("boolean")}, {"enrolled_ms", T("integer")},
                              {"enrolled_from", T("string")}}),
                      {401, 403, 404}, Json::array({PathParam("name", "string", "node name")}))}}},
      {"/api/v1/gpus",
       {{"get", Op("List GPUs with current processes and users, in node then index order; `total` counts "
                   "every GPU (of the node, with `node`), so a large cluster can be read a page at a time",
                   Closed({{"gpus", Arr(Ref("Gpu"))}, {"total", T("integer")}}), {400, 404},
                   Json::array({QueryParam("node", "string", "only this node"),
                                QueryParam("offset", "integer", "GPUs to skip (default 0)"),
                                QueryParam("limit", "integer", "at most this many GPUs (default: all)")}))}}},
      {"/api/v1/nodes/{name}/metrics",
       {{"get", Op("Node CPU/memory/load history, downsampled", Ref("Series"), {400, 404}, node_range)}}},
      {"/api/v1/nodes/{name}/gpus/{index}/metrics",
       {{"get", Op("GPU history, downsampled (avg and max per bucket)", Ref("Series"), {400, 404}, gpu_range)}}},
      {"/api/v1/stream",
       {{"get", Op("Live node and GPU updates (server-sent events: node, as GET /api/v1/nodes; sample, "
                   "{node, time?, host?: HostSample, gpus: [Gpu]})",
                   T("string"), {404}, Json::array({QueryParam("node", "string", "only this node")}),
                   "text/event-stream")}}},
      {"/api/v1/agent/connect",
       {{"get", AgentSocket(Op("Agent WebSocket (protocol v1); Authorization: Bearer <node credential, or the "
                               "join token to enrol>",
                               T("string"), {401, 426}))}}},
  };
  paths.update(AccountPaths(schemas));
  paths.update(ViolationPaths(schemas));
  paths.update(ReservationPaths(schemas));
  paths.update(JobPaths(schemas));
  paths.update(QueuePaths(schemas));
  paths.update(QuotaPaths(schemas));
  paths.update(SshNodePaths(schemas));
  paths.update(SecretPaths(schemas));
  paths.update(UsagePaths(schemas));
  paths.update(PowerPaths(schemas));
  CompleteOperations(paths);
  return Json{{"openapi", "3.0.3"},
              {"servers", Json::array({{{"url", "/"}, {"description", "this server"}}})},
              {"info", {{"title", "rota API"}, {"version", "1"},
                        {"description", "GPU cluster manager: nodes, GPUs, metrics history, live updates."},
                        {"license", {{"name", "Apache-2.0"},
                                     {"url", "https://www.apache.org/licenses/LICENSE-2.0"}}}}},
              {"paths", paths},
              {"security", Json::array({{{"bearer", Json::array()}}})},
              {"components",
               {{"schemas", schemas},
                {"securitySchemes",
                 {{"bearer", {{"type", "http"}, {"scheme", "bearer"},
                              {"description", "Session token (POST /api/v1/auth/login) or API "
                                              "token (POST /api/v1/tokens)"}}}}}}}};
}

const char kDocsPage[] = R"HTML(<!doctype html>
<html><head><meta charset="utf-8"><title>rota API</title>
<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;color:#222}
.op{border:1px solid #ddd;border-radius:6px;margin:.6rem 0;padding:.5rem .8rem}
.m{display:inline-block;min-width:3.5rem;font-weight:bold;color:#0a6}
code{background:#f4f4f4;padding:0 .3rem}td{padding:0 .6rem 0 0;vertical-align:top}</style></head>
<body><h1>rota API</h1><p>Machine-readable: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a></p>
<div id="ops">loading…</div>
<script>
fetch('/api/v1/openapi.json').then(r=>r.json()).then(spec=>{
  const el=document.getElementById('ops'); el.textContent='';
  for (const [path,item] of Object.entries(spec.paths)) for (const [m,op] of Object.entries(item)) {
    const d=document.createElement('div'); d.className='op';
    const h=document.createElement('div');
    const ms=document.createElement('span'); ms.className='m'; ms.textContent=m.toUpperCase();
    const c=document.createElement('code'); c.textContent=path;
    h.append(ms,c,document.createTextNode(' — '+(op.summary||''))); d.append(h);
    if (op.parameters) { const t=document.createElement('table');
      for (const p of op.parameters) { const r=t.insertRow();
        r.insertCell().textContent=p.name+' ('+p.in+')'; r.insertCell().textContent=p.description||''; }
      d.append(t); }
    const codes=document.createElement('div'); codes.textContent='responses: '+Object.keys(op.responses).join(', ');
    d.append(codes); el.append(d);
  }
});
</script></body></html>
)HTML";

}  // namespace

Status RegisterOpenApiRoutes(net::HttpServer& http, ApiContext&) {
  static const std::string spec = BuildSpec().dump(2);
  RETURN_IF_ERROR(http.Route("GET", "/api/v1/openapi.json", [](const net::HttpRequest&) {
    return net::HttpResponse::Json(200, spec);
  }));
  RETURN_IF_ERROR(http.Route("GET", "/api/v1/docs", [](const net::HttpRequest&) {
    net::HttpResponse r;
    r.content_type = "text/html; charset=utf-8";
    r.body = kDocsPage;
    return r;
  }));
  return Status::Ok();
}

}  // namespace rota::server
