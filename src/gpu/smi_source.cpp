#include "gpu/smi_source.hpp"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/text.hpp"
#include "gpu/smi_parse.hpp"
#include "gpu/subprocess.hpp"

namespace sparkops::gpu {

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

// The field nvidia-smi refuses, from its one-line complaint (exit status 2, on stdout):
//   Field "clocks.max.mem" is not a valid field to query.
// Only a field we asked for counts (anything else is a failure we do not understand). Windows
// builds print typographic quotes; both forms are taken.
std::optional<std::string> rejected_field(const CapturedOutput& out,
                                          const std::vector<std::string>& asked) {
  if (out.exit_code == 0) return std::nullopt;
  for (const std::string* text : {&out.out, &out.err}) {
    for (auto line : split_lines(*text)) {
      const auto tail = line.find("is not a valid field");
      if (tail == std::string_view::npos) continue;
      for (const auto& field : asked) {
        for (const auto& [open, close] :
             {std::pair<std::string_view, std::string_view>{"\"", "\""}, {"\u201c", "\u201d"}}) {
          const std::string quoted = fmt::format("{}{}{}", open, field, close);
          const auto at = line.find(quoted);
          if (at != std::string_view::npos && at < tail) return field;
        }
      }
    }
  }
  return std::nullopt;
}

class SmiGpuSource final : public GpuSource {
 public:
  explicit SmiGpuSource(SmiSourceOptions options) : options_(std::move(options)) {
    auto rows = query_gpus();
    if (!rows) {
      state_ = rows.error().code == Errc::gpu_lost   ? GpuState::lost
               : rows.error().code == Errc::gpu_hung ? GpuState::hung
                                                     : GpuState::init_failed;
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
    // hung at construction: every later snapshot asks again and adopts the devices it finds.
    auto rows = query_gpus();
    if (!rows) {
      if (rows.error().code == Errc::gpu_lost || rows.error().code == Errc::gpu_hung) {
        state_ = rows.error().code == Errc::gpu_lost ? GpuState::lost : GpuState::hung;
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
  // Runs `--<query>=<fields>` until nvidia-smi accepts the list: each field the driver refuses is
  // dropped (for clocks_event_reasons.active its pre-535 name is tried first) and the query runs
  // again, at most once per field, so one field a driver does not know never costs the whole GPU.
  // `fields` keeps the reduced list for every later snapshot. The CSV text on success; a run that
  // outlives the timeout is gpu_hung, "GPU is lost" is gpu_lost, any other failure unsupported.
  static Result<std::string> query(const SmiSourceOptions& options, std::string_view name,
                                   std::vector<std::string>& fields) {
    const std::size_t attempts = fields.size() + 2;
    for (std::size_t attempt = 0; attempt < attempts && !fields.empty(); ++attempt) {
      auto out =
          run_captured({options.executable, fmt::format("--{}={}", name, fmt::join(fields, ",")),
                        "--format=csv,noheader,nounits"},
                       options.timeout, options.max_output_bytes);
      if (!out) {
        if (out.error().code == Errc::timed_out) {
          return fail(Errc::gpu_hung, fmt::format("nvidia-smi: {}", out.error().detail));
        }
        return tl::unexpected(out.error());
      }
      if (out->exit_code == 0) return std::move(out->out);
      const auto bad = rejected_field(*out, fields);
      if (!bad) {
        const std::string why = fmt::format("nvidia-smi failed: {}", first_line(*out));
        return fail(says_gpu_lost(*out) ? Errc::gpu_lost : Errc::unsupported, why);
      }
      const auto it = std::find(fields.begin(), fields.end(), *bad);
      if (*bad == kSmiReasonsField) {
        *it = std::string(kSmiReasonsFieldOld);
      } else {
        fields.erase(it);
      }
    }
    return fail(Errc::unsupported, fmt::format("nvidia-smi refused every field of --{}", name));
  }

  Result<std::vector<SmiGpuRecord>> query_gpus() {
    auto csv = query(options_, "query-gpu", fields_);
    if (!csv) return tl::unexpected(csv.error());
    return parse_smi_query_gpu(*csv, fields_);
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
  void attach_processes(std::vector<GpuSnapshot>& snaps) {
    auto csv = query(options_, "query-compute-apps", app_fields_);
    if (!csv) return;
    auto apps = parse_smi_compute_apps(*csv, app_fields_);
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
  std::vector<std::string> fields_ = kSmiQueryGpuFields;
  std::vector<std::string> app_fields_ = kSmiQueryAppsFields;
  GpuState state_ = GpuState::init_failed;
  std::string detail_;
  std::optional<std::string> driver_;
  std::vector<GpuDevice> devices_;
};

}  // namespace

std::unique_ptr<GpuSource> make_smi_gpu_source(const SmiSourceOptions& options) {
  return std::make_unique<SmiGpuSource>(options);
}

}  // namespace sparkops::gpu
