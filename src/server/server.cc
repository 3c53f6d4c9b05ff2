#include "server/server.h"

#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>

#include "common/file_util.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/strings.h"
#include "net/http_server.h"
#include "net/url.h"
#include "server/accounting/accounting_service.h"
#include "server/tls_setup.h"
#include "server/power/power_service.h"
#include "server/accounts/accounts.h"
#include "server/accounts/logins.h"
#include "notify/notifier.h"
#include "server/nodes/agent_gateway.h"
#include "server/nodes/ssh_nodes.h"
#include "server/api_context.h"
#include "server/audit.h"
#include "server/nodes/cluster_state.h"
#include "server/enforcement/enforcement_binding.h"
#include "server/enforcement/enforcement_service.h"
#include "server/jobs/early_stopper.h"
#include "server/jobs/job_metrics.h"
#include "server/jobs/jobs.h"
#include "server/nodes/node_credentials.h"
#include "server/nodes/node_drains.h"
#include "server/queues/queues.h"
#include "server/quotas/quotas.h"
#include "server/reservations/reservations.h"
#include "server/secrets/secrets.h"
#include "server/ingest_stats.h"
#include "server/leadership/forwarded_client.h"
#include "server/leadership/role.h"
#include "server/request_metrics.h"
#include "server/store/store.h"
#include "web/web_routes.h"

namespace rota::server {

struct Server::Impl {
  ServerConfig config;
  Clock* clock = nullptr;
  std::string join_token;
  ServerTls tls;
  std::unique_ptr<leadership::Role> own_role;  // the one server's (runtime.role unset)
  leadership::Role* role = nullptr;
  std::unique_ptr<store::Store> store;
  std::unique_ptr<ClusterState> cluster;
  std::unique_ptr<Accounts> accounts;
  IngestStats stats;
  RequestMetrics request_metrics;
  std::atomic<bool> ready{false};
  ApiContext ctx;
  std::unique_ptr<NodeCredentials> credentials;  // before the gateway, which uses them
  std::unique_ptr<AgentGateway> gateway;
  std::unique_ptr<notify::Notifier> notifier;
  std::unique_ptr<AuditLog> audit;
  std::unique_ptr<Logins> logins;  // reset in Stop(), after the HTTP server
  std::unique_ptr<Reservations> reservations;
  std::unique_ptr<EnforcementService> enforcement;
  std::unique_ptr<EnforcementRunner> enforcement_runner;
  std::unique_ptr<SshNodes> ssh_nodes;
  std::unique_ptr<TaskRouter> task_router;
  std::unique_ptr<NodeDrains> drains;
  std::unique_ptr<Queues> queues;
  std::unique_ptr<Quotas> quotas;
  std::unique_ptr<Secrets> secrets;  // before jobs, which use them
  std::unique_ptr<JobService> jobs;
  std::unique_ptr<JobMetrics> job_metrics;
  std::unique_ptr<EarlyStopper> early_stopper;  // the background loop's
  std::unique_ptr<AccountingService> accounting;  // declared after jobs: destroyed before it
  std::unique_ptr<PowerService> power;
  std::unique_ptr<net::HttpServer> http;

  Mutex mu;
  CondVar cv;
  bool stopping ROTA_GUARDED_BY(mu) = false;
  std::thread background;

