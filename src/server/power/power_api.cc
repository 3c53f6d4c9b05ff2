// Power policies and limits API (see power/policy.h for the policy form):
//
//   GET    /api/v1/power                  reader  every GPU's target, limit in force
//                                                 and last outcome; the budgets
//   GET    /api/v1/power/policies         reader
//   POST   /api/v1/power/policies         admin   body: the policy
//   GET    /api/v1/power/policies/{id}    reader
//   PUT    /api/v1/power/policies/{id}    admin   replaces name and spec
//   DELETE /api/v1/power/policies/{id}    admin
//   GET    /api/v1/power/events?node=&from=&to=&limit=   reader   the power audit log

#include "api/codec.h"
#include "common/time_util.h"
#include "net/http_server.h"
#include "server/api_context.h"
#include "server/accounts/auth.h"
#include "server/power/power_service.h"
#include "server/request_params.h"

namespace rota::server {
namespace {

using net::HttpRequest;
using net::HttpResponse;

HttpResponse Fail(const Status& st) { return HttpResponse::FromStatus(st); }

Result<power::PowerPolicy> PolicyBody(const HttpRequest& req) {
  auto j = api::ParseStrictJson(req.body);
  if (!j.ok()) return j.status().WithContext("request body");
  return power::PowerPolicyFromJson(*j);
}

api::Json EventJson(const store::PowerEvent& e) {
  auto watts = [](const std::optional<uint32_t>& mw) -> api::Json {
    if (!mw) return nullptr;
    return static_cast<double>(*mw) / 1000.0;
  };
  return api::Json{{"id", e.id},
                   {"time", FormatRfc3339Ms(e.t_ms)},
                   {"action", e.action},
                   {"node", e.node},
                   {"gpu", e.gpu ? api::Json(*e.gpu) : api::Json(nullptr)},
                   {"uuid", e.uuid},
                   {"limit_w", watts(e.limit_mw)},
                   {"previous_w", watts(e.previous_mw)},
                   {"requested_w", watts(e.requested_mw)},
                   {"policy", e.policy},
                   {"actor", e.actor},
                   {"detail", e.detail}};
}

Result<store::PowerEventQuery> EventQuery(const HttpRequest& req) {
  RETURN_IF_ERROR(OnlyQueryParams(req, {"node", "from", "to", "limit"}));
  store::PowerEventQuery q;
  q.node = req.Query("node");
  if (!q.node.empty() && !api::IsValidNodeName(q.node)) {
    return Status::InvalidArgument("node: '" + q.node.substr(0, 64) + "' is not a node name");
  }
  if (req.query.count("from")) {
    ASSIGN_OR_RETURN(int64_t from, TimeParam(req, "from", 0));
    q.from_ms = from;
  }
  if (req.query.count("to")) {
    ASSIGN_OR_RETURN(int64_t to, TimeParam(req, "to", 0));
    q.to_ms = to;
  }
  if (q.from_ms && q.to_ms && *q.to_ms <= *q.from_ms) return Status::InvalidArgument("to: must be after from");
  ASSIGN_OR_RETURN(uint64_t limit, UintParam(req, "limit", 100, store::kMaxPowerEventLimit));
  if (limit == 0) return Status::InvalidArgument("limit: must be 1.." + std::to_string(store::kMaxPowerEventLimit));
  q.limit = static_cast<int>(limit);
  return q;
}

}  // namespace

Status RegisterPowerRoutes(net::HttpServer& http, ApiContext& ctx) {
  if (ctx.power == nullptr) return Status::Internal("power routes need ctx.power");

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/power", [&ctx](const HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return Fail(who.status());
    return HttpResponse::Json(200, ctx.power->StateJson().dump());
  }));

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/power/policies", [&ctx](const HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return Fail(who.status());
    api::Json out = api::Json::array();
    for (const auto& p : ctx.power->Policies()) out.push_back(power::ToJson(p));
    return HttpResponse::Json(200, api::Json{{"policies", std::move(out)}}.dump());
  }));

  RETURN_IF_ERROR(http.Route("POST", "/api/v1/power/policies", [&ctx](const HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto p = PolicyBody(req);
    if (!p.ok()) return Fail(p.status());
    auto created = ctx.power->Create(*p, who->username);
    if (!created.ok()) return Fail(created.status());
    return HttpResponse::Json(201, power::ToJson(*created).dump());
  }));

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/power/policies/{id}", [&ctx](const HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto id = ParsePositiveId("power policy", req.Param("id"));
    if (!id.ok()) return Fail(id.status());
    auto p = ctx.power->Get(*id);
    if (!p.ok()) return Fail(p.status());
    return HttpResponse::Json(200, power::ToJson(*p).dump());
  }));

  RETURN_IF_ERROR(http.Route("PUT", "/api/v1/power/policies/{id}", [&ctx](const HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto id = ParsePositiveId("power policy", req.Param("id"));
    if (!id.ok()) return Fail(id.status());
    auto p = PolicyBody(req);
    if (!p.ok()) return Fail(p.status());
    auto updated = ctx.power->Update(*id, *p, who->username);
    if (!updated.ok()) return Fail(updated.status());
    return HttpResponse::Json(200, power::ToJson(*updated).dump());
  }));

  RETURN_IF_ERROR(http.Route("DELETE", "/api/v1/power/policies/{id}", [&ctx](const HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto id = ParsePositiveId("power policy", req.Param("id"));
    if (!id.ok()) return Fail(id.status());
    if (Status st = ctx.power->Delete(*id, who->username); !st.ok()) return Fail(st);
    return HttpResponse{204, "application/json", "", {}};
  }));

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/power/events", [&ctx](const HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto q = EventQuery(req);
    if (!q.ok()) return Fail(q.status());
    auto events = ctx.power->Events(*q);
    if (!events.ok()) return Fail(events.status());
    api::Json out = api::Json::array();
    for (const auto& e : *events) out.push_back(EventJson(e));
    return HttpResponse::Json(200, api::Json{{"events", std::move(out)}}.dump());
  }));
  return Status::Ok();
}

}  // namespace rota::server
