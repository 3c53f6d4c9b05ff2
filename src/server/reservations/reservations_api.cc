// Reservations API:
//
//   POST   /api/v1/reservations          {node, gpus|gpu_uuids|count|whole_node, start, end,
//                                          title, description?, enforcement?}       user
//   GET    /api/v1/reservations          ?mine=&user=&node=&from=&to=&state=&limit=  reader
//   GET    /api/v1/reservations/held     ?node=  the caller's GPUs there now          user
//   GET    /api/v1/reservations/{id}                                                reader
//   PATCH  /api/v1/reservations/{id}     {start?, end?, title?, description?,
//                                          enforcement?}                owner or admin
//   DELETE /api/v1/reservations/{id}     cancel (upcoming) / end now (running)
//                                                                       owner or admin

#include <set>

#include "api/codec.h"
#include "common/time_util.h"
#include "net/http_server.h"
#include "server/accounts/accounts.h"
#include "server/api_context.h"
#include "server/accounts/auth.h"
#include "server/request_params.h"
#include "server/reservations/reservations.h"

namespace rota::server {
namespace {

using net::HttpRequest;
using net::HttpResponse;

HttpResponse Fail(const Status& st) { return HttpResponse::FromStatus(st); }

reserve::Requester RequesterOf(const Principal& p) {
  return reserve::Requester{p.user_id, p.username, p.groups, p.admin()};
}

Result<api::Json> JsonBody(const HttpRequest& req) {
  auto j = api::ParseStrictJson(req.body);
  if (!j.ok()) return j.status().WithContext("request body");
  return j;
}

Result<bool> BoolParam(const HttpRequest& req, const char* key) {
  const std::string v = req.Query(key);
  if (v.empty() || v == "false" || v == "0") return false;
  if (v == "true" || v == "1") return true;
  return Status::InvalidArgument(std::string(key) + ": must be true or false, not '" + v + "'");
}

api::Json View(Reservations& res, const Reservation& r, int64_t now_ms) {
  api::Json j = reserve::ToJson(r, now_ms);
  if (r.StateAt(now_ms) == reserve::State::kRunning) {
    if (auto u = res.Usage(r.id); u && u->samples > 0) {
      api::Json live{{"avg_util_gpu", u->avg_util_gpu},
                     {"avg_util_mem", u->avg_util_mem},
                     {"samples", u->samples}};
      if (u->idle_since_ms) live["idle_since"] = FormatRfc3339(*u->idle_since_ms);
      j["live"] = std::move(live);
    }
  }
  return j;
}

Result<ReservationQuery> ParseQuery(ApiContext& ctx, const HttpRequest& req, const Principal& who) {
  RETURN_IF_ERROR(OnlyQueryParams(req, {"mine", "user", "node", "from", "to", "state", "limit"}));
  ReservationQuery q;
  ASSIGN_OR_RETURN(bool mine, BoolParam(req, "mine"));
  if (mine) {
    if (!who.authenticated()) return Status::Unauthenticated("mine: sign in first");
    q.owner_id = who.user_id;
  }
  if (const std::string user = req.Query("user"); !user.empty()) {
    auto u = ctx.accounts->FindUser(user);
    if (!u.ok()) {
      if (u.status().code() == StatusCode::kNotFound) {
        return Status::InvalidArgument("user: no user named '" + user + "'");
      }
      return u.status();
    }
    if (q.owner_id && *q.owner_id != u->id) {
      return Status::InvalidArgument("mine and user name different users");
    }
    q.owner_id = u->id;
  }
  q.node = req.Query("node");
  if (!q.node.empty() && !api::IsValidNodeName(q.node)) {
    return Status::InvalidArgument("node: '" + q.node + "' is not a valid node name");
  }
  for (const char* key : {"from", "to"}) {
    const std::string v = req.Query(key);
    if (v.empty()) continue;
    auto t = ParseRfc3339(v);
    if (!t.ok()) return t.status().WithContext(key);
    (std::string(key) == "from" ? q.from_ms : q.to_ms) = *t;
  }
  if (const std::string state = req.Query("state"); !state.empty()) {
    auto s = reserve::ParseState(state);
    if (!s.ok()) return s.status().WithContext("state");
    q.state = *s;
  }
  if (const std::string limit = req.Query("limit"); !limit.empty()) {
    bool ok = limit.size() <= 6;
    for (char c : limit) ok = ok && c >= '0' && c <= '9';
    if (!ok) return Status::InvalidArgument("limit: '" + limit + "' must be a number");
    q.limit = std::stoi(limit);
  }
  return q;
}

}  // namespace

Status RegisterReservationRoutes(net::HttpServer& http, ApiContext& ctx) {
  if (ctx.reservations == nullptr) return Status::Internal("reservation routes need ctx.reservations");

  RETURN_IF_ERROR(http.Route("POST", "/api/v1/reservations", [&ctx](const HttpRequest& req) {
    auto who = RequireUser(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto body = JsonBody(req);
    if (!body.ok()) return Fail(body.status());
    auto create = reserve::CreateRequestFromJson(*body);
    if (!create.ok()) return Fail(create.status());
    auto r = ctx.reservations->Create(RequesterOf(*who), *create);
    if (!r.ok()) return Fail(r.status());
    return HttpResponse::Json(201, View(*ctx.reservations, *r, ctx.clock->NowMs()).dump());
  }));

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/reservations", [&ctx](const HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto q = ParseQuery(ctx, req, *who);
    if (!q.ok()) return Fail(q.status());
    auto list = ctx.reservations->List(*q);
    if (!list.ok()) return Fail(list.status());
    const int64_t now = ctx.clock->NowMs();
    api::Json out = api::Json::array();
    for (const auto& r : list->reservations) out.push_back(View(*ctx.reservations, r, now));
    return HttpResponse::Json(
        200, api::Json{{"reservations", std::move(out)}, {"truncated", list->truncated}}.dump());
  }));

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/reservations/held", [&ctx](const HttpRequest& req) {
    auto who = RequireUser(ctx, req);
    if (!who.ok()) return Fail(who.status());
    if (Status st = OnlyQueryParams(req, {"node"}); !st.ok()) return Fail(st);
    const std::string node = req.Query("node");
    if (node.empty()) return Fail(Status::InvalidArgument("node: required"));
    if (!api::IsValidNodeName(node)) {
      return Fail(Status::InvalidArgument("node: '" + node + "' is not a valid node name"));
    }
    if (!ctx.cluster->Node(node)) return Fail(Status::NotFound("node '" + node + "' not found"));
    const int64_t now = ctx.clock->NowMs();
    auto held = ctx.reservations->HeldBy(who->user_id, node, now);
    if (!held.ok()) return Fail(held.status());
    std::set<uint32_t> gpus;
    std::set<std::string> uuids;
    api::Json list = api::Json::array();
    for (const auto& r : *held) {
      gpus.insert(r.gpus.begin(), r.gpus.end());
      for (const auto& u : r.gpu_uuids) {
        if (!u.empty()) uuids.insert(u);
      }
      list.push_back(View(*ctx.reservations, r, now));
    }
    api::Json out{{"node", node},
                  {"user", who->username},
                  {"gpus", std::vector<uint32_t>(gpus.begin(), gpus.end())},
                  {"gpu_uuids", std::vector<std::string>(uuids.begin(), uuids.end())},
                  {"reservations", std::move(list)}};
    return HttpResponse::Json(200, out.dump());
  }));

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/reservations/{id}", [&ctx](const HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto id = ParsePositiveId("reservation", req.Param("id"));
    if (!id.ok()) return Fail(id.status());
    auto r = ctx.reservations->Get(*id);
    if (!r.ok()) return Fail(r.status());
    return HttpResponse::Json(200, View(*ctx.reservations, *r, ctx.clock->NowMs()).dump());
  }));

  RETURN_IF_ERROR(http.Route("PATCH", "/api/v1/reservations/{id}", [&ctx](const HttpRequest& req) {
    auto who = RequireUser(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto id = ParsePositiveId("reservation", req.Param("id"));
    if (!id.ok()) return Fail(id.status());
    auto body = JsonBody(req);
    if (!body.ok()) return Fail(body.status());
    auto patch = reserve::PatchFromJson(*body);
    if (!patch.ok()) return Fail(patch.status());
    auto r = ctx.reservations->Update(RequesterOf(*who), *id, *patch);
    if (!r.ok()) return Fail(r.status());
    return HttpResponse::Json(200, View(*ctx.reservations, *r, ctx.clock->NowMs()).dump());
  }));

  RETURN_IF_ERROR(http.Route("DELETE", "/api/v1/reservations/{id}", [&ctx](const HttpRequest& req) {
    auto who = RequireUser(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto id = ParsePositiveId("reservation", req.Param("id"));
    if (!id.ok()) return Fail(id.status());
    auto r = ctx.reservations->Cancel(RequesterOf(*who), *id);
    if (!r.ok()) return Fail(r.status());
    return HttpResponse::Json(200, View(*ctx.reservations, *r, ctx.clock->NowMs()).dump());
  }));
  return Status::Ok();
}

}  // namespace rota::server
