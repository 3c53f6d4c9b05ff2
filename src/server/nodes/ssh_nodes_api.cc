// Agentless (ssh) nodes API:
//
//   GET    /api/v1/ssh-nodes          reader   declared nodes, reachable or why not
//   POST   /api/v1/ssh-nodes          admin    {"name", "url": "ssh://user@host[:port]",
//                                              "gpus", "gpu_model", "labels"} -> 201
//   DELETE /api/v1/ssh-nodes/{name}   admin    -> 204; 409 while tasks run there
//   GET    /api/v1/ssh-key            admin    the public key to authorise on the nodes

#include "api/codec.h"
#include "net/http_server.h"
#include "server/api_context.h"
#include "server/accounts/auth.h"
#include "server/request_params.h"
#include "server/nodes/ssh_nodes.h"

namespace rota::server {
namespace {

using net::HttpRequest;
using net::HttpResponse;

HttpResponse Fail(const Status& st) { return HttpResponse::FromStatus(st); }

api::Json ViewJson(const SshNodes::View& v) {
  api::Json j = ToJson(v.spec);
  j["reachable"] = v.reachable;
  j["tasks"] = v.tasks;
  if (!v.error.empty()) j["error"] = v.error;
  return j;
}

}  // namespace

Status RegisterSshNodeRoutes(net::HttpServer& http, ApiContext& ctx) {
  if (ctx.ssh_nodes == nullptr) return Status::Internal("ssh node routes need ctx.ssh_nodes");

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/ssh-nodes", [&ctx](const HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return Fail(who.status());
    if (Status st = OnlyQueryParams(req, {}); !st.ok()) return Fail(st);
    api::Json out = api::Json::array();
    for (const auto& v : ctx.ssh_nodes->List()) out.push_back(ViewJson(v));
    return HttpResponse::Json(200, api::Json{{"ssh_nodes", std::move(out)}}.dump());
  }));

  RETURN_IF_ERROR(http.Route("POST", "/api/v1/ssh-nodes", [&ctx](const HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto body = api::ParseStrictJson(req.body);
    if (!body.ok()) return Fail(body.status().WithContext("request body"));
    auto spec = SshNodeSpecFromJson(*body);
    if (!spec.ok()) return Fail(spec.status());
    auto added = ctx.ssh_nodes->Add(*spec);
    if (!added.ok()) return Fail(added.status());
    return HttpResponse::Json(201, ToJson(*added).dump());
  }));

  RETURN_IF_ERROR(http.Route("DELETE", "/api/v1/ssh-nodes/{name}", [&ctx](const HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return Fail(who.status());
    Status st = ctx.ssh_nodes->Remove(req.Param("name"));
    if (!st.ok()) return Fail(st);
    return HttpResponse{204, "application/json", "", {}};
  }));

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/ssh-key", [&ctx](const HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return Fail(who.status());
    std::string key = ctx.ssh_nodes->public_key();
    if (key.empty()) {
      return Fail(Status::Unavailable("the server has no SSH key (is OpenSSH's ssh-keygen installed?)"));
    }
    return HttpResponse::Json(200, api::Json{{"public_key", key}}.dump());
  }));
  return Status::Ok();
}

}  // namespace rota::server
