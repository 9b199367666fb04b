#include "trainlog/step_series.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace sparkops::trainlog {

namespace {

struct FormatName {
  LogFormat format;
  std::string_view name;
};

constexpr FormatName kFormatNames[] = {
    {LogFormat::tqdm, "tqdm"},
    {LogFormat::hf_trainer, "hf_trainer"},
    {LogFormat::trainer_state, "trainer_state"},
    {LogFormat::llamafactory, "llamafactory"},
    {LogFormat::axolotl, "axolotl"},
    {LogFormat::megatron, "megatron"},
    {LogFormat::deepspeed, "deepspeed"},
    {LogFormat::lightning, "lightning"},
    {LogFormat::torchtune, "torchtune"},
    {LogFormat::mlx_lm, "mlx_lm"},
    {LogFormat::llama_cpp, "llama_cpp"},
};

}  // namespace

std::string_view format_name(LogFormat f) {
  for (const auto& n : kFormatNames) {
    if (n.format == f) return n.name;
  }
  return "unknown";
}

std::optional<LogFormat> format_from_name(std::string_view name) {
  for (const auto& n : kFormatNames) {
    if (n.name == name) return n.format;
  }
  return std::nullopt;
}

const std::vector<LogFormat>& all_formats() {
  static const std::vector<LogFormat> formats = [] {
    std::vector<LogFormat> v;
    for (const auto& n : kFormatNames) v.push_back(n.format);
    return v;
  }();
  return formats;
}

std::string known_formats_list() {
  std::string out;
  for (const auto& n : kFormatNames) {
    if (!out.empty()) out += ", ";
    out += n.name;
  }
  return out;
}

std::string_view time_basis_name(TimeBasis b) {
  switch (b) {
    case TimeBasis::none:
      return "none";
    case TimeBasis::log_timestamps:
      return "log_timestamps";
    case TimeBasis::sidecar:
      return "sidecar";
    case TimeBasis::start_flag:
      return "start_flag";
    case TimeBasis::file_mtime:
      return "file_mtime";
  }
  return "none";
}

std::string_view marker_kind_name(MarkerKind k) {
  switch (k) {
    case MarkerKind::eval:
      return "eval";
    case MarkerKind::checkpoint:
      return "checkpoint";
    case MarkerKind::restart:
      return "restart";
    case MarkerKind::stall:
      return "stall";
  }
  return "eval";
}

std::vector<std::string> describe_notes(const ParseNotes& n) {
  std::vector<std::string> out;
  if (n.binary_lines)
    out.push_back(fmt::format("skipped {} line(s) of binary data", n.binary_lines));
  if (n.overlong_lines) {
    out.push_back(fmt::format("{} overlong line(s) were read in pieces", n.overlong_lines));
  }
  if (n.malformed_records) {
    out.push_back(fmt::format("skipped {} malformed record(s)", n.malformed_records));
  }
  if (n.backwards_times) {
    out.push_back(fmt::format("ignored {} timestamp(s) that went backwards", n.backwards_times));
  }
  if (n.other_format_lines && n.other_format) {
    out.push_back(fmt::format("ignored {} line(s) in another format ({})", n.other_format_lines,
                              format_name(*n.other_format)));
  }
  if (n.downsample_stride > 1) {
    out.push_back(
        fmt::format("series downsampled: each record merges {} steps", n.downsample_stride));
  }
  if (n.dropped_markers)
    out.push_back(fmt::format("dropped {} marker(s) over the cap", n.dropped_markers));
  if (n.sidecar_mismatch) out.push_back("the .times sidecar does not cover the whole log");
  return out;
}

std::optional<double> median_seconds(const StepSeries& s) {
  std::vector<double> v;
  v.reserve(s.steps.size());
  for (const auto& r : s.steps) {
    if (r.seconds) v.push_back(*r.seconds);
  }
  if (v.empty()) return std::nullopt;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  if (v.size() % 2 == 1) return v[mid];
  const double hi = v[mid];
  const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lo + hi) / 2.0;
}

}  // namespace sparkops::trainlog
