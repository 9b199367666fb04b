#include "ladder/oom_session.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "base/console.hpp"
#include "ladder/oom_classifier.hpp"

namespace sparkops::ladder {

namespace {

// The text of `in` fed to the classifier and to the server-log scanner in one pass (a large log
// is read once), reporting the bytes read to `progress`; `name` in errors ("stdin", the path).
Result<OomReport> classify_stream(std::FILE* in, std::string_view name,
                                  const ByteProgress& progress, serving::ServerLogFacts& facts,
                                  std::uint64_t& bytes_seen) {
  OomClassifier classifier;
  serving::ServerLogScanner scanner;
  std::vector<char> buffer(64 * 1024);
  while (true) {
    const auto got = std::fread(buffer.data(), 1, buffer.size(), in);
    if (got > 0) {
      classifier.feed(std::string_view(buffer.data(), got));
      scanner.feed(std::string_view(buffer.data(), got));
      if (progress) progress(classifier.bytes_seen());
    }
    if (got < buffer.size()) {
      if (std::ferror(in) != 0)
        return fail(Errc::io, fmt::format("{}: read error: {}", name, std::strerror(errno)));
      break;
    }
  }
  facts = scanner.finish();
  bytes_seen = classifier.bytes_seen();
  auto r = classifier.finish();
  if (!r) return fail(r.error().code, fmt::format("{}: {}", name, r.error().detail));
  return r;
}

// nullopt report with no error: the stream was implicit and empty (no log given). `facts`
// receives what an inference server's lines in the text say (serving/server_log.hpp).
Result<std::optional<OomReport>> read_report(const OomRequest& rq, serving::ServerLogFacts& facts) {
  std::uint64_t bytes_seen = 0;
  if (!rq.log.empty() && rq.log != "-") {
    struct Closer {
      void operator()(std::FILE* f) const { std::fclose(f); }
    };
    std::unique_ptr<std::FILE, Closer> file(std::fopen(rq.log.c_str(), "rb"));
    if (!file) {
      const int err = errno;
      const Errc code = err == ENOENT                     ? Errc::not_found
                        : (err == EACCES || err == EPERM) ? Errc::permission_denied
                                                          : Errc::io;
      return fail(code, fmt::format("{}: cannot open: {}", rq.log, std::strerror(err)));
    }
    auto r = classify_stream(file.get(), rq.log, rq.progress, facts, bytes_seen);
    if (!r) return tl::unexpected(r.error());
    return std::optional<OomReport>(*r);
  }
  const bool implicit = rq.log.empty();
  if (implicit && (!rq.done.empty() || rq.input_is_terminal)) return std::optional<OomReport>();
  auto r = classify_stream(rq.input, "stdin", rq.progress, facts, bytes_seen);
  if (implicit && bytes_seen == 0) return std::optional<OomReport>();
  if (!r) return tl::unexpected(r.error());
  return std::optional<OomReport>(*r);
}

}  // namespace

Status oom_run_context(const plan::PlanArgs& args, bool method_given, bool batch_given,
                       const OomRun& run, LadderContext& ctx) {
  if (run.planned) {
    ctx.method = run.planned->run.method;
    ctx.batch = run.planned->run.batch;
    return {};
  }
  if (method_given) {
    auto m = plan::parse_method(args.method);
    if (!m) return tl::unexpected(m.error());
    ctx.method = *m;
  }
  if (batch_given) {
    auto b = plan::parse_count_list(args.batch, "--batch");
    if (!b) return tl::unexpected(b.error());
    ctx.batch = b->front();
  }
  return {};
}

Status plan_oom_run(const plan::PlanArgs& args, const plan::PlanEnvironment& env, OomRun& run) {
  if (args.model.empty() && args.params.empty()) return {};
  auto input = plan::plan_input(args);
  if (!input) return tl::unexpected(input.error());
  auto result = plan::make_plan(*input, env);
  if (!result) return tl::unexpected(result.error());
  run.planned = planned_run_of(*result, model_arg_of(args));
  if (result->pool) run.pool = result->pool;
  return {};
}

Result<OomSession> begin_oom(const OomRequest& request, Clock& clock) {
  OomSession s;
  s.view.state_path = request.state_path;
  auto loaded = load_ladder_state(request.state_path);
  s.state_exists = true;
  if (!loaded) {
    if (loaded.error().code != Errc::not_found) return tl::unexpected(loaded.error());
    s.state_exists = false;
    s.view.state.created = clock.system_now();
  } else {
    s.view.state = std::move(*loaded);
  }
  if (!request.done.empty()) {
    s.done = parse_step(request.done);
    if (!s.done) {
      return fail(Errc::invalid_argument,
                  fmt::format("--done {}: unknown step (1, 2a, 2b, 3a, 3b, 4 or flush, packing, "
                              "batch, lora, qlora, scale)",
                              request.done));
    }
  }
  const auto result = parse_step_result(request.result);
  if (!result) {
    return fail(Errc::invalid_argument,
                fmt::format("--result {}: expected oom or ok", request.result));
  }
  s.result = *result;
  auto report = read_report(request, s.facts);
  if (!report) return tl::unexpected(report.error());
  s.view.report = std::move(*report);
  return s;
}

Status conclude_oom(OomSession& s, const OomRequest& request, OomRun run, OutputTrust trust,
                    Clock& clock) {
  OomView& view = s.view;
  const bool memory_failure = view.report && is_memory_failure(*view.report);
  // A server's failure takes the server's ladder: --serve ENGINE says so, or the failure text is
  // an inference server's (its engine named by its own lines).
  if (!run.server_engine && memory_failure && s.facts.engine) run.server_engine = s.facts.engine;
  if (run.server_engine) {
    view.ctx.server = true;
    view.ctx.method.reset();
    view.ctx.batch.reset();
  }

  bool changed = false;
  if (memory_failure) {
    view.state.last_oom =
        LastOom{std::string(oom_kind_name(view.report->kind)),
                std::string(oom_phase_name(view.report->phase)), clock.system_now()};
    changed = true;
  }
  if (s.done) {
    const auto force = request.force ? Force::yes : Force::no;
    if (auto ok = record_step(view.state, *s.done, s.result, clock.system_now(), view.ctx, force);
        !ok) {
      return tl::unexpected(ok.error());
    }
    view.recorded = view.state.steps.back();
    changed = true;
  }
  // Classifying alone writes nothing: the state file changes only when the user acts on the
  // ladder (--done) or names the file (--state).
  if (changed && (s.done || request.state_given)) {
    if (auto saved = save_ladder_state(request.state_path, view.state, trust); !saved) {
      return tl::unexpected(saved.error());
    }
    s.state_exists = true;
  }
  view.state_saved = s.state_exists;

  AdviceInput in;
  in.report = view.report;
  in.state = view.state;
  in.ctx = view.ctx;
  in.planned = std::move(run.planned);
  in.pool = std::move(run.pool);
  in.server_engine = run.server_engine;
  in.server_facts = s.facts;
  in.serving = std::move(run.serving);
  in.model_arg = std::move(run.model_arg);
  view.advice = advise_oom(in);
  return {};
}

int oom_exit_code(const OomSession& s) {
  if (s.view.report && !is_memory_failure(*s.view.report) && !s.done) return kExitFailure;
  return kExitOk;
}

}  // namespace sparkops::ladder
