// The C entry points of the simulated NVML library (libnvidia-ml.so.1 built from
// src/gpu/sim). Each call takes the library mutex, so the library is thread-safe like
// the real one. Only these functions are exported (see exports.map).

#include <unistd.h>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "common/mutex.h"
#include "gpu/nvml_abi.h"
#include "gpu/sim/simulator.h"

// The opaque device type of the ABI; a handle points into Library::devices.
struct nvmlDevice_st {
  unsigned index;
};

namespace rota::gpu::sim {
namespace {

struct Library {
  Mutex mu;
  int init_count ROTA_GUARDED_BY(mu) = 0;  // nvmlInit/nvmlShutdown nest, as in NVML
  Simulator sim ROTA_GUARDED_BY(mu);
  nvmlDevice_st devices[kMaxSimGpus];  // written once by the constructor
  std::string init_error ROTA_GUARDED_BY(mu);  // why the last nvmlInit failed
  int init_error_code ROTA_GUARDED_BY(mu) = NVML_SUCCESS;

  Library() {
    for (unsigned i = 0; i < kMaxSimGpus; ++i) devices[i].index = i;
  }
};

Library& Lib() {
  static Library lib;
  return lib;
}

// Prologue of every device call. On success sets *index.
// `field` selects the configured fault to apply (Field::kCount: none).
nvmlReturn_t Enter(Library& lib, nvmlDevice_t device, Field field, unsigned* index)
    ROTA_REQUIRES(lib.mu) {
  if (lib.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  const auto p = reinterpret_cast<uintptr_t>(device);
  const auto base = reinterpret_cast<uintptr_t>(&lib.devices[0]);
  if (p < base || p >= base + sizeof(lib.devices) || (p - base) % sizeof(nvmlDevice_st) != 0) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  lib.sim.MaybeRefresh();
  const unsigned i = device->index;
  const auto& gpus = lib.sim.config().gpus;
  if (i >= gpus.size() || gpus[i].lost) return NVML_ERROR_GPU_IS_LOST;
  if (field != Field::kCount) {
    switch (gpus[i].faults[static_cast<size_t>(field)]) {
      case FieldFault::kNone:
        break;
      case FieldFault::kNotSupported:
        return NVML_ERROR_NOT_SUPPORTED;
      case FieldFault::kError:
        return NVML_ERROR_UNKNOWN;
      case FieldFault::kNoPermission:
        return NVML_ERROR_NO_PERMISSION;
    }
  }
  *index = i;
  return NVML_SUCCESS;
}

nvmlReturn_t CopyString(const std::string& s, char* out, unsigned length) {
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (length < s.size() + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return NVML_SUCCESS;
}

nvmlReturn_t Init() {
  Library& lib = Lib();
  MutexLock lock(&lib.mu);
  if (lib.init_count > 0) {
    ++lib.init_count;
    return NVML_SUCCESS;
  }
  std::string message;
  int r = lib.sim.Init(&message);
  if (r != NVML_SUCCESS) {
    lib.init_error = message;
    lib.init_error_code = r;
    return static_cast<nvmlReturn_t>(r);
  }
  lib.init_error.clear();
  lib.init_error_code = NVML_SUCCESS;
  lib.init_count = 1;
  return NVML_SUCCESS;
}

nvmlReturn_t Count(unsigned* count) {
  Library& lib = Lib();
  MutexLock lock(&lib.mu);
  if (lib.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  lib.sim.MaybeRefresh();
  *count = static_cast<unsigned>(lib.sim.config().gpus.size());
  return NVML_SUCCESS;
}

nvmlReturn_t HandleByIndex(unsigned index, nvmlDevice_t* device) {
  Library& lib = Lib();
  MutexLock lock(&lib.mu);
  if (lib.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  lib.sim.MaybeRefresh();
  const auto& gpus = lib.sim.config().gpus;
  if (index >= gpus.size()) return NVML_ERROR_INVALID_ARGUMENT;
  if (gpus[index].lost) return NVML_ERROR_GPU_IS_LOST;
  *device = &lib.devices[index];
  return NVML_SUCCESS;
}

nvmlReturn_t PciInfo(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  Library& lib = Lib();
  MutexLock lock(&lib.mu);
  unsigned i = 0;
  if (nvmlReturn_t r = Enter(lib, device, Field::kPci, &i); r != NVML_SUCCESS) return r;
  if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *pci = nvmlPciInfo_t{};
  const std::string& bus_id = lib.sim.config().gpus[i].bus_id;  // "00000000:01:00.0"
  std::memcpy(pci->busId, bus_id.c_str(), bus_id.size() + 1);
  const std::string legacy = bus_id.substr(4);  // "0000:01:00.0"
  std::memcpy(pci->busIdLegacy, legacy.c_str(), legacy.size() + 1);
  pci->domain = 0;
  pci->bus = (i + 1) & 0xff;
  pci->device = 0;
  pci->pciDeviceId = 0x20B510DE;  // an A100 80GB; the simulator does not vary it
  pci->pciSubSystemId = 0x153310DE;
  return NVML_SUCCESS;
}

template <typename Info>
nvmlReturn_t Processes(nvmlDevice_t device, unsigned* count, Info* infos, bool compute) {
  Library& lib = Lib();
  MutexLock lock(&lib.mu);
  unsigned i = 0;
  if (nvmlReturn_t r = Enter(lib, device, Field::kProcesses, &i); r != NVML_SUCCESS) return r;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const auto& list = compute ? lib.sim.load(i).compute : lib.sim.load(i).graphics;
  const auto n = static_cast<unsigned>(list.size());
  if (*count < n) {
    *count = n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  *count = n;
  if (n > 0 && infos == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  for (unsigned k = 0; k < n; ++k) {
    infos[k] = Info{};
    infos[k].pid = list[k].pid;
    infos[k].usedGpuMemory = list[k].mem_bytes;
    if constexpr (std::is_same_v<Info, nvmlProcessInfo_t>) {
      infos[k].gpuInstanceId = 0xFFFFFFFFu;
      infos[k].computeInstanceId = 0xFFFFFFFFu;
    }
  }
  return NVML_SUCCESS;
}

const char* StandardErrorString(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_ALREADY_INITIALIZED:
      return "Already Initialized";
    case NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_INSUFFICIENT_POWER:
      return "Insufficient External Power";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT:
      return "Timeout";
    case NVML_ERROR_IRQ_ISSUE:
      return "Interrupt Request Issue";
    case NVML_ERROR_LIBRARY_NOT_FOUND:
      return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return "Function Not Found";
    case NVML_ERROR_CORRUPTED_INFOROM:
      return "Corrupted infoROM";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case NVML_ERROR_RESET_REQUIRED:
      return "GPU requires restart";
    case NVML_ERROR_OPERATING_SYSTEM:
      return "The operating system has blocked the request";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "RM has detected an NVML/RM version mismatch";
    case NVML_ERROR_IN_USE:
      return "In use by another client";
    case NVML_ERROR_MEMORY:
      return "Insufficient Memory";
    case NVML_ERROR_NO_DATA:
      return "No data";
    case NVML_ERROR_UNKNOWN:
      return "Unknown Error";
  }
  return "Unknown Error";
}

}  // namespace
}  // namespace rota::gpu::sim

using rota::gpu::sim::Enter;
using rota::gpu::sim::Field;
using rota::gpu::sim::Lib;
using rota::gpu::sim::Library;

#define ROTA_SIM_EXPORT extern "C" __attribute__((visibility("default")))

// Reads one value of GPU `device` under the lock: declares `lib` and `i`, applies faults.
#define ROTA_SIM_DEVICE_CALL(device, field, out)                                   \
  Library& lib = Lib();                                                            \
  rota::MutexLock lock(&lib.mu);                                                   \
  unsigned i = 0;                                                                  \
  if (nvmlReturn_t r = Enter(lib, device, field, &i); r != NVML_SUCCESS) return r; \
  if ((out) == nullptr) return NVML_ERROR_INVALID_ARGUMENT;                        \
  rota::gpu::sim::Simulator& sim = lib.sim

ROTA_SIM_EXPORT nvmlReturn_t nvmlInit_v2(void) { return rota::gpu::sim::Init(); }
ROTA_SIM_EXPORT nvmlReturn_t nvmlInit(void) { return rota::gpu::sim::Init(); }

ROTA_SIM_EXPORT nvmlReturn_t nvmlShutdown(void) {
  Library& lib = Lib();
  rota::MutexLock lock(&lib.mu);
  if (lib.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (--lib.init_count == 0) lib.sim.Shutdown();
  return NVML_SUCCESS;
}

ROTA_SIM_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  Library& lib = Lib();
  rota::MutexLock lock(&lib.mu);
  if (result != NVML_SUCCESS && result == lib.init_error_code && !lib.init_error.empty()) {
    return lib.init_error.c_str();
  }
  return rota::gpu::sim::StandardErrorString(result);
}

ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  return rota::gpu::sim::Count(count);
}
ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) {
  return rota::gpu::sim::Count(count);
}

ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                                           nvmlDevice_t* device) {
  return rota::gpu::sim::HandleByIndex(index, device);
}
ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return rota::gpu::sim::HandleByIndex(index, device);
}

ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name,
                                               unsigned int length) {
  ROTA_SIM_DEVICE_CALL(device, Field::kCount, name);
  return rota::gpu::sim::CopyString(sim.config().gpus[i].model, name, length);
}

ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid,
                                               unsigned int length) {
  ROTA_SIM_DEVICE_CALL(device, Field::kCount, uuid);
  return rota::gpu::sim::CopyString(sim.config().gpus[i].uuid, uuid, length);
}

ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return rota::gpu::sim::PciInfo(device, pci);
}
ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return rota::gpu::sim::PciInfo(device, pci);
}

ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  ROTA_SIM_DEVICE_CALL(device, Field::kMemory, memory);
  memory->total = sim.config().gpus[i].memory_mib << 20;
  memory->used = sim.load(i).mem_used;
  memory->free = memory->total - memory->used;
  return NVML_SUCCESS;
}

ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
                                                           nvmlUtilization_t* utilization) {
  ROTA_SIM_DEVICE_CALL(device, Field::kUtilization, utilization);
  utilization->gpu = sim.load(i).util;
  utilization->memory = sim.MemoryUtil(i);
  return NVML_SUCCESS;
}

ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device,
                                                      nvmlTemperatureSensors_t sensor,
                                                      unsigned int* temp) {
  ROTA_SIM_DEVICE_CALL(device, Field::kTemperature, temp);
  if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  *temp = sim.TemperatureC(i);
  return NVML_SUCCESS;
}

ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  ROTA_SIM_DEVICE_CALL(device, Field::kPower, power);
  *power = sim.PowerMw(i);
  return NVML_SUCCESS;
}

ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device,
                                                             unsigned int* limit) {
  ROTA_SIM_DEVICE_CALL(device, Field::kPowerLimit, limit);
  const auto& g = sim.config().gpus[i];
  switch (g.faults[static_cast<size_t>(Field::kEnforcedPowerLimit)]) {
    case rota::gpu::sim::FieldFault::kNone:
      break;
    case rota::gpu::sim::FieldFault::kNotSupported:
      return NVML_ERROR_NOT_SUPPORTED;
    case rota::gpu::sim::FieldFault::kError:
    case rota::gpu::sim::FieldFault::kNoPermission:
      return NVML_ERROR_UNKNOWN;
  }
  *limit = sim.LimitMw(i);
  return NVML_SUCCESS;
}

ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device,
                                                               unsigned int* limit) {
  ROTA_SIM_DEVICE_CALL(device, Field::kPowerLimit, limit);
  *limit = sim.LimitMw(i);
  return NVML_SUCCESS;
}

ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device,
                                                                      unsigned int* limit) {
  ROTA_SIM_DEVICE_CALL(device, Field::kPowerLimit, limit);
  *limit = sim.config().gpus[i].power_limit_w * 1000;
  return NVML_SUCCESS;
}

ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device,
                                                                          unsigned int* min_limit,
                                                                          unsigned int* max_limit) {
  ROTA_SIM_DEVICE_CALL(device, Field::kPowerLimit, min_limit);
  if (max_limit == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *min_limit = sim.config().gpus[i].min_power_limit_w * 1000;
  *max_limit = sim.config().gpus[i].power_limit_w * 1000;
  return NVML_SUCCESS;
}

// Like the driver: root only, within the constraints. The limit lasts while this
// process has the library loaded (a driver keeps it until reboot or reset).
ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t device, unsigned int limit) {
  Library& lib = Lib();
  rota::MutexLock lock(&lib.mu);
  unsigned i = 0;
  if (nvmlReturn_t r = Enter(lib, device, Field::kSetPowerLimit, &i); r != NVML_SUCCESS) return r;
  if (geteuid() != 0) return NVML_ERROR_NO_PERMISSION;
  const auto& g = lib.sim.config().gpus[i];
  if (limit < g.min_power_limit_w * 1000 || limit > g.power_limit_w * 1000) return NVML_ERROR_INVALID_ARGUMENT;
  lib.sim.SetLimitMw(i, limit);
  return NVML_SUCCESS;
}

ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device,
                                                                 unsigned long long* energy) {
  ROTA_SIM_DEVICE_CALL(device, Field::kEnergy, energy);
  *energy = sim.EnergyMj(i);
  return NVML_SUCCESS;
}

ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                                    unsigned int* clock) {
  ROTA_SIM_DEVICE_CALL(device, Field::kClocks, clock);
  switch (type) {
    case NVML_CLOCK_GRAPHICS:
    case NVML_CLOCK_SM:
      *clock = sim.SmClockMhz(i);
      return NVML_SUCCESS;
    case NVML_CLOCK_MEM:
      *clock = sim.MemClockMhz(i);
      return NVML_SUCCESS;
    case NVML_CLOCK_VIDEO:
      return NVML_ERROR_NOT_SUPPORTED;
  }
  return NVML_ERROR_INVALID_ARGUMENT;
}

ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int* speed) {
  ROTA_SIM_DEVICE_CALL(device, Field::kFan, speed);
  *speed = sim.FanPct(i);
  return NVML_SUCCESS;
}

ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
                                                                     unsigned int* count,
                                                                     nvmlProcessInfo_t* infos) {
  return rota::gpu::sim::Processes(device, count, infos, true);
}
ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device,
                                                                     unsigned int* count,
                                                                     nvmlProcessInfo_t* infos) {
  return rota::gpu::sim::Processes(device, count, infos, true);
}
ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device,
                                                                  unsigned int* count,
                                                                  nvmlProcessInfo_v1_t* infos) {
  return rota::gpu::sim::Processes(device, count, infos, true);
}
ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device,
                                                                      unsigned int* count,
                                                                      nvmlProcessInfo_t* infos) {
  return rota::gpu::sim::Processes(device, count, infos, false);
}
ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device,
                                                                      unsigned int* count,
                                                                      nvmlProcessInfo_t* infos) {
  return rota::gpu::sim::Processes(device, count, infos, false);
}
ROTA_SIM_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device,
                                                                   unsigned int* count,
                                                                   nvmlProcessInfo_v1_t* infos) {
  return rota::gpu::sim::Processes(device, count, infos, false);
}
