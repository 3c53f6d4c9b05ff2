#pragma once
// Client commands. Each returns the process exit status: 0 success, 1 error
// reported on stderr (server unreachable, not found, ...), 2 usage error.

#include <string>
#include <vector>

#include "cli/client.h"

namespace rota::cli {

struct OutputOptions {
  std::string format = "table";  // "table" or "json"
};

// Checks -o; prints the error and returns false on an unknown format.
bool ValidOutput(const OutputOptions& out);

int RunNodes(const ClientOptions& client, const OutputOptions& out);
int RunGpus(const ClientOptions& client, const OutputOptions& out, const std::string& node);

struct TopOptions {
  std::string node;     // only this node
  int frames = 0;       // stop after this many frames (0: until interrupted)
  double refresh_s = 1; // at most one redraw per this many seconds
};
int RunTop(const ClientOptions& client, const OutputOptions& out, const TopOptions& top);

// rota login: password -> session -> a long-lived API token saved in the CLI
// config file (with the server URL).
struct LoginOptions {
  std::string username;  // prompted when empty
  std::string ttl;       // API token lifetime ("" = never expires)
};
int RunLogin(const ClientOptions& client, const LoginOptions& login);
int RunLogout(const ClientOptions& client);
int RunWhoami(const ClientOptions& client, const OutputOptions& out);
int RunUsers(const ClientOptions& client, const OutputOptions& out);

// rota user add|set|rm NAME
struct UserEdit {
  std::string action;  // "add", "set", "rm"
  std::string username, display_name, email, unix_user, role;
  std::vector<std::string> groups;
  bool disable = false, enable = false;
  bool password_stdin = false;  // else: add generates and prints one
};
int RunUserEdit(const ClientOptions& client, const OutputOptions& out, const UserEdit& edit);

// rota tokens; rota token create|revoke
struct TokenEdit {
  std::string action;  // "list", "create", "revoke"
  std::string name, ttl, id;
};
int RunTokens(const ClientOptions& client, const OutputOptions& out, const TokenEdit& edit);

// Renders the GPU table of `gpus` (array of GPU rows as GET /api/v1/gpus returns).
std::string RenderGpuTable(const api::Json& gpus, bool show_processes);

}  // namespace rota::cli
