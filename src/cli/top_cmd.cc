// rota top: a live view of every node and GPU from the server's event stream
// (GET /api/v1/stream). On a terminal it is full-screen (top/top_screen.h);
// piped, it prints a frame per refresh, every node and GPU in tables.

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <set>

#include "cli/commands.h"
#include "cli/format.h"
#include "cli/top/top_screen.h"
#include "common/clock.h"
#include "common/time_util.h"
#include "net/http_client.h"
#include "net/url.h"

namespace rota::cli {
namespace {

struct NodeRow {
  api::Json node;    // from "node" events
  api::Json sample;  // from "sample" events
};

std::string RenderFrame(const std::string& server, const std::map<std::string, NodeRow>& nodes) {
  int64_t now = RealClock::Get().NowMs();
  std::string out = "rota top — " + server + " — " + FormatRfc3339(now) + "\n\n";
  Table t({"NODE", "STATE", "CPU", "MEMORY", "LOAD", "GPUS", "BUSY"});
  api::Json all_gpus = api::Json::array();
  for (const auto& [name, row] : nodes) {
    const api::Json& host = row.sample.contains("host") ? row.sample["host"] : api::Json::object();
    std::string mem = "-";
    if (host.contains("mem_total_bytes")) {
      uint64_t total = host["mem_total_bytes"].get<uint64_t>();
      uint64_t avail = host["mem_available_bytes"].get<uint64_t>();
      mem = Bytes(api::Json(total - std::min(total, avail))) + "/" + Bytes(api::Json(total));
    }
    int busy = 0, count = 0;
    if (row.sample.contains("gpus")) {
      for (const auto& g : row.sample["gpus"]) {
        ++count;
        if (!g["processes"].empty()) ++busy;
        all_gpus.push_back(g);
      }
    }
    t.Add({name, Str(row.node, "state"), Percent(host.value("cpu_percent", api::Json())), mem,
           WithUnit(host.value("load1", api::Json()), "", 1, 2), std::to_string(count),
           std::to_string(busy)});
  }
  out += t.Render() + "\n" + RenderGpuTable(all_gpus, /*show_processes=*/true);
  return out;
}

}  // namespace

int RunTop(const ClientOptions& options, const OutputOptions& out, const TopOptions& top) {
  if (!ValidOutput(out)) return 2;
  auto client = ApiClient::Create(options);
  if (!client.ok()) {
    std::cerr << "rota: " << client.status().message() << "\n";
    return 1;
  }
  std::string url = client->base_url() + "/api/v1/stream";
  if (!top.node.empty()) url += "?node=" + net::PercentEncode(top.node);
  // On a terminal: the full-screen view. Piped (or -o json): frames printed one after another.
  if (out.format == "table" && ::isatty(STDOUT_FILENO) && ::isatty(STDIN_FILENO)) {
    std::string user;
    if (!client->token().empty()) {
      auto me = client->Get("/api/v1/auth/whoami");
      if (me.ok() && me->is_object() && me->contains("username") && (*me)["username"].is_string()) {
        user = (*me)["username"].get<std::string>();
      }
    }
    return top::RunScreen(*client, url, user, top);
  }
  std::map<std::string, NodeRow> nodes;
  int frames = 0;
  int64_t last_draw = 0;
  // The stream first replays every node's state, one node at a time: the first frame waits
  // until each node listed now has its sample (or a refresh period has passed), so it
  // shows the whole cluster rather than the first node to arrive.
  std::set<std::string> expected;
  if (out.format != "json") {
    auto listed = client->Get("/api/v1/nodes");
    if (listed.ok() && listed->contains("nodes")) {
      for (const auto& n : (*listed)["nodes"]) {
        const std::string name = n.value("name", "");
        if (n.value("state", "") == "ready" && (top.node.empty() || name == top.node)) {
          expected.insert(name);
        }
      }
    }
  }
  const int64_t started = RealClock::Get().MonotonicMs();
  const int64_t refresh_ms = static_cast<int64_t>(top.refresh_s * 1000);
  Status st = net::ReadEventStream(url, client->Headers(), [&](const std::string& event, const std::string& data) {
    auto j = api::ParseJson(data);
    if (!j.ok() || !j->contains(event == "node" ? "name" : "node")) return true;
    if (out.format == "json") {
      std::cout << api::Json{{"event", event}, {"data", *j}}.dump() << std::endl;
      return !(top.frames > 0 && ++frames >= top.frames);
    }
    if (event == "node") nodes[(*j)["name"].get<std::string>()].node = *j;
    else if (event == "sample") nodes[(*j)["node"].get<std::string>()].sample = *j;
    int64_t now = RealClock::Get().MonotonicMs();
    if (event != "sample" || now - last_draw < refresh_ms) return true;
    if (frames == 0 && now - started < std::max<int64_t>(refresh_ms, 2000)) {
      for (const auto& name : expected) {
        auto it = nodes.find(name);
        if (it == nodes.end() || it->second.sample.is_null()) return true;  // still replaying
      }
    }
    last_draw = now;
    std::string frame = RenderFrame(client->base_url(), nodes);
    std::cout << frame << "\n" << std::flush;
    return !(top.frames > 0 && ++frames >= top.frames);
  });
  if (!st.ok()) {
    std::cerr << "rota: live stream from " << url << " ended: " << st.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace rota::cli
