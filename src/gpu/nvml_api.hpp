#pragma once
// The subset of the NVML C API sparkops uses, declared here (never #include <nvml.h>: NVML is
// dlopened, not linked, and the build must not need the CUDA toolkit). Layouts and values follow
// NVIDIA's nvml.h; each struct is pinned by a static_assert on its size so a mismatch fails the
// build instead of corrupting memory at run time. The fake library in tests/gpu/fake_nvml
// implements the same declarations.

#include <cstdint>
#include <string_view>

typedef int nvmlReturn_t;  // nvmlReturn_enum; an int in the C ABI
typedef struct nvmlDevice_st* nvmlDevice_t;

// nvmlReturn_t codes.
inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr nvmlReturn_t NVML_ERROR_UNINITIALIZED = 1;
inline constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
inline constexpr nvmlReturn_t NVML_ERROR_NO_PERMISSION = 4;
inline constexpr nvmlReturn_t NVML_ERROR_ALREADY_INITIALIZED = 5;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_POWER = 8;
inline constexpr nvmlReturn_t NVML_ERROR_DRIVER_NOT_LOADED = 9;
inline constexpr nvmlReturn_t NVML_ERROR_TIMEOUT = 10;
inline constexpr nvmlReturn_t NVML_ERROR_IRQ_ISSUE = 11;
inline constexpr nvmlReturn_t NVML_ERROR_LIBRARY_NOT_FOUND = 12;
inline constexpr nvmlReturn_t NVML_ERROR_FUNCTION_NOT_FOUND = 13;
inline constexpr nvmlReturn_t NVML_ERROR_CORRUPTED_INFOROM = 14;
inline constexpr nvmlReturn_t NVML_ERROR_GPU_IS_LOST = 15;
inline constexpr nvmlReturn_t NVML_ERROR_RESET_REQUIRED = 16;
inline constexpr nvmlReturn_t NVML_ERROR_OPERATING_SYSTEM = 17;
inline constexpr nvmlReturn_t NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18;
inline constexpr nvmlReturn_t NVML_ERROR_IN_USE = 19;
inline constexpr nvmlReturn_t NVML_ERROR_MEMORY = 20;
inline constexpr nvmlReturn_t NVML_ERROR_NO_DATA = 21;
inline constexpr nvmlReturn_t NVML_ERROR_UNKNOWN = 999;

// Buffer sizes (the _V2 sizes, large enough for every current driver).
inline constexpr unsigned NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
inline constexpr unsigned NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
inline constexpr unsigned NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;

// "Not available" marker some fields carry, e.g. nvmlProcessInfo_t::usedGpuMemory.
inline constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE_ULL = ~0ULL;

// nvmlTemperatureSensors_t
inline constexpr int NVML_TEMPERATURE_GPU = 0;

// nvmlClockType_t
inline constexpr int NVML_CLOCK_GRAPHICS = 0;
inline constexpr int NVML_CLOCK_SM = 1;
inline constexpr int NVML_CLOCK_MEM = 2;
inline constexpr int NVML_CLOCK_VIDEO = 3;

// nvmlPstates_t: 0..15, or 32 for unknown.
inline constexpr int NVML_PSTATE_UNKNOWN = 32;

// nvmlValueType_t (nvmlFieldValue_t::valueType)
inline constexpr int NVML_VALUE_TYPE_DOUBLE = 0;
inline constexpr int NVML_VALUE_TYPE_UNSIGNED_INT = 1;
inline constexpr int NVML_VALUE_TYPE_UNSIGNED_LONG = 2;
inline constexpr int NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3;
inline constexpr int NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4;
inline constexpr int NVML_VALUE_TYPE_SIGNED_INT = 5;
inline constexpr int NVML_VALUE_TYPE_UNSIGNED_SHORT = 6;

// Field ids of the cumulative clocks-event-reason counters (nanoseconds).
// 74 and 76 are NVML_FI_DEV_PERF_POLICY_POWER / _SYNC_BOOST, aliased by nvml.h as
// NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP / _SYNC_BOOST; 75 is
// NVML_FI_DEV_PERF_POLICY_THERMAL. The three slowdown counters moved between releases: public test
// suites pin them at 251/252/253 for driver 580.65.06 (where 269-271 are power-smoothing fields),
// while driver 580.159.04 (measured on an H200, docs/gpu.md "Device check") declines 251-253 and
// answers 269/270/271, the ids of the current nvml.h. See choose_slowdown_ids().
inline constexpr unsigned NVML_FI_DEV_PERF_POLICY_POWER = 74;
inline constexpr unsigned NVML_FI_DEV_PERF_POLICY_THERMAL = 75;
inline constexpr unsigned NVML_FI_DEV_PERF_POLICY_SYNC_BOOST = 76;
inline constexpr unsigned NVML_FI_R580_SW_THERM_SLOWDOWN = 251;
inline constexpr unsigned NVML_FI_R580_HW_THERM_SLOWDOWN = 252;
inline constexpr unsigned NVML_FI_R580_HW_POWER_BRAKE_SLOWDOWN = 253;
inline constexpr unsigned NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN = 269;
inline constexpr unsigned NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN = 270;
inline constexpr unsigned NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN = 271;

