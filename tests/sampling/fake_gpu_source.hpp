#pragma once
// An in-process GpuSource for unit tests: returns the snapshots it is given, one per call, and can
// be told to report the GPU lost or hung. (The fake libnvidia-ml covers the real dlopen path in cli
// tests.)

#include <deque>
#include <string>
#include <vector>

#include "gpu/gpu_source.hpp"

namespace sparkops::test {

class FakeGpuSource final : public gpu::GpuSource {
 public:
  FakeGpuSource() { devices_.push_back({0, "NVIDIA GB10", "GPU-fake", "0000000F:01:00.0"}); }
  std::string_view backend() const override { return "fake"; }
  gpu::GpuState state() const override { return state_; }
  std::string state_detail() const override {
    return state_ == gpu::GpuState::ok ? "" : "GPU is lost";
  }
  std::optional<std::string> driver_version() const override { return "580.95.05"; }
  const std::vector<gpu::GpuDevice>& devices() const override { return devices_; }
  Result<std::vector<gpu::GpuSnapshot>> snapshot() override {
    ++calls;
    if (hung) {
      state_ = gpu::GpuState::hung;
      return fail(Errc::gpu_hung, "nvml: a GPU reading has not returned after 10.0 s");
    }
    if (!script.empty()) {
      auto next = script.front();
      script.pop_front();
      if (!next) {
        state_ = gpu::GpuState::lost;
        return fail(Errc::gpu_lost, "GPU 0: NVML_ERROR_GPU_IS_LOST");
      }
      state_ = gpu::GpuState::ok;
      last_ = *next;
      return std::vector<gpu::GpuSnapshot>{*next};
    }
    state_ = gpu::GpuState::ok;
    return std::vector<gpu::GpuSnapshot>{last_};
  }

  // nullopt entries mean "lost on this call"; after the script, the last snapshot repeats.
  std::deque<std::optional<gpu::GpuSnapshot>> script;
  int calls = 0;
  bool hung = false;  // answer as the watchdog does while a call is out
  std::vector<gpu::GpuDevice> devices_;

 private:
  gpu::GpuState state_ = gpu::GpuState::ok;
  gpu::GpuSnapshot last_;
};

}  // namespace sparkops::test
