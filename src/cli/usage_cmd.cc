// rota usage / rota energy: usage and energy reports (GET /api/v1/usage).
#include <cstdio>
#include <iostream>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/format.h"
#include "common/clock.h"
#include "common/strings.h"
#include "common/time_util.h"
#include "net/url.h"

namespace rota::cli {
namespace {

using api::Json;

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string KeyText(const std::string& by, const Json& row) {
  std::string key = row.value("key", std::string());
  if (!key.empty()) return by == "job" ? "job-" + key : key;
  return by == "user" ? "(idle)" : "(none)";
}

// CSV field: quoted when it holds a comma, quote or newline.
std::string Csv(const std::string& v) {
  if (v.find_first_of(",\"\n") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

double Num(const Json& row, const char* key) {
  auto it = row.find(key);
  return it != row.end() && it->is_number() ? it->get<double>() : 0.0;
}

}  // namespace

int RunUsage(const ClientOptions& client, const std::string& format, const UsageOptions& o) {
  if (format != "table" && format != "json" && format != "csv") {
    std::cerr << "rota: unknown output format '" << format << "' (use table, json or csv)\n";
    return 2;
  }
  const int64_t now = RealClock::Get().NowMs();
  std::vector<std::string> params;
  auto add = [&](const char* key, const std::string& value) {
    if (!value.empty()) params.push_back(std::string(key) + "=" + net::PercentEncode(value));
  };
  add("by", o.by);
  add("node", o.node);
  add("label", o.label);
  add("user", o.user);
  for (const auto& [flag, key, text] : {std::tuple{"--from", "from", o.from}, std::tuple{"--to", "to", o.to}}) {
    if (text.empty()) continue;
    auto t = CliTime(flag, text, now);
    if (!t.ok()) return Usage(t.status().message());
    add(key, *t);
  }
  auto api = ApiClient::Create(client);
  if (!api.ok()) return Fail(api.status());
  auto report = api->Get("/api/v1/usage?" + Join(params, "&"));
  if (!report.ok()) return Fail(report.status());
  if (format == "json") {
    std::cout << report->dump(2) << "\n";
    return 0;
  }
  const Json& r = *report;
  const Json total = r.value("total", Json::object());
  const Json rows = r.value("rows", Json::array());
  const std::string by = r.value("by", o.by);
  const bool energy = o.energy_view;
  const bool priced = total.contains("cost"), co2 = total.contains("co2_kg");
  auto from_ms = ParseRfc3339(r.value("from", std::string()));
  auto to_ms = ParseRfc3339(r.value("to", std::string()));
  const double hours = from_ms.ok() && to_ms.ok() ? static_cast<double>(*to_ms - *from_ms) / 3.6e6 : 0;
  std::vector<std::string> head = {by == "area" ? "AREA (" + r.value("label", std::string()) + ")" : by};
  for (auto& c : head[0]) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  // GPU KWH and METHOD: the GPUs' energy and how it was measured; CPU KWH: the CPU
  // packages' (RAPL); cost and CO2 count both.
  if (energy) {
    head.insert(head.end(), {"GPU KWH", "CPU KWH", "TOTAL KWH", "AVG POWER W", "IDLE GPU KWH", "METHOD"});
  } else {
    head.insert(head.end(),
                {"GPU-H", "USED GPU-H", "UTIL %", "RESERVED IDLE GPU-H", "GPU KWH", "CPU KWH", "METHOD"});
  }
  if (priced) head.push_back("COST " + total.value("currency", std::string()));
  if (co2) head.push_back("CO2 KG");
  auto cells = [&](const std::string& key, const Json& row, bool csv) {
    std::vector<std::string> c = {key};
    const int d = csv ? 6 : 2;
    const int e = csv ? 9 : 3;
    const double gpu_kwh = Num(row, "energy_kwh"), cpu_kwh = Num(row, "cpu_energy_kwh");
    if (energy) {
      const double kwh = gpu_kwh + cpu_kwh;
      c.insert(c.end(), {Fixed(gpu_kwh, e), Fixed(cpu_kwh, e), Fixed(kwh, e),
                         // A node's power over the time it was measured (the server's);
                         // other rows' over the window.
                         row.contains("avg_power_w") ? Fixed(Num(row, "avg_power_w"), 1)
                         : hours > 0                 ? Fixed(kwh * 1000 / hours, 1)
                                                     : "-",
                         Fixed(Num(row, "idle_energy_kwh"), e),
                         row.value("energy_method", std::string())});
    } else {
      c.insert(c.end(), {Fixed(Num(row, "gpu_hours"), d), Fixed(Num(row, "used_gpu_hours"), d),
                         Fixed(Num(row, "avg_util_pct"), 1), Fixed(Num(row, "reserved_idle_gpu_hours"), d),
                         Fixed(gpu_kwh, e), Fixed(cpu_kwh, e), row.value("energy_method", std::string())});
    }
    if (priced) c.push_back(Fixed(Num(row, "cost"), 2));
    if (co2) c.push_back(Fixed(Num(row, "co2_kg"), 3));
    return c;
  };
  if (format == "csv") {
    std::vector<std::string> h;
    for (const auto& x : head) h.push_back(Csv(x));
    std::cout << Join(h, ",") << "\n";
    for (const auto& row : rows) {
      std::vector<std::string> c;
      for (const auto& x : cells(row.value("key", std::string()), row, true)) c.push_back(Csv(x));
      std::cout << Join(c, ",") << "\n";
    }
    return 0;
  }
  Table t(head);
  for (const auto& row : rows) t.Add(cells(KeyText(by, row), row, false));
  t.Add(cells("TOTAL", total, false));
  std::cout << "Usage " << r.value("from", std::string()) << " .. " << r.value("to", std::string())
            << (r.contains("user") ? " (" + r["user"].get<std::string>() + " only)" : "") << "\n"
            << t.Render();
  return 0;
}

}  // namespace rota::cli
