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
//   energy (cost also from gpu_hours); node and area rows (and their totals) also
//   avg_power_w and, for nodes, measured_hours (the node's time measured in the
//   window).

#include <cstdint>
#include <map>
#include <optional>
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
  // Node rows: the node's GPUs. Its average power is taken over the time it was
  // measured in the window (its GPU time / gpus), not over the whole window.
  int gpus = 0;
  // Area rows (and totals): the sum of their nodes' average powers.
  std::optional<double> power_w;
};

// The average power of a line in watts (GPU and CPU energy): power_w when set, else
// for a node line (gpus > 0) its energy over its measured time; nullopt otherwise
// (nothing measured, or not a node).
std::optional<double> AveragePowerW(const ReportLine& line);

// Usage is kept in buckets (LedgerOptions::bucket_ms, an hour). A window [from_ms,
// to_ms) that covers a bucket only in part counts the bucket pro rata: the share of
// the part of the bucket that has passed by `now_ms` (all of it once the bucket has
// ended) that lies in the window, as if usage were spread evenly over it. 1 for a
// bucket inside the window, 0 for one outside it. REQUIRES: bucket_len_ms > 0.
double BucketShare(int64_t bucket_ms, int64_t bucket_len_ms, int64_t from_ms, int64_t to_ms,
                   int64_t now_ms);
// `a` with every amount multiplied by `share`.
Amounts Scaled(const Amounts& a, double share);

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
