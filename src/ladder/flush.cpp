#include "ladder/flush.hpp"

#include <fmt/format.h>

#include "workloads/scan.hpp"

namespace sparkops::ladder {

Result<std::uint64_t> flush_estimate_bytes(const host::Meminfo& m) {
  if (!m.cached_bytes) return fail(Errc::not_found, "/proc/meminfo: no Cached line");
  const std::uint64_t held = m.shmem_bytes.value_or(0) + m.mapped_bytes.value_or(0);
  return *m.cached_bytes > held ? *m.cached_bytes - held : 0;
}

Result<FlushOutcome> flush_page_cache(const host::HostRoot& root, const FlushOptions& options) {
  FlushOutcome out;
  auto before = host::read_meminfo(root);
  if (!before) return tl::unexpected(before.error());
  out.before = *before;
  auto estimate = flush_estimate_bytes(out.before);
  if (!estimate) return tl::unexpected(estimate.error());
  out.estimate_bytes = *estimate;
  if (options.mode == FlushMode::dry_run) return out;

  if (options.privilege != Privilege::root) {
    return fail(Errc::permission_denied,
                "flushing the page cache needs root: run `sudo sparkops flush`");
  }
  if (!options.running_trainers.empty()) {
    if (options.force == Force::no) {
      return fail(Errc::conflict,
                  fmt::format("a trainer is running ({}): a flush is a between-run reset; run it "
                              "after the job ends, or pass --force",
                              fmt::join(options.running_trainers, "; ")));
    }
    out.forced_past_trainer = true;
  }
  if (options.sync) options.sync();
  if (auto wrote = root.write("/proc/sys/vm/drop_caches", "3"); !wrote) {
    return tl::unexpected(wrote.error());
  }
  if (options.after_write) options.after_write();
  auto after = host::read_meminfo(root);
  if (!after) return tl::unexpected(after.error());
  out.after = *after;
  if (out.before.mem_free_bytes && out.after->mem_free_bytes) {
    out.reclaimed_bytes = static_cast<std::int64_t>(*out.after->mem_free_bytes) -
                          static_cast<std::int64_t>(*out.before.mem_free_bytes);
  }
  return out;
}

std::vector<std::string> running_trainers(const host::HostRoot& root) {
  std::vector<std::string> out;
  auto scan = workloads::scan_workloads(root, {}, workloads::ScanOptions{});
  if (!scan) return out;
  for (const auto& w : scan->workloads) {
    if (w.is_trainer()) out.push_back(fmt::format("{} {}", w.pid, w.kind.label));
  }
  return out;
}

}  // namespace sparkops::ladder