  void BackgroundLoop();
};

void Server::Impl::BackgroundLoop() {
  int64_t next_retention = clock->MonotonicMs() + 5'000;
  int64_t next_tick = 0;
  int64_t next_power = 0;
  MutexLock lock(&mu);
  while (!stopping) {
    cv.WaitFor(&mu, std::chrono::milliseconds(250));
    if (stopping) break;
    lock.Unlock();
    if (!role->CheckLeader(clock->MonotonicMs()).ok()) {  // lease ran out: no leader work
      lock.Lock();
      continue;
    }
    cluster->CheckLiveness(clock->NowMs());
    gateway->CheckCommandTimeouts();
    accounting->Tick();
    if (clock->MonotonicMs() >= next_power) {
      power->Tick();
      next_power = clock->MonotonicMs() + power->TickIntervalMs();
    }
    if (clock->MonotonicMs() >= next_tick) {
      reservations->Tick(clock->NowMs());
      early_stopper->Tick();
      next_tick = clock->MonotonicMs() + 2'000;
    }
    if (clock->MonotonicMs() >= next_retention) {
      Status st = store->RunRetention(clock->NowMs());
      if (!st.ok()) ROTA_LOG(WARNING) << "retention failed: " << st.message();
      next_retention = clock->MonotonicMs() + config.retention_interval_ms;
    }
    lock.Lock();
  }
}

namespace {

// Descriptors the server needs beside its connections: the store, logs, task files.
constexpr rlim_t kFilesBesideConnections = 1024;

// Raises the soft open-file limit to `want` (at most the hard limit), so that
// max_connections can be reached; says so when the hard limit is lower.
void RaiseOpenFileLimit(rlim_t want) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want) return;
  const rlim_t target = rl.rlim_max == RLIM_INFINITY ? want : std::min(want, rl.rlim_max);
  if (target > rl.rlim_cur) {
    rlimit raised = rl;
    raised.rlim_cur = target;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) rl = raised;
  }
  if (rl.rlim_cur < want) {
    ROTA_LOG(WARNING) << "open-file limit is " << rl.rlim_cur << " (hard limit " << rl.rlim_max
                      << "): fewer than max_connections connections can be open; raise the hard limit "
                         "(ulimit -Hn, LimitNOFILE=) or lower max_connections";
  }
}

}  // namespace

Result<std::string> LoadOrCreateJoinToken(const ServerConfig& config) {
  if (!config.join_token.empty()) return config.join_token;
  std::string path = config.data_dir + "/join-token";
  auto existing = ReadFile(path);
  if (existing.ok()) {
    std::string token(Trim(*existing));
    if (token.size() >= 16) return token;
    return Status::InvalidArgument("join token in " + path + " is shorter than 16 characters");
  }
  if (existing.status().code() != StatusCode::kNotFound) return existing.status();
  ASSIGN_OR_RETURN(std::string token, RandomHex(24));
  RETURN_IF_ERROR(WriteFileAtomic(path, token + "\n", 0600));
  ROTA_LOG(INFO) << "generated a join token in " << path;
  return token;
}

// Creates the first admin when the store has no user yet.
Status BootstrapAdmin(const ServerConfig& config, Accounts& accounts, int64_t now_ms) {
  ASSIGN_OR_RETURN(int64_t users, accounts.CountUsers());
  if (users > 0) return Status::Ok();
  std::string password = config.admin_password;
  const bool generated = password.empty();
  if (generated) {
    ASSIGN_OR_RETURN(password, RandomHex(12));
  }
  UserPatch admin;
  admin.username = "admin";
  admin.display_name = "Administrator";
  admin.role = Role::kAdmin;
  admin.password = password;
  RETURN_IF_ERROR(accounts.CreateUser(admin, now_ms).status().WithContext("first admin"));
  const std::string file = config.data_dir + "/initial-admin-password";
  if (generated) {
    RETURN_IF_ERROR(WriteFileAtomic(file, password + "\n", 0600));
    ROTA_LOG(INFO) << "created the first admin 'admin'; its password is in " << file
                   << " (mode 0600). Sign in with: rota login --user admin";
  } else {
    ROTA_LOG(INFO) << "created the first admin 'admin' with the configured admin_password. "
                      "Sign in with: rota login --user admin";
  }
  return Status::Ok();
}

// Says how agents and clients trust the server (or that it is not encrypted).
void LogTls(const ServerTls& tls, const ServerConfig& config) {
  if (tls.plain_on_network) {
    ROTA_LOG(WARNING) << "tls is off on " << config.listen_address
                      << ", an address other machines reach: passwords, tokens, the join token "
                         "and job command lines cross the network in clear text";
  }
  if (!tls.enabled) return;
  if (tls.generated) {
    ROTA_LOG(INFO) << "TLS certificate " << tls.files.cert_file << " from rota's private CA "
                   << tls.generated->ca_file << " (" << tls.generated->fingerprint << ")"
                   << (tls.generated->issued ? ", issued now" : "");
  } else {
    ROTA_LOG(INFO) << "TLS certificate " << tls.files.cert_file << " (reread on SIGHUP)";
  }
  ROTA_LOG(INFO) << "agents and the CLI trust this server with --server-pin " << tls.pin
                 << (tls.generated ? " or --ca-file " + tls.generated->ca_file : std::string());
}

