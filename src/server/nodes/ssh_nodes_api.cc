// Agentless (ssh) nodes API:
//
//   GET    /api/v1/ssh-nodes          reader   declared nodes, reachable or why not
//   POST   /api/v1/ssh-nodes          admin    {"name", "url": "ssh://user@host[:port]",
//                                              "gpus", "gpu_model", "labels", "host_key"}
//                                              -> 201 with the host key pinned
//   POST   /api/v1/ssh-nodes/{name}/host-key
//                                     admin    {"host_key"?} -> 200: pinned to a new key
//   DELETE /api/v1/ssh-nodes/{name}   admin    -> 204; 409 while tasks run there
//   GET    /api/v1/ssh-key            admin    the public key to authorise on the nodes
//
// The two POSTs read the node's host keys (ssh-keyscan) on SshNodes' pool and
// answer from there: no network thread waits on a node.

#include "api/codec.h"
#include "net/http_server.h"
#include "reserve/json_fields.h"
#include "server/accounts/auth.h"
#include "server/api_context.h"
#include "server/nodes/ssh_nodes.h"
#include "server/request_params.h"

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

// "ssh://u@h:22, host key SHA256:... (ED25519) (scanned)": what the trail keeps of a pin.
std::string PinDetail(const SshNodeSpec& spec) {
  std::string key = "unparsable";
  if (auto k = ssh::ParseHostKey(spec.host_key); k.ok()) key = k->Describe();
  return spec.url + ", host key " + key + " (" + spec.host_key_source + ")";
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

  RETURN_IF_ERROR(http.RouteAsync(
      "POST", "/api/v1/ssh-nodes", [&ctx](const HttpRequest& req, net::Responder respond) {
        auto who = RequireAdmin(ctx, req);
        if (!who.ok()) return respond(Fail(who.status()));
        auto body = api::ParseStrictJson(req.body);
        if (!body.ok()) return respond(Fail(body.status().WithContext("request body")));
        auto request = SshNodeRequestFromJson(*body);
        if (!request.ok()) return respond(Fail(request.status()));
        ctx.ssh_nodes->Add(std::move(*request), [&ctx, respond, addr = req.remote_addr,
                                                 actor = who->username](Result<SshNodeSpec> added) {
          if (!added.ok()) return respond(Fail(added.status()));
          RecordTrail(ctx, addr, "ssh_node_added", added->name, actor, PinDetail(*added));
          respond(HttpResponse::Json(201, ToJson(*added).dump()));
        });
      }));

  RETURN_IF_ERROR(http.RouteAsync(
      "POST", "/api/v1/ssh-nodes/{name}/host-key",
      [&ctx](const HttpRequest& req, net::Responder respond) {
        auto who = RequireAdmin(ctx, req);
        if (!who.ok()) return respond(Fail(who.status()));
        auto body = api::ParseStrictJson(req.body.empty() ? "{}" : req.body);
        if (!body.ok()) return respond(Fail(body.status().WithContext("request body")));
        if (!body->is_object()) {
          return respond(Fail(Status::InvalidArgument("the body must be {\"host_key\": ...}")));
        }
        reserve::JsonFields f(*body, "");
        std::string host_key;
        if (Status st = f.Only({"host_key"}); !st.ok()) return respond(Fail(st));
        if (Status st = f.Str("host_key", &host_key, false, 16384); !st.ok()) {
          return respond(Fail(st));
        }
        std::optional<ssh::HostKeyPin> pin;
        if (!host_key.empty()) {
          auto parsed = ssh::ParseHostKeyPin(host_key);
          if (!parsed.ok()) return respond(Fail(parsed.status().WithContext("host_key")));
          pin = std::move(*parsed);
        }
        ctx.ssh_nodes->Pin(req.Param("name"), std::move(pin),
                           [&ctx, respond, addr = req.remote_addr,
                            actor = who->username](Result<SshNodeSpec> pinned) {
                             if (!pinned.ok()) return respond(Fail(pinned.status()));
                             RecordTrail(ctx, addr, "ssh_node_pinned", pinned->name, actor,
                                         PinDetail(*pinned));
                             respond(HttpResponse::Json(200, ToJson(*pinned).dump()));
                           });
      }));

  RETURN_IF_ERROR(http.Route("DELETE", "/api/v1/ssh-nodes/{name}", [&ctx](const HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return Fail(who.status());
    Status st = ctx.ssh_nodes->Remove(req.Param("name"));
    if (!st.ok()) return Fail(st);
    RecordTrail(ctx, req.remote_addr, "ssh_node_removed", req.Param("name"), who->username, "");
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
