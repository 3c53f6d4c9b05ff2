#pragma once
// JSON of a server's role: /healthz's body and GET /api/v1/servers' (servers_api.cc), for
// the leader's routes and a follower's own /healthz alike.

#include "api/codec.h"
#include "server/leadership/role.h"

namespace rota::server {

// {"status":"ok","role":"leader"|"follower","epoch":N[,"server_id":..,"leader":URL]};
// a null role is the one SQLite server (leader, epoch 0).
api::Json HealthJson(const leadership::Role* role);
// {"servers":[{id,address,version,role,started,last_renewal}],"epoch":N,"replicated":bool}
api::Json ServersJson(const leadership::Role& role);

}  // namespace rota::server
