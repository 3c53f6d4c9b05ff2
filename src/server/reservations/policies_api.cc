// Reservation policies API (see reserve/policy.h for the spec):
//
//   GET    /api/v1/policies          reader
//   POST   /api/v1/policies          admin   body: the policy spec with its name
//   GET    /api/v1/policies/{id}     reader
//   PUT    /api/v1/policies/{id}     admin   replaces name and spec
//   DELETE /api/v1/policies/{id}     admin

#include "api/codec.h"
#include "net/http_server.h"
#include "server/api_context.h"
#include "server/accounts/auth.h"
#include "server/request_params.h"
#include "server/enforcement/enforcement_binding.h"
#include "server/reservations/reservations.h"

namespace rota::server {
namespace {

using net::HttpRequest;
using net::HttpResponse;

HttpResponse Fail(const Status& st) { return HttpResponse::FromStatus(st); }

// The policy in the body; its enforcement section is checked here (the
// reserve component keeps it opaque).
Result<reserve::Policy> PolicyBody(const ApiContext& ctx, const HttpRequest& req) {
  auto j = api::ParseStrictJson(req.body);
  if (!j.ok()) return j.status().WithContext("request body");
  ASSIGN_OR_RETURN(reserve::Policy p, reserve::PolicyFromJson(*j));
  auto enforcement = ParsePolicyEnforcement(p.enforcement, ctx.enforcement_defaults);
  if (!enforcement.ok()) return enforcement.status().WithContext("policy");
  return p;
}

}  // namespace

Status RegisterPolicyRoutes(net::HttpServer& http, ApiContext& ctx) {
  if (ctx.reservations == nullptr) return Status::Internal("policy routes need ctx.reservations");

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/policies", [&ctx](const HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto list = ctx.reservations->ListPolicies();
    if (!list.ok()) return Fail(list.status());
    api::Json out = api::Json::array();
    for (const auto& p : *list) out.push_back(reserve::ToJson(p));
    return HttpResponse::Json(200, api::Json{{"policies", std::move(out)}}.dump());
  }));

  RETURN_IF_ERROR(http.Route("POST", "/api/v1/policies", [&ctx](const HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto p = PolicyBody(ctx, req);
    if (!p.ok()) return Fail(p.status());
    auto created = ctx.reservations->CreatePolicy(*p);
    if (!created.ok()) return Fail(created.status());
    return HttpResponse::Json(201, reserve::ToJson(*created).dump());
  }));

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/policies/{id}", [&ctx](const HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto id = ParsePositiveId("policy", req.Param("id"));
    if (!id.ok()) return Fail(id.status());
    auto p = ctx.reservations->GetPolicy(*id);
    if (!p.ok()) return Fail(p.status());
    return HttpResponse::Json(200, reserve::ToJson(*p).dump());
  }));

  RETURN_IF_ERROR(http.Route("PUT", "/api/v1/policies/{id}", [&ctx](const HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto id = ParsePositiveId("policy", req.Param("id"));
    if (!id.ok()) return Fail(id.status());
    auto p = PolicyBody(ctx, req);
    if (!p.ok()) return Fail(p.status());
    auto updated = ctx.reservations->UpdatePolicy(*id, *p);
    if (!updated.ok()) return Fail(updated.status());
    return HttpResponse::Json(200, reserve::ToJson(*updated).dump());
  }));

  RETURN_IF_ERROR(http.Route("DELETE", "/api/v1/policies/{id}", [&ctx](const HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto id = ParsePositiveId("policy", req.Param("id"));
    if (!id.ok()) return Fail(id.status());
    if (Status st = ctx.reservations->DeletePolicy(*id); !st.ok()) return Fail(st);
    return HttpResponse{204, "application/json", "", {}};
  }));
  return Status::Ok();
}

}  // namespace rota::server
