#include "server/store/minutes.h"

#include "server/store/history.h"

namespace rota::store {
namespace {

// Binds sum, n, max at parameters p, p + 1, p + 2 (max NULL without readings).
template <typename T>
void BindAcc(Stmt& s, int p, const MinuteAcc<T>& a) {
  s.Bind(p, a.sum).Bind(p + 1, a.n).Bind(p + 2, a.n > 0 ? std::optional<T>(a.max) : std::nullopt);
}

}  // namespace

void MinuteTotals::AddHost(std::optional<double> cpu, std::optional<int64_t> mem,
                           std::optional<double> load) {
  ++host_n;
  cpu_percent.Add(cpu);
  mem_used.Add(mem);
  load1.Add(load);
}

void MinuteTotals::AddGpu(int64_t t_ms, const StoredGpu& r) {
  GpuMinute* g = nullptr;
  for (auto& [index, m] : gpus) {  // a handful of GPUs: a scan beats a map
    if (index == r.gpu) {
      g = &m;
      break;
    }
  }
  if (g == nullptr) g = &gpus.emplace_back(r.gpu, GpuMinute{}).second;
  ++g->n;
  g->failed_n += r.failed ? 1 : 0;
  for (int i = 0; i < GpuMinute::kMetrics; ++i) {
    g->metric[i].Add(r.value[GpuMinute::kMetricField[i]]);
  }
  if (const auto& e = r.value[kEnergyMj]; e && (!g->energy_t || t_ms >= *g->energy_t)) {
    g->energy_mj = e;
    g->energy_t = t_ms;
  }
}

namespace {

// The host readings of a node in [?2, ?3): samples without GPUs and those
// written before schema version 12 in node_samples, the others in their
// node_gpu_samples row (mem_total set). Each sample is in one of the two.
constexpr const char* kHostReadingsSql =
    "SELECT cpu_percent, mem_used, load1 FROM node_samples "
    "WHERE node = ?1 AND t_ms >= ?2 AND t_ms < ?3 "
    "UNION ALL "
    "SELECT cpu_percent, mem_used, load1 FROM node_gpu_samples "
    "WHERE node = ?1 AND t_ms >= ?2 AND t_ms < ?3 AND mem_total IS NOT NULL";

}  // namespace

Result<MinuteAggregates> MinuteAggregates::Prepare(Db& db) {
  MinuteAggregates m;
  ASSIGN_OR_RETURN(GpuSampleReader reader, GpuSampleReader::Prepare(db));
  m.read_gpu_.emplace(std::move(reader));
  ASSIGN_OR_RETURN(m.read_node_, db.Prepare(kHostReadingsSql));
  ASSIGN_OR_RETURN(
      m.put_gpu_,
      db.Prepare("INSERT INTO gpu_minutes (node, gpu, minute_ms, n, failed_n, "
                 "util_gpu_sum, util_gpu_n, util_gpu_max, util_mem_sum, util_mem_n, util_mem_max, "
                 "mem_used_sum, mem_used_n, mem_used_max, temp_sum, temp_n, temp_max, "
                 "power_mw_sum, power_mw_n, power_mw_max, energy_mj, energy_t) VALUES (?1, ?2, ?3, "
                 "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, "
                 "?21, ?22) ON CONFLICT (node, minute_ms, gpu) DO UPDATE SET n = excluded.n, "
                 "failed_n = excluded.failed_n, util_gpu_sum = excluded.util_gpu_sum, "
                 "util_gpu_n = excluded.util_gpu_n, util_gpu_max = excluded.util_gpu_max, "
                 "util_mem_sum = excluded.util_mem_sum, util_mem_n = excluded.util_mem_n, "
                 "util_mem_max = excluded.util_mem_max, mem_used_sum = excluded.mem_used_sum, "
                 "mem_used_n = excluded.mem_used_n, mem_used_max = excluded.mem_used_max, "
                 "temp_sum = excluded.temp_sum, temp_n = excluded.temp_n, "
                 "temp_max = excluded.temp_max, power_mw_sum = excluded.power_mw_sum, "
                 "power_mw_n = excluded.power_mw_n, power_mw_max = excluded.power_mw_max, "
                 "energy_mj = excluded.energy_mj, energy_t = excluded.energy_t"));
  ASSIGN_OR_RETURN(
      m.put_node_,
      db.Prepare("INSERT INTO node_minutes (node, minute_ms, n, cpu_percent_sum, "
                 "cpu_percent_n, cpu_percent_max, mem_used_sum, mem_used_n, mem_used_max, "
                 "load1_sum, load1_n, load1_max) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
                 "?10, ?11, ?12) ON CONFLICT (node, minute_ms) DO UPDATE SET n = excluded.n, "
                 "cpu_percent_sum = excluded.cpu_percent_sum, "
                 "cpu_percent_n = excluded.cpu_percent_n, "
                 "cpu_percent_max = excluded.cpu_percent_max, mem_used_sum = excluded.mem_used_sum, "
                 "mem_used_n = excluded.mem_used_n, mem_used_max = excluded.mem_used_max, "
                 "load1_sum = excluded.load1_sum, load1_n = excluded.load1_n, "
                 "load1_max = excluded.load1_max"));
  return m;
}

Status MinuteAggregates::Put(int64_t node, int64_t minute_ms, const MinuteTotals& t) {
  for (const auto& [gpu, g] : t.gpus) {
    put_gpu_.Reset();
    put_gpu_.Bind(1, node).Bind(2, static_cast<int64_t>(gpu)).Bind(3, minute_ms);
    put_gpu_.Bind(4, g.n).Bind(5, g.failed_n);
    for (int i = 0; i < GpuMinute::kMetrics; ++i) BindAcc(put_gpu_, 6 + 3 * i, g.metric[i]);
    put_gpu_.Bind(21, g.energy_mj).Bind(22, g.energy_t);
    RETURN_IF_ERROR(put_gpu_.Run());
  }
  if (t.host_n == 0) return Status::Ok();
  put_node_.Reset();
  put_node_.Bind(1, node).Bind(2, minute_ms).Bind(3, t.host_n);
  BindAcc(put_node_, 4, t.cpu_percent);
  BindAcc(put_node_, 7, t.mem_used);
  BindAcc(put_node_, 10, t.load1);
  return put_node_.Run();
}

Status MinuteAggregates::Recompute(int64_t node, int64_t minute_ms) {
  const int64_t end_ms = minute_ms + kMinuteMs;
  MinuteTotals t;
  RETURN_IF_ERROR(read_gpu_->Read(node, minute_ms, end_ms, std::nullopt, &readings_));
  for (const GpuReading& r : readings_) t.AddGpu(r.t_ms, r.gpu);
  read_node_.Reset();
  read_node_.Bind(1, node).Bind(2, minute_ms).Bind(3, end_ms);
  while (true) {
    ASSIGN_OR_RETURN(bool row, read_node_.Step());
    if (!row) break;
    t.AddHost(read_node_.OptDouble(0), read_node_.OptInt(1), read_node_.OptDouble(2));
  }
  read_node_.Reset();
  return Put(node, minute_ms, t);
}

}  // namespace rota::store
