// Accounts API: login/logout/whoami, users, groups, API tokens.
//
//   POST   /api/v1/auth/login          {username, password} -> session token   anyone
//   POST   /api/v1/auth/logout         ends the calling session                 user
//   GET    /api/v1/auth/whoami                                                  user
//   GET    /api/v1/users               admin
//   POST   /api/v1/users               admin
//   GET    /api/v1/users/{name}        the user or an admin
//   PATCH  /api/v1/users/{name}        the user (display_name, email, password) or an admin
//   DELETE /api/v1/users/{name}        admin
//   GET    /api/v1/groups              user
//   POST   /api/v1/groups              admin
//   DELETE /api/v1/groups/{name}       admin
//   GET    /api/v1/tokens              the caller's tokens
//   POST   /api/v1/tokens              {name, ttl?} -> API token (shown once)   user
//   DELETE /api/v1/tokens/{id}         own token, or any for an admin

#include "api/codec.h"
#include "common/time_util.h"
#include "net/http_server.h"
#include "server/accounts/accounts.h"
#include "server/api_context.h"
#include "common/log.h"
#include "server/quotas/quotas.h"
#include "server/queues/queues.h"
#include "server/accounts/auth.h"

namespace rota::server {
namespace {

using net::HttpRequest;
using net::HttpResponse;

HttpResponse Fail(const Status& st) { return HttpResponse::FromStatus(st); }

api::Json UserJson(const User& u) {
  api::Json unix_users = api::Json::object();
  for (const auto& [node, name] : u.unix_users) unix_users[node] = name;
  return api::Json{{"id", u.id},
                   {"username", u.username},
                   {"display_name", u.display_name},
                   {"email", u.email},
                   {"unix_user", u.unix_user.empty() ? u.username : u.unix_user},
                   {"unix_users", unix_users},
                   {"role", RoleName(u.role)},
                   {"groups", u.groups},
                   {"disabled", u.disabled},
                   {"has_password", u.has_password},
                   {"created_at", FormatRfc3339(u.created_ms)},
                   {"updated_at", FormatRfc3339(u.updated_ms)}};
}

api::Json TokenJson(const TokenInfo& t) {
  api::Json j{{"id", t.id},
              {"kind", t.kind},
              {"name", t.name},
              {"created_at", FormatRfc3339(t.created_ms)},
              {"expires_at", nullptr},
              {"last_used_at", nullptr}};
  if (t.expires_ms) j["expires_at"] = FormatRfc3339(*t.expires_ms);
  if (t.last_used_ms) j["last_used_at"] = FormatRfc3339(*t.last_used_ms);
  return j;
}

// Parses a JSON object body; InvalidArgument otherwise.
Result<api::Json> ObjectBody(const HttpRequest& req) {
  auto j = api::ParseStrictJson(req.body);
  if (!j.ok()) return j.status().WithContext("request body");
  if (!j->is_object()) return Status::InvalidArgument("request body must be a JSON object");
  return j;
}

// Reads an optional string field into `out`.
Status OptString(const api::Json& j, const char* key, std::optional<std::string>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) return Status::InvalidArgument(std::string(key) + " must be a string");
  *out = it->get<std::string>();
  return Status::Ok();
}

// Refuses fields other than `allowed` (so typos are not silently ignored).
Status OnlyFields(const api::Json& j, std::initializer_list<const char*> allowed) {
  for (const auto& [key, value] : j.items()) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || key == a;
    if (!ok) return Status::InvalidArgument("unknown field '" + key + "'");
  }
  return Status::Ok();
}

