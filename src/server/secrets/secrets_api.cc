// Secrets API (docs/api.md, "Secrets"; docs/design-secrets.md):
//
//   GET    /api/v1/secrets          user   the secrets the caller may use (admins: all),
//                                          metadata only: {"secrets": [..]}
//   POST   /api/v1/secrets          user   {"name", "value" | "value_hex", "group"?} -> 201
//                                          with the metadata; the value never comes back
//   DELETE /api/v1/secrets/{name}   user   the owner, a member of its group, or an admin -> 204
//
// No route returns a value: tasks get them from the agent (task_start).

#include <algorithm>

#include "api/codec.h"
#include "common/strings.h"
#include "net/http_server.h"
#include "reserve/json_fields.h"
#include "server/accounts/auth.h"
#include "server/accounts/login_throttle.h"
#include "server/api_context.h"
#include "server/request_params.h"
#include "server/secrets/secrets.h"

namespace rota::server {
namespace {

using net::HttpRequest;
using net::HttpResponse;

HttpResponse Fail(const Status& st) { return HttpResponse::FromStatus(st); }

struct CreateRequest {
  std::string name, value, group;
};

Result<CreateRequest> ParseCreate(const std::string& body) {
  ASSIGN_OR_RETURN(api::Json j, api::ParseStrictJson(body));
  if (!j.is_object()) return Status::InvalidArgument("the body must be {\"name\", \"value\", \"group\"?}");
  reserve::JsonFields f(j, "secret");
  RETURN_IF_ERROR(f.Only({"name", "value", "value_hex", "group"}));
  CreateRequest r;
  RETURN_IF_ERROR(f.Str("name", &r.name, true, 200));
  RETURN_IF_ERROR(f.Str("group", &r.group, false, 200));
  const bool text = f.Has("value"), hex = f.Has("value_hex");
  if (text == hex) return Status::InvalidArgument("secret: give exactly one of value and value_hex");
  if (text) {
    RETURN_IF_ERROR(f.Str("value", &r.value, true, jobs::kMaxSecretBytes * 4));
  } else {
    std::string h;
    RETURN_IF_ERROR(f.Str("value_hex", &h, true, jobs::kMaxSecretBytes * 2 + 2));
    if (!HexDecode(h, &r.value)) return Status::InvalidArgument("secret.value_hex: not hex");
  }
  return r;
}

}  // namespace

Status RegisterSecretRoutes(net::HttpServer& http, ApiContext& ctx) {
  if (ctx.secrets == nullptr) return Status::Internal("secret routes need ctx.secrets");

  RETURN_IF_ERROR(http.Route("GET", "/api/v1/secrets", [&ctx](const HttpRequest& req) {
    auto who = RequireUser(ctx, req);
    if (!who.ok()) return Fail(who.status());
    if (Status st = OnlyQueryParams(req, {}); !st.ok()) return Fail(st);
    auto list = ctx.secrets->List(*who);
    if (!list.ok()) return Fail(list.status());
    api::Json out = api::Json::array();
    for (const auto& s : *list) out.push_back(ToJson(s));
    return HttpResponse::Json(200, api::Json{{"secrets", std::move(out)}}.dump());
  }));

  RETURN_IF_ERROR(http.Route("POST", "/api/v1/secrets", [&ctx](const HttpRequest& req) {
    auto who = RequireUser(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto r = ParseCreate(req.body);
    if (!r.ok()) return Fail(r.status());
    auto info = ctx.secrets->Create(*who, r->name, r->value, r->group, LoginThrottle::AddressKey(req.remote_addr));
    std::fill(r->value.begin(), r->value.end(), '\0');
    if (!info.ok()) return Fail(info.status());
    return HttpResponse::Json(201, ToJson(*info).dump());
  }));

  RETURN_IF_ERROR(http.Route("DELETE", "/api/v1/secrets/{name}", [&ctx](const HttpRequest& req) {
    auto who = RequireUser(ctx, req);
    if (!who.ok()) return Fail(who.status());
    Status st = ctx.secrets->Remove(*who, req.Param("name"), LoginThrottle::AddressKey(req.remote_addr));
    if (!st.ok()) return Fail(st);
    return HttpResponse{204, "application/json", "", {}};
  }));
  return Status::Ok();
}

}  // namespace rota::server
