// rota exec [--node N] -- CMD ARGS...: runs CMD on this node with
// CUDA_VISIBLE_DEVICES set to the GPUs the caller holds here right now.

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "cli/commands.h"
#include "common/strings.h"
#include "net/url.h"

namespace rota::cli {
namespace {

std::string ThisHost() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

}  // namespace

std::string ExecNode(const std::string& flag) {
  if (!flag.empty()) return flag;
  const char* env = std::getenv("ROTA_NODE");
  if (env && *env) return env;
  return ThisHost();
}

Result<std::string> VisibleDevices(const ApiClient& client, const std::string& node) {
  ASSIGN_OR_RETURN(api::Json held, client.Get("/api/v1/reservations/held?node=" + net::PercentEncode(node)));
  std::vector<std::string> gpus;
  for (const auto& g : held.value("gpus", api::Json::array())) {
    gpus.push_back(std::to_string(g.get<int64_t>()));
  }
  if (gpus.empty()) {
    return Status::NotFound("you hold no GPUs on node '" + node +
                            "' right now (see rota reservations --mine; reserve with rota reserve)");
  }
  return Join(gpus, ",");
}

int RunExec(const ClientOptions& options, const ExecOptions& o) {
  std::vector<std::string> cmd = o.command;
  if (!cmd.empty() && cmd.front() == "--") cmd.erase(cmd.begin());
  if (cmd.empty()) {
    std::cerr << "rota: exec needs a command: rota exec [--node N] -- CMD ARGS...\n";
    return 2;
  }
  const std::string node = ExecNode(o.node);
  if (node.empty()) {
    std::cerr << "rota: cannot tell this node's name; give --node or set ROTA_NODE\n";
    return 1;
  }
  auto client = ApiClient::Create(options);
  if (!client.ok()) {
    std::cerr << "rota: " << client.status().message() << "\n";
    return 1;
  }
  auto devices = VisibleDevices(*client, node);
  if (!devices.ok()) {
    std::cerr << "rota: " << devices.status().message() << "\n";
    return 1;
  }
  ::setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
  ::setenv("CUDA_VISIBLE_DEVICES", devices->c_str(), 1);
  std::vector<char*> argv;
  for (auto& a : cmd) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  std::cerr << "rota: cannot run '" << cmd.front() << "': " << std::strerror(errno) << "\n";
  return 127;
}

}  // namespace rota::cli
