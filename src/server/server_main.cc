#include "server/server_main.h"

#include <signal.h>

#include <functional>
#include <iostream>
#include <vector>

#include "common/log.h"
#include "common/strings.h"
#include "server/config.h"
#include "server/leadership/replicated_server.h"
#include "server/server.h"
#include "server/store/store_url.h"
#include "service/service_notify.h"

namespace rota::server {
namespace {
// How long the watchdog's check waits for an io thread.
constexpr std::chrono::milliseconds kProbeTimeout{2000};

// Defaults, then the config file, ROTA_* variables and the flags.
Result<ServerConfig> EffectiveConfig(const ServerFlags& flags) {
  ServerConfig config;
  if (!flags.config_file.empty()) RETURN_IF_ERROR(LoadConfigFile(&config, flags.config_file));
  RETURN_IF_ERROR(ApplyEnv(&config, ProcessEnv()));
  const std::pair<const char*, const std::string*> cli[] = {{"listen", &flags.listen},
                                                            {"data_dir", &flags.data_dir},
                                                            {"store", &flags.store},
                                                            {"join_token", &flags.join_token},
                                                            {"log_level", &flags.log_level}};
  for (const auto& [key, value] : cli) {
    if (!value->empty()) RETURN_IF_ERROR(ApplySetting(&config, key, *value, "flag"));
  }
  return config;
}

// SIGHUP: rereads the config; applies log_level, rereads the TLS files (`reload_tls`) and
// logs the other changed settings as needing a restart. `running` stays what runs
// (with the new log level), so the next SIGHUP names them again.
void Reload(const ServerFlags& flags, ServerConfig* running, const std::function<Status()>& reload_tls) {
  auto next = EffectiveConfig(flags);
  if (!next.ok()) {
    ROTA_LOG(WARNING) << "SIGHUP: " << next.status().message() << "; the running settings stay";
  } else {
    std::vector<std::string> restart;
    for (const std::string& key : ChangedConfigKeys(*running, *next)) {
      if (key == "log_level") {
        log::Level level = log::Level::kInfo;
        if (log::ParseLevel(next->log_level, &level)) log::SetLevel(level);
        running->log_level = next->log_level;
        ROTA_LOG(INFO) << "SIGHUP: log_level is now " << next->log_level;
      } else {
        restart.push_back(key);
      }
    }
    if (!restart.empty()) {
      ROTA_LOG(WARNING) << "SIGHUP: changed settings that need a restart (systemctl restart rota-server): "
                        << Join(restart, ", ");
    }
  }
  Status reloaded = reload_tls();
  if (reloaded.ok()) {
    ROTA_LOG(INFO) << "SIGHUP: TLS certificate and key reread";
  } else if (reloaded.code() != StatusCode::kConflict) {  // Conflict: no TLS served
    ROTA_LOG(WARNING) << "SIGHUP: " << reloaded.message();
  }
}
}  // namespace

int RunServer(const ServerFlags& flags) {
  auto loaded = EffectiveConfig(flags);
  if (!loaded.ok()) {
    std::cerr << "rota server: " << loaded.status().message() << "\n";
    return 2;
  }
  ServerConfig config = std::move(*loaded);
  if (flags.print_config) {
    std::cout << ConfigToYaml(config);
    return 0;
  }

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto store_url = config.store.empty() ? Result<store::StoreUrl>(store::StoreUrl{})
                                        : store::ParseStoreUrl(config.store);
  if (store_url.ok() && store_url->dialect == store::Dialect::kPostgres) {
    // Several servers may share the database: one leads (docs/design-ha.md).
    leadership::ReplicatedOptions options;
    options.timing = leadership::TimingForTtl(config.leader_lease_ttl_ms);
    auto replicated = leadership::ReplicatedServer::Start(config, RealClock::Get(), std::move(options));
    if (!replicated.ok()) {
      std::cerr << "rota server: " << replicated.status().message() << "\n";
      return 1;
    }
    std::cout << "rota server at " << (*replicated)->url() << " (" << (*replicated)->role().id()
              << "), one of the servers of " << store_url->display
              << ": it follows until it holds the leader lease" << std::endl;
    int sig = 0;
    {
      service::ServiceNotifier notifier(service::NotifyTargetFromEnvironment());
      notifier.Ready("serving at " + (*replicated)->url() + " (one of several servers)");
      notifier.StartWatchdog([&] { return (*replicated)->Responsive(kProbeTimeout); });
      while (sigwait(&signals, &sig) == 0 && sig == SIGHUP) {
        notifier.Reloading();
        Reload(flags, &config, [&] { return (*replicated)->ReloadTls(); });
        notifier.Ready("serving at " + (*replicated)->url());
      }
      notifier.Stopping();
    }
    ROTA_LOG(INFO) << "signal " << sig << " received, stopping";
    (*replicated)->Stop();
    return 0;
  }
  auto server = Server::Start(config, RealClock::Get());
  if (!server.ok()) {
    std::cerr << "rota server: " << server.status().message() << "\n";
    return 1;
  }
  const std::string pin = (*server)->tls_pin();
  const std::string trust = pin.empty() ? "" : " --server-pin " + pin;
  std::cout << "rota server ready at " << (*server)->url() << "\n"
            << "  join a node:  rota agent --server " << (*server)->url() << trust
            << " --token-file " << config.data_dir << "/join-token\n"
            << "  use the CLI:  export ROTA_SERVER=" << (*server)->url()
            << (pin.empty() ? "" : " ROTA_SERVER_PIN=" + pin) << std::endl;
  int sig = 0;
  {
    // READY once the listener is bound and serving (Server::Start returned); the
    // watchdog pings while an io thread still runs posted work.
    service::ServiceNotifier notifier(service::NotifyTargetFromEnvironment());
    notifier.Ready("serving at " + (*server)->url());
    notifier.StartWatchdog([&] { return (*server)->Responsive(kProbeTimeout); });
    while (sigwait(&signals, &sig) == 0 && sig == SIGHUP) {
      notifier.Reloading();
      Reload(flags, &config, [&] { return (*server)->ReloadTls(); });
      notifier.Ready("serving at " + (*server)->url());
    }
    notifier.Stopping();
  }
  ROTA_LOG(INFO) << "signal " << sig << " received, stopping";
  (*server)->Stop();
  return 0;
}

}  // namespace rota::server
