// rota ssh-nodes; rota ssh-node add|remove; rota ssh-key (agentless nodes).

#include <iostream>

#include "cli/commands.h"
#include "cli/format.h"
#include "common/strings.h"
#include "net/url.h"

namespace rota::cli {

int RunSshNodes(const ClientOptions& options, const OutputOptions& out, const SshNodeEdit& e) {
  if (!ValidOutput(out)) return 2;
  if (e.action == "add") {
    if (e.gpus < 0 || e.gpus > 64) return Usage("--gpus must be 0..64");
  }
  api::Json labels = api::Json::object();
  for (const auto& l : e.labels) {
    size_t eq = l.find('=');
    if (eq == std::string::npos || eq == 0) return Usage("--label must be KEY=VALUE, got '" + l + "'");
    labels[l.substr(0, eq)] = l.substr(eq + 1);
  }
  auto client = ApiClient::Create(options);
  if (!client.ok()) return Fail(client.status());

  if (e.action == "key") {
    auto body = client->Get("/api/v1/ssh-key");
    if (!body.ok()) return Fail(body.status());
    if (out.format == "json") {
      std::cout << body->dump(2) << "\n";
    } else {
      std::cout << (*body)["public_key"].get<std::string>() << "\n";
    }
    return 0;
  }
  if (e.action == "add") {
    api::Json spec{{"name", e.name}, {"url", e.url}, {"gpus", e.gpus}, {"labels", labels}};
    if (!e.gpu_model.empty()) spec["gpu_model"] = e.gpu_model;
    auto body = client->Post("/api/v1/ssh-nodes", spec);
    if (!body.ok()) return Fail(body.status());
    if (out.format == "json") {
      std::cout << body->dump(2) << "\n";
    } else {
      std::cout << "ssh node " << e.name << " added (" << (*body)["url"].get<std::string>()
                << "); authorise the server's key there: rota ssh-key\n";
    }
    return 0;
  }
  if (e.action == "remove") {
    auto body = client->Delete("/api/v1/ssh-nodes/" + net::PercentEncode(e.name));
    if (!body.ok()) return Fail(body.status());
    if (out.format != "json") std::cout << "ssh node " << e.name << " removed\n";
    return 0;
  }
  auto body = client->Get("/api/v1/ssh-nodes");
  if (!body.ok()) return Fail(body.status());
  if (out.format == "json") {
    std::cout << (*body)["ssh_nodes"].dump(2) << "\n";
    return 0;
  }
  Table t({"NAME", "URL", "GPUS", "STATE", "TASKS", "ERROR"});
  for (const auto& n : (*body)["ssh_nodes"]) {
    t.Add({n.value("name", ""), n.value("url", ""),
           std::to_string(n.value("gpus", 0)) +
               (n.value("gpu_model", "").empty() ? "" : " " + n.value("gpu_model", "")),
           n.value("reachable", false) ? "reachable" : "unreachable",
           std::to_string(n.value("tasks", 0)), n.value("error", "-")});
  }
  std::cout << t.Render();
  return 0;
}

}  // namespace rota::cli
