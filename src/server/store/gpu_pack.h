#pragma once
// The GPU readings of one node sample packed into one blob: the store keeps one
// row per node sample (node_gpu_samples) instead of one row per GPU, a ninth of
// the B-tree entries and under half the bytes, which is most of the writer's
// cost at thousands of samples a second (docs/design-store.md). Pure code.
//
// Format, version 1:
//   byte 0x01, then for each GPU in the sample's order:
//   varint index, varint mask, then one varint per field whose bit is set, in
//   GpuField order. Mask bit 0: the GPU failed (it carries no value); bit 1 + f:
//   field f is present (an absent field was not read). Varints are unsigned
//   LEB128: 7 bits per byte, least significant first, at most 10 bytes.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/types.h"
#include "common/status.h"

namespace rota::store {

// The stored readings of a GPU, in blob order.
enum GpuField : int {
  kUtilGpu = 0,  // %
  kUtilMem,      // %
  kMemUsed,      // bytes
  kMemTotal,     // bytes
  kTemp,         // °C
  kPowerMw,
  kEnergyMj,     // the GPU's energy counter
  kSmClock,      // MHz
  kMemClock,     // MHz
  kFan,          // %
  kGpuFieldCount
};

// One GPU's stored readings at one instant.
struct StoredGpu {
  uint32_t gpu = 0;  // index on its node
  bool failed = false;
  std::array<std::optional<int64_t>, kGpuFieldCount> value;
  bool operator==(const StoredGpu&) const = default;
};

// The stored form of one reported GPU (what UnpackGpus gives back for it).
StoredGpu ToStored(const api::GpuSample& g);

// Appends the packed form of `gpus` to *out (cleared first).
void PackGpus(std::span<const api::GpuSample> gpus, std::string* out);

// The GPUs of a packed blob, in order. IoError (a damaged database) when the blob is not one
// PackGpus wrote (unknown version, truncated, overlong varint, trailing bytes).
Result<std::vector<StoredGpu>> UnpackGpus(std::string_view blob);

}  // namespace rota::store
