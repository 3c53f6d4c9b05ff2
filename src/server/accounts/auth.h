#pragma once
// Request authentication and the authorisation guards every route uses.
//
// A request carries "Authorization: Bearer <token>" (a session token from
// POST /api/v1/auth/login or an API token). Without the header it is anonymous.
// Route handlers call exactly one guard first:
//
//   auto who = RequireUser(ctx, req);
//   if (!who.ok()) return net::HttpResponse::FromStatus(who.status());
//
// Guards return Unauthenticated (401) for anonymous callers where a user is
// needed and for bad tokens (malformed, forged, expired, revoked), and
// PermissionDenied (403) for users where an admin is needed.

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "net/http_types.h"
#include "server/accounts/accounts.h"

namespace rota::server {

struct ApiContext;

struct Principal {
  int64_t user_id = 0;  // 0: anonymous
  std::string username;
  Role role = Role::kUser;
  std::vector<std::string> groups;

  bool authenticated() const { return user_id != 0; }
  bool admin() const { return authenticated() && role == Role::kAdmin; }
  // True when this principal may change something owned by `owner_id`.
  bool CanModify(int64_t owner_id) const { return admin() || (authenticated() && user_id == owner_id); }
};

// The principal of `req`: anonymous without an Authorization header; the token's
// user otherwise (Unauthenticated for a bad token or a non-Bearer scheme).
Result<Principal> Authenticate(ApiContext& ctx, const net::HttpRequest& req);

// Reading cluster state, reservations, violations: any user; anonymous callers
// too when the server's `anonymous_read` setting is on.
Result<Principal> RequireReader(ApiContext& ctx, const net::HttpRequest& req);
// Any signed-in user.
Result<Principal> RequireUser(ApiContext& ctx, const net::HttpRequest& req);
// An admin.
Result<Principal> RequireAdmin(ApiContext& ctx, const net::HttpRequest& req);

}  // namespace rota::server
