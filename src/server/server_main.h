#pragma once
// `rota server`: flags -> config -> Server, until SIGINT/SIGTERM.

#include <string>

namespace rota::server {

struct ServerFlags {
  std::string config_file;
  std::string listen;
  std::string data_dir;
  std::string store;
  std::string join_token;
  std::string log_level;
  bool print_config = false;
};

// Returns the process exit status (0 after a clean stop, 1 on a start error,
// 2 on a configuration error).
int RunServer(const ServerFlags& flags);

}  // namespace rota::server
