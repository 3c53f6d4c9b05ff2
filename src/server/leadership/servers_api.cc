// Servers API (several servers on one PostgreSQL, docs/design-ha.md):
//
//   GET /api/v1/servers   the servers registered with the store: id, address, version,
//                         role, started and last renewal (RFC 3339)            reader
//
// Followers forward it to the leader (replicated_server.h), so it answers the leader's
// last read of the registry (refreshed with each lease renewal).

#include "api/codec.h"
#include "common/time_util.h"
#include "net/http_server.h"
#include "server/accounts/auth.h"
#include "server/api_context.h"
#include "server/leadership/role.h"
#include "server/leadership/role_json.h"
#include "server/request_params.h"

namespace rota::server {

api::Json HealthJson(const leadership::Role* role) {
  api::Json j{{"status", "ok"}};
  j["role"] = role == nullptr || role->is_leader() ? "leader" : "follower";
  j["epoch"] = role == nullptr ? 0 : role->epoch();
  if (role != nullptr && role->replicated()) {
    j["server_id"] = role->id();
    j["leader"] = role->leader_address();
  }
  return j;
}

api::Json ServersJson(const leadership::Role& role) {
  api::Json rows = api::Json::array();
  for (const auto& s : role.Servers()) {
    api::Json j{{"id", s.id},
                {"address", s.address},
                {"version", s.version},
                {"role", s.leader ? "leader" : "follower"}};
    j["started"] = s.started_ms > 0 ? api::Json(FormatRfc3339(s.started_ms)) : api::Json(nullptr);
    j["last_renewal"] = s.last_seen_ms > 0 ? api::Json(FormatRfc3339(s.last_seen_ms)) : api::Json(nullptr);
    rows.push_back(std::move(j));
  }
  return api::Json{{"servers", std::move(rows)}, {"epoch", role.epoch()}, {"replicated", role.replicated()}};
}

Status RegisterServerRoutes(net::HttpServer& http, ApiContext& ctx) {
  return http.Route("GET", "/api/v1/servers", [&ctx](const net::HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return net::HttpResponse::FromStatus(who.status());
    if (Status st = OnlyQueryParams(req, {}); !st.ok()) return net::HttpResponse::FromStatus(st);
    if (ctx.role == nullptr) return net::HttpResponse::FromStatus(Status::Internal("no role"));
    return net::HttpResponse::Json(200, ServersJson(*ctx.role).dump());
  });
}

}  // namespace rota::server
