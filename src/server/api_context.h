#pragma once
// ApiContext: what HTTP handlers may use. Borrowed pointers owned by Server.

#include <atomic>

#include "common/clock.h"
#include "enforce/types.h"
#include "server/nodes/cluster_state.h"
#include "server/config.h"
#include "server/ingest_stats.h"
#include "server/store/store.h"

namespace rota::net {
class HttpServer;
}

namespace rota::server {

class RequestMetrics;
class Accounts;
class Logins;
class AgentGateway;
class AuditLog;
class Reservations;
class JobService;
class JobMetrics;
class NodeDrains;
class NodeCredentials;
class Queues;
class Quotas;
class SshNodes;
class AccountingService;
class PowerService;
class Secrets;
namespace leadership {
class Role;
}

struct ApiContext {
  const ServerConfig* config = nullptr;
  store::Store* store = nullptr;
  ClusterState* cluster = nullptr;
  IngestStats* stats = nullptr;
  RequestMetrics* request_metrics = nullptr;
  const Clock* clock = nullptr;
  std::atomic<bool>* ready = nullptr;
  Accounts* accounts = nullptr;
  Logins* logins = nullptr;  // password checks off the network threads, throttled
  AgentGateway* gateway = nullptr;
  AuditLog* audit = nullptr;
  Reservations* reservations = nullptr;
  JobService* jobs = nullptr;
  JobMetrics* job_metrics = nullptr;
  Queues* queues = nullptr;
  NodeDrains* drains = nullptr;
  NodeCredentials* credentials = nullptr;
  Quotas* quotas = nullptr;
  int64_t quota_period_ms = 0;  // window of max_gpu_hours quotas
  SshNodes* ssh_nodes = nullptr;
  AccountingService* accounting = nullptr;
  PowerService* power = nullptr;
  Secrets* secrets = nullptr;
  // Leader or follower (server/leadership/role.h): /healthz, GET /api/v1/servers.
  const leadership::Role* role = nullptr;
  // Server-wide enforcement settings (policies validate against them).
  enforce::EnforcementSettings enforcement_defaults;
};

// Route groups, one file each.
Status RegisterHealthRoutes(net::HttpServer& http, ApiContext& ctx);     // health_api.cc
Status RegisterNodeRoutes(net::HttpServer& http, ApiContext& ctx);       // nodes_api.cc
Status RegisterHistoryRoutes(net::HttpServer& http, ApiContext& ctx);    // history_api.cc
Status RegisterStreamRoutes(net::HttpServer& http, ApiContext& ctx);     // stream_api.cc
Status RegisterPrometheusRoutes(net::HttpServer& http, ApiContext& ctx); // prometheus.cc
Status RegisterOpenApiRoutes(net::HttpServer& http, ApiContext& ctx);    // openapi.cc
Status RegisterAccountRoutes(net::HttpServer& http, ApiContext& ctx);    // accounts_api.cc
Status RegisterViolationRoutes(net::HttpServer& http, ApiContext& ctx);  // violations_api.cc
Status RegisterReservationRoutes(net::HttpServer& http, ApiContext& ctx); // reservations_api.cc
Status RegisterPolicyRoutes(net::HttpServer& http, ApiContext& ctx);     // policies_api.cc
Status RegisterJobRoutes(net::HttpServer& http, ApiContext& ctx);        // jobs_api.cc
Status RegisterArrayRoutes(net::HttpServer& http, ApiContext& ctx);      // jobs/jobs_arrays_api.cc
Status RegisterJobMetricsRoutes(net::HttpServer& http, ApiContext& ctx); // jobs/job_metrics_api.cc
Status RegisterQueueRoutes(net::HttpServer& http, ApiContext& ctx);      // queues/queues_api.cc
Status RegisterQuotaRoutes(net::HttpServer& http, ApiContext& ctx);      // quotas/quotas_api.cc
Status RegisterSshNodeRoutes(net::HttpServer& http, ApiContext& ctx);    // ssh_nodes_api.cc
Status RegisterUsageRoutes(net::HttpServer& http, ApiContext& ctx);      // accounting/usage_api.cc
Status RegisterPowerRoutes(net::HttpServer& http, ApiContext& ctx);      // power/power_api.cc
Status RegisterServerRoutes(net::HttpServer& http, ApiContext& ctx);     // leadership/servers_api.cc
Status RegisterSecretRoutes(net::HttpServer& http, ApiContext& ctx);     // secrets/secrets_api.cc

// Adds an entry to the security trail (GET /api/v1/auth/events) for a request from
// `remote_addr` (the request's) that changed who or what rota trusts: `action` (e.g. "password_reset", "ssh_node_added"),
// `subject` the account or node concerned, `actor` who asked. Asynchronous; a no-op
// without ctx.audit. (accounts/accounts_api.cc)
void RecordTrail(ApiContext& ctx, const std::string& remote_addr, const std::string& action,
                 const std::string& subject, const std::string& actor, const std::string& detail);

}  // namespace rota::server
