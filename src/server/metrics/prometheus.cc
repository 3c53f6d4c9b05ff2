// Prometheus exposition: GET /metrics (text format 0.0.4).

#include <cstdio>
#include <map>
#include <sstream>

#include "common/mutex.h"
#include "net/http_server.h"
#include "server/accounting/accounting_service.h"
#include "server/api_context.h"
#include "server/power/power_service.h"
#include "server/accounts/auth.h"
#include "server/accounts/logins.h"
#include "server/jobs/jobs.h"
#include "server/metrics/prometheus_text.h"
#include "server/request_metrics.h"
#include "server/views.h"

namespace rota::server {
namespace {

using metrics::Escape;
using metrics::Family;

// Sign-ins: throttled, failed, refused for a busy hashing pool; the pool's queue.
void AppendLogins(const Logins::Counters& c, std::string* out) {
  Family throttled("rota_login_throttled_total", "counter",
                   "Sign-ins refused with 429 by login throttling, by scope (address or account).");
  throttled.Add("scope=\"address\"", static_cast<double>(c.throttled_address));
  throttled.Add("scope=\"account\"", static_cast<double>(c.throttled_account));
  throttled.AppendTo(out);
  Family failed("rota_login_failures_total", "counter", "Sign-ins refused for a wrong username or password.");
  failed.AddPlain(static_cast<double>(c.failed));
  failed.AppendTo(out);
  Family busy("rota_password_hash_rejected_total", "counter",
              "Password checks refused with 503 because the hashing queue was full.");
  busy.AddPlain(static_cast<double>(c.busy));
  busy.AppendTo(out);
  Family queued("rota_password_hash_queued", "gauge", "Password checks waiting for a hashing thread.");
  queued.AddPlain(static_cast<double>(c.hash_queued));
  queued.AppendTo(out);
  Family tracked("rota_login_throttle_tracked", "gauge", "Addresses and accounts login throttling remembers.");
  tracked.Add("scope=\"address\"", static_cast<double>(c.tracked_addresses));
  tracked.Add("scope=\"account\"", static_cast<double>(c.tracked_accounts));
  tracked.AppendTo(out);
}

// The store writer's queue, transactions, WAL checkpoints and minute aggregates.
void AppendStore(const store::StoreStats& st, std::string* out) {
  Family queued("rota_store_queued_samples", "gauge", "Node samples waiting for the store writer.");
  queued.AddPlain(static_cast<double>(st.queued_samples));
  queued.AppendTo(out);
  Family tx("rota_store_transactions_total", "counter", "Store write transactions, by outcome.");
  tx.Add("outcome=\"committed\"", static_cast<double>(st.transactions));
  tx.Add("outcome=\"failed\"", static_cast<double>(st.failed_transactions));
  tx.AppendTo(out);
  Family ckpt("rota_store_wal_checkpoints_total", "counter",
              "WAL checkpoints, by outcome (restarted: held writes back to start the WAL again).");
  ckpt.Add("outcome=\"copied\"", static_cast<double>(st.checkpoints));
  ckpt.Add("outcome=\"failed\"", static_cast<double>(st.checkpoint_failures));
  ckpt.Add("outcome=\"restarted\"", static_cast<double>(st.wal_restarts));
  ckpt.AppendTo(out);
  Family minutes("rota_store_minute_aggregates_written_total", "counter",
                 "Node-minutes aggregated, by source (memory: totals kept as samples were stored; "
                 "rows: read back).");
  minutes.Add("source=\"memory\"", static_cast<double>(st.minutes_from_memory));
  minutes.Add("source=\"rows\"", static_cast<double>(st.minutes_recomputed));
  minutes.AppendTo(out);
}

// Power budgets in force (bounded: one series per active budget policy).
void AppendPower(ApiContext& ctx, std::string* out) {
  Family budget("rota_power_budget_watts", "gauge", "An active power budget policy's watts.");
  Family assigned("rota_power_budget_assigned_watts", "gauge",
                  "Watts of an active power budget given out as GPU power limits.");
  for (const auto& b : ctx.power->Budgets()) {
    const std::string l = "policy=\"" + Escape(b.policy) + "\"";
    budget.Add(l, static_cast<double>(b.budget_mw) / 1000);
    assigned.Add(l, static_cast<double>(b.assigned_mw) / 1000);
  }
  budget.AppendTo(out);
  assigned.AppendTo(out);
}

// Usage and energy since the server started: per area (node label values of the
// server's area_labels) for every reader; per user and group for admins only
// (users see only their own figures elsewhere). Label sets are bounded: no
// per-job series.
void AppendAccounting(ApiContext& ctx, bool admin, std::string* out) {
  const AccountingService::Totals totals = ctx.accounting->TotalsSinceStart();
  const auto nodes = ctx.cluster->Nodes();
  Family area_energy("rota_area_energy_joules_total", "counter",
                     "GPU energy accounted since the server started, by area (a node label's value).");
  Family area_gpu("rota_area_gpu_seconds_total", "counter", "GPU time accounted since the server started, by area.");
  Family area_used("rota_area_used_gpu_seconds_total", "counter",
                   "GPU time weighted by utilisation since the server started, by area.");
  Family area_power("rota_area_power_watts", "gauge", "GPU power draw now, by area.");
  Family area_cpu_energy("rota_area_cpu_energy_joules_total", "counter",
                         "CPU package energy (RAPL) accounted since the server started, by area.");
  for (const auto& label : ctx.config->area_labels) {
    std::map<std::string, accounting::Amounts> by_area;
    std::map<std::string, double> watts;
    for (const auto& n : nodes) {
      auto it = n.info->labels.find(label);
      if (it == n.info->labels.end()) continue;
      auto t = totals.by_node.find(n.info->name);
      by_area[it->second] += t == totals.by_node.end() ? accounting::Amounts{} : t->second;
      double& w = watts[it->second];
      if (n.latest == nullptr || n.state != NodeState::kReady) continue;
      for (const auto& g : n.latest->gpus) w += g.power_mw.value_or(0) / 1000.0;
    }
    for (const auto& [area, a] : by_area) {
      const std::string l = "label=\"" + Escape(label) + "\",area=\"" + Escape(area) + "\"";
      area_energy.Add(l, a.energy_mj / 1000);
      area_gpu.Add(l, a.gpu_ms / 1000);
      area_used.Add(l, a.util_ms / 1000);
      area_power.Add(l, watts[area]);
      area_cpu_energy.Add(l, a.cpu_mj / 1000);
    }
  }
  for (const Family* f : {&area_energy, &area_gpu, &area_used, &area_power, &area_cpu_energy}) f->AppendTo(out);
  if (!admin) return;
  Family user_energy("rota_user_energy_joules_total", "counter",
                     "GPU energy accounted since the server started, by rota user (\"(idle)\": no process).");
  Family user_gpu("rota_user_gpu_seconds_total", "counter", "GPU time accounted since the server started, by rota user.");
  Family user_used("rota_user_used_gpu_seconds_total", "counter",
                   "GPU time weighted by utilisation since the server started, by rota user.");
  Family user_cpu_energy("rota_user_cpu_energy_joules_total", "counter",
                          "CPU package energy (RAPL) accounted since the server started, by rota user "
                          "(\"(other)\": idle CPUs and processes outside job tasks).");
  for (const auto& [user, a] : totals.by_user) {
    const std::string l = "user=\"" + Escape(user.empty() ? "(idle)" : user) + "\"";
    user_energy.Add(l, a.energy_mj / 1000);
    user_gpu.Add(l, a.gpu_ms / 1000);
    user_used.Add(l, a.util_ms / 1000);
    user_cpu_energy.Add("user=\"" + Escape(user.empty() ? "(other)" : user) + "\"", a.cpu_mj / 1000);
  }
  Family group_energy("rota_group_energy_joules_total", "counter",
                      "GPU energy accounted since the server started, by group (\"(none)\": no group).");
  Family group_gpu("rota_group_gpu_seconds_total", "counter", "GPU time accounted since the server started, by group.");
  Family group_cpu_energy("rota_group_cpu_energy_joules_total", "counter",
                           "CPU package energy (RAPL) accounted since the server started, by group.");
  for (const auto& [group, a] : totals.by_group) {
    const std::string l = "group=\"" + Escape(group.empty() ? "(none)" : group) + "\"";
    group_energy.Add(l, a.energy_mj / 1000);
    group_gpu.Add(l, a.gpu_ms / 1000);
    group_cpu_energy.Add(l, a.cpu_mj / 1000);
  }
  for (const Family* f : {&user_energy, &user_gpu, &user_used, &user_cpu_energy, &group_energy, &group_gpu,
                          &group_cpu_energy}) {
    f->AppendTo(out);
  }
}

}  // namespace

void RequestMetrics::Observe(const std::string& method, int status, double seconds) {
  MutexLock lock(&mu_);
  auto it = by_method_.find(method);
  if (it == by_method_.end())
    it = by_method_.emplace(method, metrics::Histogram({kBuckets.begin(), kBuckets.end()})).first;
  it->second.Observe(seconds);
  by_code_[{method, status}]++;
}

void RequestMetrics::AppendText(std::string* out) const {
  MutexLock lock(&mu_);
  *out += "# HELP rota_http_request_duration_seconds HTTP request latency.\n"
          "# TYPE rota_http_request_duration_seconds histogram\n";
  for (const auto& [method, h] : by_method_)
    h.AppendSamples("rota_http_request_duration_seconds", "method=\"" + Escape(method) + "\"", out);
  Family reqs("rota_http_requests_total", "counter", "HTTP requests by method and status code.");
  for (const auto& [key, n] : by_code_) {
    reqs.Add("method=\"" + Escape(key.first) + "\",code=\"" + std::to_string(key.second) + "\"",
             static_cast<double>(n));
  }
  reqs.AppendTo(out);
}

Status RegisterPrometheusRoutes(net::HttpServer& http, ApiContext& ctx) {
  RETURN_IF_ERROR(http.Route("GET", "/metrics", [&ctx](const net::HttpRequest& req) {
    auto who = RequireReader(ctx, req);
    if (!who.ok()) return net::HttpResponse::FromStatus(who.status());
    Family util("rota_gpu_utilization_percent", "gauge", "GPU utilisation (percent of time busy).");
    Family mem_util("rota_gpu_memory_utilization_percent", "gauge", "GPU memory controller utilisation.");
    Family mem_used("rota_gpu_memory_used_bytes", "gauge", "GPU memory in use.");
    Family mem_total("rota_gpu_memory_total_bytes", "gauge", "GPU memory size.");
    Family temp("rota_gpu_temperature_celsius", "gauge", "GPU temperature.");
    Family power("rota_gpu_power_watts", "gauge", "GPU power draw.");
    Family limit("rota_gpu_power_limit_watts", "gauge", "GPU enforced power limit.");
    Family energy("rota_gpu_energy_joules_total", "counter", "GPU energy since driver load.");
    Family procs("rota_gpu_processes", "gauge", "Processes running on the GPU.");
    Family failed("rota_gpu_failed", "gauge", "1 if the GPU is lost or unusable.");
    Family up("rota_node_up", "gauge", "1 if the node's agent reports in time.");
    Family cpu("rota_node_cpu_percent", "gauge", "Node CPU utilisation, all cores.");
    Family nmem_used("rota_node_memory_used_bytes", "gauge", "Node memory in use (total - available).");
    Family nmem_total("rota_node_memory_total_bytes", "gauge", "Node memory size.");
    Family load("rota_node_load1", "gauge", "Node 1-minute load average.");
    Family ngpus("rota_node_gpus", "gauge", "GPUs on the node.");

    for (const auto& n : ctx.cluster->Nodes()) {
      std::string nl = "node=\"" + Escape(n.info->name) + "\"";
      up.Add(nl, n.state == NodeState::kReady ? 1 : 0);
      ngpus.Add(nl, static_cast<double>(n.info->gpus.size()));
      if (n.latest == nullptr) continue;
      const auto& h = n.latest->host;
      cpu.Add(nl, h.cpu_percent);
      nmem_used.Add(nl, static_cast<double>(h.mem_total_bytes - std::min(h.mem_total_bytes, h.mem_available_bytes)));
      nmem_total.Add(nl, static_cast<double>(h.mem_total_bytes));
      load.Add(nl, h.load1);
      for (const auto& g : n.latest->gpus) {
        std::string model;
        for (const auto& info : n.info->gpus) {
          if (info.index == g.index) model = info.name;
        }
        std::string users;
        for (const auto& u : GpuUsers(g)) users += (users.empty() ? "" : ",") + u;
        std::string l = nl + ",index=\"" + std::to_string(g.index) + "\",uuid=\"" + Escape(g.uuid) +
                        "\",model=\"" + Escape(model) + "\",users=\"" + Escape(users) + "\"";
        failed.Add(l, g.failed ? 1 : 0);
        procs.Add(l, static_cast<double>(g.processes.size()));
        if (g.util_gpu_pct) util.Add(l, *g.util_gpu_pct);
        if (g.util_memory_pct) mem_util.Add(l, *g.util_memory_pct);
        if (g.memory_used_bytes) mem_used.Add(l, static_cast<double>(*g.memory_used_bytes));
        if (g.memory_total_bytes) mem_total.Add(l, static_cast<double>(*g.memory_total_bytes));
        if (g.temperature_c) temp.Add(l, *g.temperature_c);
        if (g.power_mw) power.Add(l, *g.power_mw / 1000.0);
        if (g.power_limit_mw) limit.Add(l, *g.power_limit_mw / 1000.0);
        if (g.energy_mj) energy.Add(l, static_cast<double>(*g.energy_mj) / 1000.0);
      }
    }
    std::string out;
    for (const Family* f : {&util, &mem_util, &mem_used, &mem_total, &temp, &power, &limit, &energy,
                            &procs, &failed, &up, &cpu, &nmem_used, &nmem_total, &load, &ngpus}) {
      f->AppendTo(&out);
    }
    if (ctx.jobs != nullptr) ctx.jobs->pass_metrics().AppendText(&out);
    Family agents("rota_server_connected_agents", "gauge", "Agents connected now.");
    agents.AddPlain(ctx.cluster->ConnectedCount());
    agents.AppendTo(&out);
    Family received("rota_server_samples_received_total", "counter", "Node samples received from agents.");
    received.AddPlain(static_cast<double>(ctx.stats->samples_received.load()));
    received.AppendTo(&out);
    Family committed("rota_server_samples_committed_total", "counter", "Node samples committed to the store.");
    committed.AddPlain(static_cast<double>(ctx.stats->samples_committed.load()));
    committed.AppendTo(&out);
    Family rejected("rota_server_agent_messages_rejected_total", "counter",
                    "Malformed or wrong-version agent messages.");
    rejected.AddPlain(static_cast<double>(ctx.stats->messages_rejected.load()));
    rejected.AppendTo(&out);
    Family auth("rota_server_agent_auth_failures_total", "counter", "Agent connections refused for a bad token.");
    auth.AddPlain(static_cast<double>(ctx.stats->auth_failures.load()));
    auth.AppendTo(&out);
    if (ctx.logins != nullptr) AppendLogins(ctx.logins->counters(), &out);
    if (ctx.store != nullptr) AppendStore(ctx.store->Stats(), &out);
    if (ctx.accounting != nullptr) AppendAccounting(ctx, who->admin(), &out);
    if (ctx.power != nullptr) AppendPower(ctx, &out);
    ctx.request_metrics->AppendText(&out);
    net::HttpResponse resp;
    resp.status = 200;
    resp.content_type = "text/plain; version=0.0.4; charset=utf-8";
    resp.body = std::move(out);
    return resp;
  }));
  return Status::Ok();
}

}  // namespace rota::server