Result<UserPatch> ParseUserPatch(const api::Json& j) {
  RETURN_IF_ERROR(OnlyFields(j, {"username", "display_name", "email", "unix_user", "unix_users",
                                 "role", "password", "disabled", "groups"}));
  UserPatch p;
  RETURN_IF_ERROR(OptString(j, "username", &p.username));
  RETURN_IF_ERROR(OptString(j, "display_name", &p.display_name));
  RETURN_IF_ERROR(OptString(j, "email", &p.email));
  RETURN_IF_ERROR(OptString(j, "unix_user", &p.unix_user));
  RETURN_IF_ERROR(OptString(j, "password", &p.password));
  std::optional<std::string> role;
  RETURN_IF_ERROR(OptString(j, "role", &role));
  if (role) {
    ASSIGN_OR_RETURN(Role r, ParseRole(*role));
    p.role = r;
  }
  if (auto it = j.find("disabled"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) return Status::InvalidArgument("disabled must be true or false");
    p.disabled = it->get<bool>();
  }
  if (auto it = j.find("unix_users"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) {
      return Status::InvalidArgument("unix_users must be an object {node: unix account}");
    }
    std::map<std::string, std::string> m;
    for (const auto& [node, name] : it->items()) {
      if (!name.is_string()) return Status::InvalidArgument("unix_users." + node + " must be a string");
      m[node] = name.get<std::string>();
    }
    p.unix_users = std::move(m);
  }
  if (auto it = j.find("groups"); it != j.end() && !it->is_null()) {
    if (!it->is_array() || it->size() > 100) {
      return Status::InvalidArgument("groups must be an array of at most 100 group names");
    }
    std::vector<std::string> groups;
    for (const auto& g : *it) {
      if (!g.is_string()) return Status::InvalidArgument("groups must hold strings");
      groups.push_back(g.get<std::string>());
    }
    p.groups = std::move(groups);
  }
  return p;
}

// The user named in the path, if the caller may see it: itself or (admin) anyone.
Result<User> PathUser(ApiContext& ctx, const HttpRequest& req, const Principal& who) {
  const std::string& name = req.Param("name");
  if (!who.admin() && name != who.username) {
    return Status::PermissionDenied("only admins may see or change other users");
  }
  return ctx.accounts->FindUser(name);
}

HttpResponse Login(ApiContext& ctx, const HttpRequest& req) {
  auto body = ObjectBody(req);
  if (!body.ok()) return Fail(body.status());
  std::optional<std::string> username, password, name;
  Status st = OnlyFields(*body, {"username", "password"});
  if (st.ok()) st = OptString(*body, "username", &username);
  if (st.ok()) st = OptString(*body, "password", &password);
  if (st.ok() && (!username || !password)) {
    st = Status::InvalidArgument("username and password are required");
  }
  if (!st.ok()) return Fail(st);
  auto user = ctx.accounts->CheckPassword(*username, *password);
  if (!user.ok()) return Fail(user.status());
  const int64_t now = ctx.clock->NowMs();
  auto token = ctx.accounts->IssueToken(user->id, "session", "login from " + req.remote_addr,
                                        ctx.config->session_ttl_ms, now);
  if (!token.ok()) return Fail(token.status());
  api::Json j{{"token", token->first},
              {"token_id", token->second.id},
              {"expires_at", FormatRfc3339(*token->second.expires_ms)},
              {"user", UserJson(*user)}};
  return HttpResponse::Json(200, j.dump());
}

// "rota_<id>_<secret>" -> "<id>" (the caller's own token, already verified).
std::string TokenIdOf(const HttpRequest& req) {
  const std::string& h = req.Header("authorization");
  const size_t start = std::string_view("Bearer rota_").size();
  const size_t end = h.find('_', start);
  return end == std::string::npos ? "" : h.substr(start, end - start);
}

// A deleted user or group leaves no trace in queues and quotas: someone given
// the name later must not inherit its queue access or its limits. Failures are
// logged (the account is gone either way; a stale name admits no one then).
void ForgetName(ApiContext& ctx, const std::string& kind, const std::string& name) {
  if (ctx.queues != nullptr) {
    for (QueueDef q : ctx.queues->List()) {
      auto& names = kind == "user" ? q.queue.users : q.queue.groups;
      if (std::erase(names, name) == 0) continue;
      if (auto r = ctx.queues->Replace(q); !r.ok()) {
        ROTA_LOG(WARNING) << "deleting " << kind << " " << name << ": queue " << q.queue.name
                          << " still names it: " << r.status().message();
      }
    }
  }
  if (ctx.quotas != nullptr && ctx.quotas->Get(kind, name).ok()) {
    if (Status st = ctx.quotas->Delete(kind, name); !st.ok()) {
      ROTA_LOG(WARNING) << "deleting " << kind << " " << name << ": its quota stays: " << st.message();
    }
  }
}

}  // namespace

