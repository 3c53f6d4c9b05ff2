// Job arrays API (submitted through POST /api/v1/jobs with "array"):
//
//   GET  /api/v1/arrays               ?mine=&limit=&before=   reader -> {arrays: [Array]}
//   GET  /api/v1/arrays/{id}          ?limit=&offset=&state=  reader -> Array + members: [Job]
//                                     (ids ascending; truncated: more follow; each member's
//                                     metrics: {NAME: {last, min, max, count, last_step?}})
//   POST /api/v1/arrays/{id}/cancel                           owner or admin -> Array + cancelled: N
//
// An Array is {id, name, owner, indices, size, max_running, created, counts, spec}.

#include "api/codec.h"
#include "net/http_server.h"
#include "server/accounts/auth.h"
#include "server/api_context.h"
#include "server/jobs/job_metrics.h"
#include "server/jobs/jobs.h"
#include "server/request_params.h"

namespace rota::server {
namespace {

using net::HttpRequest;
using net::HttpResponse;

HttpResponse Fail(const Status& st) { return HttpResponse::FromStatus(st); }

}  // namespace

Status RegisterArrayRoutes(net::HttpServer& http, ApiContext& ctx) {
  if (ctx.jobs == nullptr) return Status::Internal("array routes need ctx.jobs");

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/arrays", [&ctx](const HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return Fail(who.status());
    if (Status st = OnlyQueryParams(req, {"mine", "limit", "before"}); !st.ok()) return Fail(st);
    const std::string mine = req.Query("mine");
    if (!mine.empty() && mine != "true" && mine != "false") {
      return Fail(Status::InvalidArgument("mine: must be true or false"));
    }
    if (mine == "true" && !who->authenticated()) return Fail(Status::Unauthenticated("mine: sign in first"));
    auto limit = UintParam(req, "limit", 100, 1000);
    if (!limit.ok()) return Fail(limit.status());
    if (*limit == 0) return Fail(Status::InvalidArgument("limit: must be 1..1000"));
    int64_t before = 0;
    if (!req.Query("before").empty()) {
      auto id = ParsePositiveId("before", req.Query("before"));
      if (!id.ok()) return Fail(id.status());
      before = *id;
    }
    auto list = ctx.jobs->ListArrays(mine == "true" ? who->user_id : 0, static_cast<int>(*limit), before);
    if (!list.ok()) return Fail(list.status());
    api::Json rows = api::Json::array();
    for (const auto& a : *list) rows.push_back(ArrayToJson(a));
    return HttpResponse::Json(200, api::Json{{"arrays", std::move(rows)}}.dump());
  }));

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/arrays/{id}", [&ctx](const HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return Fail(who.status());
    if (Status st = OnlyQueryParams(req, {"limit", "offset", "state"}); !st.ok()) return Fail(st);
    auto id = ParsePositiveId("array", req.Param("id"));
    if (!id.ok()) return Fail(id.status());
    auto limit = UintParam(req, "limit", 100, 1000);
    if (!limit.ok()) return Fail(limit.status());
    if (*limit == 0) return Fail(Status::InvalidArgument("limit: must be 1..1000"));
    auto offset = UintParam(req, "offset", 0, 1'000'000'000);
    if (!offset.ok()) return Fail(offset.status());
    std::optional<jobs::JobState> state;
    if (const std::string s = req.Query("state"); !s.empty()) {
      state = jobs::ParseJobState(s);
      if (!state) {
        return Fail(Status::InvalidArgument("state '" + s +
                                            "': use pending, starting, running, succeeded, failed or cancelled"));
      }
    }
    auto array = ctx.jobs->GetArray(*id);
    if (!array.ok()) return Fail(array.status());
    bool more = false;
    // Members in index order (they were stored in it).
    auto list = ctx.jobs->List({.state = state,
                                .limit = static_cast<int>(*limit),
                                .offset = static_cast<int64_t>(*offset),
                                .array_id = *id},
                               &more);
    if (!list.ok()) return Fail(list.status());
    api::Json out = ArrayToJson(*array);
    if (!who->CanModify(array->owner_id)) {
      if (auto env = out["spec"].find("env"); env != out["spec"].end() && env->is_object()) {
        for (auto& [name, value] : env->items()) value = "(hidden)";
      }
    }
    std::map<int64_t, std::map<std::string, store::MetricSummary>> metrics;
    if (ctx.job_metrics != nullptr) {
      auto summaries = ctx.job_metrics->ArraySummaries(*id);
      if (!summaries.ok()) return Fail(summaries.status());
      metrics = std::move(*summaries);
    }
    api::Json members = api::Json::array();
    for (const auto& job : *list) {
      api::Json m = ToJson(job);
      m.erase("spec");  // the template's, with its index: shown once, above
      if (auto it = metrics.find(job.id); it != metrics.end()) m["metrics"] = MetricSummariesToJson(it->second);
      members.push_back(std::move(m));
    }
    out["members"] = std::move(members);
    if (more) out["truncated"] = true;
    return HttpResponse::Json(200, out.dump());
  }));

  RETURN_IF_ERROR(http.Route("POST", "/api/v1/arrays/{id}/cancel", [&ctx](const HttpRequest& req) {
    auto who = RequireUser(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto id = ParsePositiveId("array", req.Param("id"));
    if (!id.ok()) return Fail(id.status());
    auto n = ctx.jobs->CancelArray(who->user_id, who->admin(), *id);
    if (!n.ok()) return Fail(n.status());
    auto array = ctx.jobs->GetArray(*id);
    if (!array.ok()) return Fail(array.status());
    api::Json out = ArrayToJson(*array);
    out["cancelled"] = *n;
    return HttpResponse::Json(200, out.dump());
  }));

  return Status::Ok();
}

}  // namespace rota::server
