#pragma once
// The client's address across a follower's hop (docs/design-ha.md). A follower forwards a
// request from its own address, so the leader would count every client's failed logins, and
// write every audit entry, under the follower's address. The follower therefore names the
// client's address in X-Rota-Client and signs it (X-Rota-Client-Sig: HMAC-SHA-256 under the
// cluster's shared auth key, over the address, the method and the target); the leader adopts
// the address only when the signature is right, so no client can choose the address it is
// counted under. Pure functions; libsodium underneath.

#include <string>
#include <vector>

#include "net/http_types.h"

namespace rota::server::leadership {

inline constexpr const char* kClientHeader = "X-Rota-Client";
inline constexpr const char* kClientSigHeader = "X-Rota-Client-Sig";

// The two header lines ("Name: value") a follower adds for `req`, whose client is `client`
// (an IP address, no port). `key`: the auth key (any length > 0).
std::vector<std::string> SignedClientHeaders(const std::string& key, const net::HttpRequest& req,
                                             const std::string& client);

// When `req` carries a client address with a valid signature under `key`, sets
// req->remote_addr to "ADDRESS:0" and returns true; otherwise leaves it and returns false
// (a missing, malformed or forged header is simply not believed).
bool AdoptForwardedClient(const std::string& key, net::HttpRequest* req);

}  // namespace rota::server::leadership
