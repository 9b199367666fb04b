// `sparkops serve`: the Prometheus exporter, /api/status, the live dashboard, or (--textfile) a
// node_exporter textfile. Options, then one call into exporter/serve_session.hpp.

#include <memory>
#include <stop_token>
#include <string>

#include "base/output_file.hpp"
#include "cli/commands.hpp"
#include "cli/signal_bridge.hpp"
#include "exporter/serve_session.hpp"
#include "options/domain_options.hpp"
#include "options/gpu_choice.hpp"
#include "sampling/sample_run.hpp"

namespace sparkops::cli {

namespace {

void run_serve(const exporter::ServeRequest& flags, AppContext& ctx) {
  // --json is global; serve's output is a server, not a document: refuse rather than ignore it.
  if (ctx.json) {
    print_error(ctx,
                "serve --json: serve has no JSON document of its own; its JSON is GET /api/status "
                "(and Prometheus text at /metrics) once it runs");
    ctx.exit_code = kExitBadInput;
    return;
  }
  auto plan = exporter::plan_serve(flags, options::serve_defaults_from_config(ctx.config));
  if (!plan) {
    print_error(ctx, plan.error().detail);
    ctx.exit_code = kExitBadInput;
    return;
  }
  if (!flags.token_file.empty()) {
    if (auto warning = readable_by_others(flags.token_file))
      print_error(ctx, "warning: --token " + *warning);
  }
  auto status = options::status_source(ctx.host_root(), ctx.gpu.backend, ctx.config);
  if (!status) {
    print_error(ctx, status.error().detail);
    ctx.exit_code = kExitBadInput;
    return;
  }
  // The stop outlives the signal thread that requests it (declared first, destroyed last).
  std::stop_source stop;
  // Before any thread starts, so every thread inherits the blocked mask.
  SignalThread signals({SIGINT, SIGTERM});
  signals.watch([&](int) { stop.request_stop(); });

  exporter::ServeSource source;
  source.root = status->root;
  source.gpu = status->gpu.get();
  source.status = status->options;
  source.detector = sampling::detector_from_config(ctx.config);
  source.output_trust = ctx.output_trust;
  ctx.exit_code = exporter::run_serve_session(ctx, flags, *plan, source, stop.get_token());
}

}  // namespace

void add_serve_command(CommandTree& tree, AppContext& ctx) {
  auto* cmd = tree.add(
      "serve",
      "Prometheus exporter (/metrics), status JSON (/api/status) and a live dashboard (/)");
  if (cmd == nullptr) return;
  auto flags = std::make_shared<exporter::ServeRequest>();
  cmd->add_option("--listen", flags->listen,
                  "ADDRESS:PORT to listen on (default 127.0.0.1:9877; config serve.listen). A "
                  "non-loopback address needs --token, --web.config.file authentication or "
                  "--insecure")
      ->type_name("ADDR:PORT");
  cmd->add_option("--interval", flags->interval,
                  "Read the machine every DURATION (default 5s; config serve.interval)")
      ->type_name("DURATION");
  cmd->add_option("--history", flags->history, "How much the dashboard keeps in memory")
      ->type_name("DURATION");
  cmd->add_option("--token", flags->token_file,
                  "Require `Authorization: Bearer <token>` on the data routes, the token in FILE "
                  "(the dashboard takes it as /#token=...)")
      ->type_name("FILE");
  cmd->add_flag("--allow-query-token", flags->allow_query_token,
                "Also accept the token as ?token= (it then shows in proxy logs and browser "
                "history)");
  cmd->add_option("--allow-host", flags->allow_hosts,
                  "Without --token, also answer requests whose Host header is NAME (repeatable; "
                  "IP literals, localhost on loopback and this machine's name on 0.0.0.0 always "
                  "are; others get 403, against DNS rebinding)")
      ->type_name("NAME");
  cmd->add_flag("--insecure", flags->insecure, "Allow a non-loopback --listen without a token");
  cmd->add_option("--web.config.file", flags->web_config,
                  "TLS, client certificates and basic-auth users in Prometheus exporter-toolkit's "
                  "web config format (docs/web-config.md)")
      ->type_name("FILE");
  cmd->add_option(
         "--textfile", flags->textfile_dir,
         "Do not serve: atomically rewrite DIR/sparkops.prom every interval (node_exporter "
         "textfile collector)")
      ->type_name("DIR");
  cmd->add_flag("--once", flags->once, "With --textfile: write once and exit");
  cmd->add_option("--max-workloads", flags->max_workloads,
                  "Export per-workload series for at most N workloads, largest first (default 32; "
                  "config serve.max_workloads)")
      ->type_name("N");
  cmd->add_flag("--dcgm-compat", flags->dcgm_compat,
                "Also export the GPU figures under dcgm-exporter's names and labels "
                "(DCGM_FI_DEV_GPU_TEMP, DCGM_FI_DEV_FB_FREE, ...; docs/metrics.md), so DCGM "
                "dashboards work on a GB10");
  cmd->callback([&ctx, flags] { run_serve(*flags, ctx); });
}

}  // namespace sparkops::cli
