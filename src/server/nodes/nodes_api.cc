// Nodes and GPUs:
//
//   GET    /api/v1/nodes                ?state=ready|unreachable            reader
//   GET    /api/v1/nodes/{name}         with its latest sample              reader
//   PUT    /api/v1/nodes/{name}/drain   {reason?}: no new job starts there  admin
//   DELETE /api/v1/nodes/{name}/drain   jobs may start there again          admin
//   DELETE /api/v1/nodes/{name}/credential  revokes the node's own credential and
//                                        closes its connection: its agent must enrol
//                                        again with the join token              admin
//   GET    /api/v1/gpus                 ?node, offset, limit                reader

#include <algorithm>

#include "common/log.h"
#include "common/strings.h"

#include "net/http_server.h"
#include "reserve/json_fields.h"
#include "server/api_context.h"
#include "server/accounts/auth.h"
#include "server/nodes/agent_gateway.h"
#include "server/nodes/node_credentials.h"
#include "server/nodes/node_drains.h"
#include "server/request_params.h"
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
    if (!node.has_value()) return net::HttpResponse::FromStatus(Status::NotFound("node '" + name + "' not found"));
    return net::HttpResponse::Json(200, NodeJson(*node, /*with_latest=*/true).dump());
  }));

  if (ctx.drains == nullptr) return Status::Internal("node routes need node drains");
  RETURN_IF_ERROR(http.Route("PUT", "/api/v1/nodes/{name}/drain", [&ctx](const net::HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return net::HttpResponse::FromStatus(who.status());
    std::string reason;
    if (!Trim(req.body).empty()) {
      auto body = api::ParseStrictJson(req.body);
      if (!body.ok()) return net::HttpResponse::FromStatus(body.status().WithContext("request body"));
      if (!body->is_object()) return net::HttpResponse::FromStatus(Status::InvalidArgument("drain: must be an object"));
      reserve::JsonFields f(*body, "drain");
      Status st = f.Only({"reason"});
      if (st.ok()) st = f.Str("reason", &reason, false, 4 * kMaxDrainReasonChars);
      if (!st.ok()) return net::HttpResponse::FromStatus(st);
    }
    auto node = ctx.drains->Drain(req.Param("name"), reason, who->username);
    if (!node.ok()) return net::HttpResponse::FromStatus(node.status());
    return net::HttpResponse::Json(200, NodeJson(*node, /*with_latest=*/false).dump());
  }));

  RETURN_IF_ERROR(http.Route("DELETE", "/api/v1/nodes/{name}/drain", [&ctx](const net::HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return net::HttpResponse::FromStatus(who.status());
    auto node = ctx.drains->Resume(req.Param("name"));
    if (!node.ok()) return net::HttpResponse::FromStatus(node.status());
    return net::HttpResponse::Json(200, NodeJson(*node, /*with_latest=*/false).dump());
  }));

  if (ctx.credentials == nullptr || ctx.gateway == nullptr) {
    return Status::Internal("node routes need node credentials and the agent gateway");
  }
  RETURN_IF_ERROR(http.Route("DELETE", "/api/v1/nodes/{name}/credential", [&ctx](const net::HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return net::HttpResponse::FromStatus(who.status());
    const std::string& name = req.Param("name");
    auto info = ctx.credentials->Get(name);
    if (Status st = ctx.credentials->Revoke(name); !st.ok()) return net::HttpResponse::FromStatus(st);
    ctx.gateway->Disconnect(name, "node credential revoked");
    ROTA_LOG(WARNING) << "credential of node " << name << " revoked by " << who->username;
    return net::HttpResponse::Json(
        200, api::Json{{"node", name},
                       {"revoked", true},
                       {"enrolled_ms", info ? info->enrolled_ms : 0},
                       {"enrolled_from", info ? info->remote : ""}}
                 .dump());
  }));

  // GPUs in node order, then index order; offset and limit count GPUs, and
  // `total` is how many there are (with the node filter), so a client of a
  // large cluster can page.
  auto cache = std::make_shared<GpuRowsCache>();
  RETURN_IF_ERROR(http.Route("GET", "/api/v1/gpus", [&ctx, cache](const net::HttpRequest& req) {
    if (auto who = RequireReader(ctx, req); !who.ok()) return net::HttpResponse::FromStatus(who.status());
    if (Status st = OnlyQueryParams(req, {"node", "offset", "limit"}); !st.ok())
      return net::HttpResponse::FromStatus(st);
    auto offset = UintParam(req, "offset", 0, 1'000'000'000);
    if (!offset.ok()) return net::HttpResponse::FromStatus(offset.status());
    auto limit = UintParam(req, "limit", 1'000'000'000, 1'000'000'000);
    if (!limit.ok()) return net::HttpResponse::FromStatus(limit.status());
    if (*limit == 0) return net::HttpResponse::FromStatus(Status::InvalidArgument("limit: must be at least 1"));
    const uint64_t page_end = *offset + *limit;
    const std::string only = req.Query("node");
    std::string body = "{\"gpus\":[";
    bool found = false, first = true;
    uint64_t total = 0;
    for (const auto& n : ctx.cluster->Nodes()) {
      if (!only.empty() && only != n.info->name) continue;
      found = true;
      const uint64_t begin = total;
      total += n.info->gpus.size();
      if (total <= *offset || begin >= page_end) continue;  // no row of this node on the page
      const auto rows = cache->Rows(n);
      const uint64_t from = std::max(*offset, begin) - begin;
      const uint64_t to = std::min<uint64_t>(std::min(page_end, total) - begin, rows->size());
      if (from >= to) continue;
      if (!first) body += ',';
      body += rows->Slice(from, to);
      first = false;
    }
    body += "],\"total\":" + std::to_string(total) + "}";
    if (!only.empty() && !found) return net::HttpResponse::FromStatus(Status::NotFound("node '" + only + "' not found"));
    return net::HttpResponse::Json(200, std::move(body));
  }));
  return Status::Ok();
}

}  // namespace rota::server
