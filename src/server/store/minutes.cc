#include "server/store/minutes.h"

#include <map>
#include <optional>

#include "server/store/history.h"

namespace rota::store {
namespace {

// Sum, count and maximum of the readings present (NULLs are skipped).
template <typename T>
struct Acc {
  T sum = 0;
  int64_t n = 0;
  std::optional<T> max;
  void Add(std::optional<T> v) {
    if (!v) return;
    sum += *v;
    ++n;
    if (!max || *v > *max) max = *v;
  }
  // Binds sum, n, max at parameters p, p + 1, p + 2.
  void BindTo(Stmt& s, int p) const {
    s.Bind(p, sum).Bind(p + 1, n).Bind(p + 2, max);
  }
};

constexpr int kGpuMetrics = 5;  // util_gpu, util_mem, mem_used, temp, power_mw
constexpr GpuField kMetricField[kGpuMetrics] = {kUtilGpu, kUtilMem, kMemUsed, kTemp, kPowerMw};

struct GpuMinute {
  int64_t n = 0, failed_n = 0;
  Acc<int64_t> metric[kGpuMetrics];
  std::optional<int64_t> energy_mj, energy_t;  // the latest reading in the minute
};

}  // namespace

Result<MinuteAggregates> MinuteAggregates::Prepare(Db& db) {
  MinuteAggregates m;
  ASSIGN_OR_RETURN(GpuSampleReader reader, GpuSampleReader::Prepare(db));
  m.read_gpu_.emplace(std::move(reader));
  ASSIGN_OR_RETURN(m.read_node_, db.Prepare("SELECT cpu_percent, mem_used, load1 FROM node_samples "
                                            "WHERE node = ?1 AND t_ms >= ?2 AND t_ms < ?3"));
  ASSIGN_OR_RETURN(
      m.put_gpu_,
      db.Prepare("INSERT OR REPLACE INTO gpu_minutes (node, gpu, minute_ms, n, failed_n, "
                 "util_gpu_sum, util_gpu_n, util_gpu_max, util_mem_sum, util_mem_n, util_mem_max, "
                 "mem_used_sum, mem_used_n, mem_used_max, temp_sum, temp_n, temp_max, "
                 "power_mw_sum, power_mw_n, power_mw_max, energy_mj, energy_t) VALUES (?1, ?2, ?3, "
                 "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, "
                 "?21, ?22)"));
  ASSIGN_OR_RETURN(
      m.put_node_,
      db.Prepare("INSERT OR REPLACE INTO node_minutes (node, minute_ms, n, cpu_percent_sum, "
                 "cpu_percent_n, cpu_percent_max, mem_used_sum, mem_used_n, mem_used_max, "
                 "load1_sum, load1_n, load1_max) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
                 "?10, ?11, ?12)"));
  return m;
}

Status MinuteAggregates::Recompute(int64_t node, int64_t minute_ms) {
  const int64_t end_ms = minute_ms + kMinuteMs;
  std::map<int64_t, GpuMinute> gpus;
  RETURN_IF_ERROR(read_gpu_->Read(node, minute_ms, end_ms, std::nullopt, &readings_));
  for (const GpuReading& r : readings_) {
    GpuMinute& g = gpus[r.gpu.gpu];
    ++g.n;
    g.failed_n += r.gpu.failed ? 1 : 0;
    for (int i = 0; i < kGpuMetrics; ++i) g.metric[i].Add(r.gpu.value[kMetricField[i]]);
    if (const auto& e = r.gpu.value[kEnergyMj]; e && (!g.energy_t || r.t_ms >= *g.energy_t)) {
      g.energy_mj = e;
      g.energy_t = r.t_ms;
    }
  }
  for (const auto& [gpu, g] : gpus) {
    put_gpu_.Reset();
    put_gpu_.Bind(1, node).Bind(2, gpu).Bind(3, minute_ms).Bind(4, g.n).Bind(5, g.failed_n);
    for (int i = 0; i < kGpuMetrics; ++i) g.metric[i].BindTo(put_gpu_, 6 + 3 * i);
    put_gpu_.Bind(21, g.energy_mj).Bind(22, g.energy_t);
    RETURN_IF_ERROR(put_gpu_.Run());
  }

  int64_t n = 0;
  Acc<double> cpu, load;
  Acc<int64_t> mem;
  read_node_.Reset();
  read_node_.Bind(1, node).Bind(2, minute_ms).Bind(3, end_ms);
  while (true) {
    ASSIGN_OR_RETURN(bool row, read_node_.Step());
    if (!row) break;
    ++n;
    cpu.Add(read_node_.OptDouble(0));
    mem.Add(read_node_.OptInt(1));
    load.Add(read_node_.OptDouble(2));
  }
  read_node_.Reset();
  if (n == 0) return Status::Ok();
  put_node_.Reset();
  put_node_.Bind(1, node).Bind(2, minute_ms).Bind(3, n);
  cpu.BindTo(put_node_, 4);
  mem.BindTo(put_node_, 7);
  load.BindTo(put_node_, 10);
  return put_node_.Run();
}

}  // namespace rota::store
