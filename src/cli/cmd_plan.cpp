// `sparkops plan`: the UMA accounting worksheet (docs/estimator.md).

#include <cstdlib>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/file_io.hpp"
#include "base/json_text.hpp"
#include "base/text.hpp"
#include "base/utf8.hpp"
#include "cli/colour.hpp"
#include "cli/commands.hpp"
#include "cli/domain_options.hpp"
#include "cli/plan_flags.hpp"
#include "cli/plan_render.hpp"
#include "models/catalogue.hpp"
#include "models/http_client.hpp"
#include "plan/frameworks.hpp"
#include "workloads/coexistence.hpp"
#include "workloads/scan.hpp"

namespace sparkops::cli {

namespace {

int exit_code_for(plan::Verdict v) {
  switch (v) {
    case plan::Verdict::fits:
    case plan::Verdict::fits_after_flush:
      return kExitOk;
    case plan::Verdict::tight:
      return kExitTight;
    case plan::Verdict::wont_fit:
      return kExitFailure;
  }
  return kExitFailure;
}

struct PlanCommandState {
  PlanFlags flags;
  bool list = false;
};

void run_plan(AppContext& ctx, const PlanCommandState& st) {
  if (st.list) {
    const auto& cat = models::catalogue();
    if (ctx.json) {
      fmt::print(ctx.out, "{}\n", dump_json(catalogue_to_json(cat), 2));
    } else {
      fmt::print(
          ctx.out, "{}",
          paint_lines(terminal_text(render_catalogue_text(cat)), colour_enabled(ctx, ctx.out)));
    }
    return;
  }
  PlanFlags flags = st.flags;
  if (flags.framework.empty()) {
    flags.framework = ctx.config.get_string("plan.framework");
    if (!plan::parse_framework(flags.framework)) {
      print_error(ctx, fmt::format("config plan.framework: unknown value \"{}\" (one of hf|litgpt)",
                                   quote_for_message(flags.framework)));
      ctx.exit_code = kExitBadInput;
      return;
    }
  }
  auto input = plan_input_from_flags(flags);
  if (!input) {
    print_error(ctx, input.error().detail);
    ctx.exit_code = kExitBadInput;
    return;
  }
  auto seqs = parse_count_list(st.flags.seq, "--seq");
  auto batches = parse_count_list(st.flags.batch, "--batch");

  std::vector<std::string> anchor_notes;
  plan::PlanEnvironment env = plan_environment(ctx.host_root(), ctx.config, &anchor_notes);
  // plan is the one command that may go online (for an ORG/NAME neither local nor cached);
  // libcurl is loaded only if that happens.
  const auto curl = models::make_curl_client();
  const auto var = [](const char* name) {
    const char* v = std::getenv(name);
    return v == nullptr ? std::string() : std::string(v);
  };
  env.hub = models::hub_access_from_env({var("HF_ENDPOINT"), var("HF_TOKEN"), var("HF_TOKEN_PATH"),
                                         var("HF_HOME"), var("HOME"), var("HF_HUB_OFFLINE")});
  env.hub.client = curl.get();
  auto result = plan::make_plan(*input, env);
  if (!result) {
    print_error(ctx, result.error().detail);
    ctx.exit_code = result.error().code == Errc::io ? kExitFailure : kExitBadInput;
    return;
  }
  for (auto& n : anchor_notes) result->notes.push_back(std::move(n));
  if (result->pool) {
    // The one-heavy-job rule, as `procs --plan` answers it (host-side figures: plan opens no GPU).
    // Shown only when something runs: on a quiet pool the plan's own verdict says it all.
    ScanOptions scan_options;
    scan_options.device_total_bytes = result->pool->total_bytes;
    if (auto scan = scan_workloads(env.root, {}, scan_options); scan && !scan->workloads.empty()) {
      const auto v = coexistence_verdict(*scan, result->estimate.peak_pool_bytes(), *result->pool);
      result->notes.push_back(
          fmt::format("beside what runs ({}): {}", verdict_kind_name(v.kind), v.summary));
    }
  }

  if (seqs->size() > 1 || batches->size() > 1) {
    std::vector<MatrixCell> cells;
    std::optional<std::uint64_t> shard;
    if (!result->model.shards.empty()) shard = result->estimate.largest_shard_bytes;
    for (const auto s : *seqs) {
      for (const auto b : *batches) {
        plan::RunConfig run = result->run;
        run.seq = s;
        run.batch = b;
        MatrixCell c{s, b, plan::estimate(result->model.shape, run, shard),
                     plan::Verdict::wont_fit};
        c.verdict =
            plan::verdict_for(c.estimate.peak_pool_bytes(), result->budget_bytes, result->pool);
        cells.push_back(c);
      }
    }
    if (ctx.json) {
      fmt::print(ctx.out, "{}\n", dump_json(matrix_to_json(*result, cells), 2));
    } else {
      fmt::print(ctx.out, "{}",
                 paint_lines(terminal_text(render_matrix_text(*result, cells, *seqs, *batches)),
                             colour_enabled(ctx, ctx.out)));
    }
    ctx.exit_code = kExitOk;  // a matrix informs; gate a launch on a single combination
    return;
  }
  if (ctx.json) {
    fmt::print(ctx.out, "{}\n", dump_json(plan_to_json(*result), 2));
  } else {
    fmt::print(ctx.out, "{}",
               paint_lines(terminal_text(render_plan_text(*result)), colour_enabled(ctx, ctx.out)));
  }
  ctx.exit_code = exit_code_for(result->verdict);
}

}  // namespace

void add_plan_command(CLI::App& app, AppContext& ctx) {
  auto st = std::make_shared<PlanCommandState>();
  auto* cmd = app.add_subcommand(
      "plan",
      "Will it fit? Memory worksheet for a model/method/batch/packing against the pool.\n"
      "Defaults are the common DGX Spark run: bf16 LoRA r16 all-linear, AdamW, batch 1, seq 2048,\n"
      "gradient checkpointing, SDPA. Exit: 0 fits (or fits after a cache flush), 3 tight, 1 won't\n"
      "fit, 2 bad input.");
  add_plan_flags(cmd, st->flags);
  cmd->add_flag("--list", st->list, "Print the model catalogue");
  cmd->callback([&ctx, st] { run_plan(ctx, *st); });
}

}  // namespace sparkops::cli
