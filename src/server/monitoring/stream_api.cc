// Live updates: GET /api/v1/stream (server-sent events).
//   event: node    data: a node (as GET /api/v1/nodes/{name}, without latest)
//   event: sample  data: {"node": name, "time": ..., "host": {...}, "gpus": [GPU rows]}
// On connect the stream first sends one "node" event per known node, then a
// "sample" event per node that has one, then live changes.

#include <atomic>

#include "api/sample_writer.h"
#include "common/time_util.h"
#include "net/http_server.h"
#include "server/api_context.h"
#include "server/accounts/auth.h"
#include "server/views.h"

namespace rota::server {
namespace {

std::string SampleEvent(const NodeView& n) {
  std::string out;
  api::JsonWriter w(&out);
  w.BeginObject();
  w.Key("node");
  w.String(n.info->name);
  if (n.latest != nullptr) {
    w.Key("time");
    w.String(FormatRfc3339Ms(n.latest->time_ms));
    w.Key("host");
    api::WriteHostSample(w, n.latest->host);
  }
  w.Key("gpus");
  w.BeginArray();
  WriteGpuRows(n, w);
  w.EndArray();
  w.EndObject();
  return out;
}

}  // namespace

Status RegisterStreamRoutes(net::HttpServer& http, ApiContext& ctx) {
  return http.AddEventStream(
      "/api/v1/stream",
      [&ctx](const net::HttpRequest& req,
             std::shared_ptr<net::EventSink> sink) -> std::optional<net::HttpResponse> {
        if (auto who = RequireReader(ctx, req); !who.ok()) {
          return net::HttpResponse::FromStatus(who.status());
        }
        std::string node_filter = req.Query("node");
        if (!node_filter.empty() && !ctx.cluster->Node(node_filter).has_value()) {
          return net::HttpResponse::FromStatus(Status::NotFound("node '" + node_filter + "' not found"));
        }
        for (const auto& n : ctx.cluster->Nodes()) {
          if (!node_filter.empty() && n.info->name != node_filter) continue;
          sink->Send("node", NodeJson(n, false).dump());
          if (n.latest != nullptr) sink->Send("sample", SampleEvent(n));
        }
        // The listener removes itself once the client is gone.
        auto id = std::make_shared<std::atomic<int>>(0);
        std::weak_ptr<net::EventSink> weak = sink;
        ClusterState* cluster = ctx.cluster;
        *id = cluster->AddListener([weak, id, cluster, node_filter](const std::string& event,
                                                                    const NodeView& n) {
          auto s = weak.lock();
          if (!s || !s->is_open()) {
            cluster->RemoveListener(*id);
            return;
          }
          if (!node_filter.empty() && n.info->name != node_filter) return;
          if (!s->Send(event, event == "node" ? NodeJson(n, false).dump() : SampleEvent(n))) {
            cluster->RemoveListener(*id);
          }
        });
        return std::nullopt;
      });
}

}  // namespace rota::server
