// Jobs' metrics API (points their tasks reported in rota-metric lines):
//
//   GET /api/v1/jobs/{id}/metrics  ?limit=   reader -> {job, metrics: [Point], truncated?}
//       Point: {task, name, value, step?, time}, oldest first, at most limit (1..10000,
//       default 10000).
//
// An array's members carry their summaries in GET /api/v1/arrays/{id} (jobs_arrays_api.cc).

#include "api/codec.h"
#include "common/time_util.h"
#include "net/http_server.h"
#include "server/accounts/auth.h"
#include "server/api_context.h"
#include "server/jobs/job_metrics.h"
#include "server/jobs/jobs.h"
#include "server/request_params.h"

namespace rota::server {

api::Json MetricSummariesToJson(const std::map<std::string, store::MetricSummary>& summaries) {
  api::Json out = api::Json::object();
  for (const auto& [name, s] : summaries) {
    api::Json j{{"last", s.last}, {"min", s.min}, {"max", s.max}, {"count", s.count}};
    if (s.last_step >= 0) j["last_step"] = s.last_step;
    out[name] = std::move(j);
  }
  return out;
}

Status RegisterJobMetricsRoutes(net::HttpServer& http, ApiContext& ctx) {
  if (ctx.jobs == nullptr || ctx.job_metrics == nullptr) {
    return Status::Internal("job metrics routes need ctx.jobs and ctx.job_metrics");
  }
  return http.Route("GET", "/api/v1/jobs/{id}/metrics", [&ctx](const net::HttpRequest& req) {
    using net::HttpResponse;
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return HttpResponse::FromStatus(who.status());
    if (Status st = OnlyQueryParams(req, {"limit"}); !st.ok()) return HttpResponse::FromStatus(st);
    auto id = ParsePositiveId("job", req.Param("id"));
    if (!id.ok()) return HttpResponse::FromStatus(id.status());
    auto limit = UintParam(req, "limit", JobMetrics::kMaxPointsPerRead, JobMetrics::kMaxPointsPerRead);
    if (!limit.ok()) return HttpResponse::FromStatus(limit.status());
    if (*limit == 0) {
      return HttpResponse::FromStatus(
          Status::InvalidArgument("limit: must be 1.." + std::to_string(JobMetrics::kMaxPointsPerRead)));
    }
    if (auto job = ctx.jobs->Get(*id, nullptr); !job.ok()) return HttpResponse::FromStatus(job.status());
    bool truncated = false;
    auto rows = ctx.job_metrics->JobPoints(*id, *limit, &truncated);
    if (!rows.ok()) return HttpResponse::FromStatus(rows.status());
    api::Json points = api::Json::array();
    for (const auto& r : *rows) {
      api::Json p{{"task", r.task}, {"name", r.name}, {"value", r.value}, {"time", FormatRfc3339Ms(r.time_ms)}};
      if (r.step >= 0) p["step"] = r.step;
      points.push_back(std::move(p));
    }
    api::Json out{{"job", *id}, {"metrics", std::move(points)}};
    if (truncated) out["truncated"] = true;
    return HttpResponse::Json(200, out.dump());
  });
}

}  // namespace rota::server
