// rota ssh-nodes; rota ssh-node add|pin|remove|list; rota ssh-key (agentless nodes).

#include <iostream>

#include "cli/commands.h"
#include "cli/format.h"
#include "common/strings.h"
#include "net/url.h"

namespace rota::cli {
namespace {

// What an admin is told about the host key a node was just pinned to.
std::string HostKeyLines(const api::Json& node) {
  const std::string fp = node.value("host_key_fingerprint", "");
  const std::string key = node.value("host_key", "");
  const std::string type = key.substr(0, key.find(' '));
  const std::string source = node.value("host_key_source", "");
  std::string out = "host key " + fp + " (" + type + ")";
  if (source == "scanned") {
    std::string file = type == "ssh-ed25519"         ? "ed25519"
                       : type == "ssh-rsa"           ? "rsa"
                       : type.rfind("ecdsa", 0) == 0 ? "ecdsa"
                                                     : "*";
    out +=
        ", as the node presented it now: compare it with what the node itself prints:\n"
        "  ssh-keygen -lf /etc/ssh/ssh_host_" +
        file +
        "_key.pub\n"
        "if they differ, remove the node and add it with --host-key KEY";
  } else if (source == "fingerprint") {
    out += ", the one the node presents, which matches the fingerprint given";
  } else {
    out += ", as given";
  }
  return out + "\n";
}

}  // namespace

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
    if (!e.host_key.empty()) spec["host_key"] = e.host_key;
    auto body = client->Post("/api/v1/ssh-nodes", spec);
    if (!body.ok()) return Fail(body.status());
    if (out.format == "json") {
      std::cout << body->dump(2) << "\n";
    } else {
      std::cout << "ssh node " << e.name << " added (" << (*body)["url"].get<std::string>()
                << "); authorise the server's key there: rota ssh-key\n"
                << HostKeyLines(*body);
    }
    return 0;
  }
  if (e.action == "pin") {
    api::Json pin = api::Json::object();
    if (!e.host_key.empty()) pin["host_key"] = e.host_key;
    auto body = client->Post("/api/v1/ssh-nodes/" + net::PercentEncode(e.name) + "/host-key", pin);
    if (!body.ok()) return Fail(body.status());
    if (out.format == "json") {
      std::cout << body->dump(2) << "\n";
    } else {
      std::cout << "ssh node " << e.name << " pinned to " << HostKeyLines(*body);
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
  Table t({"NAME", "URL", "GPUS", "STATE", "TASKS", "HOST KEY", "ERROR"});
  for (const auto& n : (*body)["ssh_nodes"]) {
    const std::string fp = n.value("host_key_fingerprint", "");
    t.Add({n.value("name", ""), n.value("url", ""),
           std::to_string(n.value("gpus", 0)) +
               (n.value("gpu_model", "").empty() ? "" : " " + n.value("gpu_model", "")),
           n.value("reachable", false) ? "reachable" : "unreachable",
           std::to_string(n.value("tasks", 0)), fp.empty() ? "unpinned" : fp,
           n.value("error", "-")});
  }
  std::cout << t.Render();
  return 0;
}

}  // namespace rota::cli
