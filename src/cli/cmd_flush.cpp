// `sparkops flush`: OOM ladder step 1. sync(), then "3" into /proc/sys/vm/drop_caches (under
// --root), refusing without root or while a trainer runs (unless --force); records step 1 in the
// ladder state file when one exists.

#include <unistd.h>

#include <memory>

#include <fmt/format.h>

#include "base/clock.hpp"
#include "base/json_text.hpp"
#include "base/units.hpp"
#include "base/utf8.hpp"
#include "cli/commands.hpp"
#include "ladder/flush.hpp"
#include "ladder/oom_render.hpp"

namespace sparkops::cli {
namespace {

struct FlushState {
  bool dry_run = false;
  bool force = false;
  std::string state_path = ".sparkops/ladder.json";
};

int run_flush(const FlushState& st, AppContext& ctx) {
  const host::HostRoot root = ctx.host_root();
  SystemClock clock;
  // A corrupt state file is reported before anything is flushed.
  std::optional<ladder::LadderState> state;
  if (!st.dry_run) {
    auto loaded = ladder::load_ladder_state(st.state_path);
    if (loaded) {
      state = std::move(*loaded);
    } else if (loaded.error().code != Errc::not_found) {
      print_error(ctx, loaded.error().detail);
      return kExitBadInput;
    }
  }
  ladder::FlushOptions options;
  options.mode = st.dry_run ? ladder::FlushMode::dry_run : ladder::FlushMode::flush;
  options.force = st.force ? ladder::Force::yes : ladder::Force::no;
  options.privilege = ::geteuid() == 0 ? ladder::Privilege::root : ladder::Privilege::unprivileged;
  if (!st.dry_run) options.running_trainers = ladder::running_trainers(root);
  options.sync = [] { ::sync(); };
  auto outcome = ladder::flush_page_cache(root, options);
  if (!outcome) {
    print_error(ctx, outcome.error().detail);
    const auto code = outcome.error().code;
    return code == Errc::permission_denied || code == Errc::conflict || code == Errc::io
               ? kExitFailure
               : kExitBadInput;
  }
  ladder::FlushView view;
  view.outcome = std::move(*outcome);
  view.mode = options.mode;
  if (view.outcome.forced_past_trainer) view.trainers = options.running_trainers;
  if (state) {
    const auto note =
        view.outcome.reclaimed_bytes
            ? fmt::format("reclaimed {}", format_signed_bytes(*view.outcome.reclaimed_bytes))
            : std::string();
    if (ladder::record_step(*state, ladder::LadderStep::flush, ladder::StepResult::oom,
                            clock.system_now(), ladder::LadderContext{}, ladder::Force::no, note)) {
      if (auto saved = ladder::save_ladder_state(st.state_path, *state, ctx.output_trust); !saved) {
        print_error(ctx, saved.error().detail);
        return kExitFailure;
      }
      view.recorded_in = st.state_path;
    }
  }
  if (ctx.json) {
    fmt::print(ctx.out, "{}\n", dump_document(ladder::flush_to_json(view)));
  } else {
    fmt::print(ctx.out, "{}", terminal_text(ladder::render_flush_text(view)));
  }
  return kExitOk;
}

}  // namespace

void add_flush_command(CommandTree& tree, AppContext& ctx) {
  auto st = std::make_shared<FlushState>();
  auto* cmd = tree.add("flush", "OOM ladder step 1: drop the page cache between runs (needs root)");
  if (cmd == nullptr) return;
  cmd->add_flag("--dry-run", st->dry_run,
                "Show what a flush would reclaim (Cached - Shmem - Mapped)");
  cmd->add_flag("--force", st->force, "Flush even while a trainer is running");
  cmd->add_option("--state", st->state_path,
                  "Ladder state file to record step 1 in (when it exists)")
      ->capture_default_str()
      ->type_name("FILE");
  cmd->callback([st, &ctx] { ctx.exit_code = run_flush(*st, ctx); });
}

}  // namespace sparkops::cli
