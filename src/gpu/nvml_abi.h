#pragma once
// Our own declarations of the subset of the NVML C ABI that rota uses, written from the
// public ABI (names, values and struct layouts are part of the driver's stable ABI). No
// NVIDIA header is needed to build rota.
//
// The provider (nvml_provider.cc) never calls these functions directly: it resolves them
// with dlsym into pointers of the *_fn types below, so one binary runs with or without a
// driver. The simulated library (sim/) defines them with C linkage; declaring them here
// makes the compiler check that the simulator's signatures match.

#include <cstddef>

extern "C" {

typedef enum nvmlReturn_enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_UNKNOWN = 999,
} nvmlReturn_t;

typedef enum nvmlTemperatureSensors_enum {
  NVML_TEMPERATURE_GPU = 0,
} nvmlTemperatureSensors_t;

typedef enum nvmlClockType_enum {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3,
} nvmlClockType_t;

// Buffer sizes for the string getters (the _V2 sizes are the current maxima).
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16

// usedGpuMemory when the driver cannot tell (e.g. Windows WDDM, or no permission).
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

typedef struct nvmlDevice_st* nvmlDevice_t;  // opaque; owned by the library

typedef struct nvmlMemory_st {
  unsigned long long total;  // bytes
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlUtilization_st {
  unsigned int gpu;     // percent of time a kernel was running
  unsigned int memory;  // percent of time device memory was read or written
} nvmlUtilization_t;

// Layout used by nvmlDeviceGetPciInfo_v2 and _v3.
typedef struct nvmlPciInfo_st {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];  // "0000:3B:00.0"
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;  // device id << 16 | vendor id
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];  // "00000000:3B:00.0"
} nvmlPciInfo_t;

// Layout of the unversioned nvmlDeviceGet*RunningProcesses.
typedef struct nvmlProcessInfo_v1_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes, or NVML_VALUE_NOT_AVAILABLE
} nvmlProcessInfo_v1_t;

// Layout of nvmlDeviceGet*RunningProcesses_v2 and _v3.
typedef struct nvmlProcessInfo_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes, or NVML_VALUE_NOT_AVAILABLE
  unsigned int gpuInstanceId;        // 0xFFFFFFFF when not a MIG instance
  unsigned int computeInstanceId;
} nvmlProcessInfo_t;

// ---- Functions (C linkage). Each has a matching pointer type <name>_fn. ----
#define ROTA_NVML_FUNCTIONS(X)                                                                   \
  X(nvmlReturn_t, nvmlInit_v2, (void))                                                           \
  X(nvmlReturn_t, nvmlInit, (void))                                                              \
  X(nvmlReturn_t, nvmlShutdown, (void))                                                          \
  X(const char*, nvmlErrorString, (nvmlReturn_t result))                                         \
  X(nvmlReturn_t, nvmlDeviceGetCount_v2, (unsigned int* deviceCount))                            \
  X(nvmlReturn_t, nvmlDeviceGetCount, (unsigned int* deviceCount))                               \
  X(nvmlReturn_t, nvmlDeviceGetHandleByIndex_v2, (unsigned int index, nvmlDevice_t* device))     \
  X(nvmlReturn_t, nvmlDeviceGetHandleByIndex, (unsigned int index, nvmlDevice_t* device))        \
  X(nvmlReturn_t, nvmlDeviceGetName, (nvmlDevice_t device, char* name, unsigned int length))     \
  X(nvmlReturn_t, nvmlDeviceGetUUID, (nvmlDevice_t device, char* uuid, unsigned int length))     \
  X(nvmlReturn_t, nvmlDeviceGetPciInfo_v3, (nvmlDevice_t device, nvmlPciInfo_t * pci))           \
  X(nvmlReturn_t, nvmlDeviceGetPciInfo_v2, (nvmlDevice_t device, nvmlPciInfo_t * pci))           \
  X(nvmlReturn_t, nvmlDeviceGetMemoryInfo, (nvmlDevice_t device, nvmlMemory_t * memory))         \
  X(nvmlReturn_t, nvmlDeviceGetUtilizationRates,                                                 \
    (nvmlDevice_t device, nvmlUtilization_t * utilization))                                      \
  X(nvmlReturn_t, nvmlDeviceGetTemperature,                                                      \
    (nvmlDevice_t device, nvmlTemperatureSensors_t sensorType, unsigned int* temp))              \
  X(nvmlReturn_t, nvmlDeviceGetPowerUsage, (nvmlDevice_t device, unsigned int* power))           \
  X(nvmlReturn_t, nvmlDeviceGetEnforcedPowerLimit, (nvmlDevice_t device, unsigned int* limit))   \
  X(nvmlReturn_t, nvmlDeviceGetPowerManagementLimit, (nvmlDevice_t device, unsigned int* limit)) \
  X(nvmlReturn_t, nvmlDeviceGetPowerManagementDefaultLimit,                                      \
    (nvmlDevice_t device, unsigned int* defaultLimit))                                           \
  X(nvmlReturn_t, nvmlDeviceGetPowerManagementLimitConstraints,                                  \
    (nvmlDevice_t device, unsigned int* minLimit, unsigned int* maxLimit))                       \
  X(nvmlReturn_t, nvmlDeviceSetPowerManagementLimit, (nvmlDevice_t device, unsigned int limit))  \
  X(nvmlReturn_t, nvmlDeviceGetTotalEnergyConsumption,                                           \
    (nvmlDevice_t device, unsigned long long* energy))                                           \
  X(nvmlReturn_t, nvmlDeviceGetClockInfo,                                                        \
    (nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock))                            \
  X(nvmlReturn_t, nvmlDeviceGetFanSpeed, (nvmlDevice_t device, unsigned int* speed))             \
  X(nvmlReturn_t, nvmlDeviceGetComputeRunningProcesses_v3,                                       \
    (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_t* infos))                    \
  X(nvmlReturn_t, nvmlDeviceGetComputeRunningProcesses_v2,                                       \
    (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_t* infos))                    \
  X(nvmlReturn_t, nvmlDeviceGetComputeRunningProcesses,                                          \
    (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_v1_t* infos))                 \
  X(nvmlReturn_t, nvmlDeviceGetGraphicsRunningProcesses_v3,                                      \
    (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_t* infos))                    \
  X(nvmlReturn_t, nvmlDeviceGetGraphicsRunningProcesses_v2,                                      \
    (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_t* infos))                    \
  X(nvmlReturn_t, nvmlDeviceGetGraphicsRunningProcesses,                                         \
    (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_v1_t* infos))

#define ROTA_NVML_DECLARE(ret, name, args) \
  ret name args;                           \
  typedef ret(*name##_fn) args;
ROTA_NVML_FUNCTIONS(ROTA_NVML_DECLARE)
#undef ROTA_NVML_DECLARE

}  // extern "C"
