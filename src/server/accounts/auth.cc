#include "server/accounts/auth.h"

#include "server/api_context.h"

namespace rota::server {

Result<Principal> Authenticate(ApiContext& ctx, const net::HttpRequest& req) {
  const std::string& header = req.Header("authorization");
  if (header.empty()) return Principal{};
  constexpr std::string_view kBearer = "Bearer ";
  if (header.size() <= kBearer.size() || header.compare(0, kBearer.size(), kBearer) != 0) {
    return Status::Unauthenticated("Authorization must be 'Bearer <token>'");
  }
  if (ctx.accounts == nullptr) return Status::Unavailable("accounts are not available");
  ASSIGN_OR_RETURN(User user,
                   ctx.accounts->VerifyToken(header.substr(kBearer.size()), ctx.clock->NowMs()));
  Principal p;
  p.user_id = user.id;
  p.username = user.username;
  p.role = user.role;
  p.groups = user.groups;
  return p;
}

Result<Principal> RequireReader(ApiContext& ctx, const net::HttpRequest& req) {
  ASSIGN_OR_RETURN(Principal p, Authenticate(ctx, req));
  if (!p.authenticated() && !ctx.config->anonymous_read) {
    return Status::Unauthenticated("sign in first: send 'Authorization: Bearer <token>' "
                                   "(rota login)");
  }
  return p;
}

Result<Principal> RequireUser(ApiContext& ctx, const net::HttpRequest& req) {
  ASSIGN_OR_RETURN(Principal p, Authenticate(ctx, req));
  if (!p.authenticated()) {
    return Status::Unauthenticated("sign in first: send 'Authorization: Bearer <token>' "
                                   "(rota login)");
  }
  return p;
}

Result<Principal> RequireAdmin(ApiContext& ctx, const net::HttpRequest& req) {
  ASSIGN_OR_RETURN(Principal p, RequireUser(ctx, req));
  if (!p.admin()) return Status::PermissionDenied("only admins may do this");
  return p;
}

}  // namespace rota::server
