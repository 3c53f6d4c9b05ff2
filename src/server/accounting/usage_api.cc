// Usage and energy API:
//
//   GET /api/v1/usage?by=&from=&to=&node=&label=&user=      signed-in user
//     by:    user | group | job | reservation | node | area (default user)
//     from, to: RFC 3339 (default: the last 30 days up to now); figures are
//            kept by hour: an hour the window covers in part counts pro rata
//            (accounting::BucketShare: the share of its elapsed part in the window)
//     node:  only this node;  label: the node label naming areas (by=area;
//            default the first of the server's area_labels)
//     user:  only this user's figures (admins); a non-admin always gets only
//            their own (asking for another user's is 403)
//   -> accounting::ReportJson (docs/api.md): GPU energy (energy_kwh), CPU package
//      energy (cpu_energy_kwh) and both (total_energy_kwh, which cost and CO2 use)

#include "common/time_util.h"
#include "net/http_server.h"
#include "server/accounting/accounting_service.h"
#include "server/api_context.h"
#include "server/accounts/auth.h"
#include "server/request_params.h"

namespace rota::server {
namespace {

using net::HttpRequest;
using net::HttpResponse;

constexpr int64_t kDefaultPeriodMs = 30LL * 86'400'000;
constexpr int64_t kMaxPeriodMs = 3660LL * 86'400'000;

Result<api::Json> Report(ApiContext& ctx, const HttpRequest& req, const Principal& who) {
  RETURN_IF_ERROR(OnlyQueryParams(req, {"by", "from", "to", "node", "label", "user"}));
  store::UsageQuery q;
  const std::string by = req.Query("by", "user");
  if (by != "user" && by != "group" && by != "job" && by != "reservation" && by != "node" && by != "area") {
    return Status::InvalidArgument("by: '" + by.substr(0, 32) +
                                   "' is not one of user, group, job, reservation, node, area");
  }
  const int64_t now = ctx.clock->NowMs();
  ASSIGN_OR_RETURN(q.to_ms, TimeParam(req, "to", now));
  ASSIGN_OR_RETURN(q.from_ms, TimeParam(req, "from", q.to_ms - kDefaultPeriodMs));
  if (q.to_ms <= q.from_ms) return Status::InvalidArgument("to: must be after from");
  if (q.to_ms - q.from_ms > kMaxPeriodMs) return Status::InvalidArgument("from: the period is longer than 10 years");
  q.now_ms = now;
  q.node = req.Query("node");
  if (q.node.size() > api::kMaxNameLength) return Status::InvalidArgument("node: too long");
  q.user = req.Query("user");
  if (!q.user.empty()) RETURN_IF_ERROR(ValidateUsername(q.user).WithContext("user"));
  if (!who.admin()) {
    if (!q.user.empty() && q.user != who.username) {
      return Status::PermissionDenied("only admins see other users' usage");
    }
    q.user = who.username;
  }
  std::string label;
  if (by == "area") {
    label = req.Query("label", ctx.config->area_labels.empty() ? "" : ctx.config->area_labels.front());
    if (label.empty()) return Status::InvalidArgument("label: name the node label that defines areas");
    if (label.size() > 63) return Status::InvalidArgument("label: too long");
  } else if (req.query.count("label") != 0) {
    return Status::InvalidArgument("label: only with by=area");
  }
  q.by = by == "area" ? "node" : by;
  ASSIGN_OR_RETURN(std::vector<store::UsageSum> sums, ctx.accounting->Query(q));
  std::vector<accounting::ReportLine> lines;
  for (auto& s : sums) {
    // A node's average power is over its measured time (its GPU time / its GPUs), only
    // when the row holds the whole node's usage (not one user's share of it).
    lines.push_back({std::move(s.key), s.amounts, s.reserved_idle_ms, s.idle_energy_mj,
                     q.user.empty() ? s.gpus : 0, std::nullopt});
  }
  if (by == "area") {
    std::map<std::string, std::string> area_of_node;
    for (const auto& n : ctx.cluster->Nodes()) {
      auto it = n.info->labels.find(label);
      if (it != n.info->labels.end()) area_of_node[n.info->name] = it->second;
    }
    lines = accounting::ByArea(lines, area_of_node);
  }
  api::Json out = accounting::ReportJson(by, q.from_ms, q.to_ms, lines, ctx.config->prices);
  if (by == "area") out["label"] = label;
  if (!q.user.empty()) out["user"] = q.user;
  return out;
}

}  // namespace

Status RegisterUsageRoutes(net::HttpServer& http, ApiContext& ctx) {
  if (ctx.accounting == nullptr || ctx.config == nullptr) return Status::Internal("usage routes need accounting");
  return http.Route("GET", "/api/v1/usage", [&ctx](const HttpRequest& req) {
    auto who = RequireUser(ctx, req);
    if (!who.ok()) return HttpResponse::FromStatus(who.status());
    auto report = Report(ctx, req, *who);
    if (!report.ok()) return HttpResponse::FromStatus(report.status());
    return HttpResponse::Json(200, report->dump());
  });
}

}  // namespace rota::server
