#include "server/store/gpu_pack.h"

namespace rota::store {
namespace {

constexpr char kVersion = 0x01;
constexpr int kMaxVarintBytes = 10;

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Reads a varint at *pos; false when the blob ends inside it or it is overlong.
bool GetVarint(std::string_view in, size_t* pos, uint64_t* v) {
  *v = 0;
  for (int i = 0; i < kMaxVarintBytes; ++i) {
    if (*pos >= in.size()) return false;
    const auto byte = static_cast<uint8_t>(in[(*pos)++]);
    if (i == kMaxVarintBytes - 1 && byte > 1) return false;  // more than 64 bits
    *v |= static_cast<uint64_t>(byte & 0x7F) << (7 * i);
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

template <typename T>
std::optional<int64_t> Widen(const std::optional<T>& v) {
  if (!v) return std::nullopt;
  return static_cast<int64_t>(*v);
}

}  // namespace

StoredGpu ToStored(const api::GpuSample& g) {
  StoredGpu s;
  s.gpu = g.index;
  s.failed = g.failed;
  s.value = {Widen(g.util_gpu_pct),       Widen(g.util_memory_pct), Widen(g.memory_used_bytes),
             Widen(g.memory_total_bytes), Widen(g.temperature_c),   Widen(g.power_mw),
             Widen(g.energy_mj),          Widen(g.sm_clock_mhz),    Widen(g.mem_clock_mhz),
             Widen(g.fan_pct)};
  return s;
}

void PackGpus(std::span<const api::GpuSample> gpus, std::string* out) {
  out->clear();
  out->push_back(kVersion);
  for (const api::GpuSample& sample : gpus) {
    const StoredGpu g = ToStored(sample);
    uint64_t mask = g.failed ? 1 : 0;
    for (int f = 0; f < kGpuFieldCount; ++f) {
      if (g.value[f]) mask |= uint64_t{1} << (1 + f);
    }
    PutVarint(g.gpu, out);
    PutVarint(mask, out);
    for (int f = 0; f < kGpuFieldCount; ++f) {
      if (g.value[f]) PutVarint(static_cast<uint64_t>(*g.value[f]), out);
    }
  }
}

Result<std::vector<StoredGpu>> UnpackGpus(std::string_view blob) {
  auto damaged = [](const char* why) {
    return Status::IoError(std::string("stored GPU samples are damaged: ") + why);
  };
  if (blob.empty() || blob[0] != kVersion) return damaged("unknown format version");
  std::vector<StoredGpu> out;
  size_t pos = 1;
  while (pos < blob.size()) {
    StoredGpu g;
    uint64_t index = 0, mask = 0;
    if (!GetVarint(blob, &pos, &index) || !GetVarint(blob, &pos, &mask)) return damaged("truncated");
    if (index >= api::kMaxGpusPerNode) return damaged("GPU index out of range");
    if (mask >> (1 + kGpuFieldCount) != 0) return damaged("unknown fields");
    g.gpu = static_cast<uint32_t>(index);
    g.failed = (mask & 1) != 0;
    for (int f = 0; f < kGpuFieldCount; ++f) {
      if ((mask & (uint64_t{1} << (1 + f))) == 0) continue;
      uint64_t v = 0;
      if (!GetVarint(blob, &pos, &v)) return damaged("truncated");
      if (v > static_cast<uint64_t>(INT64_MAX)) return damaged("value out of range");
      g.value[f] = static_cast<int64_t>(v);
    }
    out.push_back(g);
  }
  return out;
}

}  // namespace rota::store
