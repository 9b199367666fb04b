#pragma once
// `plan --seq 1024,2048 --batch 1,2,4`: the planned run re-estimated at every seq x batch pair and
// held against the plan's own budget and pool, on the plan's peak basis (plan.hpp PeakBasis).

#include <cstdint>
#include <vector>

#include "plan/plan.hpp"

namespace sparkops::plan {

struct MatrixCell {
  std::uint64_t seq = 0;
  std::uint64_t batch = 0;
  Estimate estimate;
  Verdict verdict = Verdict::wont_fit;
};

// One cell per (seq, batch), seq-major, each the run of `base` with that seq and batch. A discrete
// GPU's plan (base.device) is held against its budget alone: its run is not in the host pool.
std::vector<MatrixCell> fit_matrix(const PlanResult& base, const std::vector<std::uint64_t>& seqs,
                                   const std::vector<std::uint64_t>& batches);

}  // namespace sparkops::plan
