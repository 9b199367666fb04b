#include "gpu/gpu_source.hpp"

namespace sparkops::gpu {

std::string_view gpu_state_name(GpuState state) {
  switch (state) {
    case GpuState::ok:
      return "ok";
    case GpuState::no_library:
      return "no_library";
    case GpuState::init_failed:
      return "init_failed";
    case GpuState::no_devices:
      return "no_devices";
    case GpuState::lost:
      return "lost";
    case GpuState::hung:
      return "hung";
  }
  return "unknown";
}

namespace {

class NullGpuSource final : public GpuSource {
 public:
  NullGpuSource(GpuState state, std::string detail) : state_(state), detail_(std::move(detail)) {}
  std::string_view backend() const override { return "none"; }
  GpuState state() const override { return state_; }
  std::string state_detail() const override { return detail_; }
  std::optional<std::string> driver_version() const override { return std::nullopt; }
  const std::vector<GpuDevice>& devices() const override { return devices_; }
  Result<std::vector<GpuSnapshot>> snapshot() override { return std::vector<GpuSnapshot>{}; }

 private:
  GpuState state_;
  std::string detail_;
  std::vector<GpuDevice> devices_;
};

}  // namespace

std::unique_ptr<GpuSource> make_null_gpu_source(GpuState state, std::string detail) {
  return std::make_unique<NullGpuSource>(state, std::move(detail));
}

}  // namespace sparkops::gpu
