#pragma once
// NvmlProvider: GpuProvider over an NVML library loaded with dlopen (the NVIDIA driver's
// libnvidia-ml.so.1, or the simulated one from src/gpu/sim). Use OpenNvml() from
// gpu_provider.h; this header exists for tests and for the symbol table type.

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gpu/gpu_provider.h"
#include "gpu/nvml_abi.h"

namespace rota::gpu {

// Function pointers resolved with dlsym; nullptr when the library does not export one.
struct NvmlApi {
#define ROTA_NVML_POINTER(ret, name, args) name##_fn name = nullptr;
  ROTA_NVML_FUNCTIONS(ROTA_NVML_POINTER)
#undef ROTA_NVML_POINTER
};

// Not thread-safe: one caller at a time. Caches the device count and device handles after
// the first successful read; Sample() performs no allocation once its buffers have grown.
class NvmlProvider final : public GpuProvider {
 public:
  // Takes ownership of `lib` (a dlopen handle) on which nvmlInit has succeeded.
  // REQUIRES: api.nvmlShutdown, api.nvmlDeviceGetCount_v2 and
  // api.nvmlDeviceGetHandleByIndex_v2 are set (OpenNvml substitutes the older names).
  NvmlProvider(void* lib, const NvmlApi& api);
  ~NvmlProvider() override;  // nvmlShutdown, then dlclose
  NvmlProvider(const NvmlProvider&) = delete;
  NvmlProvider& operator=(const NvmlProvider&) = delete;

  Result<std::vector<api::GpuInfo>> Devices() override;
  Result<std::vector<api::GpuSample>> Sample() override;
  Result<PowerLimits> GetPowerLimits(uint32_t index) override;
  Status SetPowerLimit(uint32_t index, uint32_t mw) override;

 private:
  // A Status for NVML result `r` of `what` on GPU `index` (r != NVML_SUCCESS).
  Status Fail(nvmlReturn_t r, uint32_t index, const std::string& what) const;
  struct ProcEntry {
    unsigned pid;
    unsigned long long used_memory;
  };

  Result<unsigned> Count();
  // The cached handle of GPU `index`, fetching it on first use.
  nvmlReturn_t Handle(unsigned index, nvmlDevice_t* out);
  // The cached UUID of GPU `index` ("" until read once).
  const std::string& Uuid(unsigned index, nvmlDevice_t device);
  // Classifies the result of reading `field` of GPU `index`: true on success. On
  // GPU_IS_LOST / RESET_REQUIRED sets *failure; other errors are logged once per
  // (gpu, field, code) and leave the field absent.
  bool Ok(nvmlReturn_t r, unsigned index, const char* field, std::string* failure);
  // The fields Sample() reads. One that a GPU answered NOT_SUPPORTED for is not asked
  // again: support does not change while the driver is loaded, and each refused call still
  // costs a trip into the driver (0.4 ms for an H100's fan, measured).
  enum Field : unsigned {
    kMemory, kUtilization, kTemperature, kPower, kEnforcedLimit, kPowerLimit, kEnergy,
    kSmClock, kMemClock, kFan, kComputeProcs, kGraphicsProcs, kFieldCount
  };
  // False when `field` of GPU `index` answered NOT_SUPPORTED before.
  bool Asks(unsigned index, Field field) const;
  // Ok() for `field`; NOT_SUPPORTED also marks it as not to be asked again.
  bool Read(nvmlReturn_t r, unsigned index, Field field, std::string* failure);
  void SampleOne(unsigned index, api::GpuSample* s);
  // Reads the compute (or graphics) process list of `device` into `out`, growing the
  // buffers on NVML_ERROR_INSUFFICIENT_SIZE.
  nvmlReturn_t ReadProcesses(nvmlDevice_t device, bool compute, std::vector<ProcEntry>* out);
  std::string ErrorString(nvmlReturn_t r) const;

  void* lib_;
  NvmlApi api_;
  std::optional<unsigned> count_;
  std::vector<nvmlDevice_t> handles_;  // nullptr = not fetched yet
  std::vector<std::string> uuids_;
  std::vector<nvmlProcessInfo_t> buf_;
  std::vector<nvmlProcessInfo_v1_t> buf_v1_;
  std::vector<ProcEntry> compute_, graphics_;
  std::set<std::string> warned_;
  std::vector<uint32_t> unsupported_;  // per GPU index: bit (1 << Field) once NOT_SUPPORTED
};

}  // namespace rota::gpu
