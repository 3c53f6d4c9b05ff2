// Metrics history, downsampled by the store:
//   GET /api/v1/nodes/{name}/metrics?from=&to=&step=
//   GET /api/v1/nodes/{name}/gpus/{index}/metrics?from=&to=&step=

#include "common/time_util.h"
#include "api/codec.h"
#include "net/http_server.h"
#include "server/api_context.h"
#include "server/accounts/auth.h"

namespace rota::server {
namespace {

struct Range {
  int64_t from_ms, to_ms, step_ms;
};

Result<Range> ParseRange(const net::HttpRequest& req, int64_t now_ms) {
  Range r{0, now_ms, 0};
  std::string to = req.Query("to"), from = req.Query("from"), step = req.Query("step");
  if (!to.empty()) {
    auto t = ParseRfc3339(to);
    if (!t.ok()) return t.status().WithContext("to");
    r.to_ms = *t;
  }
  r.from_ms = r.to_ms - 3'600'000;
  if (!from.empty()) {
    auto t = ParseRfc3339(from);
    if (!t.ok()) return t.status().WithContext("from");
    r.from_ms = *t;
  }
  if (!step.empty()) {
    auto s = ParseDurationMs(step);
    if (!s.ok()) return s.status().WithContext("step");
    r.step_ms = *s;
  }
  if (r.from_ms >= r.to_ms) {
    return Status::InvalidArgument("from (" + FormatRfc3339Ms(r.from_ms) + ") must be before to (" +
                                   FormatRfc3339Ms(r.to_ms) + ")");
  }
  return r;
}

api::Json PairsJson(const std::vector<std::pair<std::string, double>>& pairs) {
  api::Json j = api::Json::object();
  for (const auto& [k, v] : pairs) j[k] = v;
  return j;
}

net::HttpResponse SeriesResponse(api::Json head, const Range& range, const store::Series& series) {
  head["from"] = FormatRfc3339Ms(range.from_ms);
  head["to"] = FormatRfc3339Ms(range.to_ms);
  head["step_ms"] = series.step_ms;
  head["resolution"] = series.resolution;
  api::Json points = api::Json::array();
  for (const auto& p : series.points) {
    api::Json pj{{"time", FormatRfc3339(p.t_ms)}, {"t_ms", p.t_ms}, {"samples", p.samples},
                 {"avg", PairsJson(p.avg)}, {"max", PairsJson(p.max)}};
    if (!p.last.empty()) pj["last"] = PairsJson(p.last);
    points.push_back(std::move(pj));
  }
  head["points"] = std::move(points);
  return net::HttpResponse::Json(200, head.dump());
}

}  // namespace

Status RegisterHistoryRoutes(net::HttpServer& http, ApiContext& ctx) {
  RETURN_IF_ERROR(http.Route("GET", "/api/v1/nodes/{name}/metrics", [&ctx](const net::HttpRequest& req) {
    if (auto who = RequireReader(ctx, req); !who.ok()) return net::HttpResponse::FromStatus(who.status());
    const std::string& name = req.Param("name");
    auto range = ParseRange(req, ctx.clock->NowMs());
    if (!range.ok()) return net::HttpResponse::FromStatus(range.status());
    auto series = ctx.store->NodeHistory(name, range->from_ms, range->to_ms, range->step_ms);
    if (!series.ok()) return net::HttpResponse::FromStatus(series.status());
    return SeriesResponse(api::Json{{"node", name}}, *range, *series);
  }));
  RETURN_IF_ERROR(http.Route(
      "GET", "/api/v1/nodes/{name}/gpus/{index}/metrics", [&ctx](const net::HttpRequest& req) {
    if (auto who = RequireReader(ctx, req); !who.ok()) return net::HttpResponse::FromStatus(who.status());
        const std::string& name = req.Param("name");
        const std::string& index_text = req.Param("index");
        uint32_t index = 0;
        bool ok = !index_text.empty() && index_text.size() <= 3;
        for (char c : index_text) ok = ok && c >= '0' && c <= '9';
        if (ok) index = static_cast<uint32_t>(std::stoul(index_text));
        if (!ok || index >= api::kMaxGpusPerNode) {
          return net::HttpResponse::FromStatus(Status::InvalidArgument(
              "GPU index '" + index_text + "' must be a number below " + std::to_string(api::kMaxGpusPerNode)));
        }
        auto range = ParseRange(req, ctx.clock->NowMs());
        if (!range.ok()) return net::HttpResponse::FromStatus(range.status());
        auto series = ctx.store->GpuHistory(name, index, range->from_ms, range->to_ms, range->step_ms);
        if (!series.ok()) return net::HttpResponse::FromStatus(series.status());
        return SeriesResponse(api::Json{{"node", name}, {"gpu", index}}, *range, *series);
      }));
  return Status::Ok();
}

}  // namespace rota::server
