#include "server/server_main.h"

#include <signal.h>

#include <iostream>

#include "common/log.h"
#include "server/config.h"
#include "server/server.h"

namespace rota::server {

int RunServer(const ServerFlags& flags) {
  ServerConfig config;
  Status st;
  if (!flags.config_file.empty()) st = LoadConfigFile(&config, flags.config_file);
  if (st.ok()) st = ApplyEnv(&config, ProcessEnv());
  const std::pair<const char*, const std::string*> cli[] = {{"listen", &flags.listen},
                                                            {"data_dir", &flags.data_dir},
                                                            {"join_token", &flags.join_token},
                                                            {"log_level", &flags.log_level}};
  for (const auto& [key, value] : cli) {
    if (st.ok() && !value->empty()) st = ApplySetting(&config, key, *value, "flag");
  }
  if (!st.ok()) {
    std::cerr << "rota server: " << st.message() << "\n";
    return 2;
  }
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
  while (sigwait(&signals, &sig) == 0 && sig == SIGHUP) {
    Status reloaded = (*server)->ReloadTls();
    if (!reloaded.ok()) ROTA_LOG(WARNING) << "SIGHUP: " << reloaded.message();
  }
  ROTA_LOG(INFO) << "signal " << sig << " received, stopping";
  (*server)->Stop();
  return 0;
}

}  // namespace rota::server
