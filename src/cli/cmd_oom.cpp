// `sparkops oom`: classify an OOM (--log FILE or stdin), show where the user is on the OOM ladder
// and the next step with exact values; `--done STEP` records a step (refusing to skip one).

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>

#include <fmt/format.h>

#include "base/clock.hpp"
#include "base/json_text.hpp"
#include "base/text.hpp"
#include "base/utf8.hpp"
#include "cli/colour.hpp"
#include "cli/commands.hpp"
#include "cli/domain_options.hpp"
#include "cli/plan_flags.hpp"
#include "cli/progress_line.hpp"
#include "cli/serve_plan.hpp"
#include "host/meminfo.hpp"
#include "ladder/ladder_advice.hpp"
#include "ladder/oom_classifier.hpp"
#include "ladder/oom_render.hpp"
#include "plan/anchors.hpp"

namespace sparkops::cli {
namespace {

struct OomState {
  std::string log;
  std::string state_path = ".sparkops/ladder.json";
  std::string done;
  std::string result = "oom";
  bool force = false;
  PlanFlags flags;
  CLI::App* cmd = nullptr;
};

bool given(const OomState& st, const char* option) {
  const auto* o = st.cmd->get_option_no_throw(option);
  return o != nullptr && o->count() > 0;
}

// The text of `in` fed to the classifier and to the server-log scanner in one pass (a large log
// is read once), with the progress line; `name` in errors ("stdin", the path).
Result<OomReport> classify_stream(std::FILE* in, std::string_view name, ProgressLine& progress,
                                  serving::ServerLogFacts& facts, std::uint64_t& bytes_seen) {
  OomClassifier classifier;
  serving::ServerLogScanner scanner;
  std::vector<char> buffer(64 * 1024);
  while (true) {
    const auto got = std::fread(buffer.data(), 1, buffer.size(), in);
    if (got > 0) {
      classifier.feed(std::string_view(buffer.data(), got));
      scanner.feed(std::string_view(buffer.data(), got));
      progress.update(classifier.bytes_seen());
    }
    if (got < buffer.size()) {
      if (std::ferror(in) != 0) {
        progress.finish();
        return fail(Errc::io, fmt::format("{}: read error: {}", name, std::strerror(errno)));
      }
      break;
    }
  }
  progress.finish();
  facts = scanner.finish();
  bytes_seen = classifier.bytes_seen();
  auto r = classifier.finish();
  if (!r) return fail(r.error().code, fmt::format("{}: {}", name, r.error().detail));
  return r;
}

// nullopt report with no error: stdin was implicit and empty (no log given). `facts` receives
// what an inference server's lines in the text say (serving/server_log.hpp).
Result<std::optional<OomReport>> read_report(const OomState& st, const AppContext& ctx,
                                             serving::ServerLogFacts& facts) {
  std::uint64_t bytes_seen = 0;
  if (!st.log.empty() && st.log != "-") {
    struct Closer {
      void operator()(std::FILE* f) const { std::fclose(f); }
    };
    std::unique_ptr<std::FILE, Closer> file(std::fopen(st.log.c_str(), "rb"));
    if (!file) {
      const int err = errno;
      const Errc code = err == ENOENT                     ? Errc::not_found
                        : (err == EACCES || err == EPERM) ? Errc::permission_denied
                                                          : Errc::io;
      return fail(code, fmt::format("{}: cannot open: {}", st.log, std::strerror(err)));
    }
    std::error_code ec;
    const auto size = std::filesystem::file_size(st.log, ec);
    ProgressLine progress(ctx, st.log, ec ? std::nullopt : std::optional<std::uint64_t>(size));
    auto r = classify_stream(file.get(), st.log, progress, facts, bytes_seen);
    if (!r) return tl::unexpected(r.error());
    return std::optional<OomReport>(*r);
  }
  const bool implicit = st.log.empty();
  if (implicit && (!st.done.empty() || ::isatty(STDIN_FILENO) != 0))
    return std::optional<OomReport>();
  ProgressLine progress(ctx, "stdin", std::nullopt);
  auto r = classify_stream(stdin, "stdin", progress, facts, bytes_seen);
  if (implicit && bytes_seen == 0) return std::optional<OomReport>();
  if (!r) return tl::unexpected(r.error());
  return std::optional<OomReport>(*r);
}

Result<std::optional<PlannedRun>> plan_run(const OomState& st, const AppContext& ctx,
                                           std::optional<PoolView>& pool) {
  if (st.flags.model.empty() && st.flags.params.empty()) return std::optional<PlannedRun>();
  if (!st.flags.serve.empty()) return std::optional<PlannedRun>();  // a server: serving plan
  auto input = plan_input_from_flags(st.flags);
  if (!input) return tl::unexpected(input.error());
  auto result = plan::make_plan(*input, plan_environment(ctx.host_root(), ctx.config));
  if (!result) return tl::unexpected(result.error());
  PlannedRun p;
  p.model_arg =
      st.flags.model.empty() ? fmt::format("--params {}", st.flags.params) : st.flags.model;
  p.shape = result->model.shape;
  p.run = result->run;
  p.budget_bytes = result->budget_bytes;
  if (!result->model.shards.empty()) p.largest_shard_bytes = result->estimate.largest_shard_bytes;
  p.estimate = result->estimate;
  if (result->pool) pool = result->pool;
  return std::optional<PlannedRun>(std::move(p));
}

std::optional<PoolView> live_pool(const AppContext& ctx) {
  auto pool = current_pool(ctx.host_root(), ctx.config);
  if (!pool) return std::nullopt;
  return *pool;
}

int run_oom(OomState& st, AppContext& ctx) {
  SystemClock clock;
  OomView view;
  view.state_path = st.state_path;
  auto loaded = load_ladder_state(st.state_path);
  bool exists = true;
  if (!loaded) {
    if (loaded.error().code != Errc::not_found) {
      print_error(ctx, loaded.error().detail);
      return kExitBadInput;
    }
    exists = false;
    view.state.created = clock.system_now();
  } else {
    view.state = std::move(*loaded);
  }

  std::optional<LadderStep> done;
  std::optional<StepResult> result;
  if (!st.done.empty()) {
    done = parse_step(st.done);
    if (!done) {
      print_error(ctx,
                  fmt::format("--done {}: unknown step (1, 2a, 2b, 3a, 3b, 4 or flush, packing, "
                              "batch, lora, qlora, scale)",
                              st.done));
      return kExitBadInput;
    }
  }
  result = parse_step_result(st.result);
  if (!result) {
    print_error(ctx, fmt::format("--result {}: expected oom or ok", st.result));
    return kExitBadInput;
  }

  serving::ServerLogFacts facts;
  auto report = read_report(st, ctx, facts);
  if (!report) {
    print_error(ctx, report.error().detail);
    return kExitBadInput;
  }
  view.report = *report;

  std::optional<PoolView> pool;
  auto planned = plan_run(st, ctx, pool);
  if (!planned) {
    print_error(ctx, planned.error().detail);
    return planned.error().code == Errc::io ? kExitFailure : kExitBadInput;
  }
  if (!pool) pool = live_pool(ctx);
  if (*planned) {
    view.ctx.method = (*planned)->run.method;
    view.ctx.batch = (*planned)->run.batch;
  } else {
    if (given(st, "--method")) {
      auto m = plan::parse_method(st.flags.method);
      if (!m) {
        print_error(ctx, m.error().detail);
        return kExitBadInput;
      }
      view.ctx.method = *m;
    }
    if (given(st, "--batch")) {
      auto b = parse_count_list(st.flags.batch, "--batch");
      if (!b) {
        print_error(ctx, b.error().detail);
        return kExitBadInput;
      }
      view.ctx.batch = b->front();
    }
  }

  // A server's failure takes the server's ladder: --serve ENGINE says so, or the failure text is
  // an inference server's (its engine named by its own lines).
  std::optional<serving::ServeEngine> server_engine;
  std::optional<serving::ServingPlan> serving_plan;
  if (!st.flags.serve.empty()) {
    server_engine = serving::parse_serve_engine(st.flags.serve);
    if (!server_engine) {
      print_error(ctx, fmt::format("--serve {}: not an engine (vllm, sglang, ollama, llamacpp, "
                                   "trtllm)",
                                   quote_for_message(st.flags.serve)));
      return kExitBadInput;
    }
    if (!st.flags.model.empty()) {
      const auto env = plan_environment(ctx.host_root(), ctx.config);
      auto sc = serving_context(st.flags, env, ctx.config);
      if (!sc) {
        print_error(ctx, sc.error().detail);
        return kExitBadInput;
      }
      auto sp = serving_plan_from_flags(st.flags, env, *sc);
      if (!sp) {
        print_error(ctx, sp.error().detail);
        return sp.error().code == Errc::io ? kExitFailure : kExitBadInput;
      }
      serving_plan = std::move(*sp);
    }
  } else if (view.report && is_memory_failure(*view.report) && facts.engine) {
    server_engine = facts.engine;
  }
  if (server_engine) {
    view.ctx.server = true;
    view.ctx.method.reset();
    view.ctx.batch.reset();
  }

  bool changed = false;
  if (view.report && is_memory_failure(*view.report)) {
    view.state.last_oom =
        LastOom{std::string(oom_kind_name(view.report->kind)),
                std::string(oom_phase_name(view.report->phase)), clock.system_now()};
    changed = true;
  }
  if (done) {
    const auto force = st.force ? Force::yes : Force::no;
    if (auto ok = record_step(view.state, *done, *result, clock.system_now(), view.ctx, force);
        !ok) {
      print_error(ctx, ok.error().detail);
      return kExitFailure;
    }
    view.recorded = view.state.steps.back();
    changed = true;
  }
  // Classifying alone writes nothing: the state file changes only when the user acts on the
  // ladder (--done) or names the file (--state).
  if (changed && (done || given(st, "--state"))) {
    if (auto saved = save_ladder_state(st.state_path, view.state, ctx.output_trust); !saved) {
      print_error(ctx, saved.error().detail);
      return kExitFailure;
    }
    exists = true;
  }
  view.state_saved = exists;

  AdviceInput in;
  in.report = view.report;
  in.state = view.state;
  in.ctx = view.ctx;
  in.planned = *planned;
  in.pool = pool;
  in.server_engine = server_engine;
  in.server_facts = facts;
  in.serving = serving_plan;
  in.model_arg = st.flags.model;
  view.advice = advise_oom(in);
  if (ctx.json) {
    fmt::print(ctx.out, "{}\n", dump_document(oom_to_json(view)));
  } else {
    fmt::print(ctx.out, "{}",
               paint_lines(terminal_text(render_oom_text(view)), colour_enabled(ctx, ctx.out)));
  }
  // A text with no out-of-memory failure in it: the answer is "no" (README "Exit codes").
  if (view.report && !is_memory_failure(*view.report) && !done) return kExitFailure;
  return kExitOk;
}

}  // namespace

void add_oom_command(CLI::App& app, AppContext& ctx) {
  auto st = std::make_shared<OomState>();
  auto* cmd = app.add_subcommand(
      "oom", "Classify an OOM (--log FILE or stdin) and walk the OOM ladder one step at a time");
  st->cmd = cmd;
  cmd->add_option("--log", st->log,
                  "Log, traceback, kernel log or server reply to classify (- = stdin)")
      ->type_name("FILE");
  cmd->add_option("--state", st->state_path, "Ladder state file")
      ->capture_default_str()
      ->type_name("FILE");
  cmd->add_option("--done", st->done,
                  "Record a step as tried: 1 2a 2b 3a 3b 4 (or flush packing batch "
                  "lora qlora scale)")
      ->type_name("STEP");
  cmd->add_option("--result", st->result, "Outcome of the --done step: oom (still failing) or ok")
      ->capture_default_str();
  cmd->add_flag("--force", st->force,
                "Record --done STEP even though an earlier step was not tried");
  add_plan_flags(cmd, st->flags);
  cmd->callback([st, &ctx] { ctx.exit_code = run_oom(*st, ctx); });
}

}  // namespace sparkops::cli
