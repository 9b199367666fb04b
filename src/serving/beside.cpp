#include "serving/beside.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/text.hpp"
#include "base/units.hpp"
#include "workloads/caps.hpp"
#include "workloads/classify.hpp"

namespace sparkops::serving {

namespace {

std::uint64_t sub_floor(std::uint64_t a, std::uint64_t b) {
  return a > b ? a - b : 0;
}

// The planned server as procs would see it running: the engine's command line with the flags
// that set its cap, and its environment.
struct ServerCommand {
  std::vector<std::string> argv;
  host::EnvList env;
};

ServerCommand server_command(const ServeArgs& a) {
  std::vector<std::string> argv;
  host::EnvList env;
  switch (a.engine) {
    case ServeEngine::vllm:
      argv = {"vllm", "serve", "MODEL"};
      if (a.fraction_given && a.fraction)
        argv.insert(argv.end(), {"--gpu-memory-utilization", fmt::format("{}", *a.fraction)});
      if (a.kv_cache_bytes)
        argv.insert(argv.end(), {"--kv-cache-memory-bytes", fmt::format("{}", *a.kv_cache_bytes)});
      break;
    case ServeEngine::sglang:
      argv = {"sglang", "serve"};
      if (a.fraction_given && a.fraction)
        argv.insert(argv.end(), {"--mem-fraction-static", fmt::format("{}", *a.fraction)});
      break;
    case ServeEngine::trtllm:
      argv = {"trtllm-serve", "MODEL"};
      if (a.fraction_given && a.fraction)
        argv.insert(argv.end(),
                    {"--kv_cache_free_gpu_memory_fraction", fmt::format("{}", *a.fraction)});
      break;
    case ServeEngine::llama_cpp:
      argv = {"llama-server"};
      if (a.max_context) argv.insert(argv.end(), {"-c", fmt::format("{}", *a.max_context)});
      break;
    case ServeEngine::ollama:
      argv = {"ollama", "serve"};
      env.emplace_back("OLLAMA_MAX_LOADED_MODELS", fmt::format("{}", a.loaded_models));
      if (a.keep_alive) env.emplace_back("OLLAMA_KEEP_ALIVE", *a.keep_alive);
      break;
  }
  return {std::move(argv), std::move(env)};
}

// The kind procs gives that command line (workloads/classify.cpp), so a planned server and the
// same server running carry one engine and one label. Every argv above is one the classifier
// knows; the fallback only keeps a future engine from losing its job.
workloads::Classification kind_of(const ServerCommand& c) {
  if (auto kind = workloads::classify_process(c.argv.front(), c.argv)) return *kind;
  return workloads::Classification{workloads::Engine::other, workloads::Role::server,
                                   c.argv.front()};
}

std::string who(const workloads::Workload& w) {
  return w.pid == 0 ? fmt::format("{} (planned)", w.kind.label)
                    : fmt::format("{} (PID {})", w.kind.label, w.pid);
}

// The largest fraction that leaves the new job its need beside everything else, two decimals.
std::optional<CapAdvice> fraction_advice(const workloads::Workload& w,
                                         const workloads::WorkloadScan& scan, std::uint64_t need,
                                         const workloads::CoexistenceSpace& space,
                                         const workloads::ScanOptions& options,
                                         const std::optional<ServingPlan>& serving) {
  if (!(w.kind.engine == workloads::Engine::vllm || w.kind.engine == workloads::Engine::sglang) ||
      options.device_total_bytes == 0) {
    return std::nullopt;
  }
  std::uint64_t others = 0;
  for (const auto& o : scan.workloads) {
    if (&o != &w) others += workloads::reserved_in(o, space);
  }
  const std::uint64_t total_budget = sub_floor(space.total_bytes, space.overhead_bytes);
  const std::uint64_t beside =
      serving ? sub_floor(serving->footprint_bytes, serving->claim_bytes.value_or(0)) : 0;
  const double room =
      static_cast<double>(sub_floor(sub_floor(total_budget, others), need + beside));
  double f = std::floor(room / static_cast<double>(options.device_total_bytes) * 100.0) / 100.0;
  // Below near capacity, or the cap does not make it a small job.
  const double near = std::floor(workloads::near_capacity_bytes(options) /
                                     static_cast<double>(options.device_total_bytes) * 100.0 -
                                 1e-9) /
                      100.0;
  f = std::min(f, near);
  const std::string_view flag = w.kind.engine == workloads::Engine::vllm
                                    ? "--gpu-memory-utilization"
                                    : "--mem-fraction-static";
  CapAdvice a;
  a.label = who(w);
  if (serving) {
    // The least it can serve with: weights, overheads and one sequence of the asked context.
    const double fixed =
        static_cast<double>(sub_floor(serving->claim_bytes.value_or(0), serving->kv_cache_bytes));
    const double one = kv_bytes_for_sequence(serving->kv, serving->context);
    const double least =
        std::ceil((fixed + one) / static_cast<double>(options.device_total_bytes) * 100.0) / 100.0;
    if (f < least || f <= 0) {
      a.why = fmt::format(
          "no {} leaves the need: it needs at least {:.2f} for the weights and one "
          "{}-token sequence, and at most {:.2f} fits beside",
          flag, least, serving->context, std::max(0.0, f));
      return a;
    }
    a.flag = fmt::format("{} {:.2f}", flag, f);
    a.why = fmt::format(
        "leaves the need beside it; at {:.2f} it still holds {:.1f} sequences of {} "
        "tokens",
        f, (f * static_cast<double>(options.device_total_bytes) - fixed) / one, serving->context);
    return a;
  }
  if (f <= 0) return std::nullopt;
  a.flag = fmt::format("{} {:.2f}", flag, f);
  a.why = "leaves the need beside it (its model was not sized: check it still loads)";
  return a;
}

}  // namespace

Result<PlannedJob> planned_job(std::string_view command, const std::optional<ServingPlan>& serving,
                               const workloads::ScanOptions& options) {
  auto cl = split_command_line(command, fmt::format("--beside {}", quote_for_message(command)));
  if (!cl) return tl::unexpected(cl.error());
  if (cl->argv.empty()) return fail(Errc::invalid_argument, "--beside: an empty command");
  const std::string& first = cl->argv.front();
  const auto slash = first.rfind('/');
  const std::string comm = slash == std::string::npos ? first : first.substr(slash + 1);
  const auto kind = workloads::classify_process(comm, cl->argv);
  if (!kind) {
    return fail(Errc::invalid_argument,
                fmt::format("--beside {}: not a workload sparkops recognises (vllm serve, sglang, "
                            "ollama serve, llama-server, trtllm-serve, a training launcher or "
                            "script)",
                            quote_for_message(command)));
  }
  PlannedJob j;
  j.command = std::string(command);
  workloads::Workload& w = j.workload;
  w.pid = 0;
  w.kind = *kind;
  w.cap = workloads::parse_cap(*kind, cl->argv, cl->env, true);
  w.claim_bytes = workloads::cap_claim_bytes(w.cap, options.device_total_bytes);
  workloads::WorkloadProcess p;
  p.kind = *kind;
  p.comm = comm;
  p.argv = cl->argv;
  p.env_readable = true;
  w.processes.push_back(std::move(p));
  if (serving) {
    j.serving = serving;
    w.actual_bytes = serving->footprint_bytes;
    if (options.sized_on_gpu) w.gpu_bytes = serving->footprint_bytes;
    j.sizing = "serving plan of its model";
  } else if (w.claim_bytes) {
    j.sizing = "its cap (model not sized)";
  } else {
    j.sizing = "unknown: its model was not sized";
  }
  workloads::judge_workload(w, options);
  if (!serving && !w.claim_bytes && w.cap.state == workloads::CapState::uncapped && !w.heavy) {
    w.heavy = true;
    w.heavy_reason = "uncapped, size unknown";
  }
  return j;
}

NewJob new_training_job(std::string label, std::uint64_t need_bytes,
                        const workloads::ScanOptions& options) {
  NewJob j;
  j.label = std::move(label);
  j.need_bytes = need_bytes;
  j.workload.kind = workloads::Classification{workloads::Engine::trainer, workloads::Role::trainer,
                                              "training run"};
  j.workload.cap = workloads::CapInfo{workloads::CapState::uncapped, "uncapped", {}, {}, {}};
  j.workload.actual_bytes = need_bytes;
  if (options.sized_on_gpu) j.workload.gpu_bytes = need_bytes;
  workloads::judge_workload(j.workload, options);
  return j;
}

NewJob new_serving_job(std::string label, const ServingPlan& plan,
                       const workloads::ScanOptions& options) {
  NewJob j;
  j.label = std::move(label);
  j.need_bytes = plan.footprint_bytes;
  workloads::Workload& w = j.workload;
  const ServerCommand command = server_command(plan.args);
  w.kind = kind_of(command);
  // The cap as workloads/caps.cpp reads the same flags.
  w.cap = workloads::parse_cap(w.kind, command.argv, command.env, true);
  w.claim_bytes = plan.claim_bytes;
  w.actual_bytes = plan.footprint_bytes;
  if (options.sized_on_gpu) w.gpu_bytes = plan.footprint_bytes;
  workloads::judge_workload(w, options);
  return j;
}

BesideVerdict beside_verdict(const workloads::WorkloadScan* running,
                             const std::vector<PlannedJob>& planned, const NewJob& job,
                             const workloads::CoexistenceSpace& space,
                             const workloads::ScanOptions& options,
                             const workloads::CoexistenceOptions& coexistence) {
  workloads::WorkloadScan scan;
  if (running != nullptr) scan = *running;
  for (const auto& p : planned) scan.workloads.push_back(p.workload);
  BesideVerdict out;
  out.verdict = workloads::coexistence_verdict(scan, job.need_bytes, space, coexistence);
  if (job.workload.heavy) {
    out.heavy.push_back(fmt::format("the new job ({}): {}", job.label, job.workload.heavy_reason));
  }
  for (std::size_t i = 0; i < scan.workloads.size(); ++i) {
    const workloads::Workload& w = scan.workloads[i];
    if (!w.heavy || !workloads::in_space(w, space)) continue;
    out.heavy.push_back(fmt::format("{}: {}", who(w), w.heavy_reason));
    const std::size_t first_planned = scan.workloads.size() - planned.size();
    const std::optional<ServingPlan> serving =
        i >= first_planned ? planned[i - first_planned].serving : std::nullopt;
    if (auto a = fraction_advice(w, scan, job.need_bytes, space, options, serving))
      out.cap_first.push_back(std::move(*a));
    if (w.kind.engine == workloads::Engine::ollama && w.kind.role == workloads::Role::server) {
      out.cap_first.push_back(CapAdvice{
          who(w), "OLLAMA_MAX_LOADED_MODELS=1 OLLAMA_KEEP_ALIVE=0",
          "Ollama has no byte cap: one loaded model, unloaded when idle, bounds what it holds"});
    }
  }
  std::string heavy = out.heavy.empty()
                          ? std::string("no heavy job: every other workload is capped or small")
                          : fmt::format("heavy: {}", fmt::join(out.heavy, "; "));
  if (job.workload.heavy && out.heavy.size() > 1) {
    heavy += " — one heavy job at a time";
  }
  out.summary = fmt::format("{}. {}", out.verdict.summary, heavy);
  return out;
}

}  // namespace sparkops::serving
