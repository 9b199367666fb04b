#include "watch/watch_preflight.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/utf8.hpp"
#include "plan/plan_render.hpp"
#include "serving/serving_render.hpp"
#include "status/status_render.hpp"
#include "watch/watch_finish.hpp"

namespace sparkops::watch {

namespace {

// --beside CMD: false when the launch is refused. Judged in the space the plan's budget is (a
// discrete GPU's memory, with the running workloads sized on the card from `snapshots`, the
// status reading), as `plan --beside --beside-running` judges it.
bool beside_preflight(const Console& io, const PreflightInput& in,
                      const std::vector<gpu::GpuSnapshot>& snapshots) {
  const plan::PlanEnvironment& env = *in.env;
  auto sc = serving::serving_context(*in.serving, *in.budget, env, in.heavy);
  if (!sc) {
    print_error(io, fmt::format("--beside: {}", sc.error().detail));
    return false;
  }
  sc->gpu_snapshots = snapshots;
  const auto job = serving::new_training_job(
      "this run", plan::peak_bytes(in.plan->estimate, in.plan->peak_basis), sc->scan);
  std::vector<std::string> notes;
  auto b = serving::beside_from_flags(*in.serving, env, *sc, job, serving::BesideNow{nullptr, true},
                                      in.coexistence, notes);
  if (!b) {
    print_error(io, b.error().detail);
    return false;
  }
  fmt::print(io.err, "{}", terminal_text(serving::render_beside_text(b->verdict, b->jobs)));
  const auto& v = b->verdict;
  if (v.verdict.kind == workloads::VerdictKind::stop_first ||
      v.verdict.kind == workloads::VerdictKind::does_not_fit) {
    if (!in.force) {
      print_error(io,
                  "beside the other jobs this run must wait (see above); not launching "
                  "(--force launches anyway)");
      return false;
    }
    const std::string forced =
        "beside the other jobs this run must wait; launching anyway (--force)";
    print_error(io, forced);
    if (in.warnings != nullptr) in.warnings->push_back(forced);
  }
  return true;
}

}  // namespace

bool run_preflight(const Console& io, const PreflightInput& in, gpu::GpuSource& gpu, Clock& clock) {
  const status::StatusReport report = status::collect_status(in.root, gpu, clock, in.status);
  fmt::print(io.err, "{}", terminal_text(status::render_status(report)));
  if (in.warnings != nullptr) {
    // What the status table shows as notes and "!" lines (status --json's `notes`).
    for (const auto& n : report.notes) in.warnings->push_back(n);
    for (auto& w : status::status_warnings(report)) in.warnings->push_back(std::move(w));
  }
  for (const auto& line : preflight_warnings(report)) {
    print_error(io, line);
    if (in.warnings != nullptr) in.warnings->push_back(line);
  }
  if (in.plan) {
    fmt::print(io.err, "{}", terminal_text(plan::render_plan_text(*in.plan)));
    if (in.plan->verdict == plan::Verdict::wont_fit) {
      if (!in.force) {
        print_error(io,
                    "the plan says this run won't fit; not launching (--force launches anyway)");
        return false;
      }
      const std::string forced = "the plan says this run won't fit; launching anyway (--force)";
      print_error(io, forced);
      if (in.warnings != nullptr) in.warnings->push_back(forced);
    }
    if (in.serving != nullptr && !in.serving->beside.empty() &&
        !beside_preflight(io, in, report.gpu.snapshots))
      return false;
  }
  std::fflush(io.err);
  return true;
}

}  // namespace sparkops::watch
