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
    {LogFormat::keras, "keras"},
    {LogFormat::litgpt, "litgpt"},
    {LogFormat::nanogpt, "nanogpt"},
    {LogFormat::fairseq, "fairseq"},
    {LogFormat::composer, "composer"},
    {LogFormat::step_lines, "step_lines"},
    {LogFormat::notebook, "notebook"},
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
  if (n.truncated_document) {
    out.push_back(
        "document is cut off (still being written, or truncated): its complete entries were read");
  }
  if (n.inferred_steps) {
    out.push_back(
        "the log prints no step numbers: steps are the loss lines numbered in order (one per "
        "logging interval, not per optimizer step)");
  }
  if (n.other_rank_lines) {
    out.push_back(fmt::format("left out {} line(s) of other ranks", n.other_rank_lines));
  }
  return out;
}

std::string_view time_source_name(TimeSource s) {
  switch (s) {
    case TimeSource::none:
      return "none";
    case TimeSource::printed:
      return "printed";
    case TimeSource::ema:
      return "ema";
    case TimeSource::running_mean:
      return "running_mean";
    case TimeSource::elapsed_delta:
      return "elapsed_delta";
    case TimeSource::wall_delta:
      return "wall_delta";
    case TimeSource::samples_rate:
      return "samples_rate";
  }
  return "none";
}

RunRange primary_run(const StepSeries& s) {
  RunRange best;
  const std::size_t n = s.steps.size();
  if (n == 0) return best;
  std::vector<std::size_t> starts = s.run_starts;
  if (starts.empty() || starts.front() != 0) starts.insert(starts.begin(), 0);
  best.run_count = starts.size();
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const std::size_t b = std::min(starts[k], n);
    const std::size_t e = k + 1 < starts.size() ? std::min(starts[k + 1], n) : n;
    if (e <= b) continue;
    if (e - b > best.end - best.begin) {
      best.begin = b;
      best.end = e;
      best.index = k;
    }
  }
  return best;
}

namespace {

std::optional<double> median_of(std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  if (v.size() % 2 == 1) return v[mid];
  const double hi = v[mid];
  const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lo + hi) / 2.0;
}

}  // namespace

Headline headline(const StepSeries& s) {
  Headline h;
  h.run = primary_run(s);
  h.records = h.run.end - h.run.begin;
  std::vector<double> v;
  v.reserve(h.records);
  for (std::size_t i = h.run.begin; i < h.run.end; ++i) {
    const StepRecord& r = s.steps[i];
    if (r.seconds) v.push_back(*r.seconds);
    std::optional<std::int64_t> step = r.step;
    if (s.micro_steps_per_step > 1) {
      step = r.optimizer_step;
      if (step && *step <= 0) step.reset();
    }
    if (!step) continue;
    if (!h.first_step) h.first_step = step;
    h.last_step = step;
  }
  h.median_seconds = median_of(v);
  if (h.median_seconds) *h.median_seconds *= static_cast<double>(s.micro_steps_per_step);
  return h;
}

std::optional<double> median_seconds(const StepSeries& s) {
  return headline(s).median_seconds;
}

std::vector<std::pair<TimeSource, std::size_t>> time_sources(const StepSeries& s) {
  std::vector<std::pair<TimeSource, std::size_t>> out;
  const RunRange run = primary_run(s);
  for (std::size_t i = run.begin; i < run.end; ++i) {
    const StepRecord& r = s.steps[i];
    if (!r.seconds) continue;
    auto it =
        std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == r.source; });
    if (it == out.end()) {
      out.emplace_back(r.source, 1);
    } else {
      ++it->second;
    }
  }
  return out;
}

}  // namespace sparkops::trainlog
