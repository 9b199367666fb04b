#include "gpu/smi_source.hpp"

#include <fmt/format.h>

#include "base/text.hpp"
#include "gpu/smi_parse.hpp"
#include "gpu/subprocess.hpp"

namespace sparkops {

namespace {

// The first non-empty line of what nvidia-smi said, for a one-line state detail.
std::string first_line(const CapturedOutput& out) {
  for (const std::string* text : {&out.out, &out.err}) {
    for (auto line : split_lines(*text)) {
      if (!trim(line).empty()) return quote_for_message(trim(line), 160);
    }
  }
  return fmt::format("exit status {}", out.exit_code);
}

bool says_gpu_lost(const CapturedOutput& out) {
  return out.exit_code == 15 || icontains(out.out, "GPU is lost") ||
         icontains(out.err, "GPU is lost");
}

bool rejects_field(const CapturedOutput& out, std::string_view field) {
  return out.exit_code != 0 && (contains(out.out, field) || contains(out.err, field)) &&
         (icontains(out.out, "not a valid field") || icontains(out.err, "not a valid field"));
}

class SmiGpuSource final : public GpuSource {
 public:
  explicit SmiGpuSource(SmiSourceOptions options) : options_(std::move(options)) {
    fields_ = kSmiQueryGpuFields;
    auto rows = query_gpus();
    if (!rows) {
      state_ = rows.error().code == Errc::gpu_lost ? GpuState::lost : GpuState::init_failed;
      detail_ = rows.error().detail;
      return;
    }
    adopt(*rows);
  }

  std::string_view backend() const override { return "nvidia-smi"; }
  GpuState state() const override { return state_; }
  std::string state_detail() const override { return detail_; }
  std::optional<std::string> driver_version() const override { return driver_; }
  const std::vector<GpuDevice>& devices() const override { return devices_; }

  Result<std::vector<GpuSnapshot>> snapshot() override {
    if (state_ == GpuState::init_failed) return std::vector<GpuSnapshot>{};
    auto rows = query_gpus();
    if (!rows) {
      if (rows.error().code == Errc::gpu_lost) {
        state_ = GpuState::lost;
        detail_ = rows.error().detail;
      }
      return tl::unexpected(rows.error());
    }
    adopt(*rows);
    std::vector<GpuSnapshot> out;
    for (auto& rec : *rows) out.push_back(std::move(rec.snapshot));
    attach_processes(out);
    return out;
  }

 private:
  Result<CapturedOutput> run(const std::string& query_flag) const {
    return run_captured({options_.executable, query_flag, "--format=csv,noheader,nounits"},
                        options_.timeout, options_.max_output_bytes);
  }

  Result<std::vector<SmiGpuRecord>> query_gpus() {
    auto out = run(fmt::format("--query-gpu={}", fmt::join(fields_, ",")));
    if (out && rejects_field(*out, kSmiReasonsField)) {
      for (auto& f : fields_) {
        if (f == kSmiReasonsField) f = std::string(kSmiReasonsFieldOld);
      }
      out = run(fmt::format("--query-gpu={}", fmt::join(fields_, ",")));
    }
    if (!out) return tl::unexpected(out.error());
    if (out->exit_code != 0) {
      const std::string why = fmt::format("nvidia-smi failed: {}", first_line(*out));
      return fail(says_gpu_lost(*out) ? Errc::gpu_lost : Errc::unsupported, why);
    }
    auto rows = parse_smi_query_gpu(out->out, fields_);
    if (!rows) return tl::unexpected(rows.error());
    return rows;
  }

  void adopt(const std::vector<SmiGpuRecord>& rows) {
    devices_.clear();
    for (const auto& r : rows) {
      devices_.push_back(r.device);
      if (r.driver_version) driver_ = r.driver_version;
    }
    state_ = devices_.empty() ? GpuState::no_devices : GpuState::ok;
    detail_ = devices_.empty() ? "nvidia-smi lists no GPU" : "";
  }

  // Compute apps go to the GPU whose UUID they name; with one GPU, to it whatever the UUID says
  // (reporters elide UUIDs as "GPU-..."). A failing query leaves processes absent.
  void attach_processes(std::vector<GpuSnapshot>& snaps) const {
    auto out = run(fmt::format("--query-compute-apps={}", fmt::join(kSmiQueryAppsFields, ",")));
    if (!out || out->exit_code != 0) return;
    auto apps = parse_smi_compute_apps(out->out, kSmiQueryAppsFields);
    if (!apps) return;
    for (std::size_t i = 0; i < snaps.size(); ++i) {
      std::vector<GpuProcess> mine;
      for (const auto& app : *apps) {
        if (snaps.size() == 1 || (i < devices_.size() && app.gpu_uuid == devices_[i].uuid)) {
          mine.push_back(app.process);
        }
      }
      snaps[i].processes = std::move(mine);
    }
  }

  SmiSourceOptions options_;
  std::vector<std::string> fields_;
  GpuState state_ = GpuState::init_failed;
  std::string detail_;
  std::optional<std::string> driver_;
  std::vector<GpuDevice> devices_;
};

}  // namespace

std::unique_ptr<GpuSource> make_smi_gpu_source(const SmiSourceOptions& options) {
  return std::make_unique<SmiGpuSource>(options);
}

}  // namespace sparkops
