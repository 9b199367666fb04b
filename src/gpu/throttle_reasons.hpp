#pragma once
// NVML clocks-event-reason bits (nvml.h nvmlClocksEventReason*) and their names.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sparkops::gpu {

inline constexpr std::uint64_t kReasonGpuIdle = 0x1;
inline constexpr std::uint64_t kReasonApplicationsClocks = 0x2;
inline constexpr std::uint64_t kReasonSwPowerCap = 0x4;
inline constexpr std::uint64_t kReasonHwSlowdown = 0x8;
inline constexpr std::uint64_t kReasonSyncBoost = 0x10;
inline constexpr std::uint64_t kReasonSwThermal = 0x20;
inline constexpr std::uint64_t kReasonHwThermal = 0x40;
inline constexpr std::uint64_t kReasonHwPowerBrake = 0x80;
inline constexpr std::uint64_t kReasonDisplayClock = 0x100;

// Bits that mean the GPU is being held back (everything but idle, app clocks and display clock).
inline constexpr std::uint64_t kThrottlingReasonsMask = kReasonSwPowerCap | kReasonHwSlowdown |
                                                        kReasonSyncBoost | kReasonSwThermal |
                                                        kReasonHwThermal | kReasonHwPowerBrake;

// snake_case names in bit order: {"gpu_idle", "sw_power_cap", ...}. Unknown bits: "0x200".
std::vector<std::string> reason_names(std::uint64_t mask);
// "sw_power_cap|sw_thermal", or "none" for 0.
std::string reason_names_joined(std::uint64_t mask, std::string_view sep = "|");

// The reason in words, for text a person reads (JSON and metrics keep the names): what nvml.h's
// comment on each nvmlClocksEventReason* says, e.g. "sw_power_cap" -> "software power cap".
// A name it does not know (an unknown bit, "0x200") comes back as given.
std::string_view reason_words(std::string_view name);
// The reasons of `mask` in words joined by `sep`, or "none" for 0.
std::string reason_words_joined(std::uint64_t mask, std::string_view sep = ", ");

}  // namespace sparkops::gpu
