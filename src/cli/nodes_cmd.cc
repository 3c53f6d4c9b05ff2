// rota nodes, rota gpus.

#include <iostream>

#include "cli/commands.h"
#include "cli/format.h"
#include "common/clock.h"
#include "common/strings.h"
#include "net/url.h"

namespace rota::cli {

int Fail(const Status& st) {
  std::cerr << "rota: " << st.message() << "\n";
  return 1;
}

int Usage(const std::string& message) {
  std::cerr << "rota: " << message << "\n";
  return 2;
}

bool ValidOutput(const OutputOptions& out) {
  if (out.format == "table" || out.format == "json") return true;
  std::cerr << "rota: unknown output format '" << out.format << "' (use table or json)\n";
  return false;
}

int RunNodes(const ClientOptions& options, const OutputOptions& out) {
  if (!ValidOutput(out)) return 2;
  auto client = ApiClient::Create(options);
  if (!client.ok()) return Fail(client.status());
  auto body = client->Get("/api/v1/nodes");
  if (!body.ok()) return Fail(body.status());
  const api::Json& nodes = (*body)["nodes"];
  if (out.format == "json") {
    std::cout << nodes.dump(2) << "\n";
    return 0;
  }
  Table t({"NAME", "STATE", "GPUS", "CPUS", "MEMORY", "ADDRESS", "LAST SEEN", "NOTE"});
  int64_t now = RealClock::Get().NowMs();
  for (const auto& n : nodes) {
    std::string gpus = std::to_string(n.value("gpu_count", 0));
    if (n.value("failed_gpu_count", 0) > 0) gpus += " (" + std::to_string(n.value("failed_gpu_count", 0)) + " failed)";
    std::string note = n.value("gpu_status", "ok") != "ok" ? n.value("gpu_status", "") : "";
    if (n.contains("unreachable_reason")) note = n["unreachable_reason"].get<std::string>();
    std::string state = Str(n, "state");
    if (n.contains("drain") && n["drain"].is_object()) {
      state += ", drained";
      const std::string why = n["drain"].value("reason", "");
      const std::string drained = "drained by " + n["drain"].value("by", "") + (why.empty() ? "" : ": " + why);
      note = note.empty() ? drained : drained + "; " + note;
    }
    std::string addr = n.contains("addresses") && !n["addresses"].empty() ? n["addresses"][0].get<std::string>() : "-";
    t.Add({Str(n, "name"), state, gpus, std::to_string(n.value("cpus", 0)),
           Bytes(n["memory_bytes"]), addr, Age(n["last_seen"], now), note});
  }
  std::cout << t.Render();
  return 0;
}

int RunServers(const ClientOptions& options, const OutputOptions& out) {
  if (!ValidOutput(out)) return 2;
  auto client = ApiClient::Create(options);
  if (!client.ok()) return Fail(client.status());
  auto body = client->Get("/api/v1/servers");
  if (!body.ok()) return Fail(body.status());
  if (out.format == "json") {
    std::cout << body->dump(2) << "\n";
    return 0;
  }
  Table t({"ID", "ROLE", "ADDRESS", "VERSION", "STARTED", "LAST RENEWAL"});
  const int64_t now = RealClock::Get().NowMs();
  for (const auto& s : (*body)["servers"]) {
    t.Add({Str(s, "id"), Str(s, "role"), Str(s, "address"), Str(s, "version"), Since(s["started"], now),
           Age(s["last_renewal"], now)});
  }
  std::cout << t.Render();
  if ((*body).value("replicated", false)) std::cout << "leader epoch " << (*body).value("epoch", 0) << "\n";
  return 0;
}

int RunNodeDrain(const ClientOptions& options, const OutputOptions& out, const std::string& node,
                 bool drain, const std::string& reason) {
  if (!ValidOutput(out)) return 2;
  auto client = ApiClient::Create(options);
  if (!client.ok()) return Fail(client.status());
  const std::string path = "/api/v1/nodes/" + net::PercentEncode(node) + "/drain";
  auto body = drain ? client->Call("PUT", path, api::Json{{"reason", reason}}.dump()) : client->Delete(path);
  if (!body.ok()) return Fail(body.status());
  if (out.format == "json") {
    std::cout << body->dump(2) << "\n";
    return 0;
  }
  std::cout << (drain ? "drained " : "resumed ") << node
            << (drain ? ": no new job starts there; running jobs go on" : ": jobs may start there again")
            << "\n";
  return 0;
}

int RunNodeRevoke(const ClientOptions& options, const OutputOptions& out, const std::string& node) {
  if (!ValidOutput(out)) return 2;
  auto client = ApiClient::Create(options);
  if (!client.ok()) return Fail(client.status());
  auto body = client->Delete("/api/v1/nodes/" + net::PercentEncode(node) + "/credential");
  if (!body.ok()) return Fail(body.status());
  if (out.format == "json") {
    std::cout << body->dump(2) << "\n";
    return 0;
  }
  std::cout << "revoked the credential of " << node
            << ": its agent was disconnected and must enrol again with the join token\n";
  return 0;
}

std::string RenderGpuTable(const api::Json& gpus, bool show_processes) {
  Table t({"NODE", "GPU", "MODEL", "STATE", "UTIL", "MEMORY", "TEMP", "POWER", "USERS", "PROCESSES"});
  for (const auto& g : gpus) {
    std::string mem = Bytes(g.value("memory_used_bytes", api::Json())) + "/" +
                      Bytes(g.value("memory_total_bytes", api::Json()));
    std::vector<std::string> users;
    for (const auto& u : g["users"]) users.push_back(u.get<std::string>());
    std::vector<std::string> procs;
    for (const auto& p : g["processes"]) {
      std::string cmd = p.value("command", "");
      if (cmd.size() > 24) cmd = cmd.substr(0, 21) + "...";
      procs.push_back(std::to_string(p.value("pid", 0)) + (show_processes && !cmd.empty() ? " " + cmd : ""));
    }
    std::string power = WithUnit(g.value("power_mw", api::Json()), "W", 0.001);
    if (g.contains("power_limit_mw")) power += "/" + WithUnit(g["power_limit_mw"], "W", 0.001);
    t.Add({Str(g, "node"), std::to_string(g.value("index", 0)), Str(g, "name"), Str(g, "state"),
           Percent(g.value("util_gpu_pct", api::Json())), mem,
           WithUnit(g.value("temperature_c", api::Json()), "C"), power,
           users.empty() ? "-" : Join(users, ","), procs.empty() ? "-" : Join(procs, ", ")});
  }
  return t.Render();
}

int RunGpus(const ClientOptions& options, const OutputOptions& out, const std::string& node) {
  if (!ValidOutput(out)) return 2;
  auto client = ApiClient::Create(options);
  if (!client.ok()) return Fail(client.status());
  std::string path = "/api/v1/gpus";
  if (!node.empty()) path += "?node=" + net::PercentEncode(node);
  auto body = client->Get(path);
  if (!body.ok()) return Fail(body.status());
  if (out.format == "json") {
    std::cout << (*body)["gpus"].dump(2) << "\n";
    return 0;
  }
  std::cout << RenderGpuTable((*body)["gpus"], /*show_processes=*/true);
  return 0;
}

}  // namespace rota::cli