extern "C" {

typedef struct nvmlMemory_st {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlMemory_v2_st {
  unsigned int version;  // nvmlMemory_v2 (see kNvmlMemoryV2Version)
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_v2_t;

// Layout shared by nvmlDeviceGetComputeRunningProcesses_v2 and _v3 (nvmlProcessInfo_v2_t).
typedef struct nvmlProcessInfo_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes; NVML_VALUE_NOT_AVAILABLE_ULL when unknown
  unsigned int gpuInstanceId;        // 0xFFFFFFFF without MIG
  unsigned int computeInstanceId;    // 0xFFFFFFFF without MIG
} nvmlProcessInfo_t;

typedef struct nvmlUtilization_st {
  unsigned int gpu;     // percent
  unsigned int memory;  // percent
} nvmlUtilization_t;

typedef struct nvmlPciInfo_st {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];  // "0000000F:01:00.0"
} nvmlPciInfo_t;

typedef struct nvmlMarginTemperature_v1_st {
  unsigned int version;   // nvmlMarginTemperature_v1 (see kNvmlMarginTemperatureV1Version)
  int marginTemperature;  // degrees C to the slowdown threshold
} nvmlMarginTemperature_v1_t;

typedef union nvmlValue_st {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
} nvmlValue_t;

typedef struct nvmlFieldValue_st {
  unsigned int fieldId;   // in
  unsigned int scopeId;   // in; 0 for device-wide fields
  long long timestamp;    // out, microseconds since 1970
  long long latencyUsec;  // out
  int valueType;          // out, nvmlValueType_t
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
} nvmlFieldValue_t;

// Function pointer types, one per symbol resolved with dlsym.
typedef nvmlReturn_t (*nvmlInit_fn)(void);
typedef nvmlReturn_t (*nvmlShutdown_fn)(void);
typedef const char* (*nvmlErrorString_fn)(nvmlReturn_t);
typedef nvmlReturn_t (*nvmlSystemGetDriverVersion_fn)(char*, unsigned int);
typedef nvmlReturn_t (*nvmlDeviceGetCount_fn)(unsigned int*);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByIndex_fn)(unsigned int, nvmlDevice_t*);
typedef nvmlReturn_t (*nvmlDeviceGetName_fn)(nvmlDevice_t, char*, unsigned int);
typedef nvmlReturn_t (*nvmlDeviceGetUUID_fn)(nvmlDevice_t, char*, unsigned int);
typedef nvmlReturn_t (*nvmlDeviceGetPciInfo_fn)(nvmlDevice_t, nvmlPciInfo_t*);
typedef nvmlReturn_t (*nvmlDeviceGetTemperature_fn)(nvmlDevice_t, int, unsigned int*);
typedef nvmlReturn_t (*nvmlDeviceGetMarginTemperature_fn)(nvmlDevice_t,
                                                          nvmlMarginTemperature_v1_t*);
typedef nvmlReturn_t (*nvmlDeviceGetPowerUsage_fn)(nvmlDevice_t, unsigned int*);
typedef nvmlReturn_t (*nvmlDeviceGetTotalEnergyConsumption_fn)(nvmlDevice_t, unsigned long long*);
typedef nvmlReturn_t (*nvmlDeviceGetEnforcedPowerLimit_fn)(nvmlDevice_t, unsigned int*);
typedef nvmlReturn_t (*nvmlDeviceGetClockInfo_fn)(nvmlDevice_t, int, unsigned int*);
typedef nvmlReturn_t (*nvmlDeviceGetUtilizationRates_fn)(nvmlDevice_t, nvmlUtilization_t*);
typedef nvmlReturn_t (*nvmlDeviceGetPerformanceState_fn)(nvmlDevice_t, int*);
typedef nvmlReturn_t (*nvmlDeviceGetClocksEventReasons_fn)(nvmlDevice_t, unsigned long long*);
typedef nvmlReturn_t (*nvmlDeviceGetFieldValues_fn)(nvmlDevice_t, int, nvmlFieldValue_t*);
typedef nvmlReturn_t (*nvmlDeviceGetMemoryInfo_fn)(nvmlDevice_t, nvmlMemory_t*);
typedef nvmlReturn_t (*nvmlDeviceGetMemoryInfo_v2_fn)(nvmlDevice_t, nvmlMemory_v2_t*);
typedef nvmlReturn_t (*nvmlDeviceGetComputeRunningProcesses_fn)(nvmlDevice_t, unsigned int*,
                                                                nvmlProcessInfo_t*);

}  // extern "C"

namespace sparkops::gpu::nvml {

// NVML_STRUCT_VERSION(name, ver): sizeof(struct) | ver << 24.
inline constexpr unsigned kNvmlMemoryV2Version =
    static_cast<unsigned>(sizeof(nvmlMemory_v2_t)) | (2U << 24U);
inline constexpr unsigned kNvmlMarginTemperatureV1Version =
    static_cast<unsigned>(sizeof(nvmlMarginTemperature_v1_t)) | (1U << 24U);

static_assert(sizeof(nvmlMemory_t) == 24);
static_assert(sizeof(nvmlMemory_v2_t) == 40);
static_assert(sizeof(nvmlProcessInfo_t) == 24);
static_assert(sizeof(nvmlUtilization_t) == 8);
static_assert(sizeof(nvmlPciInfo_t) == 68);
static_assert(sizeof(nvmlMarginTemperature_v1_t) == 8);
static_assert(sizeof(nvmlValue_t) == 8);
static_assert(sizeof(nvmlFieldValue_t) == 40);

// The field ids of the five throttle counters for a driver version string ("580.95.05").
enum class SlowdownIdSet {
  header_269,     // 269 SW thermal, 270 HW thermal, 271 HW power brake (nvml.h, r580.159+)
  early_r580_251  // 251, 252, 253 (early r580 releases)
};

// Both sets are requested in one nvmlDeviceGetFieldValues call; the early set wins only when the
// driver answers its SW-thermal id, because on those drivers 269-271 mean something else.
SlowdownIdSet choose_slowdown_ids(nvmlReturn_t sw_thermal_251_result);

}  // namespace sparkops::gpu::nvml
