// Nodes and GPUs: GET /api/v1/nodes, /api/v1/nodes/{name}, /api/v1/gpus.

#include "net/http_server.h"
#include "server/api_context.h"
#include "server/auth.h"
#include "server/views.h"

namespace rota::server {

Status RegisterNodeRoutes(net::HttpServer& http, ApiContext& ctx) {
  RETURN_IF_ERROR(http.Route("GET", "/api/v1/nodes", [&ctx](const net::HttpRequest& req) {
    if (auto who = RequireReader(ctx, req); !who.ok()) return net::HttpResponse::FromStatus(who.status());
    auto state = req.query.find("state");
    api::Json nodes = api::Json::array();
    for (const auto& n : ctx.cluster->Nodes()) {
      if (state != req.query.end() && state->second != NodeStateName(n.state)) continue;
      nodes.push_back(NodeJson(n, /*with_latest=*/false));
    }
    return net::HttpResponse::Json(200, api::Json{{"nodes", std::move(nodes)}}.dump());
  }));

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/nodes/{name}", [&ctx](const net::HttpRequest& req) {
    if (auto who = RequireReader(ctx, req); !who.ok()) return net::HttpResponse::FromStatus(who.status());
    const std::string& name = req.path_params.at("name");
    auto node = ctx.cluster->Node(name);
    if (!node.has_value()) return net::HttpResponse::Error(404, "node '" + name + "' not found");
    return net::HttpResponse::Json(200, NodeJson(*node, /*with_latest=*/true).dump());
  }));

  auto cache = std::make_shared<GpuRowsCache>();
  RETURN_IF_ERROR(http.Route("GET", "/api/v1/gpus", [&ctx, cache](const net::HttpRequest& req) {
    if (auto who = RequireReader(ctx, req); !who.ok()) return net::HttpResponse::FromStatus(who.status());
    const std::string only = req.Query("node");
    std::string body = "{\"gpus\":[";
    bool found = false, first = true;
    for (const auto& n : ctx.cluster->Nodes()) {
      if (!only.empty() && only != n.info->name) continue;
      found = true;
      std::string rows = cache->Rows(n);
      if (rows.empty()) continue;
      if (!first) body += ',';
      body += rows;
      first = false;
    }
    body += "]}";
    if (!only.empty() && !found) return net::HttpResponse::Error(404, "node '" + only + "' not found");
    return net::HttpResponse::Json(200, std::move(body));
  }));
  return Status::Ok();
}

}  // namespace rota::server
