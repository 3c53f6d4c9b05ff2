// Liveness and readiness: GET /healthz, GET /readyz.

#include "api/codec.h"
#include "net/http_server.h"
#include "server/api_context.h"

namespace rota::server {

Status RegisterHealthRoutes(net::HttpServer& http, ApiContext& ctx) {
  RETURN_IF_ERROR(http.Route("GET", "/healthz", [](const net::HttpRequest&) {
    return net::HttpResponse::Json(200, R"({"status":"ok"})");
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
