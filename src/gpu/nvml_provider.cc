#include "gpu/nvml_provider.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>

#include "common/log.h"

namespace rota::gpu {
namespace {

constexpr unsigned kMaxGpus = 64;  // api::kMaxGpusPerNode
constexpr int kMaxGrowAttempts = 5;

// Calls `fn` if the library exports it; a missing symbol reads as "not supported".
template <typename Fn, typename... Args>
nvmlReturn_t Call(Fn fn, Args... args) {
  return fn ? fn(args...) : NVML_ERROR_NOT_SUPPORTED;
}

std::string FromBuffer(const char* buf, size_t size) {
  return std::string(buf, strnlen(buf, size));
}

}  // namespace

NvmlProvider::NvmlProvider(void* lib, const NvmlApi& api) : lib_(lib), api_(api) {
  buf_.resize(32);
  buf_v1_.resize(32);
}

NvmlProvider::~NvmlProvider() {
  if (api_.nvmlShutdown) api_.nvmlShutdown();
  if (lib_) dlclose(lib_);
}

std::string NvmlProvider::ErrorString(nvmlReturn_t r) const {
  const char* s = api_.nvmlErrorString ? api_.nvmlErrorString(r) : nullptr;
  if (s && *s) return s;
  return "NVML error " + std::to_string(static_cast<int>(r));
}

Result<unsigned> NvmlProvider::Count() {
  if (count_) return *count_;
  unsigned n = 0;
  nvmlReturn_t r = api_.nvmlDeviceGetCount_v2(&n);
  if (r != NVML_SUCCESS) {
    return Status::Unavailable("nvmlDeviceGetCount failed: " + ErrorString(r));
  }
  if (n > kMaxGpus) {
    ROTA_LOG(WARNING) << "NVML reports " << n << " GPUs; using the first " << kMaxGpus;
    n = kMaxGpus;
  }
  count_ = n;
  handles_.assign(n, nullptr);
  uuids_.assign(n, "");
  unsupported_.assign(n, 0);
  return n;
}

nvmlReturn_t NvmlProvider::Handle(unsigned index, nvmlDevice_t* out) {
  if (handles_[index] == nullptr) {
    nvmlDevice_t d = nullptr;
    nvmlReturn_t r = api_.nvmlDeviceGetHandleByIndex_v2(index, &d);
    if (r != NVML_SUCCESS) return r;
    if (d == nullptr) return NVML_ERROR_UNKNOWN;
    handles_[index] = d;
  }
  *out = handles_[index];
  return NVML_SUCCESS;
}

const std::string& NvmlProvider::Uuid(unsigned index, nvmlDevice_t device) {
  if (uuids_[index].empty()) {
    char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    if (Call(api_.nvmlDeviceGetUUID, device, buf, unsigned{sizeof(buf)}) == NVML_SUCCESS) {
      uuids_[index] = FromBuffer(buf, sizeof(buf));
    }
  }
  return uuids_[index];
}

bool NvmlProvider::Ok(nvmlReturn_t r, unsigned index, const char* field, std::string* failure) {
  if (r == NVML_SUCCESS) return true;
  if (r == NVML_ERROR_GPU_IS_LOST) {
    *failure = "gpu is lost";
  } else if (r == NVML_ERROR_RESET_REQUIRED) {
    *failure = "gpu requires reset";
  } else if (r != NVML_ERROR_NOT_SUPPORTED) {
    std::string key = std::to_string(index) + "/" + field + "/" + std::to_string(r);
    if (warned_.insert(key).second) {
      ROTA_LOG(WARNING) << "gpu " << index << ": reading " << field << " failed: " << ErrorString(r)
                        << " (reported as absent)";
    }
  }
  return false;
}

bool NvmlProvider::Asks(unsigned index, Field field) const {
  return index >= unsupported_.size() || (unsupported_[index] & (1u << field)) == 0;
}

bool NvmlProvider::Read(nvmlReturn_t r, unsigned index, Field field, std::string* failure) {
  static constexpr const char* kNames[kFieldCount] = {
      "memory",   "utilization", "temperature", "power", "enforced power limit",
      "power_limit", "energy",   "sm_clock",    "mem_clock", "fan",
      "compute processes", "graphics processes"};
  if (r == NVML_ERROR_NOT_SUPPORTED && index < unsupported_.size()) {
    unsupported_[index] |= 1u << field;
  }
  return Ok(r, index, kNames[field], failure);
}

Result<std::vector<api::GpuInfo>> NvmlProvider::Devices() {
  ASSIGN_OR_RETURN(unsigned n, Count());
  std::vector<api::GpuInfo> out(n);
  for (unsigned i = 0; i < n; ++i) {
    api::GpuInfo& g = out[i];
    g.index = i;
    std::string failure;
    nvmlDevice_t d = nullptr;
    if (!Ok(Handle(i, &d), i, "handle", &failure)) continue;
    g.uuid = Uuid(i, d);
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
    if (Ok(Call(api_.nvmlDeviceGetName, d, name, unsigned{sizeof(name)}), i, "name", &failure)) {
      g.name = FromBuffer(name, sizeof(name));
    }
    nvmlPciInfo_t pci{};
    nvmlReturn_t r = api_.nvmlDeviceGetPciInfo_v3 ? api_.nvmlDeviceGetPciInfo_v3(d, &pci)
                                                  : Call(api_.nvmlDeviceGetPciInfo_v2, d, &pci);
    if (Ok(r, i, "pci", &failure)) g.pci_bus_id = FromBuffer(pci.busId, sizeof(pci.busId));
    nvmlMemory_t mem{};
    if (Ok(Call(api_.nvmlDeviceGetMemoryInfo, d, &mem), i, "memory", &failure)) {
      g.memory_total_bytes = mem.total;
    }
    unsigned limit = 0;
    r = Call(api_.nvmlDeviceGetEnforcedPowerLimit, d, &limit);
    if (r == NVML_ERROR_NOT_SUPPORTED) r = Call(api_.nvmlDeviceGetPowerManagementLimit, d, &limit);
    if (Ok(r, i, "power_limit", &failure)) g.power_limit_mw = limit;
    if (auto range = GetPowerLimits(i); range.ok()) {
      g.power_min_mw = range->min_mw;
      g.power_max_mw = range->max_mw;
      g.power_default_mw = range->default_mw;
    }
  }
  return out;
}

nvmlReturn_t NvmlProvider::ReadProcesses(nvmlDevice_t device, bool compute,
                                         std::vector<ProcEntry>* out) {
  out->clear();
  auto v3 = compute ? api_.nvmlDeviceGetComputeRunningProcesses_v3
                    : api_.nvmlDeviceGetGraphicsRunningProcesses_v3;
  auto v2 = compute ? api_.nvmlDeviceGetComputeRunningProcesses_v2
                    : api_.nvmlDeviceGetGraphicsRunningProcesses_v2;
  auto v1 = compute ? api_.nvmlDeviceGetComputeRunningProcesses
                    : api_.nvmlDeviceGetGraphicsRunningProcesses;
  auto fn = v3 ? v3 : v2;
  if (!fn && !v1) return NVML_ERROR_NOT_SUPPORTED;
  for (int attempt = 0; attempt < kMaxGrowAttempts; ++attempt) {
    unsigned count = 0;
    nvmlReturn_t r;
    if (fn) {
      count = static_cast<unsigned>(buf_.size());
      r = fn(device, &count, buf_.data());
    } else {
      count = static_cast<unsigned>(buf_v1_.size());
      r = v1(device, &count, buf_v1_.data());
    }
    if (r == NVML_ERROR_INSUFFICIENT_SIZE) {
      // `count` is now the number needed; leave room for processes starting meanwhile.
      size_t want = std::max<size_t>(count, buf_.size()) * 5 / 4 + 8;
      if (fn) {
        buf_.resize(want);
      } else {
        buf_v1_.resize(want);
      }
      continue;
    }
    if (r != NVML_SUCCESS) return r;
    for (unsigned k = 0; k < count; ++k) {
      if (fn) {
        out->push_back({buf_[k].pid, buf_[k].usedGpuMemory});
      } else {
        out->push_back({buf_v1_[k].pid, buf_v1_[k].usedGpuMemory});
      }
    }
    return NVML_SUCCESS;
  }
  return NVML_ERROR_INSUFFICIENT_SIZE;
}

void NvmlProvider::SampleOne(unsigned i, api::GpuSample* s) {
  std::string failure;
  auto fail = [&] {
    std::string uuid = std::move(s->uuid);
    *s = api::GpuSample{};
    s->index = i;
    s->uuid = std::move(uuid);
    s->failed = true;
    s->error = failure;
  };
  nvmlDevice_t d = nullptr;
  nvmlReturn_t r = Handle(i, &d);
  if (r != NVML_SUCCESS) {
    if (!Ok(r, i, "handle", &failure) && failure.empty()) {
      failure = "cannot get device handle: " + ErrorString(r);
    }
    return fail();
  }
  s->uuid = Uuid(i, d);

  nvmlMemory_t mem{};
  if (Asks(i, kMemory) && Read(Call(api_.nvmlDeviceGetMemoryInfo, d, &mem), i, kMemory, &failure)) {
    s->memory_total_bytes = mem.total;
    s->memory_used_bytes = mem.used;
  }
  if (!failure.empty()) return fail();

  nvmlUtilization_t util{};
  if (Asks(i, kUtilization) &&
      Read(Call(api_.nvmlDeviceGetUtilizationRates, d, &util), i, kUtilization, &failure)) {
    s->util_gpu_pct = util.gpu;
    s->util_memory_pct = util.memory;
  }
  if (!failure.empty()) return fail();

  unsigned v = 0;
  if (Asks(i, kTemperature) &&
      Read(Call(api_.nvmlDeviceGetTemperature, d, NVML_TEMPERATURE_GPU, &v), i, kTemperature,
           &failure)) {
    s->temperature_c = v;
  }
  if (!failure.empty()) return fail();

  if (Asks(i, kPower) && Read(Call(api_.nvmlDeviceGetPowerUsage, d, &v), i, kPower, &failure)) {
    s->power_mw = v;
  }
  if (!failure.empty()) return fail();

  r = NVML_ERROR_NOT_SUPPORTED;
  if (Asks(i, kEnforcedLimit)) {
    r = Call(api_.nvmlDeviceGetEnforcedPowerLimit, d, &v);
    if (r == NVML_ERROR_NOT_SUPPORTED && i < unsupported_.size()) {
      unsupported_[i] |= 1u << kEnforcedLimit;
    }
  }
  if (r == NVML_ERROR_NOT_SUPPORTED && Asks(i, kPowerLimit)) {
    r = Call(api_.nvmlDeviceGetPowerManagementLimit, d, &v);
  }
  if (Asks(i, kPowerLimit) && Read(r, i, kPowerLimit, &failure)) s->power_limit_mw = v;
  if (!failure.empty()) return fail();

  unsigned long long energy = 0;
  if (Asks(i, kEnergy) &&
      Read(Call(api_.nvmlDeviceGetTotalEnergyConsumption, d, &energy), i, kEnergy, &failure)) {
    s->energy_mj = energy;
  }
  if (!failure.empty()) return fail();

  if (Asks(i, kSmClock) &&
      Read(Call(api_.nvmlDeviceGetClockInfo, d, NVML_CLOCK_SM, &v), i, kSmClock, &failure)) {
    s->sm_clock_mhz = v;
  }
  if (!failure.empty()) return fail();
  if (Asks(i, kMemClock) &&
      Read(Call(api_.nvmlDeviceGetClockInfo, d, NVML_CLOCK_MEM, &v), i, kMemClock, &failure)) {
    s->mem_clock_mhz = v;
  }
  if (!failure.empty()) return fail();

  if (Asks(i, kFan) && Read(Call(api_.nvmlDeviceGetFanSpeed, d, &v), i, kFan, &failure)) {
    s->fan_pct = v;
  }
  if (!failure.empty()) return fail();

  bool have_compute = Asks(i, kComputeProcs) &&
                      Read(ReadProcesses(d, true, &compute_), i, kComputeProcs, &failure);
  if (!failure.empty()) return fail();
  bool have_graphics = Asks(i, kGraphicsProcs) &&
                       Read(ReadProcesses(d, false, &graphics_), i, kGraphicsProcs, &failure);
  if (!failure.empty()) return fail();
  if (!have_compute) compute_.clear();
  if (!have_graphics) graphics_.clear();

  auto by_pid = [](const ProcEntry& a, const ProcEntry& b) { return a.pid < b.pid; };
  std::sort(compute_.begin(), compute_.end(), by_pid);
  std::sort(graphics_.begin(), graphics_.end(), by_pid);
  s->processes.reserve(compute_.size() + graphics_.size());
  auto add = [&](const ProcEntry& e, const char* type) {
    api::GpuProcess p;
    p.pid = e.pid;
    p.type = type;
    if (e.used_memory != NVML_VALUE_NOT_AVAILABLE) p.gpu_memory_bytes = e.used_memory;
    s->processes.push_back(std::move(p));
  };
  // Merge by pid; a pid in both lists (or twice in one) appears once, as compute.
  size_t a = 0, b = 0;
  while (a < compute_.size() || b < graphics_.size()) {
    bool take_compute =
        b == graphics_.size() || (a < compute_.size() && compute_[a].pid <= graphics_[b].pid);
    const ProcEntry& e = take_compute ? compute_[a] : graphics_[b];
    if (s->processes.empty() || s->processes.back().pid != e.pid) {
      add(e, take_compute ? "compute" : "graphics");
    }
    if (take_compute) {
      ++a;
    } else {
      ++b;
    }
  }
  if (s->processes.size() > api::kMaxProcessesPerGpu) {
    s->processes.resize(api::kMaxProcessesPerGpu);
  }
}

Result<std::vector<api::GpuSample>> NvmlProvider::Sample() {
  ASSIGN_OR_RETURN(unsigned n, Count());
  std::vector<api::GpuSample> out(n);
  for (unsigned i = 0; i < n; ++i) {
    out[i].index = i;
    SampleOne(i, &out[i]);
  }
  return out;
}

Result<std::unique_ptr<GpuProvider>> OpenNvml(const std::string& library_path) {
  dlerror();
  void* lib = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* e = dlerror();
    std::string err = e ? e : "unknown dlopen error";
    if (err.find("No such file") != std::string::npos) {
      return Status::Unavailable(library_path + " not found: no NVIDIA driver on this machine");
    }
    return Status::Unavailable("cannot load " + library_path + ": " + err);
  }
  NvmlApi api;
#define ROTA_NVML_RESOLVE(ret, name, args) \
  api.name = reinterpret_cast<name##_fn>(dlsym(lib, #name));
  ROTA_NVML_FUNCTIONS(ROTA_NVML_RESOLVE)
#undef ROTA_NVML_RESOLVE
  if (!api.nvmlInit_v2) api.nvmlInit_v2 = api.nvmlInit;
  if (!api.nvmlDeviceGetCount_v2) api.nvmlDeviceGetCount_v2 = api.nvmlDeviceGetCount;
  if (!api.nvmlDeviceGetHandleByIndex_v2) {
    api.nvmlDeviceGetHandleByIndex_v2 = api.nvmlDeviceGetHandleByIndex;
  }
  const char* missing = !api.nvmlInit_v2                     ? "nvmlInit_v2"
                        : !api.nvmlShutdown                  ? "nvmlShutdown"
                        : !api.nvmlDeviceGetCount_v2         ? "nvmlDeviceGetCount_v2"
                        : !api.nvmlDeviceGetHandleByIndex_v2 ? "nvmlDeviceGetHandleByIndex_v2"
                                                             : nullptr;
  if (missing) {
    dlclose(lib);
    return Status::Unavailable(library_path + " is not an NVML library: it lacks " + missing);
  }
  nvmlReturn_t r = api.nvmlInit_v2();
  if (r != NVML_SUCCESS) {
    const char* s = api.nvmlErrorString ? api.nvmlErrorString(r) : nullptr;
    std::string reason = (s && *s) ? s : "NVML error " + std::to_string(static_cast<int>(r));
    dlclose(lib);
    return Status::Unavailable("nvmlInit_v2 failed (" + library_path + "): " + reason);
  }
  return std::unique_ptr<GpuProvider>(new NvmlProvider(lib, api));
}

