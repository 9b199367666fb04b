#pragma once
// A GpuSource that runs another source's every call (its construction, which is nvmlInit or the
// first nvidia-smi query, and each snapshot) on a worker thread it owns, and waits at most
// `timeout` for the answer. NVML has been seen to block for minutes on a wedged GB10, and a
// nvidia-smi stuck in the driver survives SIGKILL until the driver lets go; neither may stop the
// sampler, the exporter or `status` from reading the host side.
//
// When a call does not return in time the source turns `hung`: state() is GpuState::hung,
// state_detail() names the call and how long it has been out, and snapshot() returns
// Errc::gpu_hung at once — while the first call is still out no second one is started, so a hung
// driver costs one timeout, not one per tick. When the call finally returns, its (stale) answer is
// dropped and the next snapshot() asks again: the state follows the inner source from then on.
//
// Destruction never blocks on a hung call: the worker is detached and destroys the inner source
// (nvmlShutdown, dlclose) itself if the call ever returns. Not thread-safe, like every GpuSource:
// one thread owns it; the worker only ever touches the inner source.

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "config/run_sections.hpp"
#include "gpu/gpu_source.hpp"

namespace sparkops::gpu {

// 10 s: the bound the nvidia-smi fallback already had for one query. A healthy NVML call answers
// in milliseconds; nvmlInit without persistence mode spends up to a few seconds waking the GPU.
inline constexpr std::chrono::milliseconds kDefaultGpuCallTimeout =
    std::chrono::duration_cast<std::chrono::milliseconds>(config::GpuSettings{}.timeout);

struct WatchdogOptions {
  std::string backend;  // what backend() says before the inner source exists ("nvml", ...)
  std::chrono::milliseconds timeout = kDefaultGpuCallTimeout;
};

// `open` builds the inner source; it runs on the worker thread.
std::unique_ptr<GpuSource> make_watchdog_gpu_source(
    std::function<std::unique_ptr<GpuSource>()> open, WatchdogOptions options);

}  // namespace sparkops::gpu
