#pragma once
// Helpers for tests of several `rota server`s on one PostgreSQL (docs/design-ha.md):
// roles, a client that moves from server to server as the CLI does, and a server of a
// cluster (data dir with the cluster's shared token-signing key).

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "net/http_client.h"
#include "tests/harness.h"

namespace rota::testing {

// All servers of one cluster sign tokens with one key (docs/design-ha.md).
inline constexpr const char* kClusterAuthKey =
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

// The role a server's /healthz reports ("" when it does not answer).
std::string RoleOf(const std::string& url);
// A leader whose services run (its /readyz is the whole server's, not a follower's).
bool Leads(const std::string& url);

// One call to whichever server answers, in turn from *start (as the CLI does with
// ROTA_SERVER): the next one on a transport failure or a 503; *start is left at the one
// that answered.
Result<net::ClientResponse> CallAny(const std::vector<std::string>& urls, const std::string& token,
                                    const std::string& method, const std::string& path, const std::string& body,
                                    size_t* start);

// A server (not started) with data dir <base>/<name> holding the cluster's auth key, on
// store `store_url`, its job ports 31600-31699, and `env` besides.
std::unique_ptr<ServerProcess> ClusterServer(const std::string& base, const std::string& name,
                                             const std::string& store_url,
                                             const std::map<std::string, std::string>& env = {});

}  // namespace rota::testing
