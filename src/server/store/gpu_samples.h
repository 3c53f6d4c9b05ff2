#pragma once
// Reads the stored GPU samples of a node over a time range, from both tables
// that hold them: node_gpu_samples (one row per node sample, its GPUs packed,
// gpu_pack.h; written from schema version 11 on) and gpu_samples (one row per
// GPU, written before; read until raw retention has emptied it, nothing is
// converted). Used by the minute aggregates and the raw history.

#include <cstdint>
#include <optional>
#include <vector>

#include "common/status.h"
#include "server/store/gpu_pack.h"
#include "server/store/sql.h"

namespace rota::store {

// One GPU's readings at one instant.
struct GpuReading {
  int64_t t_ms = 0;
  StoredGpu gpu;
};

class GpuSampleReader {
 public:
  // REQUIRES: db outlives the reader and is used by one thread at a time.
  static Result<GpuSampleReader> Prepare(Db& db);

  // Replaces *out with the readings of `node` in [from_ms, to_ms) (only GPU
  // `gpu` when set), ordered by time, then GPU index. A reading stored in both
  // tables (a sample replayed across the upgrade) appears once. IoError when a
  // stored blob is damaged.
  Status Read(int64_t node, int64_t from_ms, int64_t to_ms, std::optional<uint32_t> gpu,
              std::vector<GpuReading>* out);

 private:
  Stmt packed_, legacy_;
};

}  // namespace rota::store
