// `sparkops oom`: classify an OOM (--log FILE or stdin), show where the user is on the OOM ladder
// and the next step with exact values; `--done STEP` records a step (refusing to skip one). The
// session is ladder/oom_session.hpp; here: the flags, the plan of the run, the output.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "base/clock.hpp"
#include "base/json_text.hpp"
#include "base/text.hpp"
#include "base/utf8.hpp"
#include "cli/commands.hpp"
#include "cli/plan_flags.hpp"
#include "ladder/ladder_advice.hpp"
#include "ladder/oom_render.hpp"
#include "ladder/oom_session.hpp"
#include "options/domain_options.hpp"
#include "term/colour.hpp"
#include "term/progress_line.hpp"
#include "term/terminal.hpp"

namespace sparkops::cli {
namespace {

struct OomState {
  ladder::OomRequest request;
  PlanFlags flags;
  CLI::App* cmd = nullptr;
};

bool given(const OomState& st, const char* option) {
  const auto* o = st.cmd->get_option_no_throw(option);
  return o != nullptr && o->count() > 0;
}

std::optional<host::PoolView> live_pool(const AppContext& ctx) {
  auto pool = options::current_pool(ctx.host_root(), ctx.config);
  if (!pool) return std::nullopt;
  return *pool;
}

int run_oom(OomState& st, AppContext& ctx) {
  SystemClock clock;
  st.request.state_given = given(st, "--state");
  st.request.input_is_terminal = term::is_terminal(stdin);
  const bool from_file = !st.request.log.empty() && st.request.log != "-";
  std::error_code size_error;
  const auto log_size =
      from_file ? std::filesystem::file_size(st.request.log, size_error) : std::uintmax_t{0};
  term::ProgressLine progress(
      ctx.err, ctx.progress(), from_file ? st.request.log : std::string("stdin"),
      from_file && !size_error ? std::optional<std::uint64_t>(log_size) : std::nullopt);
  if (progress.enabled()) st.request.progress = progress.callback();
  auto session = ladder::begin_oom(st.request, clock);
  st.request.progress = nullptr;
  progress.finish();  // before any message: the line is gone when the answer or error prints
  if (!session) {
    print_error(ctx, session.error().detail);
    return kExitBadInput;
  }
  ladder::OomView& view = session->view;

  ladder::OomRun run;
  if (st.flags.serving.serve.empty()) {  // a server has its serving plan (below)
    if (auto planned = ladder::plan_oom_run(
            st.flags, options::plan_environment(ctx.host_root(), ctx.config), run);
        !planned) {
      print_error(ctx, planned.error().detail);
      return planned.error().code == Errc::io ? kExitFailure : kExitBadInput;
    }
  }
  if (!run.pool) run.pool = live_pool(ctx);
  if (auto c = ladder::oom_run_context(st.flags, given(st, "--method"), given(st, "--batch"), run,
                                       view.ctx);
      !c) {
    print_error(ctx, c.error().detail);
    return kExitBadInput;
  }
  // --serve ENGINE: the server's ladder, with its serving plan when MODEL is given.
  if (!st.flags.serving.serve.empty()) {
    run.server_engine = serving::parse_serve_engine(st.flags.serving.serve);
    if (!run.server_engine) {
      print_error(ctx, fmt::format("--serve {}: not an engine (vllm, sglang, ollama, llamacpp, "
                                   "trtllm)",
                                   quote_for_message(st.flags.serving.serve)));
      return kExitBadInput;
    }
    if (!st.flags.model.empty()) {
      auto server = serving::plan_server(st.flags.serving, st.flags,
                                         options::plan_environment(ctx.host_root(), ctx.config),
                                         options::heavy_rules_from_config(ctx.config));
      if (!server) {
        print_error(ctx, server.error().detail);
        return server.error().code == Errc::io ? kExitFailure : kExitBadInput;
      }
      run.serving = std::move(server->plan);
    }
  }
  run.model_arg = st.flags.model;
  if (auto ok = ladder::conclude_oom(*session, st.request, std::move(run), ctx.output_trust, clock);
      !ok) {
    print_error(ctx, ok.error().detail);
    return kExitFailure;
  }
  if (ctx.json) {
    fmt::print(ctx.out, "{}\n", dump_document(ladder::oom_to_json(view)));
  } else {
    fmt::print(
        ctx.out, "{}",
        term::paint_lines(terminal_text(ladder::render_oom_text(view)), ctx.colour(ctx.out)));
  }
  return ladder::oom_exit_code(*session);
}

}  // namespace

void add_oom_command(CommandTree& tree, AppContext& ctx) {
  auto st = std::make_shared<OomState>();
  auto* cmd = tree.add(
      "oom", "Classify an OOM (--log FILE or stdin) and walk the OOM ladder one step at a time");
  if (cmd == nullptr) return;
  st->cmd = cmd;
  cmd->add_option("--log", st->request.log,
                  "Log, traceback, kernel log or server reply to classify (- = stdin)")
      ->type_name("FILE");
  cmd->add_option("--state", st->request.state_path, "Ladder state file")
      ->capture_default_str()
      ->type_name("FILE");
  cmd->add_option("--done", st->request.done,
                  "Record a step as tried: 1 2a 2b 3a 3b 4 (or flush packing batch "
                  "lora qlora scale)")
      ->type_name("STEP");
  cmd->add_option("--result", st->request.result,
                  "Outcome of the --done step: oom (still failing) or ok")
      ->capture_default_str();
  cmd->add_flag("--force", st->request.force,
                "Record --done STEP even though an earlier step was not tried");
  add_plan_flags(cmd, st->flags);
  cmd->callback([st, &ctx] { ctx.exit_code = run_oom(*st, ctx); });
}

}  // namespace sparkops::cli
