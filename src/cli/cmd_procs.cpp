// sparkops procs: who else is on the pool, what they may take, and whether a run can start beside
// them. The scan and the verdict are workloads/procs_query.hpp; here: the flags, the need, the GPU
// source, the output.

#include <memory>

#include <fmt/format.h>

#include "base/json_text.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "base/utf8.hpp"
#include "cli/commands.hpp"
#include "cli/plan_flags.hpp"
#include "options/domain_options.hpp"
#include "options/gpu_choice.hpp"
#include "serving/planned_job.hpp"
#include "serving/serving_render.hpp"
#include "status/status_report.hpp"
#include "term/colour.hpp"
#include "term/terminal.hpp"
#include "workloads/procs_query.hpp"

namespace sparkops::cli {

namespace {

struct ProcsFlags {
  std::string need;
  bool plan = false;
  PlanFlags plan_flags;
  std::string gpu_apps;
};

void run_procs(const ProcsFlags& flags, AppContext& ctx) {
  const host::HostRoot root = ctx.host_root();
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
  workloads::ProcsQuery query;
  if (!flags.need.empty()) {
    auto v = parse_bytes(flags.need, DefaultUnit::gib);
    if (!v) return bad(fmt::format("--need: {}", v.error().detail));
    query.need_bytes = *v;
  }
  std::optional<std::uint64_t> overhead;
  if (!flags.plan_flags.overhead.empty()) {
    auto v = parse_bytes(flags.plan_flags.overhead, DefaultUnit::gib);
    if (!v) return bad(fmt::format("--overhead: {}", v.error().detail));
    overhead = *v;
  }
  const auto pool = options::current_pool(root, ctx.config, overhead);
  if (pool) query.pool = *pool;
  auto gpu = options::gpu_processes_for(root, ctx.gpu.backend, ctx.config, flags.gpu_apps);
  if (!gpu) return bad(gpu.error().detail);
  query.gpu = std::move(*gpu);
  query.device_memory = status::discrete_device_memory(query.gpu.snapshots);
  query.rules = options::heavy_rules_from_config(ctx.config);
  query.coexistence = options::coexistence_options_from_config(ctx.config);
  if (flags.plan) {
    auto v = serving::planned_need(flags.plan_flags.serving, flags.plan_flags,
                                   options::plan_environment(root, ctx.config), query.device_memory,
                                   query.rules);
    if (!v) return bad(fmt::format("--plan: {}", v.error().detail));
    query.need_bytes = *v;
  }

  auto answer = workloads::answer_procs(root, query);
  if (!answer) {
    print_error(ctx, answer.error().detail);
    ctx.exit_code = kExitFailure;
    return;
  }
  workloads::ProcsReport& report = answer->report;
  std::optional<serving::Beside> beside;
  if (flags.plan && !flags.plan_flags.serving.beside.empty() && report.pool) {
    auto b = serving::beside_scanned(flags.plan_flags.serving, flags.plan_flags,
                                     options::plan_environment(root, ctx.config), *answer,
                                     query.need_bytes.value_or(0), query.device_memory,
                                     query.gpu.snapshots, query.rules, query.coexistence);
    if (!b) return bad(b.error().detail);
    report.verdict = b->verdict.verdict;
    beside = std::move(*b);
  }

  if (ctx.json) {
    auto j = workloads::procs_to_json(report);
    serving::add_beside(j, beside);
    fmt::print(ctx.out, "{}\n", dump_document(j));
  } else {
    const std::string text = workloads::render_procs_table(report, term::output_width(ctx.out)) +
                             serving::beside_text(beside);
    fmt::print(ctx.out, "{}", term::paint_lines(terminal_text(text), ctx.colour(ctx.out)));
  }
  ctx.exit_code = workloads::procs_exit_code(report);
  if (query.need_bytes && !report.verdict) {
    print_error(ctx, pool ? "cannot compute the pool from /proc/meminfo" : pool.error().detail);
    ctx.exit_code = kExitFailure;
  }
}

}  // namespace

void add_procs_command(CommandTree& tree, AppContext& ctx) {
  auto* cmd = tree.add("procs",
                       "Inference servers, trainers and GPU processes on the pool: their "
                       "caps, claims and actual use, "
                       "the one-heavy-job rule, and whether a run can start beside them");
  if (cmd == nullptr) return;
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
