// Quotas API:
//
//   GET    /api/v1/quotas                  every quota, the quota period, and each
//                                          user's and group's usage               reader
//   GET    /api/v1/quotas/{kind}/{name}    kind: user | group                    reader
//   PUT    /api/v1/quotas/{kind}/{name}    {max_gpus?, max_gpu_hours?, share?}   admin
//   DELETE /api/v1/quotas/{kind}/{name}                                          admin -> 204
//
// A quota names an existing user or group (NotFound otherwise).

#include <set>

#include "net/http_server.h"
#include "reserve/reservation.h"
#include "server/accounts/accounts.h"
#include "server/api_context.h"
#include "server/accounts/auth.h"
#include "server/jobs/jobs.h"
#include "server/quotas/quotas.h"
#include "server/request_params.h"

namespace rota::server {
namespace {

using net::HttpRequest;
using net::HttpResponse;

HttpResponse Fail(const Status& st) { return HttpResponse::FromStatus(st); }

Status MustExist(ApiContext& ctx, const std::string& kind, const std::string& name) {
  if (kind == "user") return ctx.accounts->FindUser(name).status();
  ASSIGN_OR_RETURN(std::vector<Group> groups, ctx.accounts->ListGroups());
  for (const auto& g : groups) {
    if (g.name == name) return Status::Ok();
  }
  return Status::NotFound("group '" + name + "' not found");
}

// [{kind, name, fairshare_gpu_hours, period_gpu_hours}], users then groups.
api::Json UsageJson(const JobService::Usage& u) {
  api::Json rows = api::Json::array();
  auto add = [&rows](const char* kind, const std::map<std::string, double>& fairshare,
                     const std::map<std::string, double>& period) {
    std::set<std::string> names;
    for (const auto& [n, v] : fairshare) names.insert(n);
    for (const auto& [n, v] : period) names.insert(n);
    for (const auto& n : names) {
      auto f = fairshare.find(n);
      auto p = period.find(n);
      rows.push_back({{"kind", kind},
                      {"name", n},
                      {"fairshare_gpu_hours", f == fairshare.end() ? 0.0 : f->second},
                      {"period_gpu_hours", p == period.end() ? 0.0 : p->second}});
    }
  };
  add("user", u.user_fairshare, u.user_period);
  add("group", u.group_fairshare, u.group_period);
  return rows;
}

}  // namespace

Status RegisterQuotaRoutes(net::HttpServer& http, ApiContext& ctx) {
  if (ctx.quotas == nullptr || ctx.accounts == nullptr || ctx.jobs == nullptr) {
    return Status::Internal("quota routes need quotas, accounts and jobs");
  }

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/quotas", [&ctx](const HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return Fail(who.status());
    if (Status st = OnlyQueryParams(req, {}); !st.ok()) return Fail(st);
    api::Json rows = api::Json::array();
    for (const auto& q : ctx.quotas->List()) rows.push_back(ToJson(q));
    return HttpResponse::Json(200, api::Json{{"quotas", std::move(rows)},
                                             {"period", reserve::FormatDurationMs(ctx.quota_period_ms)},
                                             {"usage", UsageJson(ctx.jobs->UsageNow())}}
                                       .dump());
  }));

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/quotas/{kind}/{name}", [&ctx](const HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return Fail(who.status());
    if (Status st = OnlyQueryParams(req, {}); !st.ok()) return Fail(st);
    auto q = ctx.quotas->Get(req.Param("kind"), req.Param("name"));
    if (!q.ok()) return Fail(q.status());
    return HttpResponse::Json(200, ToJson(*q).dump());
  }));

  RETURN_IF_ERROR(http.Route("PUT", "/api/v1/quotas/{kind}/{name}", [&ctx](const HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto body = api::ParseStrictJson(req.body);
    if (!body.ok()) return Fail(body.status().WithContext("request body"));
    auto q = QuotaFromJson(req.Param("kind"), req.Param("name"), *body);
    if (!q.ok()) return Fail(q.status());
    if (Status st = MustExist(ctx, q->kind, q->name); !st.ok()) return Fail(st);
    auto stored = ctx.quotas->Set(*q);
    if (!stored.ok()) return Fail(stored.status());
    return HttpResponse::Json(200, ToJson(*stored).dump());
  }));

  RETURN_IF_ERROR(http.Route("DELETE", "/api/v1/quotas/{kind}/{name}", [&ctx](const HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return Fail(who.status());
    if (Status st = ctx.quotas->Delete(req.Param("kind"), req.Param("name")); !st.ok()) return Fail(st);
    return HttpResponse{204, "application/json", "", {}};
  }));
  return Status::Ok();
}

}  // namespace rota::server
