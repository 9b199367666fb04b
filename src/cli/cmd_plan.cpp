// `sparkops plan`: the UMA accounting worksheet (docs/estimator.md).

#include <algorithm>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/file_io.hpp"
#include "base/json_text.hpp"
#include "base/text.hpp"
#include "base/utf8.hpp"
#include "cli/commands.hpp"
#include "cli/plan_flags.hpp"
#include "config/plan_defaults.hpp"
#include "models/catalogue.hpp"
#include "models/http_client.hpp"
#include "models/progress_http_client.hpp"
#include "options/domain_options.hpp"
#include "options/gpu_choice.hpp"
#include "plan/fit_matrix.hpp"
#include "plan/frameworks.hpp"
#include "plan/plan_render.hpp"
#include "plan/transformers_version.hpp"
#include "serving/planned_job.hpp"
#include "serving/serving_render.hpp"
#include "term/colour.hpp"
#include "term/progress_line.hpp"
#include "term/terminal.hpp"
#include "workloads/coexistence.hpp"
#include "workloads/procs_query.hpp"

namespace sparkops::cli {

namespace {

struct PlanCommandState {
  PlanFlags flags;
  bool list = false;
};

plan::PlanEnvironment online_environment(AppContext& ctx, const models::HttpClient* curl,
                                         std::vector<std::string>* notes) {
  plan::PlanEnvironment env = options::plan_environment(ctx.host_root(), ctx.config, notes);
  env.hub = options::hub_access_for(curl);
  return env;
}

void run_serve_plan(AppContext& ctx, const PlanCommandState& st) {
  const auto curl = models::make_curl_client();
  term::ProgressLine hub_progress(ctx.err, ctx.progress(),
                                  fmt::format("reading {} from the Hub", st.flags.model),
                                  std::nullopt);
  const models::ProgressHttpClient client(*curl, hub_progress.callback());
  std::vector<std::string> notes;
  plan::PlanEnvironment env = online_environment(ctx, &client, &notes);
  // On a discrete GPU the server lives in the card's memory (serving_context).
  status::GpuMemoryReading gpu;
  if (st.flags.budget == "auto") {
    gpu = options::gpu_memory_for(env.root, ctx.gpu.backend, ctx.config);
    env.device_memory = gpu.device;
  }
  const auto bad = [&](const Error& e) {
    hub_progress.finish();
    print_error(ctx, e.detail);
    ctx.exit_code = e.code == Errc::io ? kExitFailure : kExitBadInput;
  };
  auto server = serving::plan_server(st.flags.serving, st.flags, env,
                                     options::heavy_rules_from_config(ctx.config));
  if (!server) return bad(server.error());
  serving::ServingContext& sc = server->context;
  sc.gpu_snapshots = gpu.snapshots;  // the running workloads a --beside verdict sizes on the card
  serving::ServingPlan& sp = server->plan;
  hub_progress.finish();  // the model is read; the line is gone before the answer prints
  const auto job = serving::new_serving_job(
      fmt::format("{} {}", serving::serve_engine_title(sp.args.engine), sp.model_name), sp,
      sc.scan);
  auto beside = serving::beside_if_asked(
      st.flags.serving, env, sc, job, serving::BesideNow{nullptr, st.flags.serving.beside_running},
      options::coexistence_options_from_config(ctx.config), notes);
  if (!beside) return bad(beside.error());
  for (auto& n : notes) sp.notes.push_back(std::move(n));
  if (ctx.json) {
    auto j = serving::serving_to_json(sp);
    serving::add_beside(j, *beside);
    fmt::print(ctx.out, "{}\n", dump_document(j));
  } else {
    const std::string text = serving::render_serving_text(sp) + serving::beside_text(*beside);
    fmt::print(ctx.out, "{}", term::paint_lines(terminal_text(text), ctx.colour(ctx.out)));
  }
  ctx.exit_code = serving::exit_code_with_beside(plan::verdict_exit_code(sp.verdict), *beside);
  if (sp.kv_shortfall_bytes > 0) ctx.exit_code = kExitFailure;
}

void run_plan(AppContext& ctx, const PlanCommandState& st) {
  if (st.list) {
    const auto& cat = models::catalogue();
    if (ctx.json) {
      // An object like every other document, so it can carry schema_version.
      fmt::print(ctx.out, "{}\n",
                 dump_document(nlohmann::json{{"models", plan::catalogue_to_json(cat)}}));
    } else {
      fmt::print(ctx.out, "{}",
                 term::paint_lines(
                     terminal_text(plan::render_catalogue_text(cat, term::output_width(ctx.out))),
                     ctx.colour(ctx.out)));
    }
    return;
  }
  if (!st.flags.serving.serve.empty()) return run_serve_plan(ctx, st);
  if (!st.flags.serving.serve_args.empty() || !st.flags.serving.engine_words.empty()) {
    print_error(ctx, "engine flags (--serve-args or words after --) need --serve ENGINE");
    ctx.exit_code = kExitBadInput;
    return;
  }
  const auto defaults = config::plan_defaults(ctx.config);
  if (!defaults) {
    print_error(ctx, defaults.error().detail);
    ctx.exit_code = kExitBadInput;
    return;
  }
  PlanFlags flags = st.flags;
  // A framework neither flagged nor configured stays unknown: the plan then prints the range the
  // presets span (under the default preset's figures).
  if (flags.framework.empty() && ctx.config.setting("plan.framework").source != "default") {
    flags.framework = defaults->framework;
    if (!plan::parse_framework(flags.framework)) {
      print_error(ctx, fmt::format("config plan.framework: unknown value {} (one of {})",
                                   quote_for_message(flags.framework), plan::framework_choices()));
      ctx.exit_code = kExitBadInput;
      return;
    }
  }
  // The transformers release, likewise (plan_input checks the flag; the key is named here).
  if (flags.transformers.empty() && !defaults->transformers.empty()) {
    flags.transformers = defaults->transformers;
    if (auto v = plan::parse_transformers_version(flags.transformers, "config plan.transformers");
        !v) {
      print_error(ctx, v.error().detail);
      ctx.exit_code = kExitBadInput;
      return;
    }
  }
  auto input = plan::plan_input(flags);
  if (!input) {
    print_error(ctx, input.error().detail);
    ctx.exit_code = kExitBadInput;
    return;
  }
  // The host side on the pool: the config's [plan] section.
  input->run.host = defaults->host;
  auto seqs = plan::parse_count_list(st.flags.seq, "--seq");
  auto batches = plan::parse_count_list(st.flags.batch, "--batch");

  std::vector<std::string> anchor_notes;
  // plan is the one command that may go online (for an ORG/NAME neither local nor cached);
  // libcurl is loaded only if that happens.
  const auto curl = models::make_curl_client();
  term::ProgressLine hub_progress(ctx.err, ctx.progress(),
                                  fmt::format("reading {} from the Hub", st.flags.model),
                                  std::nullopt);
  const models::ProgressHttpClient client(*curl, hub_progress.callback());
  plan::PlanEnvironment env = online_environment(ctx, &client, &anchor_notes);
  status::GpuMemoryReading gpu;
  if (!input->budget_bytes) {
    gpu = options::gpu_memory_for(env.root, ctx.gpu.backend, ctx.config);
    env.device_memory = gpu.device;
  }
  auto result = plan::make_plan(*input, env);
  hub_progress.finish();
  if (!result) {
    print_error(ctx, result.error().detail);
    ctx.exit_code = result.error().code == Errc::io ? kExitFailure : kExitBadInput;
    return;
  }
  for (auto& n : anchor_notes) result->notes.push_back(std::move(n));
  std::optional<serving::Beside> beside;
  if (!st.flags.serving.beside.empty() || st.flags.serving.beside_running) {
    auto sc = serving::serving_context(st.flags.serving, st.flags, env,
                                       options::heavy_rules_from_config(ctx.config));
    if (!sc) {
      print_error(ctx, sc.error().detail);
      ctx.exit_code = kExitBadInput;
      return;
    }
    sc->gpu_snapshots = gpu.snapshots;
    // The need on the plan's basis: on a discrete GPU the device peak, judged in its memory.
    const auto job = serving::new_training_job(
        fmt::format("{} {}", result->model.shape.name, plan::method_name(result->run.method)),
        plan::peak_bytes(result->estimate, result->peak_basis), sc->scan);
    auto b = serving::beside_if_asked(st.flags.serving, env, *sc, job,
                                      serving::BesideNow{nullptr, st.flags.serving.beside_running},
                                      options::coexistence_options_from_config(ctx.config),
                                      result->notes);
    if (!b) {
      print_error(ctx, b.error().detail);
      ctx.exit_code = kExitBadInput;
      return;
    }
    beside = std::move(*b);
  } else if (auto note = serving::what_runs_note(
                 env.root, *result, gpu.snapshots, options::heavy_rules_from_config(ctx.config),
                 options::coexistence_options_from_config(ctx.config))) {
    // The one-heavy-job rule, as `procs --plan` answers it.
    result->notes.push_back(*note);
  }

  if (seqs->size() > 1 || batches->size() > 1) {
    const auto cells = plan::fit_matrix(*result, *seqs, *batches);
    if (ctx.json) {
      fmt::print(ctx.out, "{}\n", dump_document(plan::matrix_to_json(*result, cells)));
    } else {
      fmt::print(
          ctx.out, "{}",
          term::paint_lines(terminal_text(plan::render_matrix_text(*result, cells, *seqs, *batches,
                                                                   term::output_width(ctx.out))),
                            ctx.colour(ctx.out)));
    }
    ctx.exit_code = kExitOk;  // a matrix informs; gate a launch on a single combination
    return;
  }
  if (ctx.json) {
    auto j = plan::plan_to_json(*result);
    serving::add_beside(j, beside);
    fmt::print(ctx.out, "{}\n", dump_document(j));
  } else {
    const std::string text = plan::render_plan_text(*result) + serving::beside_text(beside);
    fmt::print(ctx.out, "{}", term::paint_lines(terminal_text(text), ctx.colour(ctx.out)));
  }
  ctx.exit_code = serving::exit_code_with_beside(plan::verdict_exit_code(result->verdict), beside);
}

}  // namespace

void add_plan_command(CommandTree& tree, AppContext& ctx) {
  auto st = std::make_shared<PlanCommandState>();
  auto* cmd = tree.add(
      "plan",
      "Will it fit? Memory worksheet for a model/method/batch/packing against the pool.\n"
      "Defaults are the common DGX Spark run: bf16 LoRA r16 all-linear, AdamW, batch 1, seq 2048,\n"
      "gradient checkpointing, SDPA. --serve ENGINE plans an inference server instead (the\n"
      "engine's flags after --); --beside CMD / --beside-running judge the job beside others (one\n"
      "heavy job at a time). Exit: 0 fits (or fits after a cache flush), 3 tight, 1 won't fit or\n"
      "stop another job first, 2 bad input.");
  if (cmd == nullptr) return;
  add_plan_flags(cmd, st->flags);
  cmd->add_option("ENGINE_ARGS", st->flags.serving.engine_words,
                  "With --serve: the engine's own flags after `--` (plan MODEL --serve vllm -- "
                  "--max-model-len 32768 --gpu-memory-utilization 0.5)");
  cmd->add_flag("--list", st->list, "Print the model catalogue");
  cmd->callback([&ctx, st] { run_plan(ctx, *st); });
}

}  // namespace sparkops::cli
