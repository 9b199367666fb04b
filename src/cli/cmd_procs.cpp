// sparkops procs: who else is on the pool, what they may take, and whether a run can start beside
// them.

#include <cstdlib>
#include <memory>

#include <fmt/format.h>
#include "base/file_io.hpp"
#include "base/json_text.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "base/utf8.hpp"
#include "cli/colour.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/plan_flags.hpp"
#include "cli/procs_render.hpp"
#include "cli/terminal.hpp"
#include "gpu/smi_parse.hpp"
#include "host/meminfo.hpp"
#include "plan/anchors.hpp"
#include "serving/serving_render.hpp"
#include "workloads/coexistence.hpp"
#include "workloads/scan.hpp"

namespace sparkops::cli {

namespace {

struct ProcsFlags {
  std::string need;
  bool plan = false;
  PlanFlags plan_flags;
  std::string gpu_apps;
};

// GPU processes: from a captured `nvidia-smi --query-compute-apps` file, else from the live GPU
// when /proc is the live one. A captured tree (--root) with no file gets no GPU figures: this
// machine's GPU says nothing about that one's processes.
Result<std::vector<GpuProcess>> gpu_processes(const ProcsFlags& flags, const AppContext& ctx,
                                              const HostRoot& root,
                                              std::optional<std::uint64_t>& device_total,
                                              std::optional<DeviceMemory>& device_memory,
                                              std::string& note) {
  if (!flags.gpu_apps.empty()) {
    auto text = read_file(flags.gpu_apps);
    if (!text) return tl::unexpected(text.error());
    auto apps = parse_smi_compute_apps(*text, kSmiQueryAppsFields);
    if (!apps)
      return fail(Errc::invalid_argument,
                  fmt::format("{}: {}", flags.gpu_apps, apps.error().detail));
    std::vector<GpuProcess> out;
    for (auto& a : *apps) out.push_back(std::move(a.process));
    return out;
  }
  if (!root.is_live() && !gpu_source_named(ctx)) {
    note =
        "not read: --root names a captured tree (give its nvidia-smi output with --gpu-apps FILE)";
    return std::vector<GpuProcess>{};
  }
  auto source = open_gpu_for(ctx);
  if (!source) return tl::unexpected(source.error());
  if ((*source)->state() != GpuState::ok) {
    note = fmt::format("{}: {}", gpu_state_name((*source)->state()), (*source)->state_detail());
    return std::vector<GpuProcess>{};
  }
  auto snaps = (*source)->snapshot();
  if (!snaps) {
    note = snaps.error().detail;
    return std::vector<GpuProcess>{};
  }
  device_memory = discrete_device_memory(*snaps);
  for (const auto& s : *snaps) {
    if (s.memory && !device_total) device_total = s.memory->total_bytes;
    if (!s.processes) note = "per-process GPU memory not reported by the driver";
  }
  return gpu_processes_of(*snaps);
}

// The need of --plan: the planned run's peak in the pool (or the planned server's footprint).
Result<std::uint64_t> planned_need(const ProcsFlags& flags, const AppContext& ctx,
                                   const HostRoot& root) {
  if (!flags.plan_flags.serve.empty()) {
    const auto env = plan_environment(root, ctx.config);
    auto sc = serving::serving_context(serving_flags_of(flags.plan_flags), env,
                                       heavy_rules_from_config(ctx.config));
    if (!sc) return tl::unexpected(sc.error());
    auto sp = serving::serving_plan_from_flags(serving_flags_of(flags.plan_flags),
                                               plan_input_from_flags(flags.plan_flags), env, *sc);
    if (!sp) return tl::unexpected(sp.error());
    return sp->footprint_bytes;
  }
  auto input = plan_input_from_flags(flags.plan_flags);
  if (!input) return tl::unexpected(input.error());
  auto result = plan::make_plan(*input, plan_environment(root, ctx.config));
  if (!result) return tl::unexpected(result.error());
  return result->estimate.peak_pool_bytes();
}

void run_procs(const ProcsFlags& flags, AppContext& ctx) {
  const HostRoot root = ctx.host_root();
  const auto bad = [&](std::string_view message) {
    print_error(ctx, message);
    ctx.exit_code = kExitBadInput;
  };
  if (!flags.need.empty() && flags.plan) return bad("--need and --plan: give one of them");
  // A model without --plan would be silently ignored: say what it needs instead.
  if (!flags.plan && (!flags.plan_flags.model.empty() || !flags.plan_flags.params.empty())) {
    return bad(
        fmt::format("procs {}: a model is read only with --plan (`sparkops procs --plan {} "
                    "...`); --need SIZE gives the need directly",
                    quote_for_message(flags.plan_flags.model.empty() ? flags.plan_flags.params
                                                                     : flags.plan_flags.model),
                    flags.plan_flags.model.empty() ? "--params N" : "MODEL"));
  }
  std::optional<std::uint64_t> need;
  if (!flags.need.empty()) {
    auto v = parse_bytes(flags.need, DefaultUnit::gib);
    if (!v) return bad(fmt::format("--need: {}", v.error().detail));
    need = *v;
  }
  if (flags.plan) {
    auto v = planned_need(flags, ctx, root);
    if (!v) return bad(fmt::format("--plan: {}", v.error().detail));
    need = *v;
  }

  ProcsReport report;
  std::optional<std::uint64_t> overhead;
  if (!flags.plan_flags.overhead.empty()) {
    auto v = parse_bytes(flags.plan_flags.overhead, DefaultUnit::gib);
    if (!v) return bad(fmt::format("--overhead: {}", v.error().detail));
    overhead = *v;
  }
  const auto pool = current_pool(root, ctx.config, overhead);
  if (pool) report.pool = *pool;

  std::optional<std::uint64_t> device_total;
  std::optional<DeviceMemory> device_memory;
  auto gpu = gpu_processes(flags, ctx, root, device_total, device_memory, report.gpu_note);
  if (!gpu) return bad(gpu.error().detail);
  report.training_budget = training_budget(report.pool, device_memory);

  ScanOptions options;
  // vLLM's fraction is of the device total; on a unified-memory machine that is the pool
  // (MemTotal).
  options.device_total_bytes = device_total.value_or(report.pool ? report.pool->total_bytes : 0);
  if (report.pool) options.pool_bytes = pool_total_budget(*report.pool);
  options.ticks_per_second = clock_ticks_per_second(root);
  options.rules = heavy_rules_from_config(ctx.config);
  auto scan = scan_workloads(root, *gpu, options);
  if (!scan) {
    print_error(ctx, scan.error().detail);
    ctx.exit_code = kExitFailure;
    return;
  }
  report.scan = std::move(*scan);
  report.need_given = need.has_value();
  if (report.pool) {
    const CoexistenceOptions co = coexistence_options_from_config(ctx.config);
    report.verdict = coexistence_verdict(report.scan, need.value_or(0), *report.pool, co);
  }
  // --plan ... --beside CMD: the planned job beside what runs and the commands given, with the
  // same verdict `plan --beside-running` gives (serving/beside.hpp).
  std::optional<std::pair<serving::BesideVerdict, std::vector<serving::PlannedJob>>> beside;
  if (flags.plan && !flags.plan_flags.beside.empty() && report.pool) {
    plan::PlanEnvironment env = plan_environment(root, ctx.config);
    env.pool = report.pool;
    auto sc = serving::serving_context(serving_flags_of(flags.plan_flags), env,
                                       heavy_rules_from_config(ctx.config));
    if (!sc) return bad(fmt::format("--beside: {}", sc.error().detail));
    sc->scan = options;
    std::vector<std::string> notes;
    auto jobs = serving::beside_jobs(serving_flags_of(flags.plan_flags), env, *sc, notes);
    if (!jobs) return bad(jobs.error().detail);
    serving::NewJob job = serving::new_training_job("the planned run", need.value_or(0), options);
    if (!flags.plan_flags.serve.empty()) {
      auto sp = serving::serving_plan_from_flags(serving_flags_of(flags.plan_flags),
                                                 plan_input_from_flags(flags.plan_flags), env, *sc);
      if (!sp) return bad(sp.error().detail);
      job = serving::new_serving_job("the planned server", *sp, options);
    }
    const CoexistenceOptions co = coexistence_options_from_config(ctx.config);
    auto v = serving::beside_verdict(&report.scan, *jobs, job, *report.pool, options, co);
    report.verdict = v.verdict;
    beside = std::pair{std::move(v), std::move(*jobs)};
  }

  if (ctx.json) {
    auto j = procs_to_json(report);
    if (beside) j["beside"] = serving::beside_to_json(beside->first, beside->second);
    fmt::print(ctx.out, "{}\n", dump_document(j));
  } else {
    std::string text = render_procs_table(report, output_width(ctx.out));
    if (beside) text += serving::render_beside_text(beside->first, beside->second);
    fmt::print(ctx.out, "{}", paint_lines(terminal_text(text), colour_enabled(ctx, ctx.out)));
  }
  // README "Exit codes": 1 something must stop first or it cannot fit, 3 tight (as `plan`).
  // Oversubscribed claims are a finding with or without a question: exit 1.
  ctx.exit_code = kExitOk;
  if (report.verdict && report.verdict->oversubscribed_bytes > 0) ctx.exit_code = kExitFailure;
  if (need && report.verdict) {
    switch (report.verdict->kind) {
      case VerdictKind::coexists:
        break;
      case VerdictKind::tight:
        ctx.exit_code = kExitTight;
        break;
      case VerdictKind::stop_first:
      case VerdictKind::does_not_fit:
        ctx.exit_code = kExitFailure;
        break;
    }
  }
  if (need && !report.verdict) {
    print_error(ctx, pool ? "cannot compute the pool from /proc/meminfo" : pool.error().detail);
    ctx.exit_code = kExitFailure;
  }
}

}  // namespace

void add_procs_command(CLI::App& app, AppContext& ctx) {
  auto* cmd = app.add_subcommand("procs",
                                 "Inference servers, trainers and GPU processes on the pool: their "
                                 "caps, claims and actual use, "
                                 "the one-heavy-job rule, and whether a run can start beside them");
  auto flags = std::make_shared<ProcsFlags>();
  cmd->add_option(
         "--need", flags->need,
         "Memory the new run needs: 40, 40G and 40GiB are 40 GiB (as free -g); 40GB is 40 x 10^9 "
         "bytes. "
         "Exit 1 when something must be stopped first or it cannot fit, 3 when it is tight")
      ->type_name("SIZE");
  cmd->add_flag(
      "--plan", flags->plan,
      "Take the need from a plan: `procs --plan MODEL --method qlora ...` (the `plan` flags)");
  add_plan_flags(cmd, flags->plan_flags);
  cmd->add_option(
         "--gpu-apps", flags->gpu_apps,
         "Per-process GPU memory from a file of `nvidia-smi --query-compute-apps=gpu_uuid,pid,"
         "process_name,used_memory --format=csv,noheader` instead of the live GPU")
      ->type_name("FILE");
  cmd->callback([&ctx, flags] { run_procs(*flags, ctx); });
}

}  // namespace sparkops::cli
