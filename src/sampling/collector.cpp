#include "sampling/collector.hpp"

#include <algorithm>
#include <utility>

namespace sparkops::sampling {

Collector::Collector(const host::HostRoot& root, gpu::GpuSource* gpu, BackoffOptions backoff)
    : host_(root), gpu_(gpu), backoff_(backoff) {}

void Collector::collect_gpu(Sample& sample, SteadyTime steady) {
  if (gpu_ == nullptr) {
    sample.gpu_state = gpu::GpuState::no_library;
    return;
  }
  sample.devices = gpu_->devices();
  if (gpu_retry_at_ && steady < *gpu_retry_at_) {
    sample.gpu_state = gpu::GpuState::lost;
    sample.gpu_detail = gpu_lost_detail_;
    return;
  }
  auto snap = gpu_->snapshot();
  if (snap) {
    gpu_failures_ = 0;
    gpu_retry_at_.reset();
    sample.gpu_state = gpu_->state();
    sample.gpu_detail = gpu_->state_detail();
    if (sample.devices.empty()) sample.devices = gpu_->devices();
    sample.gpus.reserve(snap->size());
    for (auto& s : *snap) {
      GpuReading r;
      r.snapshot = std::move(s);
      sample.gpus.push_back(std::move(r));
    }
    return;
  }
  ++gpu_failures_;
  // A hung call (watchdog_source.hpp) is still out: asking again costs nothing and sees the
  // recovery on the first tick after it, so no back-off.
  if (snap.error().code == Errc::gpu_hung) {
    gpu_retry_at_.reset();
    sample.gpu_state = gpu::GpuState::hung;
    sample.gpu_detail = snap.error().detail;
    return;
  }
  const unsigned shift = std::min(gpu_failures_ - 1, 20U);
  const auto wait = std::min(backoff_.first * (std::int64_t{1} << shift), backoff_.max);
  gpu_retry_at_ = steady + wait;
  gpu_lost_detail_ = snap.error().detail;
  sample.gpu_state = gpu::GpuState::lost;
  sample.gpu_detail = gpu_lost_detail_;
}

Sample Collector::collect(std::uint64_t tick, SteadyTime steady, SystemTime wall) {
  Sample sample;
  sample.tick = tick;
  sample.steady_time = steady;
  sample.wall_time = wall;
  sample.host = host_.read();
  collect_gpu(sample, steady);
  compute_deltas(previous_ ? &*previous_ : nullptr, sample);
  previous_ = sample;
  return sample;
}

}  // namespace sparkops::sampling