// The parts of EnforcementDeps that come from the configuration.
Result<EnforcementDeps> EnforcementDepsFor(const ServerConfig& config) {
  EnforcementDeps deps;
  ASSIGN_OR_RETURN(deps.defaults, DefaultEnforcementSettings(config));
  deps.server_url = config.public_url;
  if (deps.server_url.empty()) {
    // Only HTTPS is served away from loopback (tls auto), so links name it.
    const bool tls = config.tls == "on" || !config.tls_cert_file.empty() ||
                     (config.tls == "auto" && !net::IsLoopbackHost(config.listen_address));
    deps.server_url = std::string(tls ? "https://" : "http://") + config.listen_address + ":" +
                      std::to_string(config.listen_port);
  }
  return deps;
}

Result<std::unique_ptr<Server>> Server::Start(const ServerConfig& config, Clock& clock,
                                              const ServerRuntime& runtime) {
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->clock = &clock;
  if (runtime.role == nullptr) impl->own_role = leadership::Role::Single("local", ROTA_VERSION);
  impl->role = runtime.role != nullptr ? runtime.role : impl->own_role.get();
  log::Level level;
  if (log::ParseLevel(config.log_level, &level)) log::SetLevel(level);

  RETURN_IF_ERROR(MakeDirs(config.data_dir, 0700).WithContext("data directory"));
  ASSIGN_OR_RETURN(impl->join_token, LoadOrCreateJoinToken(config));

  store::StoreOptions store_options;
  store_options.raw_retention_ms = config.raw_retention_ms;
  store_options.agg_retention_ms = config.aggregate_retention_ms;
  // Samples wait up to 10 ms for company before their transaction commits: at
  // thousands of agents a commit per few samples cost most of the writer's time
  // (docs/design-store.md, "Commit rate").
  store_options.linger_ms = 10;
  store_options.fence = runtime.fence;
  store_options.on_fenced = runtime.on_fenced;
  ASSIGN_OR_RETURN(impl->store, config.store.empty()
                                    ? store::Store::Open(config.data_dir, store_options, clock)
                                    : store::Store::OpenUrl(config.store, store_options, clock));

  ASSIGN_OR_RETURN(std::string auth_key, LoadOrCreateAuthKey(config.data_dir));
  // Requests a follower forwarded count under their client's address (signed with this key).
  const std::string forward_key = auth_key;
  impl->accounts = std::make_unique<Accounts>(
      impl->store.get(), std::move(auth_key), config.password_hash_cost,
      TokenLimits{config.api_token_max_ttl_ms, config.session_ttl_ms});
  RETURN_IF_ERROR(BootstrapAdmin(config, *impl->accounts, clock.NowMs()));

  impl->cluster = std::make_unique<ClusterState>(config.missed_heartbeats);
  ASSIGN_OR_RETURN(auto known, impl->store->ListNodes());
  std::vector<api::NodeInfo> infos;
  for (auto& rec : known) infos.push_back(std::move(rec.info));
  impl->cluster->LoadKnown(infos);
  impl->drains = std::make_unique<NodeDrains>(impl->store.get(), impl->cluster.get(), &clock);
  RETURN_IF_ERROR(impl->drains->Start().WithContext("node drains"));

  impl->ctx.config = &impl->config;
  impl->ctx.store = impl->store.get();
  impl->ctx.cluster = impl->cluster.get();
  impl->ctx.stats = &impl->stats;
  impl->ctx.request_metrics = &impl->request_metrics;
  impl->ctx.clock = &clock;
  impl->ctx.ready = &impl->ready;
  impl->ctx.accounts = impl->accounts.get();
  impl->ctx.gateway = nullptr;  // set below
  impl->credentials = std::make_unique<NodeCredentials>(impl->store.get(), &clock);
  RETURN_IF_ERROR(impl->credentials->Load().WithContext("node credentials"));
  impl->ctx.credentials = impl->credentials.get();
  impl->gateway = std::make_unique<AgentGateway>(impl->store.get(), impl->cluster.get(), &impl->stats,
                                                 &clock, impl->credentials.get(), impl->join_token);

  impl->ctx.gateway = impl->gateway.get();
  impl->ctx.role = impl->role;
  if (impl->role->replicated()) {
    // Nothing reaches an agent once this server's lease may have run out.
    leadership::Role* role = impl->role;
    Clock* c = &clock;
    impl->gateway->SetSendGuard([role, c] { return role->CheckLeader(c->MonotonicMs()); });
    impl->gateway->SetEpochSource([role] { return static_cast<uint64_t>(std::max<int64_t>(0, role->epoch())); });
  }

  // Reservations, mail and enforcement.
  ASSIGN_OR_RETURN(EnforcementDeps deps_defaults, EnforcementDepsFor(config));
  notify::SmtpConfig smtp;
  smtp.url = config.smtp_url;
  smtp.tls = config.smtp_tls;
  smtp.username = config.smtp_username;
  smtp.password = config.smtp_password;
  smtp.from = config.smtp_from;
  smtp.ca_file = config.smtp_ca_file;
  smtp.insecure_skip_verify = config.smtp_insecure_skip_verify;
  smtp.rate_limit_per_hour = config.smtp_rate_limit_per_hour;
  if (!config.smtp_url.empty()) impl->notifier = std::make_unique<notify::Notifier>(smtp, clock);
  impl->audit = std::make_unique<AuditLog>(impl->store.get());
  LoginsOptions login_options;
  login_options.hash_threads = config.password_hash_threads;
  login_options.hash_queue = static_cast<size_t>(config.password_hash_queue);
  impl->logins = std::make_unique<Logins>(impl->accounts.get(), impl->audit.get(), &clock,
                                          login_options);
  impl->ctx.logins = impl->logins.get();
  impl->reservations =
      std::make_unique<Reservations>(impl->store.get(), impl->cluster.get(), &clock);
  EnforcementDeps deps = deps_defaults;
  deps.reservations = impl->reservations.get();
  deps.accounts = impl->accounts.get();
  deps.gateway = impl->gateway.get();
  deps.cluster = impl->cluster.get();
  deps.notifier = impl->notifier.get();
  impl->reservations->SetIdleHook(MakeIdleMailer(deps));
  impl->reservations->SetEnforcementCheck(MakeEnforcementCheck(deps.defaults));
  RETURN_IF_ERROR(impl->reservations->Start().WithContext("reservations"));
  SshNodesOptions ssh_options;
  ssh_options.data_dir = config.data_dir;
  impl->ssh_nodes =
      std::make_unique<SshNodes>(impl->store.get(), impl->cluster.get(), &clock, ssh_options);
  impl->task_router = std::make_unique<TaskRouter>(impl->gateway.get(), impl->ssh_nodes.get());
  impl->queues = std::make_unique<Queues>(impl->store.get(), &clock);
  RETURN_IF_ERROR(impl->queues->Start().WithContext("queues"));
  impl->quotas = std::make_unique<Quotas>(impl->store.get(), &clock);
  RETURN_IF_ERROR(impl->quotas->Start().WithContext("quotas"));
  JobServiceOptions job_options;
  job_options.ports = {config.job_port_first, config.job_port_last};
  job_options.stop_grace_ms = config.job_stop_grace_ms;
  job_options.policy.backfill = config.backfill == "conservative" ? sched::Backfill::kConservative
                                : config.backfill == "none"       ? sched::Backfill::kNone
                                : config.backfill == "skip"       ? sched::Backfill::kSkip
                                                                  : sched::Backfill::kEasy;
  job_options.policy.preempt = config.preemption;
  job_options.policy.defragment = config.defragment;
  job_options.policy.preempt_after_ms = config.preempt_after_ms;
  job_options.fairshare_half_life_ms = config.fairshare_half_life_ms;
  job_options.reservation_idle_ms = config.reservation_idle_ms;
  if (auto policy = malleable::ParsePolicy(config.malleable_policy); policy.ok()) {
    job_options.malleable_policy = *policy;  // checked when the configuration was read
  }
  job_options.quota_period_ms = config.quota_period_ms;
  impl->jobs = std::make_unique<JobService>(impl->store.get(), impl->cluster.get(),
                                            impl->task_router.get(), impl->reservations.get(),
                                            impl->accounts.get(), impl->queues.get(), impl->quotas.get(), &clock,
                                            job_options);
  {
    ASSIGN_OR_RETURN(SecretBox box, SecretBox::LoadOrCreate(config.data_dir));
    impl->secrets = std::make_unique<Secrets>(impl->store.get(), std::move(box), impl->audit.get(), &clock);
    // After a key rotation; the leader of several servers does it when it is alone
    // (docs/design-secrets.md, "Key rotation").
    if (!impl->role->replicated()) {
      RETURN_IF_ERROR(impl->secrets->ResealUnderCurrentKey().status().WithContext("secrets"));
    }
    impl->jobs->set_secrets(impl->secrets.get());
    impl->ctx.secrets = impl->secrets.get();
  }
  RETURN_IF_ERROR(impl->jobs->Start().WithContext("jobs"));
  {
    JobService* jobs = impl->jobs.get();
    impl->job_metrics = std::make_unique<JobMetrics>(
        impl->store.get(), [jobs](const std::string& node, const std::string& task) { return jobs->JobOfTaskOn(node, task); });
    JobMetrics* metrics = impl->job_metrics.get();
    impl->gateway->SetTaskMetricsListener(
        [metrics](const std::string& node, api::TaskMetricsMsg m) { metrics->OnMetrics(node, std::move(m)); });
    impl->ctx.job_metrics = metrics;
    impl->early_stopper = std::make_unique<EarlyStopper>(impl->store.get(), jobs, impl->clock);
  }
  {
    // What the scheduler plans around changed: a pass now, not at the next tick.
    JobService* jobs = impl->jobs.get();
    impl->reservations->SetChangeHook([jobs] { jobs->OnPolicyChange(); });
    impl->reservations->SetJobHolds([jobs](const std::string& node, int64_t owner_id, int64_t from_ms) {
      return jobs->HeldGpus(node, owner_id, from_ms);
    });
    impl->queues->SetChangeHook([jobs] { jobs->OnPolicyChange(); });
    impl->quotas->SetChangeHook([jobs] { jobs->OnPolicyChange(); });
  }
  RETURN_IF_ERROR(impl->ssh_nodes->Start().WithContext("ssh nodes"));
  AccountingOptions accounting_options;
  accounting_options.flush_interval_ms = config.accounting_flush_ms;
  impl->accounting = std::make_unique<AccountingService>(impl->store.get(), impl->cluster.get(), impl->jobs.get(),
                                                         impl->reservations.get(), impl->accounts.get(), &clock,
                                                         accounting_options);
  RETURN_IF_ERROR(impl->accounting->Start().WithContext("accounting"));
  {
    AccountingService* accounting = impl->accounting.get();
    impl->gateway->SetSampleSink([accounting](const std::string& node, const std::vector<api::NodeSample>& samples) {
      accounting->OnSamples(node, samples);
    });
  }
  impl->power = std::make_unique<PowerService>(impl->store.get(), impl->cluster.get(), impl->gateway.get(), &clock);
  RETURN_IF_ERROR(impl->power->Start().WithContext("power"));
  {
    PowerService* power = impl->power.get();
    impl->gateway->SetPowerReportListener([power](const std::string& node, api::PowerReportMsg report) {
      power->OnReport(node, report);
    });
  }
  EnforcementHooks hooks = MakeEnforcementHooks(deps);
  JobService* job_service = impl->jobs.get();
  hooks.active_jobs = [job_service](const std::string& node, int64_t) {
    std::vector<enforce::JobAllocationView> out;
    for (auto& a : job_service->AllocationsOn(node)) {
      out.push_back(enforce::JobAllocationView{a.job_id, node, a.gpus, a.unix_user});
    }
    return out;
  };
  impl->enforcement = std::make_unique<EnforcementService>(impl->audit.get(), std::move(hooks), clock);
  RETURN_IF_ERROR(impl->enforcement->Recover().WithContext("enforcement"));
  impl->enforcement_runner =
      std::make_unique<EnforcementRunner>(impl->enforcement.get(), impl->cluster.get());
  impl->ctx.audit = impl->audit.get();
  impl->ctx.reservations = impl->reservations.get();
  impl->ctx.jobs = impl->jobs.get();
  impl->ctx.queues = impl->queues.get();
  impl->ctx.drains = impl->drains.get();
  impl->ctx.quotas = impl->quotas.get();
  impl->ctx.quota_period_ms = config.quota_period_ms;
  impl->ctx.ssh_nodes = impl->ssh_nodes.get();
  impl->ctx.accounting = impl->accounting.get();
  impl->ctx.power = impl->power.get();
  impl->ctx.enforcement_defaults = deps.defaults;

  ASSIGN_OR_RETURN(impl->tls, SetUpServerTls(config, clock.NowMs() / 1000));
  net::HttpServerOptions http_options;
  if (impl->tls.enabled) http_options.tls = impl->tls.files;
  http_options.bind_address = config.listen_address;
  http_options.port = config.listen_port;
  http_options.threads = config.http_threads;
  http_options.max_connections = config.max_connections;
  http_options.reserved_websocket_connections = config.reserved_agent_connections < 0
                                                    ? config.max_connections / 2
                                                    : config.reserved_agent_connections;
  if (http_options.reserved_websocket_connections >= config.max_connections) {
    return Status::InvalidArgument("reserved_agent_connections (" +
                                   std::to_string(config.reserved_agent_connections) +
                                   ") must be below max_connections (" +
                                   std::to_string(config.max_connections) + ")");
  }
  http_options.max_connections_per_address = config.max_connections_per_address;
  RaiseOpenFileLimit(static_cast<rlim_t>(config.max_connections) + kFilesBesideConnections);
  http_options.max_body_bytes = config.max_body_bytes;
  http_options.prepare_request = [forward_key](net::HttpRequest* req) {
    leadership::AdoptForwardedClient(forward_key, req);
  };
  http_options.ws_max_message_bytes = config.max_agent_message_bytes;
  impl->http = std::make_unique<net::HttpServer>(http_options);
  net::HttpServer& http = *impl->http;
  ApiContext& ctx = impl->ctx;
  RETURN_IF_ERROR(RegisterHealthRoutes(http, ctx));
  RETURN_IF_ERROR(RegisterNodeRoutes(http, ctx));
  RETURN_IF_ERROR(RegisterHistoryRoutes(http, ctx));
  RETURN_IF_ERROR(RegisterStreamRoutes(http, ctx));
  RETURN_IF_ERROR(RegisterPrometheusRoutes(http, ctx));
  RETURN_IF_ERROR(RegisterOpenApiRoutes(http, ctx));
  RETURN_IF_ERROR(RegisterAccountRoutes(http, ctx));
  RETURN_IF_ERROR(RegisterReservationRoutes(http, ctx));
  RETURN_IF_ERROR(RegisterPolicyRoutes(http, ctx));
  RETURN_IF_ERROR(RegisterViolationRoutes(http, ctx));
  RETURN_IF_ERROR(RegisterJobRoutes(http, ctx));
  RETURN_IF_ERROR(RegisterArrayRoutes(http, ctx));
  RETURN_IF_ERROR(RegisterJobMetricsRoutes(http, ctx));
  RETURN_IF_ERROR(RegisterQueueRoutes(http, ctx));
  RETURN_IF_ERROR(RegisterQuotaRoutes(http, ctx));
  RETURN_IF_ERROR(RegisterSshNodeRoutes(http, ctx));
  RETURN_IF_ERROR(RegisterSecretRoutes(http, ctx));
  RETURN_IF_ERROR(RegisterUsageRoutes(http, ctx));
  RETURN_IF_ERROR(RegisterPowerRoutes(http, ctx));
  RETURN_IF_ERROR(RegisterServerRoutes(http, ctx));
  RETURN_IF_ERROR(web::RegisterWebRoutes(http, web::EmbeddedAssets()));
  RETURN_IF_ERROR(http.AddWebSocket("/api/v1/agent/connect", impl->gateway->Acceptor()));
  RequestMetrics* metrics = &impl->request_metrics;
  http.SetObserver([metrics](const net::HttpRequest& req, int status, double seconds) {
    metrics->Observe(req.method, status, seconds);
  });
  auto port = http.Start();
  if (!port.ok()) {
    return port.status().WithContext("cannot listen on " + config.listen_address + ":" +
                                     std::to_string(config.listen_port));
  }
  std::unique_ptr<Server> server(new Server(std::move(impl)));
  // Lets scripts and tests that asked for port 0 find the server.
  Status url_st = WriteFileAtomic(config.data_dir + "/server.url", server->url() + "\n", 0644);
  if (!url_st.ok()) ROTA_LOG(WARNING) << "cannot write server.url: " << url_st.message();
  Impl* raw = server->impl_.get();
  if (raw->own_role) raw->own_role->SetLeader(server->url(), 0, 0);
  raw->background = std::thread([raw] { raw->BackgroundLoop(); });
  raw->ready = true;
  ROTA_LOG(INFO) << "rota server listening on " << config.listen_address << ":" << *port
                 << (raw->tls.enabled ? " (HTTPS)" : " (plain HTTP)") << ", data in "
                 << config.data_dir;
  LogTls(raw->tls, config);
  return server;
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() { Stop(); }

void Server::Stop() {
  {
    MutexLock lock(&impl_->mu);
    if (impl_->stopping) return;
    impl_->stopping = true;
  }
  impl_->ready = false;
  impl_->cv.NotifyAll();
  if (impl_->background.joinable()) impl_->background.join();
  impl_->http->Stop();
  impl_->logins.reset();  // queued password checks are dropped (answered 500 if still open)
  // No agent sends samples any more: store what was accounted.
  if (Status st = impl_->accounting->Flush(); !st.ok()) {
    ROTA_LOG(WARNING) << "accounting flush at stop failed: " << st.message();
  }
  // Nothing feeds enforcement any more; stop it before what it uses.
  impl_->enforcement_runner.reset();
  impl_->enforcement.reset();
  impl_->ssh_nodes->Stop();  // no more task reports into the job service
  impl_->reservations->SetChangeHook(nullptr);  // they call the job service
  impl_->reservations->SetJobHolds(nullptr);
  impl_->queues->SetChangeHook(nullptr);
  impl_->quotas->SetChangeHook(nullptr);
  impl_->job_metrics.reset();  // asks the job service whose tasks report
  impl_->early_stopper.reset();
  impl_->jobs.reset();
  impl_->ssh_nodes.reset();
  impl_->notifier.reset();  // drains queued mail for a moment
  Status st = impl_->store->Flush();
  if (!st.ok()) ROTA_LOG(WARNING) << "store flush at stop failed: " << st.message();
}

bool Server::Responsive(std::chrono::milliseconds timeout) const {
  return impl_->http != nullptr && impl_->http->Responsive(timeout);
}

uint16_t Server::port() const { return impl_->http->port(); }

std::string Server::url() const {
  std::string host = impl_->config.listen_address;
  if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
  else if (host == "::") host = "[::1]";
  else if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return std::string(impl_->tls.enabled ? "https://" : "http://") + host + ":" +
         std::to_string(port());
}

Status Server::ReloadTls() { return impl_->http->ReloadTls(); }

const std::string& Server::join_token() const { return impl_->join_token; }
const std::string& Server::tls_pin() const { return impl_->tls.pin; }
const ServerConfig& Server::config() const { return impl_->config; }
Accounts& Server::accounts() { return *impl_->accounts; }
AgentGateway* Server::gateway() { return impl_->gateway.get(); }

}  // namespace rota::server
