// Accounts API: login/logout/whoami, users, groups, API tokens.
//
//   POST   /api/v1/auth/login          {username, password} -> session token   anyone
//   POST   /api/v1/auth/logout         ends the calling session                 user
//   GET    /api/v1/auth/whoami                                                  user
//   GET    /api/v1/auth/events         the accounts trail                       admin
//   GET    /api/v1/users               admin
//   POST   /api/v1/users               admin
//   GET    /api/v1/users/{name}        the user or an admin
//   PATCH  /api/v1/users/{name}        the user (display_name, email, password with
//                                      current_password) or an admin
//
// Every request that hashes or checks a password is answered from the hashing pool
// (logins.h), never on a network thread: sign-in, a password change (its current
// password, then the new one) and creating a user with a password. A full pool
// answers 503 and a throttled sign-in 429, both with Retry-After.
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
#include "server/accounts/logins.h"
#include "server/audit.h"

namespace rota::server {
namespace {

using net::HttpRequest;
using net::HttpResponse;

HttpResponse Fail(const Status& st) { return HttpResponse::FromStatus(st); }

// The refusal `st` with "Retry-After: <seconds>" (rounded up, at least 1).
HttpResponse RetryLater(const Status& st, int64_t retry_after_ms) {
  HttpResponse r = Fail(st);
  r.headers.emplace_back("Retry-After", std::to_string(std::max<int64_t>(1, (retry_after_ms + 999) / 1000)));
  return r;
}

// Runs `work` (which answers through `respond`) where passwords are hashed: the pool,
// or the calling thread where the context has none (tests that build a bare context).
void OnHashingPool(ApiContext& ctx, const net::Responder& respond, std::function<void()> work) {
  if (ctx.logins == nullptr) {
    work();
    return;
  }
  Status st = ctx.logins->RunHashing(std::move(work));
  if (!st.ok()) {
    respond(RetryLater(Status::Unavailable(st.message() + "; try again in 1 s"),
                       Logins::kBusyRetryMs));
  }
}

// Checks `password` of `username` for the client of `req` (throttled, on the pool) and
// calls `then` with the outcome; refusals (429/503) are answered with Retry-After.
void CheckPassword(ApiContext& ctx, const HttpRequest& req, const std::string& username,
                   std::string password, net::Responder respond,
                   std::function<void(Result<User>, const net::Responder&)> then) {
  if (ctx.logins == nullptr) {
    then(ctx.accounts->CheckPassword(username, password), respond);
    return;
  }
  ctx.logins->CheckPassword(
      req.remote_addr, username, std::move(password),
      [respond, then = std::move(then)](Logins::Outcome out) {
        if (out.retry_after_ms > 0) {
          respond(RetryLater(out.user.status(), out.retry_after_ms));
          return;
        }
        then(std::move(out.user), respond);
      });
}

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

void Login(ApiContext& ctx, const HttpRequest& req, net::Responder respond) {
  auto body = ObjectBody(req);
  if (!body.ok()) return respond(Fail(body.status()));
  std::optional<std::string> username, password, name;
  Status st = OnlyFields(*body, {"username", "password"});
  if (st.ok()) st = OptString(*body, "username", &username);
  if (st.ok()) st = OptString(*body, "password", &password);
  if (st.ok() && (!username || !password)) {
    st = Status::InvalidArgument("username and password are required");
  }
  if (!st.ok()) return respond(Fail(st));
  const std::string token_name = "login from " + req.remote_addr;
  CheckPassword(ctx, req, *username, std::move(*password), std::move(respond),
                [&ctx, token_name](Result<User> user, const net::Responder& respond) {
                  if (!user.ok()) return respond(Fail(user.status()));
                  auto token = ctx.accounts->IssueToken(user->id, "session", token_name,
                                                        ctx.config->session_ttl_ms,
                                                        ctx.clock->NowMs());
                  if (!token.ok()) return respond(Fail(token.status()));
                  api::Json j{{"token", token->first},
                              {"token_id", token->second.id},
                              {"expires_at", FormatRfc3339(*token->second.expires_ms)},
                              {"user", UserJson(*user)}};
                  respond(HttpResponse::Json(200, j.dump()));
                });
}

// PATCH /api/v1/users/{name}. A new password for oneself needs the current one (checked
// like a sign-in: throttled, on the pool); an admin setting another user's does not.
// Either way every token of the user ends.
void PatchUser(ApiContext& ctx, const HttpRequest& req, net::Responder respond) {
  auto who = RequireUser(ctx, req);
  if (!who.ok()) return respond(Fail(who.status()));
  auto user = PathUser(ctx, req, *who);
  if (!user.ok()) return respond(Fail(user.status()));
  auto body = ObjectBody(req);
  if (!body.ok()) return respond(Fail(body.status()));
  std::optional<std::string> current;
  if (Status st = OptString(*body, "current_password", &current); !st.ok()) {
    return respond(Fail(st));
  }
  body->erase("current_password");
  auto patch = ParseUserPatch(*body);
  if (!patch.ok()) return respond(Fail(patch.status()));
  if (!who->admin() && (patch->role || patch->disabled || patch->groups || patch->unix_user ||
                        patch->unix_users)) {
    return respond(Fail(Status::PermissionDenied(
        "only admins may change role, disabled, groups or Unix accounts")));
  }
  const int64_t id = user->id;
  const std::string username = user->username;
  const std::string actor = who->username;
  // Answers; true when the user was changed.
  auto update = [&ctx, id, patch = *patch](const net::Responder& respond) {
    auto updated = ctx.accounts->UpdateUser(id, patch, ctx.clock->NowMs());
    respond(updated.ok() ? HttpResponse::Json(200, UserJson(*updated).dump())
                         : Fail(updated.status()));
    return updated.ok();
  };
  if (!patch->password) {
    update(respond);
    return;
  }
  const bool own = who->user_id == id;
  if (!own) {
    // An admin resetting another user's password.
    HttpRequest copy;
    copy.remote_addr = req.remote_addr;
    return OnHashingPool(ctx, respond, [&ctx, respond, update, copy, username, actor] {
      if (update(respond)) {
        RecordTrail(ctx, copy.remote_addr, "password_reset", username, actor, "every token of the user revoked");
      }
    });
  }
  if (!current || current->empty()) {
    return respond(Fail(Status::InvalidArgument(
        "current_password is required to change your own password")));
  }
  HttpRequest copy;
  copy.remote_addr = req.remote_addr;
  CheckPassword(ctx, req, username, std::move(*current), std::move(respond),
                [&ctx, update, copy, username, actor](Result<User> checked,
                                                     const net::Responder& respond) {
                  if (!checked.ok()) {
                    if (checked.status().code() == StatusCode::kUnauthenticated) {
                      // Not 401: the caller's token is fine, only the password is wrong.
                      return respond(Fail(Status::PermissionDenied("current_password is wrong")));
                    }
                    return respond(Fail(checked.status()));
                  }
                  // Already on the pool: the new hash is made here.
                  if (update(respond)) {
                    RecordTrail(ctx, copy.remote_addr, "password_changed", username, actor,
                          "every token of the user revoked");
                  }
                });
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

void RecordTrail(ApiContext& ctx, const std::string& remote_addr, const std::string& action,
                 const std::string& subject, const std::string& actor, const std::string& detail) {
  if (ctx.audit == nullptr) return;
  ctx.audit->RecordAuthEvent({0, ctx.clock->NowMs(), action,
                              LoginThrottle::AddressKey(remote_addr), subject, actor, detail});
}

Status RegisterAccountRoutes(net::HttpServer& http, ApiContext& ctx) {
  RETURN_IF_ERROR(http.RouteAsync("POST", "/api/v1/auth/login",
                                  [&ctx](const HttpRequest& req, net::Responder respond) {
                                    Login(ctx, req, std::move(respond));
                                  }));
  RETURN_IF_ERROR(http.Route("GET", "/api/v1/auth/events", [&ctx](const HttpRequest& req) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return Fail(who.status());
    if (ctx.audit == nullptr) return Fail(Status::Unavailable("the audit log is not available"));
    int64_t limit = 100, before = 0;
    for (const auto& [key, value] : req.query) {
      if (key != "limit" && key != "before") {
        return Fail(Status::InvalidArgument("unknown parameter '" + key + "'"));
      }
      int64_t v = 0;
      const bool digits = !value.empty() && value.size() <= 18 &&
                          std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (digits) v = std::stoll(value);
      if (!digits) return Fail(Status::InvalidArgument(key + " must be a whole number"));
      (key == "limit" ? limit : before) = v;
    }
    auto events = ctx.audit->ListAuthEvents(before, static_cast<int>(std::min<int64_t>(limit, 1'000'000)));
    if (!events.ok()) return Fail(events.status());
    api::Json arr = api::Json::array();
    for (const auto& e : *events) arr.push_back(AuthEventJson(e));
    return HttpResponse::Json(200, api::Json{{"events", arr}}.dump());
  }));
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
  RETURN_IF_ERROR(http.RouteAsync("POST", "/api/v1/users", [&ctx](const HttpRequest& req,
                                                                   net::Responder respond) {
    auto who = RequireAdmin(ctx, req);
    if (!who.ok()) return respond(Fail(who.status()));
    auto body = ObjectBody(req);
    if (!body.ok()) return respond(Fail(body.status()));
    auto patch = ParseUserPatch(*body);
    if (!patch.ok()) return respond(Fail(patch.status()));
    auto create = [&ctx, patch = *patch, respond] {
      auto user = ctx.accounts->CreateUser(patch, ctx.clock->NowMs());
      if (!user.ok()) return respond(Fail(user.status()));
      respond(HttpResponse::Json(201, UserJson(*user).dump()));
    };
    if (patch->password) return OnHashingPool(ctx, respond, std::move(create));
    create();
  }));
  RETURN_IF_ERROR(http.Route("GET", "/api/v1/users/{name}", [&ctx](const HttpRequest& req) {
    auto who = RequireUser(ctx, req);
    if (!who.ok()) return Fail(who.status());
    auto user = PathUser(ctx, req, *who);
    if (!user.ok()) return Fail(user.status());
    return HttpResponse::Json(200, UserJson(*user).dump());
  }));
  RETURN_IF_ERROR(http.RouteAsync("PATCH", "/api/v1/users/{name}",
                                  [&ctx](const HttpRequest& req, net::Responder respond) {
                                    PatchUser(ctx, req, std::move(respond));
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
      else if (*ms < 60'000) st = Status::InvalidArgument("ttl must be at least 1m");
      else ttl_ms = *ms;  // at most api_token_max_ttl (Accounts::IssueToken); absent: that maximum
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
