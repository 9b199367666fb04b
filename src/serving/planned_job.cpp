#include "serving/planned_job.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "serving/serving_render.hpp"
#include "workloads/coexistence.hpp"

namespace sparkops::serving {

Result<std::uint64_t> planned_need(const ServingFlags& flags, const plan::PlanArgs& args,
                                   plan::PlanEnvironment env,
                                   const std::optional<host::DeviceMemory>& device,
                                   const workloads::HeavyRules& rules) {
  if (!flags.serve.empty()) {
    if (args.budget == "auto") env.device_memory = device;
    auto server = plan_server(flags, args, env, rules);
    if (!server) return tl::unexpected(server.error());
    return server->plan.footprint_bytes;
  }
  auto input = plan::plan_input(args);
  if (!input) return tl::unexpected(input.error());
  env.device_memory = device;
  auto result = plan::make_plan(*input, env);
  if (!result) return tl::unexpected(result.error());
  return plan::peak_bytes(result->estimate, result->peak_basis);
}

Result<std::optional<Beside>> beside_if_asked(const ServingFlags& flags,
                                              const plan::PlanEnvironment& env,
                                              const ServingContext& sc, const NewJob& job,
                                              BesideNow now,
                                              const workloads::CoexistenceOptions& coexistence,
                                              std::vector<std::string>& notes) {
  if (flags.beside.empty() && !flags.beside_running) return std::optional<Beside>();
  auto b = beside_from_flags(flags, env, sc, job, now, coexistence, notes);
  if (!b) return tl::unexpected(b.error());
  return std::optional<Beside>(std::move(*b));
}

Result<Beside> beside_scanned(const ServingFlags& flags, const plan::PlanArgs& args,
                              plan::PlanEnvironment env, const workloads::ProcsAnswer& answer,
                              std::uint64_t need, const std::optional<host::DeviceMemory>& device,
                              const std::vector<gpu::GpuSnapshot>& snapshots,
                              const workloads::HeavyRules& rules,
                              const workloads::CoexistenceOptions& coexistence) {
  env.pool = answer.report.pool;
  // The space procs judged in: on a discrete GPU its memory (the same card and reading).
  if (args.budget == "auto") env.device_memory = device;
  auto sc = serving_context(flags, args, env, rules);
  if (!sc) return fail(sc.error().code, fmt::format("--beside: {}", sc.error().detail));
  sc->pool = answer.report.pool;
  sc->device = device;
  sc->scan = answer.scan;
  sc->gpu_snapshots = snapshots;
  NewJob job = new_training_job("the planned run", need, answer.scan);
  if (!flags.serve.empty()) {
    auto sp = serving_plan_from_flags(flags, plan::plan_input(args), env, *sc);
    if (!sp) return tl::unexpected(sp.error());
    job = new_serving_job("the planned server", *sp, answer.scan);
  }
  std::vector<std::string> notes;
  return beside_from_flags(flags, env, *sc, job, BesideNow{&answer.report.scan, false}, coexistence,
                           notes);
}

std::optional<std::string> what_runs_note(const host::HostRoot& root,
                                          const plan::PlanResult& result,
                                          const std::vector<gpu::GpuSnapshot>& snapshots,
                                          const workloads::HeavyRules& rules,
                                          const workloads::CoexistenceOptions& coexistence) {
  if (!result.pool) return std::nullopt;
  workloads::ProcsQuery query;
  query.pool = result.pool;
  query.device_memory = result.device;
  if (result.device) {
    query.gpu.snapshots = snapshots;
    query.gpu.processes = workloads::gpu_processes_of(snapshots);
  }
  query.need_bytes = plan::peak_bytes(result.estimate, result.peak_basis);
  query.rules = rules;
  query.coexistence = coexistence;
  return workloads::beside_what_runs_note(root, query);
}

void add_beside(nlohmann::json& doc, const std::optional<Beside>& beside) {
  if (beside) doc["beside"] = beside_to_json(beside->verdict, beside->jobs);
}

std::string beside_text(const std::optional<Beside>& beside) {
  return beside ? render_beside_text(beside->verdict, beside->jobs) : std::string();
}

int exit_code_with_beside(int job_code, const std::optional<Beside>& beside) {
  if (!beside) return job_code;
  return std::max(job_code, workloads::coexistence_exit_code(beside->verdict.verdict, true));
}

}  // namespace sparkops::serving
