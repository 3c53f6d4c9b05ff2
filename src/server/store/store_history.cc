// Store::GpuHistory and Store::NodeHistory.

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "server/store/gpu_samples.h"
#include "server/store/history.h"
#include "server/store/store.h"
#include "server/store/store_impl.h"

namespace rota::store {
namespace {

// How to read one kind of series. Queries bind ?1 node, ?2 gpu (GPU series
// only), ?3 from, ?4 to, and return rows in time order:
//   raw: t_ms, one column per metric [, energy_mj]; none for GPUs, whose raw
//        readings come from GpuSampleReader (fields: gpu_fields)
//   agg: minute_ms, n, (sum, count, max) per metric [, energy_mj, energy_t]
struct SeriesSpec {
  std::vector<std::string> metrics;
  std::vector<GpuField> gpu_fields;  // GPU series: the stored field of each metric
  bool energy;
  const char* raw_sql;
  const char* agg_sql;
};

const SeriesSpec& GpuSpec() {
  static const SeriesSpec spec{
      {"util_gpu_pct", "util_mem_pct", "mem_used_bytes", "temp_c", "power_mw"},
      {kUtilGpu, kUtilMem, kMemUsed, kTemp, kPowerMw},
      true,
      nullptr,
      "SELECT minute_ms, n, util_gpu_sum, util_gpu_n, util_gpu_max, util_mem_sum, util_mem_n, "
      "util_mem_max, mem_used_sum, mem_used_n, mem_used_max, temp_sum, temp_n, temp_max, "
      "power_mw_sum, power_mw_n, power_mw_max, energy_mj, energy_t FROM gpu_minutes "
      "WHERE node = ?1 AND gpu = ?2 AND minute_ms >= ?3 AND minute_ms < ?4 ORDER BY minute_ms"};
  return spec;
}

const SeriesSpec& NodeSpec() {
  static const SeriesSpec spec{
      {"cpu_pct", "mem_used_bytes", "load1"},
      {},
      false,
      "SELECT t_ms, cpu_percent, mem_used, load1 FROM node_samples "
      "WHERE node = ?1 AND t_ms >= ?3 AND t_ms < ?4 "
      "UNION ALL "
      "SELECT t_ms, cpu_percent, mem_used, load1 FROM node_gpu_samples "
      "WHERE node = ?1 AND t_ms >= ?3 AND t_ms < ?4 AND mem_total IS NOT NULL ORDER BY t_ms",
      "SELECT minute_ms, n, cpu_percent_sum, cpu_percent_n, cpu_percent_max, mem_used_sum, "
      "mem_used_n, mem_used_max, load1_sum, load1_n, load1_max FROM node_minutes "
      "WHERE node = ?1 AND minute_ms >= ?3 AND minute_ms < ?4 ORDER BY minute_ms"};
  return spec;
}

// Feeds the rows of `sql` for [from_ms, to_ms) to `b`: raw rows (one sample
// each) or minute aggregates.
Status AddRows(Db& db, const SeriesSpec& spec, const char* sql, bool raw, int64_t node,
               std::optional<int64_t> gpu, int64_t from_ms, int64_t to_ms, SeriesBuilder& b) {
  if (from_ms >= to_ms) return Status::Ok();
  if (raw && sql == nullptr) {  // a GPU's readings
    ASSIGN_OR_RETURN(GpuSampleReader reader, GpuSampleReader::Prepare(db));
    std::vector<GpuReading> readings;
    RETURN_IF_ERROR(reader.Read(node, from_ms, to_ms, static_cast<uint32_t>(gpu.value_or(0)),
                                &readings));
    for (const GpuReading& r : readings) {
      b.Row(r.t_ms, 1);
      for (size_t i = 0; i < spec.gpu_fields.size(); ++i) {
        if (const auto& v = r.gpu.value[spec.gpu_fields[i]]) {
          const auto d = static_cast<double>(*v);
          b.Metric(i, d, 1, d);
        }
      }
      if (const auto& e = r.gpu.value[kEnergyMj]) b.Counter(0, static_cast<double>(*e), r.t_ms);
    }
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(sql));
  s.Bind(1, node);
  if (gpu) s.Bind(2, *gpu);
  s.Bind(3, from_ms).Bind(4, to_ms);
  const size_t k = spec.metrics.size();
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    const int64_t t = s.Int(0);
    if (raw) {
      b.Row(t, 1);
      for (size_t i = 0; i < k; ++i) {
        const int col = static_cast<int>(1 + i);
        if (!s.IsNull(col)) b.Metric(i, s.Double(col), 1, s.Double(col));
      }
      const int e = static_cast<int>(1 + k);
      if (spec.energy && !s.IsNull(e)) b.Counter(0, s.Double(e), t);
    } else {
      b.Row(t, s.Int(1));
      for (size_t i = 0; i < k; ++i) {
        const int col = static_cast<int>(2 + 3 * i);
        b.Metric(i, s.Double(col), s.Int(col + 1), s.OptDouble(col + 2));
      }
      const int e = static_cast<int>(2 + 3 * k);
      if (spec.energy && !s.IsNull(e)) b.Counter(0, s.Double(e), s.Int(e + 1));
    }
  }
  return Status::Ok();
}

// `aggregated_before_ms`: minutes from then on may lack their aggregates; their
// raw rows stand in for them.
Result<Series> ReadSeries(Db& db, const SeriesSpec& spec, int64_t node, std::optional<int64_t> gpu,
                          int64_t from_ms, int64_t to_ms, int64_t step_ms, int64_t raw_since_ms,
                          int64_t aggregated_before_ms) {
  const bool raw = from_ms >= raw_since_ms && (step_ms < kMinuteMs || step_ms % kMinuteMs != 0);
  Series out;
  out.resolution = raw ? "raw" : "1m";
  if (!raw) {
    step_ms = (step_ms + kMinuteMs - 1) / kMinuteMs * kMinuteMs;
    from_ms = BucketStart(from_ms, kMinuteMs);
  }
  out.step_ms = step_ms;
  SeriesBuilder b(step_ms, spec.metrics,
                  spec.energy ? std::vector<std::string>{"energy_mj"} : std::vector<std::string>{});
  if (raw) {
    RETURN_IF_ERROR(AddRows(db, spec, spec.raw_sql, true, node, gpu, from_ms, to_ms, b));
  } else {
    const int64_t split = std::clamp(aggregated_before_ms, from_ms, to_ms);
    RETURN_IF_ERROR(AddRows(db, spec, spec.agg_sql, false, node, gpu, from_ms, split, b));
    RETURN_IF_ERROR(AddRows(db, spec, spec.raw_sql, true, node, gpu, split, to_ms, b));
  }
  out.points = b.Finish();
  return out;
}

}  // namespace

