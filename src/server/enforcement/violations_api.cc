// The enforcement audit log:
//   GET /api/v1/violations?node=&user=&state=open|resolved&from=&to=&limit=&offset=
//   GET /api/v1/violations/{id}   (with its events)

#include "net/http_server.h"
#include "server/api_context.h"
#include "server/audit.h"
#include "server/accounts/auth.h"

namespace rota::server {

Status RegisterViolationRoutes(net::HttpServer& http, ApiContext& ctx) {
  RETURN_IF_ERROR(http.Route("GET", "/api/v1/violations", [&ctx](const net::HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return net::HttpResponse::FromStatus(who.status());
    if (ctx.audit == nullptr)
      return net::HttpResponse::FromStatus(Status::Unavailable("the violation audit log is not available"));
    auto q = ParseViolationQuery(req.query);
    if (!q.ok()) return net::HttpResponse::FromStatus(q.status());
    auto list = ctx.audit->List(*q);
    if (!list.ok()) return net::HttpResponse::FromStatus(list.status());
    api::Json rows = api::Json::array();
    for (const auto& v : *list) rows.push_back(ViolationJson(v, /*with_events=*/false));
    api::Json body{{"violations", std::move(rows)}, {"limit", q->limit}, {"offset", q->offset}};
    if (list->size() == static_cast<size_t>(q->limit)) body["next_offset"] = q->offset + q->limit;
    return net::HttpResponse::Json(200, body.dump());
  }));

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/violations/{id}", [&ctx](const net::HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return net::HttpResponse::FromStatus(who.status());
    if (ctx.audit == nullptr)
      return net::HttpResponse::FromStatus(Status::Unavailable("the violation audit log is not available"));
    auto id = ParseViolationId(req.Param("id"));
    if (!id.ok()) return net::HttpResponse::FromStatus(id.status());
    auto v = ctx.audit->Get(*id);
    if (!v.ok()) return net::HttpResponse::FromStatus(v.status());
    return net::HttpResponse::Json(200, ViolationJson(*v, /*with_events=*/true).dump());
  }));
  return Status::Ok();
}

}  // namespace rota::server