Status RegisterAccountRoutes(net::HttpServer& http, ApiContext& ctx) {
  RETURN_IF_ERROR(http.Route("POST", "/api/v1/auth/login",
                             [&ctx](const HttpRequest& req) { return Login(ctx, req); }));
  RETURN_IF_ERROR(http.Route("POST", "/api/v1/auth/logout", [&ctx](const HttpRequest& req) {
    auto who = RequireUser(ctx, req);
    if (!who.ok()) return Fail(who.status());
    Status st = ctx.accounts->RevokeToken(who->user_id, TokenIdOf(req));
    if (!st.ok()) return Fail(st);
    return HttpResponse::Json(200, R"({"status":"signed out"})");
  }));
  RETURN_IF_ERROR(http.Route("GET", "/api/v1/auth/whoami", [&ctx](const HttpRequest& req) {
    auto who = RequireUser(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto user = ctx.accounts->GetUser(who->user_id);
    if (!user.ok()) return Fail(user.status());
    return HttpResponse::Json(200, UserJson(*user).dump());
  }));

  // ---- users ----
  RETURN_IF_ERROR(http.Route("GET", "/api/v1/users", [&ctx](const HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto users = ctx.accounts->ListUsers();
    if (!users.ok()) return Fail(users.status());
    api::Json arr = api::Json::array();
    for (const auto& u : *users) arr.push_back(UserJson(u));
    return HttpResponse::Json(200, api::Json{{"users", arr}}.dump());
  }));
  RETURN_IF_ERROR(http.Route("POST", "/api/v1/users", [&ctx](const HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto body = ObjectBody(req);
    if (!body.ok()) return Fail(body.status());
    auto patch = ParseUserPatch(*body);
    if (!patch.ok()) return Fail(patch.status());
    auto user = ctx.accounts->CreateUser(*patch, ctx.clock->NowMs());
    if (!user.ok()) return Fail(user.status());
    return HttpResponse::Json(201, UserJson(*user).dump());
  }));
  RETURN_IF_ERROR(http.Route("GET", "/api/v1/users/{name}", [&ctx](const HttpRequest& req) {
    auto who = RequireUser(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto user = PathUser(ctx, req, *who);
    if (!user.ok()) return Fail(user.status());
    return HttpResponse::Json(200, UserJson(*user).dump());
  }));
  RETURN_IF_ERROR(http.Route("PATCH", "/api/v1/users/{name}", [&ctx](const HttpRequest& req) {
    auto who = RequireUser(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto user = PathUser(ctx, req, *who);
    if (!user.ok()) return Fail(user.status());
    auto body = ObjectBody(req);
    if (!body.ok()) return Fail(body.status());
    auto patch = ParseUserPatch(*body);
    if (!patch.ok()) return Fail(patch.status());
    if (!who->admin() && (patch->role || patch->disabled || patch->groups || patch->unix_user ||
                          patch->unix_users)) {
      return Fail(Status::PermissionDenied(
          "only admins may change role, disabled, groups or Unix accounts"));
    }
    auto updated = ctx.accounts->UpdateUser(user->id, *patch, ctx.clock->NowMs());
    if (!updated.ok()) return Fail(updated.status());
    return HttpResponse::Json(200, UserJson(*updated).dump());
  }));
  RETURN_IF_ERROR(http.Route("DELETE", "/api/v1/users/{name}", [&ctx](const HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto user = ctx.accounts->FindUser(req.Param("name"));
    if (!user.ok()) return Fail(user.status());
    Status st = ctx.accounts->DeleteUser(user->id);
    if (!st.ok()) return Fail(st);
    ForgetName(ctx, "user", user->username);
    return HttpResponse{204, "application/json", "", {}};
  }));

  // ---- groups ----
  RETURN_IF_ERROR(http.Route("GET", "/api/v1/groups", [&ctx](const HttpRequest& req) {
    auto who = RequireUser(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto groups = ctx.accounts->ListGroups();
    if (!groups.ok()) return Fail(groups.status());
    api::Json arr = api::Json::array();
    for (const auto& g : *groups) {
      arr.push_back({{"name", g.name}, {"description", g.description}, {"members", g.members},
                     {"created_at", FormatRfc3339(g.created_ms)}});
    }
    return HttpResponse::Json(200, api::Json{{"groups", arr}}.dump());
  }));
  RETURN_IF_ERROR(http.Route("POST", "/api/v1/groups", [&ctx](const HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto body = ObjectBody(req);
    if (!body.ok()) return Fail(body.status());
    std::optional<std::string> name, description;
    Status st = OnlyFields(*body, {"name", "description"});
    if (st.ok()) st = OptString(*body, "name", &name);
    if (st.ok()) st = OptString(*body, "description", &description);
    if (st.ok() && !name) st = Status::InvalidArgument("name is required");
    if (!st.ok()) return Fail(st);
    auto g = ctx.accounts->CreateGroup(*name, description.value_or(""), ctx.clock->NowMs());
    if (!g.ok()) return Fail(g.status());
    return HttpResponse::Json(201, api::Json{{"name", g->name},
                                             {"description", g->description},
                                             {"members", api::Json::array()},
                                             {"created_at", FormatRfc3339(g->created_ms)}}
                                       .dump());
  }));
  RETURN_IF_ERROR(http.Route("DELETE", "/api/v1/groups/{name}", [&ctx](const HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return Fail(who.status());
    Status st = ctx.accounts->DeleteGroup(req.Param("name"));
    if (!st.ok()) return Fail(st);
    ForgetName(ctx, "group", req.Param("name"));
    return HttpResponse{204, "application/json", "", {}};
  }));

  // ---- tokens ----
  RETURN_IF_ERROR(http.Route("GET", "/api/v1/tokens", [&ctx](const HttpRequest& req) {
    auto who = RequireUser(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto tokens = ctx.accounts->ListTokens(who->user_id);
    if (!tokens.ok()) return Fail(tokens.status());
    api::Json arr = api::Json::array();
    for (const auto& t : *tokens) arr.push_back(TokenJson(t));
    return HttpResponse::Json(200, api::Json{{"tokens", arr}}.dump());
  }));
  RETURN_IF_ERROR(http.Route("POST", "/api/v1/tokens", [&ctx](const HttpRequest& req) {
    auto who = RequireUser(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto body = ObjectBody(req);
    if (!body.ok()) return Fail(body.status());
    std::optional<std::string> name, ttl;
    Status st = OnlyFields(*body, {"name", "ttl"});
    if (st.ok()) st = OptString(*body, "name", &name);
    if (st.ok()) st = OptString(*body, "ttl", &ttl);
    int64_t ttl_ms = 0;
    if (st.ok() && ttl && !ttl->empty()) {
      auto ms = ParseDurationMs(*ttl);
      if (!ms.ok()) st = ms.status().WithContext("ttl");
      else if (*ms < 60'000 || *ms > 3660LL * 86'400'000) st = Status::InvalidArgument("ttl must be between 1m and 10 years");
      else ttl_ms = *ms;
    }
    if (!st.ok()) return Fail(st);
    auto token = ctx.accounts->IssueToken(who->user_id, "api", name.value_or("api token"), ttl_ms,
                                          ctx.clock->NowMs());
    if (!token.ok()) return Fail(token.status());
    api::Json j = TokenJson(token->second);
    j["token"] = token->first;
    return HttpResponse::Json(201, j.dump());
  }));
  RETURN_IF_ERROR(http.Route("DELETE", "/api/v1/tokens/{id}", [&ctx](const HttpRequest& req) {
    auto who = RequireUser(ctx, req);
    if (!who.ok()) return Fail(who.status());
    Status st = ctx.accounts->RevokeToken(who->admin() ? 0 : who->user_id, req.Param("id"));
    if (!st.ok()) return Fail(st);
    return HttpResponse{204, "application/json", "", {}};
  }));
  return Status::Ok();
}

}  // namespace rota::server
