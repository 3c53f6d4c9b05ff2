#include "accounting/report.h"

#include <algorithm>
#include <cmath>

#include "common/time_util.h"

namespace rota::accounting {
namespace {

constexpr double kMsPerHour = 3'600'000;
constexpr double kMjPerKwh = 3'600'000'000;

double Round(double v, double unit) { return std::round(v / unit) * unit; }

}  // namespace

std::optional<double> AveragePowerW(const ReportLine& line) {
  if (line.power_w) return line.power_w;
  if (line.gpus <= 0 || line.amounts.gpu_ms <= 0) return std::nullopt;
  const double measured_ms = line.amounts.gpu_ms / line.gpus;
  return (line.amounts.energy_mj + line.amounts.cpu_mj) / measured_ms;  // mJ/ms = W
}

double BucketShare(int64_t bucket_ms, int64_t bucket_len_ms, int64_t from_ms, int64_t to_ms,
                   int64_t now_ms) {
  // What the bucket holds: [bucket_ms, end).
  const int64_t end = std::max(bucket_ms + 1, std::min(bucket_ms + bucket_len_ms, now_ms));
  const int64_t lo = std::max(bucket_ms, from_ms), hi = std::min(end, to_ms);
  if (hi <= lo) return 0;
  return static_cast<double>(hi - lo) / static_cast<double>(end - bucket_ms);
}

Amounts Scaled(const Amounts& a, double share) {
  Amounts s = a;
  for (double* v : {&s.gpu_ms, &s.busy_ms, &s.util_ms, &s.energy_mj, &s.counter_mj, &s.estimated_mj,
                    &s.unmeasured_ms, &s.idle_mj, &s.cpu_mj}) {
    *v *= share;
  }
  return s;
}

api::Json FiguresJson(const ReportLine& line, const Prices& prices) {
  const Amounts& a = line.amounts;
  const double kwh = a.energy_mj / kMjPerKwh;
  const double cpu_kwh = a.cpu_mj / kMjPerKwh;
  const double total_kwh = kwh + cpu_kwh;  // what cost and CO2 are computed from
  const double gpu_hours = a.gpu_ms / kMsPerHour;
  api::Json j = {
      {"gpu_hours", Round(gpu_hours, 1e-6)},
      {"busy_gpu_hours", Round(a.busy_ms / kMsPerHour, 1e-6)},
      {"used_gpu_hours", Round(a.util_ms / kMsPerHour, 1e-6)},
      {"avg_util_pct", a.gpu_ms > 0 ? Round(100 * a.util_ms / a.gpu_ms, 0.01) : 0.0},
      {"idle_gpu_hours", Round((a.gpu_ms - a.busy_ms) / kMsPerHour, 1e-6)},
      {"reserved_idle_gpu_hours", Round(line.reserved_idle_ms / kMsPerHour, 1e-6)},
      {"energy_kwh", Round(kwh, 1e-9)},
      {"cpu_energy_kwh", Round(cpu_kwh, 1e-9)},
      {"total_energy_kwh", Round(total_kwh, 1e-9)},
      {"idle_energy_kwh", Round(line.idle_energy_mj / kMjPerKwh, 1e-9)},
      {"unmeasured_gpu_hours", Round(a.unmeasured_ms / kMsPerHour, 1e-6)},
  };
  const double integrated = std::max(0.0, a.energy_mj - a.counter_mj - a.estimated_mj);
  std::string method = "none";
  if (a.energy_mj > 0) {
    const double counter = a.counter_mj / a.energy_mj, estimated = a.estimated_mj / a.energy_mj,
                 integ = integrated / a.energy_mj;
    method = counter > 0.999 ? "counter" : integ > 0.999 ? "integrated" : estimated > 0.999 ? "estimated" : "mixed";
    j["energy_shares"] = {{"counter", Round(counter, 1e-4)},
                          {"integrated", Round(integ, 1e-4)},
                          {"estimated", Round(estimated, 1e-4)}};
  }
  j["energy_method"] = method;
  if (auto power = AveragePowerW(line)) {
    j["avg_power_w"] = Round(*power, 0.01);
    if (!line.power_w) j["measured_hours"] = Round(a.gpu_ms / line.gpus / kMsPerHour, 1e-6);
  }
  if (prices.price_per_kwh > 0 || prices.price_per_gpu_hour > 0) {
    j["cost"] = Round(total_kwh * prices.price_per_kwh + gpu_hours * prices.price_per_gpu_hour, 1e-4);
    j["currency"] = prices.currency;
  }
  if (prices.co2_g_per_kwh > 0) j["co2_kg"] = Round(total_kwh * prices.co2_g_per_kwh / 1000, 1e-6);
  return j;
}

api::Json ReportJson(const std::string& by, int64_t from_ms, int64_t to_ms,
                     const std::vector<ReportLine>& lines, const Prices& prices) {
  api::Json rows = api::Json::array();
  ReportLine total;
  bool powered = !lines.empty();  // the total's power: every row has one
  double power_w = 0;
  for (const auto& line : lines) {
    api::Json row = FiguresJson(line, prices);
    row["key"] = line.key;
    rows.push_back(std::move(row));
    total.amounts += line.amounts;
    total.reserved_idle_ms += line.reserved_idle_ms;
    total.idle_energy_mj += line.idle_energy_mj;
    const auto p = AveragePowerW(line);
    const bool node_like = line.gpus > 0 || line.power_w.has_value();
    if (!node_like) powered = false;
    power_w += p.value_or(0);
  }
  if (powered) total.power_w = power_w;
  return api::Json{{"by", by},
                   {"from", FormatRfc3339(from_ms)},
                   {"to", FormatRfc3339(to_ms)},
                   {"rows", std::move(rows)},
                   {"total", FiguresJson(total, prices)}};
}

std::vector<ReportLine> ByArea(const std::vector<ReportLine>& by_node,
                               const std::map<std::string, std::string>& area_of_node) {
  std::map<std::string, ReportLine> areas;
  for (const auto& line : by_node) {
    auto it = area_of_node.find(line.key);
    const std::string area = it == area_of_node.end() ? "" : it->second;
    ReportLine& a = areas[area];
    a.key = area;
    a.amounts += line.amounts;
    a.reserved_idle_ms += line.reserved_idle_ms;
    a.idle_energy_mj += line.idle_energy_mj;
    a.power_w = a.power_w.value_or(0) + AveragePowerW(line).value_or(0);
  }
  std::vector<ReportLine> out;
  for (auto& [k, v] : areas) out.push_back(std::move(v));
  std::stable_sort(out.begin(), out.end(),
                   [](const ReportLine& x, const ReportLine& y) { return x.amounts.gpu_ms > y.amounts.gpu_ms; });
  return out;
}

}  // namespace rota::accounting
