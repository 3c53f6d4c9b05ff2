#include "server/leadership/replicated_server.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "common/file_util.h"
#include "common/log.h"
#include "net/http_client.h"
#include "net/http_server.h"
#include "net/url.h"
#include "server/accounts/accounts.h"
#include "server/leadership/proxy.h"
#include "server/leadership/stream_relay.h"
#include "server/leadership/role_json.h"
#include "server/server.h"
#include "server/store/lease.h"
#include "server/store/store_url.h"
#include "server/tls_setup.h"

namespace rota::server::leadership {
namespace {

// Registrations older than this are not listed (and are deleted).
constexpr int64_t kServerForgetMs = 60'000;

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "server";
  return buf;
}

// How this machine reaches the listener (as Server::url()).
std::string LocalUrl(const std::string& listen_address, bool tls, uint16_t port) {
  std::string host = listen_address;
  if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
  else if (host == "::") host = "[::1]";
  else if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return std::string(tls ? "https://" : "http://") + host + ":" + std::to_string(port);
}

}  // namespace

struct ReplicatedServer::Follower {
  std::unique_ptr<LeaderProxy> proxy;
  std::unique_ptr<StreamRelay> relay;
};

ReplicatedServer::ReplicatedServer(const ServerConfig& config, Clock& clock, ReplicatedOptions options)
    : config_(config), clock_(clock), options_(std::move(options)) {}

Result<std::unique_ptr<ReplicatedServer>> ReplicatedServer::Start(const ServerConfig& config,
                                                                  Clock& clock,
                                                                  ReplicatedOptions options) {
  if (std::string bad = CheckTiming(options.timing); !bad.empty()) return Status::InvalidArgument(bad);
  ASSIGN_OR_RETURN(store::StoreUrl url, store::ParseStoreUrl(config.store));
  RETURN_IF_ERROR(MakeDirs(config.data_dir, 0700).WithContext("data directory"));
  std::unique_ptr<ReplicatedServer> s(new ReplicatedServer(config, clock, std::move(options)));
  s->display_store_ = url.display;
  ASSIGN_OR_RETURN(std::string suffix, RandomHex(4));
  s->role_ = Role::Replicated(HostName() + "-" + std::to_string(::getpid()) + "-" + suffix, ROTA_VERSION,
                              s->options_.timing);
  s->started_ms_ = clock.NowMs();
  ASSIGN_OR_RETURN(s->lease_, store::LeaseStore::Open(config.store, clock));
  RETURN_IF_ERROR(s->StartFollower());
  ReplicatedServer* raw = s.get();
  s->lease_thread_ = std::thread([raw] { raw->LeaseLoop(); });
  s->promote_thread_ = std::thread([raw] { raw->PromoteLoop(); });
  ROTA_LOG(INFO) << "rota server " << s->role_->id() << " on " << url.display << ", serving "
                 << s->url_ << " as a follower until it holds the leader lease";
  return s;
}

ReplicatedServer::~ReplicatedServer() { Stop(); }

