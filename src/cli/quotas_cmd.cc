// rota quotas (list), rota quotas set user|group NAME [--max-gpus N] [--max-gpu-hours H]
// [--share W], rota quotas delete user|group NAME.
#include <cstdio>
#include <iostream>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/format.h"

namespace rota::cli {
namespace {

using api::Json;

// At most two decimals, none that are zeros ("2000", "0.5"); a positive amount
// below them reads "<0.01", not 0 or 1.1e-06.
std::string Number(double v) {
  if (v > 0 && v < 0.005) return "<0.01";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string out = buf;
  out.erase(out.find_last_not_of('0') + 1);
  if (out.back() == '.') out.pop_back();
  return out;
}

}  // namespace

int RunQuotas(const ClientOptions& client, const OutputOptions& out, const QuotaEdit& e) {
  if (!ValidOutput(out)) return 2;
  if (e.action != "list" && e.kind != "user" && e.kind != "group") {
    return Usage("the first argument must be user or group, not '" + e.kind + "'");
  }
  auto api = ApiClient::Create(client);
  if (!api.ok()) return Fail(api.status());
  if (e.action == "list") {
    auto list = api->Get("/api/v1/quotas");
    if (!list.ok()) return Fail(list.status());
    if (out.format == "json") {
      std::cout << list->dump(2) << "\n";
      return 0;
    }
    Table t({"KIND", "NAME", "MAX GPUS", "GPU-HOURS/" + (*list).value("period", std::string("period")), "SHARE"});
    for (const auto& q : (*list)["quotas"]) {
      const double hours = q.value("max_gpu_hours", 0.0);
      t.Add({Str(q, "kind"), Str(q, "name"), q.value("max_gpus", 0) == 0 ? "-" : q["max_gpus"].dump(),
             hours <= 0 ? "-" : Number(hours), Number(q.value("share", 1.0))});
    }
    std::cout << t.Render();
    if ((*list).contains("usage") && !(*list)["usage"].empty()) {
      Table u({"KIND", "NAME", "FAIR-SHARE GPU-HOURS", "GPU-HOURS THIS PERIOD"});
      for (const auto& r : (*list)["usage"]) {
        u.Add({Str(r, "kind"), Str(r, "name"), Number(r.value("fairshare_gpu_hours", 0.0)),
               Number(r.value("period_gpu_hours", 0.0))});
      }
      std::cout << "\n" << u.Render();
    }
    return 0;
  }
  const std::string path = "/api/v1/quotas/" + e.kind + "/" + e.name;
  if (e.action == "delete") {
    auto deleted = api->Delete(path);
    if (!deleted.ok()) return Fail(deleted.status());
    if (out.format != "json") std::cout << "Deleted the quota of " << e.kind << " " << e.name << "\n";
    return 0;
  }
  // set: the stored quota (if any) with the given flags changed.
  Json q = Json::object();
  if (auto current = api->Get(path); current.ok()) {
    q = *current;
    q.erase("updated");
  } else if (current.status().code() != StatusCode::kNotFound) {
    return Fail(current.status());
  }
  if (e.max_gpus) q["max_gpus"] = *e.max_gpus;
  if (e.max_gpu_hours) q["max_gpu_hours"] = *e.max_gpu_hours;
  if (e.share) q["share"] = *e.share;
  auto stored = api->Call("PUT", path, q.dump());
  if (!stored.ok()) return Fail(stored.status());
  if (out.format == "json") std::cout << stored->dump(2) << "\n";
  else std::cout << "Set the quota of " << e.kind << " " << e.name << "\n";
  return 0;
}

}  // namespace rota::cli