Status NvmlProvider::Fail(nvmlReturn_t r, uint32_t index, const std::string& what) const {
  const std::string m = "gpu " + std::to_string(index) + ": " + what + ": " + ErrorString(r);
  switch (r) {
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return Status::Unimplemented(m + " (this GPU or driver does not support it)");
    case NVML_ERROR_NO_PERMISSION:
      return Status::PermissionDenied(m + " (setting power limits needs root)");
    case NVML_ERROR_INVALID_ARGUMENT:
      return Status::InvalidArgument(m);
    default:
      return Status::Unavailable(m);
  }
}

Result<GpuProvider::PowerLimits> NvmlProvider::GetPowerLimits(uint32_t index) {
  ASSIGN_OR_RETURN(unsigned n, Count());
  if (index >= n) return Status::InvalidArgument("gpu " + std::to_string(index) + ": no such GPU");
  nvmlDevice_t d = nullptr;
  if (nvmlReturn_t r = Handle(index, &d); r != NVML_SUCCESS) return Fail(r, index, "device handle");
  PowerLimits p;
  if (nvmlReturn_t r = Call(api_.nvmlDeviceGetPowerManagementLimitConstraints, d, &p.min_mw, &p.max_mw);
      r != NVML_SUCCESS) {
    return Fail(r, index, "power limit constraints");
  }
  if (nvmlReturn_t r = Call(api_.nvmlDeviceGetPowerManagementDefaultLimit, d, &p.default_mw); r != NVML_SUCCESS) {
    p.default_mw = p.max_mw;  // the default is the top of the range on every GPU we know
  }
  nvmlReturn_t r = Call(api_.nvmlDeviceGetPowerManagementLimit, d, &p.current_mw);
  if (r != NVML_SUCCESS) r = Call(api_.nvmlDeviceGetEnforcedPowerLimit, d, &p.current_mw);
  if (r != NVML_SUCCESS) return Fail(r, index, "power limit");
  return p;
}

Status NvmlProvider::SetPowerLimit(uint32_t index, uint32_t mw) {
  ASSIGN_OR_RETURN(PowerLimits limits, GetPowerLimits(index));
  if (mw < limits.min_mw || mw > limits.max_mw) {
    return Status::InvalidArgument("gpu " + std::to_string(index) + ": power limit " + std::to_string(mw / 1000) +
                                   " W is outside its range " + std::to_string(limits.min_mw / 1000) + ".." +
                                   std::to_string(limits.max_mw / 1000) + " W");
  }
  nvmlDevice_t d = nullptr;
  if (nvmlReturn_t r = Handle(index, &d); r != NVML_SUCCESS) return Fail(r, index, "device handle");
  if (nvmlReturn_t r = Call(api_.nvmlDeviceSetPowerManagementLimit, d, static_cast<unsigned>(mw));
      r != NVML_SUCCESS) {
    return Fail(r, index, "setting the power limit");
  }
  return Status::Ok();
}

}  // namespace rota::gpu