Status ReplicatedServer::StartFollower() {
  ASSIGN_OR_RETURN(ServerTls tls, SetUpServerTls(config_, clock_.NowMs() / 1000));
  // The only HTTP calls this process makes are the proxy's, to the leader.
  if (!tls.peer_ca_file.empty()) net::SetClientTls({.ca_file = tls.peer_ca_file, .pin = ""});
  net::HttpServerOptions http_options;
  if (tls.enabled) http_options.tls = tls.files;
  http_options.bind_address = config_.listen_address;
  http_options.port = config_.listen_port;
  http_options.threads = config_.http_threads;
  http_options.max_connections = config_.max_connections;
  http_options.max_connections_per_address = config_.max_connections_per_address;
  http_options.max_body_bytes = config_.max_body_bytes;
  auto http = std::make_unique<net::HttpServer>(http_options);
  follower_ = std::make_unique<Follower>();
  ASSIGN_OR_RETURN(std::string auth_key, LoadOrCreateAuthKey(config_.data_dir));
  follower_->proxy = std::make_unique<LeaderProxy>(role_.get(), auth_key, 8, 1024, 60'000);
  follower_->relay = std::make_unique<StreamRelay>(role_.get(), std::move(auth_key), 1024);
  const Role* role = role_.get();
  RETURN_IF_ERROR(http->Route("GET", "/healthz", [role](const net::HttpRequest&) {
    return net::HttpResponse::Json(200, HealthJson(role).dump());
  }));
  // Ready once requests can be answered: a leader is known to forward to. While this
  // server itself is becoming the leader (its Server not yet started), not ready.
  RETURN_IF_ERROR(http->Route("GET", "/readyz", [role](const net::HttpRequest&) {
    const std::string leader = role->leader_address();
    if (role->is_leader()) return net::HttpResponse::FromStatus(Status::Unavailable("becoming the leader"));
    if (leader.empty()) return net::HttpResponse::FromStatus(Status::Unavailable("no leader is known yet"));
    api::Json j{{"status", "ready"}, {"role", "follower"}, {"leader", leader}};
    return net::HttpResponse::Json(200, j.dump());
  }));
  StreamRelay* relay = follower_->relay.get();
  RETURN_IF_ERROR(http->AddEventStream("/api/v1/stream",
                                       [relay](const net::HttpRequest& req, std::shared_ptr<net::EventSink> sink) {
                                         return relay->Accept(req, std::move(sink));
                                       }));
  LeaderProxy* proxy = follower_->proxy.get();
  RETURN_IF_ERROR(http->SetFallback(
      [proxy](const net::HttpRequest& req, net::Responder respond) { proxy->Forward(req, std::move(respond)); }));
  auto port = http->Start();
  if (!port.ok()) {
    return port.status().WithContext("cannot listen on " + config_.listen_address + ":" +
                                     std::to_string(config_.listen_port));
  }
  config_.listen_port = *port;  // the leader's Server binds the same port later
  const std::string local = LocalUrl(config_.listen_address, tls.enabled, *port);
  url_ = config_.public_url.empty() ? local : config_.public_url;  // where others forward to
  Status url_st = WriteFileAtomic(config_.data_dir + "/server.url", local + "\n", 0644);
  if (!url_st.ok()) ROTA_LOG(WARNING) << "cannot write server.url: " << url_st.message();
  MutexLock lock(&mu_);
  follower_http_ = std::move(http);
  return Status::Ok();
}

void ReplicatedServer::Lost(const std::string& why) {
  if (lost_.exchange(true)) {
    if (options_.on_lost) return;
    // Another thread is ending the process: this one does nothing more (and does not
    // end either, which ThreadSanitizer would report as a thread never joined).
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }
  if (options_.on_lost) return options_.on_lost(why);
  ROTA_LOG(ERROR) << "leader lease lost: " << why << "; stopping at once (exit " << kLostLeaseExit
                  << "); started again, this server follows";
  std::fflush(stderr);
  std::fflush(stdout);
  ::_exit(kLostLeaseExit);
}

void ReplicatedServer::LeaseLoop() {
  const LeaseTiming& t = options_.timing;
  bool leader = false;
  int64_t epoch = 0;
  int64_t last_sent = 0;
  int64_t failed_at = -1;
  while (true) {
    const int64_t now = clock_.MonotonicMs();
    int64_t next = now + t.poll_interval_ms;
    Status st;
    if (leader) {
      if (MustStepDown(last_sent, now, t)) {
        Lost("no renewal since " + std::to_string(now - last_sent) + " ms (epoch " + std::to_string(epoch) + ")");
        return;
      }
      if (now >= NextRenewalMs(last_sent, failed_at, t)) {
        const int64_t sent = clock_.MonotonicMs();
        auto renewed = lease_->Renew(role_->id(), epoch, t.ttl_ms);
        if (renewed.ok() && *renewed) {
          last_sent = sent;
          failed_at = -1;
          role_->Renewed(sent);
        } else if (renewed.ok()) {
          Lost("the lease (epoch " + std::to_string(epoch) + ") expired or another server holds it");
          return;
        } else {
          failed_at = clock_.MonotonicMs();
          st = renewed.status();
          ROTA_LOG(WARNING) << "leader lease renewal failed (retried): " << st.message();
        }
      }
      next = NextRenewalMs(last_sent, failed_at, t);
    } else {
      auto row = lease_->Read();
      if (!row.ok()) {
        st = row.status();
        ROTA_LOG(WARNING) << "reading the leader lease failed: " << st.message();
      } else {
        LeaseView view{row->holder, row->epoch, row->expires_at_ms, row->db_now_ms};
        if (Decide(view, role_->id()) == LeaseAction::kAcquire) {
          const int64_t sent = clock_.MonotonicMs();
          auto got = lease_->TryAcquire(*row, role_->id(), url_, t.ttl_ms);
          if (!got.ok()) {
            st = got.status();
            ROTA_LOG(WARNING) << "taking the leader lease failed: " << st.message();
          } else if (*got) {
            leader = true;
            epoch = **got;
            last_sent = sent;
            failed_at = -1;
            role_->SetLeader(url_, epoch, sent);
            ROTA_LOG(INFO) << "this server (" << role_->id() << ") holds the leader lease, epoch " << epoch
                           << " (the last leader was " << (row->holder.empty() ? "none" : row->holder)
                           << "); starting the leader's services";
            {
              MutexLock lock(&mu_);
              promote_ = true;
            }
            cv_.NotifyAll();
            next = NextRenewalMs(last_sent, failed_at, t);
          }
        } else if (row->address != role_->leader_address() || row->epoch != role_->epoch()) {
          role_->SetFollowing(row->address, row->epoch);
          ROTA_LOG(INFO) << "following the leader " << row->holder << " at " << row->address << " (epoch "
                         << row->epoch << ")";
        }
      }
    }
    // The registry: this server's renewal, and the list /api/v1/servers answers.
    if (st.ok()) {
      store::ServerRecord me{role_->id(), url_, role_->version(), started_ms_, 0};
      st = lease_->Register(me);
      if (st.ok()) {
        auto rows = lease_->ListServers(kServerForgetMs);
        auto lease = lease_->Read();
        if (rows.ok() && lease.ok()) {
          std::vector<ServerView> views;
          for (auto& r : *rows) {
            const bool leads = r.id == lease->holder && lease->expires_at_ms > lease->db_now_ms;
            views.push_back(ServerView{r.id, r.address, r.version, leads, r.started_ms, r.last_seen_ms});
          }
          role_->SetServers(std::move(views));
        }
      }
    }
    if (!st.ok() && st.code() == StatusCode::kUnavailable) {
      // The connection may be gone (the database restarted or failed over): a new one.
      auto reopened = store::LeaseStore::Open(config_.store, clock_);
      if (reopened.ok()) lease_ = std::move(*reopened);
    }
    MutexLock lock(&mu_);
    const int64_t wait = std::max<int64_t>(10, next - clock_.MonotonicMs());
    cv_.WaitFor(&mu_, std::chrono::milliseconds(std::min<int64_t>(wait, t.poll_interval_ms)),
                [&]() ROTA_REQUIRES(mu_) { return release_; });
    if (release_) break;
  }
  if (leader) {
    // Stop() stopped the Server first (its last writes are in): followers need not wait.
    Status st = lease_->Release(role_->id(), epoch);
    if (!st.ok()) ROTA_LOG(WARNING) << "ending the leader lease failed: " << st.message();
  }
}

void ReplicatedServer::PromoteLoop() {
  {
    MutexLock lock(&mu_);
    cv_.Wait(&mu_, [&]() ROTA_REQUIRES(mu_) { return promote_ || stopping_; });
    if (stopping_) return;
  }
  std::unique_ptr<net::HttpServer> follower;
  {
    MutexLock lock(&mu_);
    follower = std::move(follower_http_);
  }
  if (follower) follower->Stop();
  follower.reset();
  ServerRuntime runtime;
  runtime.role = role_.get();
  runtime.fence = store::LeaseFence{role_->id(), role_->epoch()};
  runtime.on_fenced = [this](const Status& st) { Lost(st.message()); };
  auto server = Server::Start(config_, clock_, runtime);
  if (!server.ok()) {
    Lost("the leader's services did not start: " + server.status().message());
    return;
  }
  ROTA_LOG(INFO) << "leading at " << (*server)->url() << ", epoch " << role_->epoch();
  {
    MutexLock lock(&mu_);
    server_ = std::move(*server);
  }
  // The watchdog: no database call here, so a renewal stuck on the network cannot keep
  // a leader whose deadline passed at work.
  while (true) {
    if (Status st = role_->CheckLeader(clock_.MonotonicMs()); !st.ok()) {
      Lost(st.message());
      return;
    }
    MutexLock lock(&mu_);
    if (cv_.WaitFor(&mu_, std::chrono::milliseconds(100), [&]() ROTA_REQUIRES(mu_) { return stopping_; })) {
      return;
    }
  }
}

Status ReplicatedServer::ReloadTls() {
  MutexLock lock(&mu_);
  // Reading two small files; the listener swaps its context.
  if (server_) return server_->ReloadTls();
  if (follower_http_) return follower_http_->ReloadTls();
  return Status::Ok();
}

bool ReplicatedServer::Responsive(std::chrono::milliseconds timeout) {
  MutexLock lock(&mu_);
  if (server_) return server_->Responsive(timeout);
  if (follower_http_) return follower_http_->Responsive(timeout);
  return false;
}

void ReplicatedServer::Stop() {
  {
    MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.NotifyAll();
  if (promote_thread_.joinable()) promote_thread_.join();
  std::unique_ptr<Server> server;
  std::unique_ptr<net::HttpServer> follower;
  {
    MutexLock lock(&mu_);
    server = std::move(server_);
    follower = std::move(follower_http_);
  }
  if (server) server->Stop();
  if (follower) follower->Stop();
  {
    MutexLock lock(&mu_);
    release_ = true;
  }
  cv_.NotifyAll();
  if (lease_thread_.joinable()) lease_thread_.join();  // ends the lease once the Server stopped
}

}  // namespace rota::server::leadership
