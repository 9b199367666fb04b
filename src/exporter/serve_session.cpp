#include "exporter/serve_session.hpp"

#include <atomic>
#include <exception>
#include <thread>

#include <fmt/format.h>

#include "base/clock.hpp"
#include "base/file_io.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "exporter/dashboard_page.hpp"
#include "exporter/exporter_state.hpp"
#include "exporter/http_module.hpp"
#include "exporter/http_server.hpp"
#include "sampling/scheduler.hpp"

namespace sparkops::exporter {

namespace {

// --web.config.file (docs/web-config.md): read and checked before anything starts, so a bad
// certificate or key is a one-line error and exit 2, not a server that fails every handshake.
// Through the HTTP module (exporter/http_module.hpp), which holds the web config reader and TLS.
Status apply_web_config(const std::string& file, ServePlan& plan) {
  auto module = load_http_module();
  if (!module) return tl::unexpected(module.error());
  auto setup = (*module)->read_web_setup(file);
  if (!setup) return tl::unexpected(setup.error());
  plan.tls = std::move(setup->tls);
  plan.client_allowed_sans = std::move(setup->client_allowed_sans);
  plan.client_cert_verified = setup->client_cert_verified;
  plan.basic_auth = std::move(setup->basic_auth);
  plan.headers = std::move(setup->headers);
  return {};
}

}  // namespace

Result<ServePlan> plan_serve(const ServeRequest& flags, const ServeDefaults& defaults) {
  ServePlan plan;
  const std::string listen = flags.listen.empty() ? defaults.listen : flags.listen;
  auto address = parse_listen_address(listen);
  if (!address) return tl::unexpected(address.error());
  plan.listen = *address;

  if (!flags.interval.empty()) {
    auto d = parse_duration(flags.interval);
    if (!d) return fail(Errc::invalid_argument, "--interval: " + d.error().detail);
    plan.interval = *d;
  } else {
    plan.interval = defaults.interval;
  }
  if (plan.interval < std::chrono::milliseconds{100}) {
    return fail(Errc::invalid_argument, "--interval: must be at least 100ms");
  }
  auto history = parse_duration(flags.history);
  if (!history) return fail(Errc::invalid_argument, "--history: " + history.error().detail);
  plan.history = *history;

  std::int64_t max_workloads = defaults.max_workloads;
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

int run_serve_session(const Console& io, const ServeRequest& request, const ServePlan& plan,
                      const ServeSource& source, std::stop_token stop) {
  std::atomic<int> exit_code{kExitOk};
  SystemClock clock;
  ExporterStateOptions state_options;
  state_options.interval = plan.interval;
  state_options.history = plan.history;
  state_options.max_workload_series = plan.max_workloads;
  state_options.detector = source.detector;
  state_options.dcgm_compat = request.dcgm_compat ? DcgmCompat::on : DcgmCompat::off;
  ExporterState state(state_options);

  bool textfile_failing = false;
  const auto read_and_publish = [&] {
    const auto started = clock.steady_now();
    const status::StatusReport report =
        status::collect_status(source.root, *source.gpu, clock, source.status);
    const double seconds = std::chrono::duration<double>(clock.steady_now() - started).count();
    state.update(report, started, seconds);
    if (plan.textfile) {
      const auto written =
          write_file_atomic(*plan.textfile, *state.metrics_text(), source.output_trust);
      if (!written && !textfile_failing) print_error(io, written.error().detail);
      textfile_failing = !written;
      if (request.once && !written) exit_code = kExitFailure;
    }
  };
  // A bug or an unforeseen input in one reading must cost that tick, not the exporter: the tick
  // runs on the calling thread and an escaping exception would end the process (under the unit,
  // a restart loop any local user could trigger). The last good reading stays published.
  const auto tick = [&] {
    try {
      read_and_publish();
    } catch (const std::exception& e) {
      print_error(io, fmt::format("serve: this reading failed and was skipped: {}", e.what()));
      if (request.once) exit_code = kExitFailure;
    } catch (...) {
      print_error(io, "serve: this reading failed and was skipped (unknown exception)");
      if (request.once) exit_code = kExitFailure;
    }
  };

  tick();
  if (request.once) return exit_code;

  // The loop ends on the caller's stop or when the server thread gives up; either one stops the
  // server, and the interruptible wait below wakes at once.
  std::stop_source ending;
  const std::stop_callback forward(stop, [&] { ending.request_stop(); });
  std::unique_ptr<HttpFront> server;
  std::thread http_thread;
  if (!plan.textfile) {
    auto module = load_http_module();
    if (!module) {
      print_error(io, module.error().detail);
      return kExitFailure;
    }
    HttpOptions http;
    http.listen = plan.listen;
    http.token = plan.token;
    http.allow_query_token = request.allow_query_token;
    http.allowed_hosts = request.allow_hosts;
    http.tls = plan.tls;
    http.client_allowed_sans = plan.client_allowed_sans;
    http.basic_auth = plan.basic_auth;
    http.extra_headers = plan.headers;
    server = (*module)->make_front(state, std::move(http), dashboard_page());
    auto port = server->bind();
    if (!port) {
      print_error(io, port.error().detail);
      return kExitFailure;
    }
    const bool v6 = plan.listen.host.find(':') != std::string::npos;
    fmt::print(io.out, "sparkops serve: listening on {}://{}{}{}:{}/ (metrics at /metrics)\n",
               plan.tls ? "https" : "http", v6 ? "[" : "", plan.listen.host, v6 ? "]" : "", *port);
    std::fflush(io.out);
    http_thread = std::thread([&] {
      if (auto ran = server->run(); !ran) {
        print_error(io, ran.error().detail);
        exit_code = kExitFailure;
      }
      ending.request_stop();
    });
  } else {
    fmt::print(io.out, "sparkops serve: writing {} every {}\n", plan.textfile->string(),
               format_duration(plan.interval));
    std::fflush(io.out);
  }
  {
    const std::stop_callback stop_server(ending.get_token(), [&] {
      if (server) server->stop();
    });
    // The sample loop's schedule: a reading every interval on the monotonic grid, a slow one skips
    // the ticks it missed; a stop wakes the wait at once. Tick 0 is the reading above, taken before
    // the server listened.
    (void)sampling::run_schedule(clock, plan.interval, {}, ending.get_token(),
                                 [&](const sampling::Tick& t) {
                                   if (t.index > 0) tick();
                                 });
  }
  if (server) server->stop();
  if (http_thread.joinable()) http_thread.join();
  return exit_code;
}

}  // namespace sparkops::exporter
