// `sparkops serve`: the Prometheus exporter, /api/status, the live dashboard, or (--textfile) a
// node_exporter textfile. One loop thread reads the machine every --interval; HTTP handlers only
// serve what the last reading rendered.

#include <chrono>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "base/file_io.hpp"
#include "base/output_file.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/stop_signals.hpp"
#include "exporter/dashboard_page.hpp"
#include "exporter/exporter_state.hpp"
#include "exporter/http_server.hpp"
#include "exporter/listen_address.hpp"
#include "exporter/tls_context.hpp"
#include "exporter/web_config.hpp"
#include "sampling/sample_run.hpp"
#include "status/status_report.hpp"

namespace sparkops::cli {

namespace {

struct ServeFlags {
  std::string listen;
  std::string interval;
  std::string history = "1h";
  std::string token_file;
  bool insecure = false;
  bool allow_query_token = false;
  std::vector<std::string> allow_hosts;
  std::string textfile_dir;
  bool once = false;
  std::string max_workloads;
  bool dcgm_compat = false;
  std::string web_config;
};

struct ServePlan {
  ListenAddress listen;
  std::chrono::nanoseconds interval{};
  std::chrono::nanoseconds history{};
  std::optional<std::string> token;
  std::optional<std::filesystem::path> textfile;
  std::size_t max_workloads = kDefaultMaxWorkloadSeries;
  std::shared_ptr<SSL_CTX> tls;  // --web.config.file's TLS, ready to serve
  std::vector<std::string> client_allowed_sans;
  std::shared_ptr<BasicAuth> basic_auth;
  std::vector<std::pair<std::string, std::string>> headers;
  bool client_cert_verified = false;  // RequireAndVerifyClientCert: TLS itself authenticates
};

// --web.config.file (docs/web-config.md): read and checked before anything starts, so a bad
// certificate or key is a one-line error and exit 2, not a server that fails every handshake.
Status apply_web_config(const std::string& file, ServePlan& plan) {
  auto config = read_web_config(file);
  if (!config) return tl::unexpected(config.error());
  if (config->tls) {
    auto ctx = make_tls_context(*config->tls);
    if (!ctx) return fail(Errc::invalid_argument, file + ": " + ctx.error().detail);
    plan.tls = std::shared_ptr<SSL_CTX>(ctx->release(), SSL_CTX_free);
    plan.client_allowed_sans = config->tls->client_allowed_sans;
    plan.client_cert_verified = config->tls->client_auth == ClientAuth::require_and_verify;
  }
  if (!config->basic_auth_users.empty()) {
    plan.basic_auth = std::make_shared<BasicAuth>(std::move(config->basic_auth_users));
  }
  plan.headers = std::move(config->headers);
  return {};
}

Result<ServePlan> plan_serve(const ServeFlags& flags, const Config& config) {
  ServePlan plan;
  const std::string listen =
      flags.listen.empty() ? config.get_string("serve.listen") : flags.listen;
  auto address = parse_listen_address(listen);
  if (!address) return tl::unexpected(address.error());
  plan.listen = *address;

  if (!flags.interval.empty()) {
    auto d = parse_duration(flags.interval);
    if (!d) return fail(Errc::invalid_argument, "--interval: " + d.error().detail);
    plan.interval = *d;
  } else {
    plan.interval = config.get_duration("serve.interval");
  }
  if (plan.interval < std::chrono::milliseconds{100}) {
    return fail(Errc::invalid_argument, "--interval: must be at least 100ms");
  }
  auto history = parse_duration(flags.history);
  if (!history) return fail(Errc::invalid_argument, "--history: " + history.error().detail);
  plan.history = *history;

  std::int64_t max_workloads = config.get_integer("serve.max_workloads");
  if (!flags.max_workloads.empty()) max_workloads = parse_i64(flags.max_workloads).value_or(-1);
  if (max_workloads < 0 || max_workloads > 10000) {
    return fail(Errc::invalid_argument, "--max-workloads: must be 0-10000");
  }
  plan.max_workloads = static_cast<std::size_t>(max_workloads);

  if (!flags.token_file.empty()) {
    auto text = read_file(flags.token_file, 4096);
    if (!text) return fail(Errc::invalid_argument, "--token: " + text.error().detail);
    const auto token = trim(*text);
    if (token.empty() || token.find_first_of(" \t\r\n") != std::string_view::npos) {
      return fail(Errc::invalid_argument,
                  "--token " + flags.token_file + ": the file must hold one token, no spaces");
    }
    plan.token = std::string(token);
  }
  if (!flags.web_config.empty()) {
    if (!flags.textfile_dir.empty()) {
      return fail(Errc::invalid_argument,
                  "--web.config.file: only for the HTTP server, not --textfile");
    }
    if (auto ok = apply_web_config(flags.web_config, plan); !ok) {
      return tl::unexpected(Error{Errc::invalid_argument, ok.error().detail});
    }
  }
  const bool authenticated = plan.token || plan.basic_auth || plan.client_cert_verified;
  if (!flags.textfile_dir.empty()) {
    const std::filesystem::path dir(flags.textfile_dir);
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      return fail(Errc::invalid_argument, "--textfile " + flags.textfile_dir + ": not a directory");
    }
    plan.textfile = dir / "sparkops.prom";
  } else if (flags.once) {
    return fail(Errc::invalid_argument, "--once needs --textfile DIR");
  } else if (!plan.listen.loopback && !authenticated && !flags.insecure) {
    return fail(Errc::invalid_argument,
                "--listen " + listen +
                    " is not loopback: give --token FILE, basic_auth_users or "
                    "RequireAndVerifyClientCert in --web.config.file, or --insecure to serve it "
                    "unauthenticated");
  }
  return plan;
}

void run_serve(const ServeFlags& flags, AppContext& ctx) {
  // --json is global; serve's output is a server, not a document: refuse rather than ignore it.
  if (ctx.json) {
    print_error(ctx,
                "serve --json: serve has no JSON document of its own; its JSON is GET /api/status "
                "(and Prometheus text at /metrics) once it runs");
    ctx.exit_code = kExitBadInput;
    return;
  }
  auto plan = plan_serve(flags, ctx.config);
  if (!plan) {
    print_error(ctx, plan.error().detail);
    ctx.exit_code = kExitBadInput;
    return;
  }
  if (!flags.token_file.empty()) {
    if (auto warning = readable_by_others(flags.token_file))
      print_error(ctx, "warning: --token " + *warning);
  }
  auto gpu = open_gpu_for(ctx);
  if (!gpu) {
    print_error(ctx, gpu.error().detail);
    ctx.exit_code = kExitBadInput;
    return;
  }
  // Before any thread starts, so every thread inherits the blocked mask.
  StopSignals signals;
  StopFlag stop;

  const HostRoot root = ctx.host_root();
  SystemClock clock;
  const StatusOptions status_options = status_options_for(root, ctx.config);
  ExporterStateOptions state_options;
  state_options.interval = plan->interval;
  state_options.history = plan->history;
  state_options.max_workload_series = plan->max_workloads;
  state_options.detector = detector_from_config(ctx.config);
  state_options.dcgm_compat = flags.dcgm_compat ? DcgmCompat::on : DcgmCompat::off;
  ExporterState state(state_options);

  bool textfile_failing = false;
  const auto read_and_publish = [&] {
    const auto started = clock.steady_now();
    const StatusReport report = collect_status(root, **gpu, clock, status_options);
    const double seconds = std::chrono::duration<double>(clock.steady_now() - started).count();
    state.update(report, started, seconds);
    if (plan->textfile) {
      const auto written =
          write_file_atomic(*plan->textfile, *state.metrics_text(), ctx.output_trust);
      if (!written && !textfile_failing) print_error(ctx, written.error().detail);
      textfile_failing = !written;
      if (flags.once && !written) ctx.exit_code = kExitFailure;
    }
  };
  // A bug or an unforeseen input in one reading must cost that tick, not the exporter: the tick
  // runs on the main thread and an escaping exception would end the process (under the unit,
  // a restart loop any local user could trigger). The last good reading stays published.
  const auto tick = [&] {
    try {
      read_and_publish();
    } catch (const std::exception& e) {
      print_error(ctx, fmt::format("serve: this reading failed and was skipped: {}", e.what()));
      if (flags.once) ctx.exit_code = kExitFailure;
    } catch (...) {
      print_error(ctx, "serve: this reading failed and was skipped (unknown exception)");
      if (flags.once) ctx.exit_code = kExitFailure;
    }
  };

  tick();
  if (flags.once) return;

  std::unique_ptr<HttpExporter> server;
  std::thread http_thread;
  if (!plan->textfile) {
    HttpOptions http;
    http.listen = plan->listen;
    http.token = plan->token;
    http.allow_query_token = flags.allow_query_token;
    http.allowed_hosts = flags.allow_hosts;
    http.tls = plan->tls;
    http.client_allowed_sans = plan->client_allowed_sans;
    http.basic_auth = plan->basic_auth;
    http.extra_headers = plan->headers;
    server = std::make_unique<HttpExporter>(state, http, dashboard_page());
    auto port = server->bind();
    if (!port) {
      print_error(ctx, port.error().detail);
      ctx.exit_code = kExitFailure;
      return;
    }
    const bool v6 = plan->listen.host.find(':') != std::string::npos;
    fmt::print(ctx.out, "sparkops serve: listening on {}://{}{}{}:{}/ (metrics at /metrics)\n",
               plan->tls ? "https" : "http", v6 ? "[" : "", plan->listen.host, v6 ? "]" : "",
               *port);
    std::fflush(ctx.out);
    http_thread = std::thread([&] {
      if (auto ran = server->run(); !ran) {
        print_error(ctx, ran.error().detail);
        ctx.exit_code = kExitFailure;
      }
      stop.request();
    });
  } else {
    fmt::print(ctx.out, "sparkops serve: writing {} every {}\n", plan->textfile->string(),
               format_duration(plan->interval));
    std::fflush(ctx.out);
  }
  signals.watch([&](int) {
    stop.request();
    if (server) server->stop();
  });

  auto next = clock.steady_now() + plan->interval;
  while (stop.wait_until(next)) {
    tick();
    const auto now = clock.steady_now();
    next += plan->interval;
    if (next <= now) next = now + plan->interval;  // a slow read skips ticks instead of bursting
  }
  if (server) server->stop();
  if (http_thread.joinable()) http_thread.join();
}

}  // namespace

void add_serve_command(CLI::App& app, AppContext& ctx) {
  auto* cmd = app.add_subcommand(
      "serve",
      "Prometheus exporter (/metrics), status JSON (/api/status) and a live dashboard (/)");
  auto flags = std::make_shared<ServeFlags>();
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
