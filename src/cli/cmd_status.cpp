#include <cstdlib>

#include <fmt/format.h>

#include "base/units.hpp"
#include "cli/commands.hpp"
#include "host/meminfo.hpp"
#include "host/pool.hpp"

namespace sparkops::cli {

void add_status_command(CLI::App& app, AppContext& ctx) {
  auto* cmd = app.add_subcommand("status", "One screen: the pool, the GPU, thermals, pressure");
  cmd->callback([&ctx] {
    const HostRoot root = ctx.host_root();
    auto meminfo = read_meminfo(root);
    if (!meminfo) {
      print_error(ctx, meminfo.error().detail);
      ctx.exit_code = kExitFailure;
      return;
    }
    PoolOptions options;
    options.overhead_bytes = ctx.config.get_bytes("pool.overhead");
    auto pool = compute_pool(*meminfo, std::nullopt, options);
    if (!pool) {
      print_error(ctx, pool.error().detail);
      ctx.exit_code = kExitFailure;
      return;
    }
    fmt::print(ctx.out, "Pool  total {}  available {}  budget {}\n", format_bytes(pool->total_bytes),
               format_bytes(pool->available_bytes), format_bytes(pool->budget_bytes));
  });
}

}  // namespace sparkops::cli
