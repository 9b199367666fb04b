#include "serving/serving_flags.hpp"

#include <cmath>

#include <fmt/format.h>

#include "base/text.hpp"
#include "base/units.hpp"
#include "host/clock_ticks.hpp"

namespace sparkops::serving {

namespace {

// Which engine a --beside command runs, from the same classifier procs uses.
std::optional<ServeEngine> serve_engine_of(const workloads::Workload& w) {
  if (w.kind.role != workloads::Role::server && w.kind.role != workloads::Role::engine)
    return std::nullopt;
  switch (w.kind.engine) {
    case workloads::Engine::vllm:
      return ServeEngine::vllm;
    case workloads::Engine::sglang:
      return ServeEngine::sglang;
    case workloads::Engine::ollama:
      return ServeEngine::ollama;
    case workloads::Engine::llama_cpp:
      return ServeEngine::llama_cpp;
    case workloads::Engine::tensorrt_llm:
      return ServeEngine::trtllm;
    default:
      return std::nullopt;
  }
}

Result<ServingPlan> plan_for(const models::ResolvedModel& model, const ServeArgs& args,
                             const ServingContext& sc) {
  ServingInput in;
  in.model = model;
  in.args = args;
  in.device_total_bytes = sc.device_total_bytes;
  in.budget_bytes = sc.budget_bytes;
  in.budget_given = sc.budget_given;
  // A page-cache flush frees host memory: on a discrete GPU the verdict holds the footprint
  // against the card's free memory alone.
  if (!sc.device) in.pool = sc.pool;
  in.on_card = sc.device.has_value();
  return make_serving_plan(in);
}

}  // namespace

Result<ServingContext> serving_context(const ServingFlags& /*flags*/, const plan::PlanArgs& budget,
                                       const plan::PlanEnvironment& env,
                                       const workloads::HeavyRules& rules) {
  ServingContext sc;
  if (budget.budget != "auto") {
    auto b = parse_bytes(budget.budget, DefaultUnit::gib);
    if (!b) return fail(Errc::invalid_argument, fmt::format("--budget: {}", b.error().detail));
    sc.budget_bytes = *b;
    sc.budget_given = true;
  }
  host::PoolOptions options = env.pool_options;
  if (!budget.overhead.empty()) {
    auto o = parse_bytes(budget.overhead, DefaultUnit::gib);
    if (!o) return fail(Errc::invalid_argument, fmt::format("--overhead: {}", o.error().detail));
    options.overhead_bytes = *o;
  }
  if (env.pool) {
    sc.pool = env.pool;
  } else {
    auto pool = host::read_pool(env.root, options);
    if (!pool && budget.budget == "auto") return tl::unexpected(pool.error());
    if (pool) sc.pool = *pool;
  }
  if (budget.budget == "auto") {
    sc.device = env.device_memory;
    sc.budget_bytes = sc.device ? sc.device->free_bytes : sc.pool->budget_bytes;
  }
  if (!budget.device_total.empty()) {
    auto d = plan::parse_device_total(budget.device_total);
    if (!d) return tl::unexpected(d.error());
    sc.device_total_bytes = *d;
  } else if (sc.device) {
    sc.device_total_bytes = sc.device->total_bytes;
  } else if (sc.pool) {
    sc.device_total_bytes = sc.pool->total_bytes;
  }
  sc.scan.device_total_bytes = sc.device_total_bytes;
  if (sc.pool) sc.scan.pool_bytes = host::pool_total_budget(*sc.pool);
  sc.scan.rules = rules;
  sc.scan.ticks_per_second = host::clock_ticks_per_second(env.root);
  if (sc.device) sc.scan = workloads::scan_options_in(sc.scan, workloads::gpu_space(*sc.device));
  return sc;
}

std::optional<workloads::CoexistenceSpace> beside_space(const ServingContext& sc) {
  return workloads::coexistence_space(sc.pool, sc.device, sc.gpu_snapshots);
}

Result<CommandLine> engine_words(const ServingFlags& flags) {
  auto cl = split_command_line(flags.serve_args, "--serve-args");
  if (!cl) return tl::unexpected(cl.error());
  for (const auto& w : flags.engine_words) {
    const auto eq = w.find('=');
    if (cl->argv.empty() && eq != std::string::npos && eq > 0 && w.rfind('-', 0) != 0) {
      cl->env.emplace_back(w.substr(0, eq), w.substr(eq + 1));
    } else {
      cl->argv.push_back(w);
    }
  }
  return cl;
}

Result<ServingPlan> serving_plan_from_flags(const ServingFlags& flags,
                                            const Result<plan::PlanInput>& input,
                                            const plan::PlanEnvironment& env,
                                            const ServingContext& sc) {
  const auto engine = parse_serve_engine(flags.serve);
  if (!engine) {
    return fail(Errc::invalid_argument,
                fmt::format("--serve {}: not an engine (vllm, sglang, ollama, llamacpp, trtllm)",
                            quote_for_message(flags.serve)));
  }
  auto words = engine_words(flags);
  if (!words) return tl::unexpected(words.error());
  auto args = parse_serve_args(*engine, words->argv, words->env, sc.device_total_bytes);
  if (!args) return tl::unexpected(args.error());
  if (!input) return tl::unexpected(input.error());
  auto model = plan::resolve_model(input->model, env.hf_cache, env.hub);
  if (!model) return tl::unexpected(model.error());
  return plan_for(*model, *args, sc);
}

Result<PlannedServer> plan_server(const ServingFlags& flags, const plan::PlanArgs& args,
                                  const plan::PlanEnvironment& env,
                                  const workloads::HeavyRules& rules) {
  auto sc = serving_context(flags, args, env, rules);
  if (!sc) return tl::unexpected(sc.error());
  auto sp = serving_plan_from_flags(flags, plan::plan_input(args), env, *sc);
  if (!sp) return tl::unexpected(sp.error());
  return PlannedServer{std::move(*sc), std::move(*sp)};
}

Result<std::vector<PlannedJob>> beside_jobs(const ServingFlags& flags,
                                            const plan::PlanEnvironment& env,
                                            const ServingContext& sc,
                                            std::vector<std::string>& notes) {
  std::vector<PlannedJob> out;
  for (const auto& command : flags.beside) {
    auto job = planned_job(command, std::nullopt, sc.scan);
    if (!job) return tl::unexpected(job.error());
    const auto engine = serve_engine_of(job->workload);
    if (engine) {
      const auto& argv = job->workload.processes.front().argv;
      auto cl = split_command_line(command, "--beside");
      auto args =
          parse_serve_args(*engine, argv, cl ? cl->env : host::EnvList{}, sc.device_total_bytes);
      if (!args) {
        return fail(
            Errc::invalid_argument,
            fmt::format("--beside {}: {}", quote_for_message(command), args.error().detail));
      }
      if (args->model) {
        plan::ModelRef ref;
        ref.name = *args->model;
        auto model = plan::resolve_model(ref, env.hf_cache, env.hub);
        if (model) {
          auto sp = plan_for(*model, *args, sc);
          if (sp) {
            auto sized = planned_job(command, *sp, sc.scan);
            if (!sized) return tl::unexpected(sized.error());
            job = std::move(sized);
          } else {
            notes.push_back(fmt::format("--beside {}: not sized: {}", quote_for_message(command),
                                        sp.error().detail));
          }
        } else {
          notes.push_back(fmt::format("--beside {}: model not sized: {}",
                                      quote_for_message(command), model.error().detail));
        }
      }
    }
    out.push_back(std::move(*job));
  }
  return out;
}

Result<Beside> beside_from_flags(const ServingFlags& flags, const plan::PlanEnvironment& env,
                                 const ServingContext& sc, const NewJob& job, BesideNow now,
                                 const workloads::CoexistenceOptions& coexistence,
                                 std::vector<std::string>& notes) {
  const auto space = beside_space(sc);
  if (!space) return fail(Errc::invalid_argument, "--beside: needs the live pool (--budget auto)");
  auto jobs = beside_jobs(flags, env, sc, notes);
  if (!jobs) return tl::unexpected(jobs.error());
  std::optional<workloads::WorkloadScan> scanned;
  const workloads::WorkloadScan* running = now.scanned;
  if (running == nullptr && now.scan_host) {
    auto scan =
        workloads::scan_workloads(env.root, workloads::gpu_processes_of(sc.gpu_snapshots), sc.scan);
    if (!scan) return fail(scan.error().code, fmt::format("--beside: {}", scan.error().detail));
    scanned = std::move(*scan);
    running = &*scanned;
  }
  Beside b;
  b.verdict = beside_verdict(running, *jobs, job, *space, sc.scan, coexistence);
  b.jobs = std::move(*jobs);
  return b;
}

}  // namespace sparkops::serving
