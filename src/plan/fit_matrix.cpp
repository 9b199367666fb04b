#include "plan/fit_matrix.hpp"

#include <optional>

namespace sparkops::plan {

std::vector<MatrixCell> fit_matrix(const PlanResult& base, const std::vector<std::uint64_t>& seqs,
                                   const std::vector<std::uint64_t>& batches) {
  std::vector<MatrixCell> cells;
  cells.reserve(seqs.size() * batches.size());
  std::optional<std::uint64_t> shard;
  if (!base.model.shards.empty()) shard = base.estimate.largest_shard_bytes;
  for (const auto s : seqs) {
    for (const auto b : batches) {
      RunConfig run = base.run;
      run.seq = s;
      run.batch = b;
      MatrixCell c{s, b, estimate(base.model.shape, run, shard), Verdict::wont_fit};
      c.verdict = verdict_of(c.estimate, base.peak_basis, base.budget_bytes,
                             base.device ? std::nullopt : base.pool);
      cells.push_back(c);
    }
  }
  return cells;
}

}  // namespace sparkops::plan
