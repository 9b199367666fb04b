// sparkops analyze: per-step timing from a training log, slowdowns and their causes from the
// thermal samples, as text, JSON or a self-contained HTML report.

#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/file_io.hpp"
#include "base/json_text.hpp"
#include "base/text.hpp"
#include "base/time_format.hpp"
#include "base/utf8.hpp"
#include "cli/commands.hpp"
#include "diagnose/diagnosis.hpp"
#include "diagnose/thermal_log.hpp"
#include "options/domain_options.hpp"
#include "report/analysis_json.hpp"
#include "report/analyze_render.hpp"
#include "report/html_report.hpp"
#include "term/colour.hpp"
#include "term/progress_line.hpp"
#include "trainlog/parse_log.hpp"

namespace sparkops::cli {

namespace {

struct AnalyzeFlags {
  std::string log;
  std::string thermal;
  std::string html;
  std::string start;
  std::string times;
  std::string format;
  std::string tz_offset;
  std::string utc_offset;
  std::optional<double> slowdown_factor;
  std::optional<std::int64_t> sustain_steps;
  std::optional<std::int64_t> warmup_steps;
};

void run_analyze(const AnalyzeFlags& f, AppContext& ctx) {
  const auto bad = [&](const std::string& message) {
    print_error(ctx, message);
    ctx.exit_code = kExitBadInput;
  };
  trainlog::ParseOptions po;
  if (!f.format.empty()) {
    po.format = trainlog::format_from_name(f.format);
    if (!po.format) {
      return bad(fmt::format("--format {}: unknown format (known formats: {})", f.format,
                             trainlog::known_formats_list()));
    }
  }
  if (!f.start.empty()) {
    po.start = parse_timestamp(f.start);
    if (!po.start)
      return bad(fmt::format("--start {}: not a timestamp (use 2025-11-09T09:26:12Z)", f.start));
  }
  if (!f.times.empty()) po.sidecar = f.times;
  report::ReportOptions report_options;
  if (!f.utc_offset.empty()) {
    const auto off = parse_utc_offset(f.utc_offset);
    if (!off) return bad(fmt::format("--utc-offset {}: expected +HH:MM or -HH:MM", f.utc_offset));
    report_options.utc_offset = *off;
  }
  diagnose::ThermalReadOptions to;
  if (!f.tz_offset.empty()) {
    const auto off = parse_utc_offset(f.tz_offset);
    if (!off) return bad(fmt::format("--tz-offset {}: expected +HH:MM or -HH:MM", f.tz_offset));
    to.tz_offset = *off;
  }
  // The flags are config keys set last: the config checks each value against its range
  // (config/config_bounds.cpp), so a slowdown factor of 1 or a negative share never gets here.
  const auto set = [&](std::string_view key, const auto& value, std::string_view flag) {
    if (!value) return true;
    auto st = ctx.config.set_from_flag(key, fmt::format("{}", *value), flag);
    if (!st) bad(st.error().detail);
    return static_cast<bool>(st);
  };
  if (!set("analyze.slowdown_factor", f.slowdown_factor, "--slowdown-factor") ||
      !set("analyze.sustain_steps", f.sustain_steps, "--sustain-steps") ||
      !set("analyze.warmup_steps", f.warmup_steps, "--warmup-steps"))
    return;
  const diagnose::DiagnoseOptions o = options::diagnose_options_from_config(ctx.config);

  std::error_code size_error;
  const auto log_size = std::filesystem::file_size(f.log, size_error);
  std::optional<trainlog::StepSeries> parsed;
  {
    term::ProgressLine progress(ctx.err, ctx.progress(), f.log,
                                size_error ? std::nullopt : std::optional<std::uint64_t>(log_size));
    if (progress.enabled()) po.progress = progress.callback();
    auto result = trainlog::parse_log_file(f.log, po);
    po.progress = nullptr;
    progress.finish();  // before any message: the line is gone when the answer or error prints
    if (!result) return bad(result.error().detail);
    parsed = std::move(*result);
  }
  const auto* series = &*parsed;
  std::optional<diagnose::ThermalLog> thermal;
  if (!f.thermal.empty()) {
    auto t = diagnose::read_thermal_log(f.thermal, to);
    if (!t) return bad(t.error().detail);
    thermal = std::move(*t);
  }
  const diagnose::ThermalLog* tp = thermal ? &*thermal : nullptr;
  const auto diagnosis = diagnose::diagnose(*series, tp, o);
  if (!f.html.empty()) {
    const std::string html =
        report::render_html_report(f.log, *series, diagnosis, tp, report_options);
    if (auto st = write_file_atomic(f.html, html, ctx.output_trust); !st) {
      print_error(ctx, st.error().detail);
      ctx.exit_code = kExitFailure;
      return;
    }
  }
  if (ctx.json) {
    const auto j = report::analysis_to_json(f.log, *series, diagnosis, tp);
    fmt::print(ctx.out, "{}\n", dump_document(j));
  } else {
    fmt::print(ctx.out, "{}",
               term::paint_lines(terminal_text(report::render_analysis_text(
                                     f.log, *series, diagnosis, f.thermal, tp)),
                                 ctx.colour(ctx.out)));
    if (!f.html.empty()) fmt::print(ctx.out, "Report     {}\n", terminal_text(f.html));
  }
}

}  // namespace

void add_analyze_command(CommandTree& tree, AppContext& ctx) {
  auto flags = std::make_shared<AnalyzeFlags>();
  auto* cmd = tree.add("analyze", "Step times from a training log, slowdowns and their causes");
  if (cmd == nullptr) return;
  cmd->add_option("--log", flags->log,
                  "Training log (tqdm, HF Trainer/TRL, trainer_state.json, LLaMA-Factory, "
                  "axolotl, Megatron, DeepSpeed, Lightning/NeMo, torchtune, MLX-LM, llama.cpp)")
      ->required()
      ->type_name("FILE");
  cmd->add_option(
         "--thermal", flags->thermal,
         "Thermal samples: nvidia-smi CSV, sparkops extended CSV or JSONL (see docs/csv-format.md)")
      ->type_name("FILE");
  cmd->add_option("--html", flags->html, "Write a self-contained HTML report with charts")
      ->type_name("FILE");
  cmd->add_option("--start", flags->start,
                  "When the run started (UTC), to date tqdm's elapsed times")
      ->type_name("TIME");
  cmd->add_option("--times", flags->times,
                  "Timestamp sidecar written by `sparkops watch` (default: LOG.times)")
      ->type_name("FILE");
  cmd->add_option("--format", flags->format, "Skip detection: " + trainlog::known_formats_list())
      ->type_name("NAME");
  cmd->add_option("--tz-offset", flags->tz_offset,
                  "UTC offset of the machine that wrote nvidia-smi timestamps (e.g. +01:00)")
      ->type_name("OFFSET");
  cmd->add_option(
         "--utc-offset", flags->utc_offset,
         "Label the HTML report's times in UTC plus this offset (default UTC), e.g. +02:00")
      ->type_name("OFFSET");
  cmd->add_option("--slowdown-factor", flags->slowdown_factor, "Overrides analyze.slowdown_factor")
      ->type_name("X");
  cmd->add_option("--sustain-steps", flags->sustain_steps, "Overrides analyze.sustain_steps")
      ->type_name("N");
  cmd->add_option("--warmup-steps", flags->warmup_steps, "Overrides analyze.warmup_steps")
      ->type_name("N");
  cmd->callback([flags, &ctx] { run_analyze(*flags, ctx); });
}

}  // namespace sparkops::cli