Result<Series> Store::GpuHistory(const std::string& node, uint32_t gpu_index, int64_t from_ms,
                                 int64_t to_ms, int64_t step_ms) {
  ASSIGN_OR_RETURN(int64_t step, ResolveStep(from_ms, to_ms, step_ms));
  const int64_t raw_since = impl_->clock.NowMs() - impl_->opt.raw_retention_ms;
  MutexLock lk(&impl_->read_mu);
  Db& db = impl_->rdb;
  ASSIGN_OR_RETURN(int64_t id, impl_->ReadNodeId(node));
  // A GPU is known while it is registered, or while it has data in the range.
  ASSIGN_OR_RETURN(
      Stmt known,
      db.Prepare("SELECT EXISTS (SELECT 1 FROM gpus WHERE node = ?1 AND idx = ?2) OR "
                 "EXISTS (SELECT 1 FROM gpu_minutes WHERE node = ?1 AND minute_ms >= ?3 AND "
                 "minute_ms < ?4 AND gpu = ?2)"));
  known.Bind(1, id)
      .Bind(2, static_cast<int64_t>(gpu_index))
      .Bind(3, BucketStart(from_ms, kMinuteMs))
      .Bind(4, to_ms);
  ASSIGN_OR_RETURN(bool row, known.Step());
  if (!row || known.Int(0) == 0) {
    return Status::NotFound("node " + node + " has no gpu " + std::to_string(gpu_index));
  }
  return ReadSeries(db, GpuSpec(), id, static_cast<int64_t>(gpu_index), from_ms, to_ms, step,
                    raw_since, impl_->writer->AggregatedBeforeMs());
}

Result<Series> Store::NodeHistory(const std::string& node, int64_t from_ms, int64_t to_ms,
                                  int64_t step_ms) {
  ASSIGN_OR_RETURN(int64_t step, ResolveStep(from_ms, to_ms, step_ms));
  const int64_t raw_since = impl_->clock.NowMs() - impl_->opt.raw_retention_ms;
  MutexLock lk(&impl_->read_mu);
  ASSIGN_OR_RETURN(int64_t id, impl_->ReadNodeId(node));
  return ReadSeries(impl_->rdb, NodeSpec(), id, std::nullopt, from_ms, to_ms, step, raw_since,
                    impl_->writer->AggregatedBeforeMs());
}

}  // namespace rota::store
