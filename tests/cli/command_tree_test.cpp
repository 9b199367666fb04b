// A run builds the options of the command it runs only (cli/command_tree.hpp). What the user sees
// must not depend on that: the command word is found after global options and their values, and
// every shape the search is unsure of (`--`, unknown options, --help first, a word that names no
// command) builds the whole tree and leaves the answer to CLI11.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/app_context.hpp"
#include "cli/command_tree.hpp"
#include "cli/global_options.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

const std::vector<std::string> kCommands{"status", "config",  "serve",     "sample", "plan",
                                         "procs",  "analyze", "oom",       "flush",  "watch",
                                         "top",    "help",    "completion"};

std::string word_of(std::vector<const char*> args) {
  cli::AppContext ctx;
  CLI::App app{"test", "sparkops"};
  app.set_version_flag("--version", "0");
  cli::add_global_options(app, ctx);
  args.insert(args.begin(), "sparkops");
  return cli::command_in_argv(app, static_cast<int>(args.size()), args.data());
}

TEST(CommandInArgv, SkipsGlobalOptionsAndTheirValues) {
  EXPECT_EQ(word_of({"status"}), "status");
  EXPECT_EQ(word_of({"status", "--json"}), "status");
  EXPECT_EQ(word_of({"--json", "--quiet", "--no-color", "plan", "8b"}), "plan");
  EXPECT_EQ(word_of({"--root", "/tmp", "--gpu", "none", "procs"}), "procs");
  EXPECT_EQ(word_of({"--root=/tmp", "--gpu=none", "top"}), "top");
  EXPECT_EQ(word_of({"--trust-output-path", "--config", "f.toml", "sample"}), "sample");
  // A value is the option's whatever it looks like (CLI11 takes it unconditionally).
  EXPECT_EQ(word_of({"--config", "status", "plan"}), "plan");
  EXPECT_EQ(word_of({"--root", "--json", "status"}), "status");
  EXPECT_EQ(word_of({"stauts"}), "stauts");
  EXPECT_EQ(word_of({"--json", "stauts", "status"}), "stauts");
}

TEST(CommandInArgv, IsEmptyWhereCli11MustDecide) {
  EXPECT_EQ(word_of({}), "");
  EXPECT_EQ(word_of({"--"}), "");
  EXPECT_EQ(word_of({"--", "status"}), "");
  EXPECT_EQ(word_of({"--json", "--", "status"}), "");
  EXPECT_EQ(word_of({"--help", "status"}), "");
  EXPECT_EQ(word_of({"-h", "status"}), "");
  EXPECT_EQ(word_of({"--version"}), "");
  EXPECT_EQ(word_of({"--overhead", "4", "status"}), "");  // status's option, not a global one
  EXPECT_EQ(word_of({"--bogus", "status"}), "");
  EXPECT_EQ(word_of({"-5", "status"}), "");
  EXPECT_EQ(word_of({"--root"}), "");            // the value is missing
  EXPECT_EQ(word_of({"--root", "status"}), "");  // `status` is the root, no command follows
  EXPECT_EQ(word_of({"", "status"}), "");
}

TEST(CommandTree, BuildsTheChosenCommandAndNamesTheRest) {
  CLI::App app{"test", "sparkops"};
  cli::CommandTree tree(app, "plan");
  EXPECT_EQ(tree.add("status", "the status"), nullptr);
  CLI::App* plan = tree.add("plan", "the plan");
  ASSERT_NE(plan, nullptr);
  ASSERT_EQ(tree.built().size(), 1U);
  EXPECT_EQ(tree.built().front(), plan);
  // The unbuilt command is still there, by name and description.
  ASSERT_EQ(app.get_subcommands([](CLI::App*) { return true; }).size(), 2U);
  EXPECT_EQ(app.get_subcommand("status")->get_description(), "the status");

  tree.build_every_command();
  EXPECT_TRUE(app.get_subcommands([](CLI::App*) { return true; }).empty());
  EXPECT_NE(tree.add("status", "the status"), nullptr);
  EXPECT_NE(tree.add("plan", "the plan"), nullptr);
  EXPECT_EQ(tree.built().size(), 2U);
}

TEST(CommandTree, EmptyChoiceBuildsEveryCommand) {
  CLI::App app{"test", "sparkops"};
  cli::CommandTree tree(app, "");
  EXPECT_NE(tree.add("status", "s"), nullptr);
  EXPECT_NE(tree.add("plan", "p"), nullptr);
  EXPECT_EQ(tree.built().size(), 2U);
}

// `help C` builds every command, `C --help` only C: the two pages must be the same for every C.
TEST(CommandTreeCli, EachCommandsHelpIsTheSameBuiltAloneOrWithAll) {
  for (const auto& cmd : kCommands) {
    const auto alone = test::run_sparkops({cmd, "--help"});
    const auto all = test::run_sparkops({"help", cmd});
    ASSERT_EQ(alone.exit_code, 0) << cmd << ": " << alone.err;
    EXPECT_EQ(alone.out, all.out) << cmd;
    // --help before the command is a shape the search leaves to CLI11 (it builds all).
    EXPECT_EQ(test::run_sparkops({"--help", cmd}).out, alone.out) << cmd;
  }
}

TEST(CommandTreeCli, GlobalOptionWithAValueBeforeTheCommand) {
  const std::string root = test::fixture("roots/gb10-idle").string();
  const auto r = test::run_sparkops({"--root", root, "--gpu", "none", "status", "--overhead", "2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("POOL"), std::string::npos) << r.out;
  // The command's own option before the command is not a global option: CLI11 refuses it.
  const auto misplaced = test::run_sparkops({"--overhead", "2", "status"});
  EXPECT_EQ(misplaced.exit_code, 2);
  EXPECT_NE(misplaced.err.find("--overhead"), std::string::npos) << misplaced.err;
}

TEST(CommandTreeCli, UnknownCommandIsNamedAfterGlobalOptionsToo) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"stauts"}, {"--json", "stauts"}, {"--gpu", "none", "stauts"}}) {
    const auto r = test::run_sparkops(args);
    EXPECT_EQ(r.exit_code, 2) << args.back();
    EXPECT_NE(r.err.find("unknown subcommand 'stauts'"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  // A real command after the unknown word: CLI11 parses it (every command built) and names the
  // word it did not expect.
  const auto later = test::run_sparkops({"stauts", "status"});
  EXPECT_EQ(later.exit_code, 2);
  EXPECT_NE(later.err.find("not expected: stauts"), std::string::npos) << later.err;
}

TEST(CommandTreeCli, DoubleDashAndMisplacedWordsAreCli11s) {
  const auto dash = test::run_sparkops({"--", "status"});
  EXPECT_EQ(dash.exit_code, 2);
  EXPECT_NE(dash.err.find("A subcommand is required"), std::string::npos) << dash.err;
  const auto second = test::run_sparkops({"status", "help"});
  EXPECT_EQ(second.exit_code, 2);
  EXPECT_NE(second.err.find("not expected: help"), std::string::npos) << second.err;
  const auto other = test::run_sparkops({"status", "--method", "qlora"});  // plan's flag
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("--method"), std::string::npos) << other.err;
}

}  // namespace
}  // namespace sparkops
