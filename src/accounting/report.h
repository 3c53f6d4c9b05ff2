#pragma once
// Usage reports: stored sums in, JSON rows out. Pure.
//
// Per row (GPU-hours are GPU time; "used" weights it by utilisation):
//   gpu_hours, busy_gpu_hours (a process on the GPU), used_gpu_hours,
//   avg_util_pct (used / gpu), idle_gpu_hours, reserved_idle_gpu_hours,
//   energy_kwh (the GPUs'), idle_energy_kwh (GPUs with no process and no job),
//   energy_method (counter | integrated | estimated | mixed | none, of the GPU
//   energy) with energy_shares {counter, integrated, estimated},
//   unmeasured_gpu_hours, cpu_energy_kwh (CPU packages, RAPL), total_energy_kwh
//   (GPU + CPU), and cost / co2_kg when prices are configured, from the total
//   energy (cost also from gpu_hours).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "accounting/ledger.h"
#include "api/codec.h"

namespace rota::accounting {

// Optional prices; 0: not configured (the field is left out of reports).
struct Prices {
  double price_per_kwh = 0;
  double price_per_gpu_hour = 0;
  double co2_g_per_kwh = 0;
  std::string currency = "EUR";
};

struct ReportLine {
  std::string key;
  Amounts amounts;
  double reserved_idle_ms = 0;
  double idle_energy_mj = 0;
};

// One row's figures (without its key).
api::Json FiguresJson(const ReportLine& line, const Prices& prices);

// {by, from, to, rows: [{key, ...figures}], total: {...figures}}; rows in the
// given order.
api::Json ReportJson(const std::string& by, int64_t from_ms, int64_t to_ms,
                     const std::vector<ReportLine>& lines, const Prices& prices);

// Lines by node folded into lines by area: the node's value of `label` ("" for
// nodes without it), largest GPU time first.
std::vector<ReportLine> ByArea(const std::vector<ReportLine>& by_node,
                               const std::map<std::string, std::string>& area_of_node);

}  // namespace rota::accounting
