#pragma once
// The job a command plans (`plan`, `procs --plan`) beside what runs: the need it is held to and the
// --beside verdict, so the commands that ask it assemble the same question the same way. The
// flags arrive as the user typed them (serving_flags.hpp); the environment and the rules come from
// the caller's config (options/).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.hpp"
#include "plan/plan.hpp"
#include "plan/plan_args.hpp"
#include "serving/serving_flags.hpp"
#include "workloads/procs_query.hpp"

namespace sparkops::serving {

// `procs --plan`'s need: with --serve the planned server's footprint (on a discrete GPU, with
// --budget auto, sized on the card: its total is the fractions' denominator, its free memory the
// budget), else the planned run's peak on the plan's basis (plan.hpp PeakBasis: on a discrete GPU
// the device peak, held against the card's memory). `device` is the card procs read, if any.
Result<std::uint64_t> planned_need(const ServingFlags& flags, const plan::PlanArgs& args,
                                   plan::PlanEnvironment env,
                                   const std::optional<host::DeviceMemory>& device,
                                   const workloads::HeavyRules& rules);

// beside_from_flags when --beside or --beside-running was given; nullopt when neither was.
Result<std::optional<Beside>> beside_if_asked(const ServingFlags& flags,
                                              const plan::PlanEnvironment& env,
                                              const ServingContext& sc, const NewJob& job,
                                              BesideNow now,
                                              const workloads::CoexistenceOptions& coexistence,
                                              std::vector<std::string>& notes);

// The --beside verdict after a planned job's answer, when one was asked (`plan`, `plan --serve`,
// `procs --plan`): its document under "beside", its text block after the job's, and the exit code,
// the stricter of the job's and the coexistence verdict's (one exit-code table, README).
void add_beside(nlohmann::json& doc, const std::optional<Beside>& beside);
std::string beside_text(const std::optional<Beside>& beside);
int exit_code_with_beside(int job_code, const std::optional<Beside>& beside);

// `procs --plan ... --beside CMD`: the planned job (the server with --serve, else a run needing
// `need`) beside what procs scanned (`answer`, its GPU processes joined) and the commands given:
// the verdict `plan --beside-running` gives, in the space procs judged in (the card `device` with
// --budget auto, read in `snapshots`). Errors name the flag.
Result<Beside> beside_scanned(const ServingFlags& flags, const plan::PlanArgs& args,
                              plan::PlanEnvironment env, const workloads::ProcsAnswer& answer,
                              std::uint64_t need, const std::optional<host::DeviceMemory>& device,
                              const std::vector<gpu::GpuSnapshot>& snapshots,
                              const workloads::HeavyRules& rules,
                              const workloads::CoexistenceOptions& coexistence);

// `plan`'s note when no --beside was asked: the one-heavy-job verdict `procs --plan` gives for the
// planned run (workloads::beside_what_runs_note), with the same question, options and space: the
// plan's peak on its basis, its pool, and on a discrete GPU the card's memory with the processes
// of `snapshots` (the reading the budget came from). nullopt without a pool or when nothing runs:
// on a quiet machine the plan's own verdict says it all.
std::optional<std::string> what_runs_note(const host::HostRoot& root,
                                          const plan::PlanResult& result,
                                          const std::vector<gpu::GpuSnapshot>& snapshots,
                                          const workloads::HeavyRules& rules,
                                          const workloads::CoexistenceOptions& coexistence);

}  // namespace sparkops::serving
