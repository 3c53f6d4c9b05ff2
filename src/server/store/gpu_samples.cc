#include "server/store/gpu_samples.h"

#include <algorithm>

namespace rota::store {
namespace {

bool Earlier(const GpuReading& a, const GpuReading& b) {
  return a.t_ms != b.t_ms ? a.t_ms < b.t_ms : a.gpu.gpu < b.gpu.gpu;
}

bool SameInstant(const GpuReading& a, const GpuReading& b) {
  return a.t_ms == b.t_ms && a.gpu.gpu == b.gpu.gpu;
}

}  // namespace

Result<GpuSampleReader> GpuSampleReader::Prepare(Db& db) {
  GpuSampleReader r;
  ASSIGN_OR_RETURN(r.packed_, db.Prepare("SELECT t_ms, gpus FROM node_gpu_samples "
                                         "WHERE node = ?1 AND t_ms >= ?2 AND t_ms < ?3 "
                                         "ORDER BY t_ms"));
  ASSIGN_OR_RETURN(r.legacy_,
                   db.Prepare("SELECT t_ms, gpu, failed, util_gpu, util_mem, mem_used, mem_total, "
                              "temp, power_mw, energy_mj, sm_clock, mem_clock, fan FROM gpu_samples "
                              "WHERE node = ?1 AND t_ms >= ?2 AND t_ms < ?3"));
  return r;
}

Status GpuSampleReader::Read(int64_t node, int64_t from_ms, int64_t to_ms,
                             std::optional<uint32_t> gpu, std::vector<GpuReading>* out) {
  out->clear();
  packed_.Reset();
  packed_.Bind(1, node).Bind(2, from_ms).Bind(3, to_ms);
  Status st = Status::Ok();
  while (st.ok()) {
    auto row = packed_.Step();
    if (!row.ok()) {
      st = row.status();
      break;
    }
    if (!*row) break;
    const int64_t t = packed_.Int(0);
    auto gpus = UnpackGpus(packed_.Blob(1));
    if (!gpus.ok()) {
      st = gpus.status().WithContext("node " + std::to_string(node) + " at " + std::to_string(t));
      break;
    }
    for (StoredGpu& g : *gpus) {
      if (!gpu || g.gpu == *gpu) out->push_back(GpuReading{t, g});
    }
  }
  packed_.Reset();
  RETURN_IF_ERROR(st);

  const size_t packed_count = out->size();
  legacy_.Reset();
  legacy_.Bind(1, node).Bind(2, from_ms).Bind(3, to_ms);
  while (true) {
    auto row = legacy_.Step();
    if (!row.ok()) {
      legacy_.Reset();
      return row.status();
    }
    if (!*row) break;
    GpuReading r;
    r.t_ms = legacy_.Int(0);
    r.gpu.gpu = static_cast<uint32_t>(legacy_.Int(1));
    if (gpu && r.gpu.gpu != *gpu) continue;
    r.gpu.failed = legacy_.Int(2) != 0;
    // Columns 3.. in GpuField order.
    for (int f = 0; f < kGpuFieldCount; ++f) r.gpu.value[f] = legacy_.OptInt(3 + f);
    out->push_back(r);
  }
  legacy_.Reset();

  if (out->size() == packed_count) {  // the usual case: nothing from before the upgrade
    if (!std::is_sorted(out->begin(), out->end(), Earlier)) {
      std::stable_sort(out->begin(), out->end(), Earlier);
    }
    return Status::Ok();
  }
  // Packed readings come first, so a stable sort keeps them ahead of their duplicates.
  std::stable_sort(out->begin(), out->end(), Earlier);
  out->erase(std::unique(out->begin(), out->end(), SameInstant), out->end());
  return Status::Ok();
}

}  // namespace rota::store
