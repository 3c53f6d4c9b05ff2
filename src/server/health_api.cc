// Liveness and readiness: GET /healthz, GET /readyz.
//
// /healthz answers {"status":"ok","role":"leader"|"follower","epoch":N} (epoch 0 on
// SQLite, where the one server always leads); no authentication (load balancers use it).

#include "api/codec.h"
#include "net/http_server.h"
#include "server/api_context.h"
#include "server/leadership/role_json.h"

namespace rota::server {

Status RegisterHealthRoutes(net::HttpServer& http, ApiContext& ctx) {
  RETURN_IF_ERROR(http.Route("GET", "/healthz", [&ctx](const net::HttpRequest&) {
    return net::HttpResponse::Json(200, HealthJson(ctx.role).dump());
  }));
  RETURN_IF_ERROR(http.Route("GET", "/readyz", [&ctx](const net::HttpRequest&) {
    if (!ctx.ready->load()) return net::HttpResponse::FromStatus(Status::Unavailable("server is starting"));
    api::Json j{{"status", "ready"},
                {"nodes", ctx.cluster->Nodes().size()},
                {"connected_agents", ctx.cluster->ConnectedCount()}};
    return net::HttpResponse::Json(200, j.dump());
  }));
  return Status::Ok();
}

}  // namespace rota::server
