#include "trainlog/parse_log.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/file_io.hpp"
#include "trainlog/detect.hpp"
#include "trainlog/format_parser.hpp"
#include "trainlog/format_trainer_state.hpp"
#include "trainlog/log_text.hpp"
#include "trainlog/notebook_document.hpp"
#include "trainlog/sidecar.hpp"

namespace sparkops::trainlog {

std::unique_ptr<FormatParser> make_parser(LogFormat format, const ParseContext& ctx) {
  switch (format) {
    case LogFormat::megatron:
      return make_megatron_parser(ctx);
    case LogFormat::deepspeed:
      return make_deepspeed_parser(ctx);
    case LogFormat::mlx_lm:
      return make_mlx_lm_parser(ctx);
    case LogFormat::llama_cpp:
      return make_llama_cpp_parser(ctx);
    case LogFormat::llamafactory:
      return make_llamafactory_parser(ctx);
    case LogFormat::keras:
      return make_keras_parser(ctx);
    case LogFormat::litgpt:
      return make_litgpt_parser(ctx);
    case LogFormat::nanogpt:
      return make_nanogpt_parser(ctx);
    case LogFormat::fairseq:
      return make_fairseq_parser(ctx);
    case LogFormat::composer:
      return make_composer_parser(ctx);
    case LogFormat::step_lines:
      return make_step_lines_parser(ctx);
    case LogFormat::notebook:
      return make_notebook_parser(ctx);
    case LogFormat::trainer_state:  // whole-document format, handled before streaming
    case LogFormat::tqdm:
    case LogFormat::hf_trainer:
    case LogFormat::axolotl:
    case LogFormat::lightning:
    case LogFormat::torchtune:
      return make_tqdm_family_parser(format, ctx);
  }
  return make_tqdm_family_parser(format, ctx);
}

void anchor_elapsed(StepSeries& series, const ParseContext& ctx) {
  if (series.time_basis != TimeBasis::none || series.steps.empty()) return;
  auto& steps = series.steps;
  if (ctx.start) {
    // The first segment (until the elapsed clock goes back at a restart) starts at --start.
    double prev = -1;
    for (auto& r : steps) {
      if (!r.elapsed_seconds) continue;
      if (*r.elapsed_seconds + 1 < prev) break;
      prev = *r.elapsed_seconds;
      r.time = add_seconds(*ctx.start, *r.elapsed_seconds);
    }
    series.time_basis = TimeBasis::start_flag;
  } else if (ctx.file_mtime && steps.back().elapsed_seconds) {
    // The last record was written about when the file was last modified.
    const double last = *steps.back().elapsed_seconds;
    for (std::size_t i = steps.size(); i-- > 0;) {
      auto& r = steps[i];
      if (!r.elapsed_seconds || *r.elapsed_seconds > last + 1) break;
      r.time = add_seconds(*ctx.file_mtime, *r.elapsed_seconds - last);
      if (i > 0 && steps[i - 1].elapsed_seconds &&
          *steps[i - 1].elapsed_seconds > *r.elapsed_seconds + 1)
        break;
    }
    series.time_basis = TimeBasis::file_mtime;
    series.times_approximate = true;
  } else {
    return;
  }
  // A marker without a time takes the time of the first timed record of its step. Markers are
  // few and steps many: the markers that need a time are sorted by step and looked up per record,
  // rather than a table of every step built.
  std::vector<std::pair<std::int64_t, std::size_t>> wanted;  // (step, marker index)
  for (std::size_t i = 0; i < series.markers.size(); ++i) {
    const Marker& m = series.markers[i];
    if (!m.time && m.step) wanted.emplace_back(*m.step, i);
  }
  if (wanted.empty()) return;
  std::sort(wanted.begin(), wanted.end());
  for (const auto& r : steps) {
    if (!r.time) continue;
    auto it = std::lower_bound(wanted.begin(), wanted.end(),
                               std::pair<std::int64_t, std::size_t>{r.step, 0});
    for (; it != wanted.end() && it->first == r.step; ++it) {
      Marker& m = series.markers[it->second];
      if (!m.time) m.time = r.time;
    }
  }
}

namespace {

using ReaderFactory = std::function<Result<RecordReader>()>;

bool has_nul(std::string_view s) {
  return std::memchr(s.data(), '\0', s.size()) != nullptr;
}

Result<StepSeries> parse_stream(const ReaderFactory& open_log,
                                const std::function<std::optional<SidecarCursor>()>& open_sidecar,
                                const std::function<Result<std::string>()>& whole_text,
                                const ParseOptions& options, ParseContext ctx,
                                std::string_view name) {
  // Pass 1: detection.
  auto detect_reader = open_log();
  if (!detect_reader) return tl::unexpected(detect_reader.error());
  FormatDetector detector;
  std::string head;
  std::uint64_t lines = 0, binary = 0;
  LogLine line;
  // Ranks: rank 0 (and unranked lines) speak for the run; another rank only when rank 0 is absent.
  bool saw_rank0 = false;
  std::optional<int> lowest_rank;
  while (detect_reader->next(line)) {
    ++lines;
    if (has_nul(line.text)) {
      ++binary;
      continue;
    }
    std::optional<int> rank;
    const std::string_view raw = line.text;
    line.text = strip_line_prefix(line.text, &rank);
    if (rank) {
      if (*rank == 0) saw_rank0 = true;
      if (!lowest_rank || *rank < *lowest_rank) lowest_rank = rank;
    }
    if (head.size() < 65536) {
      head.append(line.text.substr(0, 65536 - head.size()));
      head.push_back('\n');
    }
    if (!options.format && !line.text.empty()) detector.feed(line.text);
    const auto pos = line.offset + raw.size();
    if (options.format || detector.confident()) break;
    if (pos >= options.detect_bytes && detector.result().format) break;
    if (pos >= options.max_detect_bytes) break;
  }
  if (detect_reader->read_error()) return fail(Errc::io, fmt::format("{}: read error", name));
  if (detect_reader->bytes_read() == 0)
    return fail(Errc::malformed, fmt::format("{}: empty file", name));
  if (lines > 0 && binary == lines) {
    return fail(Errc::malformed, fmt::format("{}: binary data, not a training log", name));
  }
  if ((!options.format && looks_like_trainer_state(head)) ||
      options.format == LogFormat::trainer_state) {
    auto text = whole_text();
    if (!text) return tl::unexpected(text.error());
    return parse_trainer_state(*text, name);
  }
  // A saved notebook: the log is its cells' outputs, read as the text they showed.
  if (!options.format && looks_like_notebook(head)) {
    auto text = whole_text();
    if (!text) return tl::unexpected(text.error());
    auto outputs = notebook_output_text(*text);
    if (!outputs) return fail(Errc::malformed, fmt::format("{}: {}", name, outputs.error().detail));
    if (looks_like_notebook(*outputs)) {
      return fail(Errc::malformed, fmt::format("{}: a notebook whose output is a notebook", name));
    }
    return parse_log_text(*outputs, options, std::nullopt, name);
  }
  Detection detection;
  if (options.format) {
    detection.format = options.format;
  } else {
    detection = detector.result();
  }
  if (!detection.format) {
    return fail(Errc::malformed,
                fmt::format("{}: no training steps in a known format (known formats: {})", name,
                            known_formats_list()));
  }

  // Pass 2: the parse.
  auto reader = open_log();
  if (!reader) return tl::unexpected(reader.error());
  auto sidecar = open_sidecar();
  ctx.sidecar = sidecar.has_value();
  SeriesBuilder builder(ctx.max_steps);
  builder.series().format = *detection.format;
  builder.notes().other_format = detection.other;
  builder.notes().other_format_lines = detection.other_evidence;
  auto parser = make_parser(*detection.format, ctx);
  std::uint64_t total_lines = 0, binary_lines = 0, other_rank = 0;
  const int keep_rank = saw_rank0 || !lowest_rank ? 0 : *lowest_rank;
  std::uint64_t reported = 0;
  while (reader->next(line)) {
    if (options.progress && reader->bytes_read() != reported) {
      reported = reader->bytes_read();
      options.progress(reported);
    }
    ++total_lines;
    if (has_nul(line.text)) {
      ++binary_lines;
      continue;
    }
    std::optional<int> rank;
    line.text = strip_line_prefix(line.text, &rank);
    if (rank && *rank != keep_rank) {
      ++other_rank;
      continue;
    }
    if (sidecar) line.stamped = sidecar->time_at(line.offset);
    parser->feed(line, builder);
  }
  parser->finish(builder);
  if (reader->read_error()) return fail(Errc::io, fmt::format("{}: read error", name));
  StepSeries series = builder.take();
  series.notes.bytes = reader->bytes_read();
  series.notes.lines = total_lines;
  series.notes.binary_lines = binary_lines;
  series.notes.overlong_lines = reader->overlong();
  series.notes.other_rank_lines = other_rank;
  if (sidecar) {
    series.notes.sidecar_mismatch = sidecar->has_unused_entries();
    series.notes.malformed_records += sidecar->malformed();
  }
  anchor_elapsed(series, ctx);
  return series;
}

}  // namespace

Result<StepSeries> parse_log_file(const std::filesystem::path& log, const ParseOptions& options) {
  ParseContext ctx;
  ctx.start = options.start;
  ctx.max_steps = options.max_steps;
  std::error_code ec;
  if (std::filesystem::is_directory(log, ec)) {
    return fail(Errc::invalid_argument,
                fmt::format("{}: is a directory, not a log file", log.string()));
  }
  if (options.use_mtime) {
    const auto mtime = std::filesystem::last_write_time(log, ec);
    if (!ec) {
      ctx.file_mtime = std::chrono::time_point_cast<SystemTime::duration>(
          std::chrono::file_clock::to_sys(mtime));
    }
  }
  std::optional<std::filesystem::path> sidecar_path = options.sidecar;
  if (!sidecar_path) {
    std::filesystem::path guess = log;
    guess += ".times";
    if (std::filesystem::is_regular_file(guess, ec)) sidecar_path = guess;
  }
  if (sidecar_path && !std::filesystem::is_regular_file(*sidecar_path, ec)) {
    return fail(Errc::not_found, fmt::format("{}: sidecar not found", sidecar_path->string()));
  }
  const auto open_log = [&]() { return RecordReader::open_file(log, options.max_record_bytes); };
  const auto open_sidecar = [&]() -> std::optional<SidecarCursor> {
    if (!sidecar_path) return std::nullopt;
    auto r = RecordReader::open_file(*sidecar_path);
    if (!r) return std::nullopt;
    return SidecarCursor(std::move(*r));
  };
  const auto whole = [&]() { return read_file(log, std::size_t{512} << 20); };
  return parse_stream(open_log, open_sidecar, whole, options, ctx, log.string());
}

Result<StepSeries> parse_log_text(std::string_view text, const ParseOptions& options,
                                  std::optional<std::string_view> sidecar_text,
                                  std::string_view name) {
  ParseContext ctx;
  ctx.start = options.start;
  ctx.max_steps = options.max_steps;
  const auto open_log = [&]() -> Result<RecordReader> {
    return RecordReader::from_text(text, options.max_record_bytes);
  };
  const auto open_sidecar = [&]() -> std::optional<SidecarCursor> {
    if (!sidecar_text) return std::nullopt;
    return SidecarCursor(RecordReader::from_text(*sidecar_text));
  };
  const auto whole = [&]() -> Result<std::string> { return std::string(text); };
  return parse_stream(open_log, open_sidecar, whole, options, ctx, name);
}

}  // namespace sparkops::trainlog
