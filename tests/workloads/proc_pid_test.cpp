#include "host/proc_pid.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "host/proc_times.hpp"
#include "support/test_support.hpp"

namespace sparkops::workloads {
namespace {

using namespace std::string_view_literals;

TEST(ProcCmdline, SplitsOnNulAndDropsTrailingTerminator) {
  const auto argv = host::parse_proc_cmdline(
      "python\0-m\0vllm.entrypoints.openai.api_server\0--port\0"
      "10000\0"sv);
  ASSERT_EQ(argv.size(), 5u);
  EXPECT_EQ(argv[0], "python");
  EXPECT_EQ(argv[2], "vllm.entrypoints.openai.api_server");
  EXPECT_EQ(argv[4], "10000");
}

TEST(ProcCmdline, KeepsEmptyArgumentsInTheMiddle) {
  const auto argv = host::parse_proc_cmdline("a\0\0b\0"sv);
  ASSERT_EQ(argv.size(), 3u);
  EXPECT_EQ(argv[1], "");
}

TEST(ProcCmdline, SetproctitleTitleLosesItsPadding) {
  const auto argv = host::parse_proc_cmdline("VLLM::EngineCore                    \0\0\0"sv);
  ASSERT_EQ(argv.size(), 1u);
  EXPECT_EQ(argv[0], "VLLM::EngineCore");
}

TEST(ProcCmdline, KernelThreadIsEmpty) {
  EXPECT_TRUE(host::parse_proc_cmdline("").empty());
}

TEST(ProcStatParse, CommWithSpacesAndParensEndsAtLastParen) {
  const auto st = host::parse_proc_stat(
      "4242 (my (odd) name) S 900 4242 4242 0 -1 4194560 1000 0 0 0 500 100 0 0 20 0 12 0 34354547 "
      "8589934592 786432 0\n");
  ASSERT_TRUE(st) << st.error().detail;
  EXPECT_EQ(st->pid, 4242u);
  EXPECT_EQ(st->comm, "my (odd) name");
  EXPECT_EQ(st->state, 'S');
  EXPECT_EQ(st->ppid, 900u);
  EXPECT_EQ(st->pgrp, 4242u);
  EXPECT_EQ(st->session, 4242u);
  EXPECT_EQ(st->start_ticks, 34354547u);
}

TEST(ProcStatParse, ProcessGroupAndSessionAreFieldsFiveAndSix) {
  // A setsid'd sleeper below a job: pgrp = session = its own pid, ppid the subreaper.
  const auto st = host::parse_proc_stat(
      "5001 (sleep) S 4000 5001 5001 0 -1 4194560 90 0 0 0 0 0 0 0 20 0 1 0 777 8650752 200 0\n");
  ASSERT_TRUE(st) << st.error().detail;
  EXPECT_EQ(st->ppid, 4000u);
  EXPECT_EQ(st->pgrp, 5001u);
  EXPECT_EQ(st->session, 5001u);
  EXPECT_FALSE(host::parse_proc_stat(
      "5001 (sleep) S 4000 x 5001 0 -1 4194560 90 0 0 0 0 0 0 0 20 0 1 0 777 8650752 200 0\n"));
}

TEST(ProcStatParse, TruncatedLineIsMalformed) {
  const auto st = host::parse_proc_stat("4242 (python3) S 1 2 3\n");
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, Errc::malformed);
}

TEST(ProcStatParse, NoCommIsMalformed) {
  EXPECT_FALSE(host::parse_proc_stat("garbage\n"));
}

TEST(ProcStatusParse, ReadsMemoryParentUidAndNamespaces) {
  const auto st = host::parse_proc_status(
      "Name:\tpython3\nState:\tS (sleeping)\nPPid:\t900\nUid:\t1000\t1000\t1000\t1000\n"
      "NSpid:\t912340\t57\nVmRSS:\t 5237360 kB\nVmSwap:\t    1024 kB\n");
  ASSERT_TRUE(st);
  EXPECT_EQ(st->name, "python3");
  EXPECT_EQ(st->ppid, 900u);
  EXPECT_EQ(st->real_uid, 1000u);
  EXPECT_EQ(st->vm_rss_bytes, 5237360ULL * 1024);
  EXPECT_EQ(st->vm_swap_bytes, 1024ULL * 1024);
  EXPECT_EQ(st->ns_pids, (std::vector<std::uint32_t>{912340, 57}));
}

TEST(ProcStatusParse, ZombieHasNoMemoryLines) {
  const auto st = host::parse_proc_status("Name:\tpython3\nState:\tZ (zombie)\nPPid:\t900\n");
  ASSERT_TRUE(st);
  EXPECT_FALSE(st->vm_rss_bytes);
}

TEST(ProcStatusParse, BadRssIsMalformed) {
  EXPECT_FALSE(host::parse_proc_status("VmRSS:\tlots kB\n"));
}

TEST(SmapsRollupParse, ReadsPssRssAndSwap) {
  const auto r = host::parse_smaps_rollup(
      "00400000-7ffd5a1f2000 ---p 00000000 00:00 0                          [rollup]\n"
      "Rss:             5237360 kB\nPss:             5101234 kB\nPss_Anon:        5000000 "
      "kB\nSwap:  0 kB\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pss_bytes, 5101234ULL * 1024);
  EXPECT_EQ(r->rss_bytes, 5237360ULL * 1024);
  EXPECT_EQ(r->swap_bytes, 0u);
}

TEST(EnvironParse, KeepsOnlyWantedPrefixesInOrder) {
  const auto env = host::parse_proc_environ(
      "HOME=/root\0OLLAMA_KEEP_ALIVE=-1\0junk\0OLLAMA_HOST=0.0.0.0:5001\0"sv, {"OLLAMA_"});
  ASSERT_EQ(env.size(), 2u);
  EXPECT_EQ(env[0].first, "OLLAMA_KEEP_ALIVE");
  EXPECT_EQ(env[0].second, "-1");
  EXPECT_EQ(env[1].second, "0.0.0.0:5001");
}

TEST(ProcTimes, UptimeAndBtimeParse) {
  EXPECT_EQ(host::parse_proc_uptime("350735.47 234388.90\n").value(),
            std::chrono::milliseconds(350735470));
  EXPECT_EQ(host::parse_proc_stat_btime("cpu 1 2\nbtime 1762330000\nprocesses 3\n").value(),
            1762330000);
  EXPECT_EQ(host::parse_proc_stat_btime("cpu 1 2\n").error().code, Errc::not_found);
  EXPECT_FALSE(host::parse_proc_uptime("soon\n"));
}

TEST(ProcTimes, AgeIsUptimeMinusStart) {
  EXPECT_EQ(host::process_age(1000, 100, std::chrono::milliseconds(60000)),
            std::chrono::milliseconds(50000));
  EXPECT_FALSE(host::process_age(100000, 100, std::chrono::milliseconds(60000)));
  EXPECT_FALSE(host::process_age(1, 0, std::chrono::milliseconds(60000)));
}

TEST(ProcReaders, ListPidsSkipsNonNumericEntries) {
  const host::HostRoot root(test::fixture("procs/vanishing"));
  const auto pids = host::list_pids(root);
  ASSERT_TRUE(pids);
  EXPECT_EQ(pids->front(), 1u);
  EXPECT_EQ(std::count(pids->begin(), pids->end(), 8100u), 1);
}

TEST(ProcPidName, OnlyNamesThatAreThirtyTwoBitNumbers) {
  EXPECT_EQ(host::parse_pid_name("1"), 1u);
  EXPECT_EQ(host::parse_pid_name("4242"), 4242u);
  EXPECT_EQ(host::parse_pid_name("4294967295"), 4294967295u);
  for (const std::string_view name :
       {""sv, "self"sv, "sys"sv, "."sv, ".."sv, "-1"sv, "+1"sv, " 1"sv, "12x"sv, "1.5"sv,
        "4294967296"sv, "99999999999999999999999999"sv, "0x10"sv, "\xff"sv}) {
    EXPECT_FALSE(host::parse_pid_name(name)) << name;
  }
}

TEST(ProcDirReaders, ListPidsTakesEveryKindOfEntryAndSkipsTheRest) {
  test::TempDir dir;
  const auto proc = dir / "proc";
  std::filesystem::create_directories(proc / "300");
  std::filesystem::create_directories(proc / "12");
  std::filesystem::create_directory_symlink("12", proc / "7");    // a captured tree's link
  std::filesystem::create_directory_symlink("gone", proc / "8");  // dangling: still a name
  std::filesystem::create_directory_symlink("300", proc / "self");
  for (const char* name : {"4294967296", "99999999999999999999", "12x", "-3", "sys"}) {
    std::filesystem::create_directories(proc / name);
  }
  { std::ofstream(proc / "55") << "a regular file named like a PID\n"; }
  const host::HostRoot root(dir.path());
  auto pd = host::ProcDir::open(root);
  ASSERT_TRUE(pd) << pd.error().detail;
  const auto pids = pd->list_pids();
  ASSERT_TRUE(pids) << pids.error().detail;
  EXPECT_EQ(*pids, (std::vector<std::uint32_t>{7, 8, 12, 55, 300}));
  // Listing twice from one ProcDir gives the same (each list opens its own descriptor), and the
  // HostRoot form agrees.
  EXPECT_EQ(pd->list_pids().value(), *pids);
  EXPECT_EQ(host::list_pids(root).value(), *pids);
  // The vanished PID of the fixture tree is listed, its read is not_found (the scan skips it).
  const auto gone = pd->read(8, "stat", 4096);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, Errc::not_found);
}

TEST(ProcDirReaders, ListPidsOfAMissingProcIsNotFound) {
  test::TempDir dir;
  const auto pids = host::list_pids(host::HostRoot(dir.path()));
  ASSERT_FALSE(pids);
  EXPECT_EQ(pids.error().code, Errc::not_found);
}

TEST(ProcDirReaders, LiveListHoldsThisProcessAndAChildThatExitedIsGone) {
  const host::HostRoot live("/");
  auto proc = host::ProcDir::open(live);
  ASSERT_TRUE(proc);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  const auto listed = proc->list_pids();
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(listed);
  EXPECT_TRUE(std::is_sorted(listed->begin(), listed->end()));
  EXPECT_TRUE(
      std::binary_search(listed->begin(), listed->end(), static_cast<std::uint32_t>(::getpid())));
  // Reaped after the listing: the PID may be listed, but its files are gone.
  const auto st = host::read_proc_stat(*proc, static_cast<std::uint32_t>(child));
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, Errc::not_found);
}

TEST(ProcReaders, VanishedPidIsNotFound) {
  const host::HostRoot root(test::fixture("procs/vanishing"));
  const auto st = host::read_proc_stat(root, 8100);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, Errc::not_found);
}

TEST(ProcStatParse, FlagsAreFieldNineAndMarkKernelThreads) {
  const auto kthread =
      host::parse_proc_stat("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 3 0 0 0\n");
  ASSERT_TRUE(kthread) << kthread.error().detail;
  EXPECT_EQ(kthread->flags, 2129984u);
  EXPECT_NE(kthread->flags & host::kProcFlagKernelThread, 0u);
  const auto user = host::parse_proc_stat(
      "5001 (sleep) S 4000 5001 5001 0 -1 4194560 90 0 0 0 0 0 0 0 20 0 1 0 777 8650752 200 0\n");
  ASSERT_TRUE(user);
  EXPECT_EQ(user->flags & host::kProcFlagKernelThread, 0u);
  // An unparsable flags field is 0, not a refused line (it was never checked before).
  const auto odd = host::parse_proc_stat(
      "5001 (sleep) S 4000 5001 5001 0 -1 zz 90 0 0 0 0 0 0 0 20 0 1 0 777 8650752 200 0\n");
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->flags, 0u);
}

TEST(ProcDirReaders, ReadRelativeToOneDirectoryLikeThePathReaders) {
  const host::HostRoot root(test::fixture("procs/vanishing"));
  auto proc = host::ProcDir::open(root);
  ASSERT_TRUE(proc) << proc.error().detail;
  const auto pids = host::list_pids(root);
  ASSERT_TRUE(pids);
  for (const auto pid : *pids) {
    const auto by_path = host::read_proc_stat(root, pid);
    const auto by_dir = host::read_proc_stat(*proc, pid);
    ASSERT_EQ(bool(by_path), bool(by_dir)) << pid;
    if (!by_path) {
      EXPECT_EQ(by_dir.error().code, by_path.error().code) << pid;
      continue;
    }
    EXPECT_EQ(by_dir->comm, by_path->comm);
    EXPECT_EQ(by_dir->ppid, by_path->ppid);
    EXPECT_EQ(by_dir->start_ticks, by_path->start_ticks);
    const auto argv_path = host::read_proc_cmdline(root, pid);
    const auto argv_dir = host::read_proc_cmdline(*proc, pid);
    ASSERT_EQ(bool(argv_path), bool(argv_dir)) << pid;
    if (argv_path) {
      EXPECT_EQ(*argv_dir, *argv_path) << pid;
    }
  }
  const auto gone = host::read_proc_stat(*proc, 8100);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, Errc::not_found);
}

TEST(ProcDirReaders, FileLongerThanOneReadIsWholeAndTheLimitHolds) {
  test::TempDir dir;
  std::string argv;
  for (int i = 0; i < 3000; ++i) argv += "arg" + std::to_string(i) + '\0';  // ~20 KB
  std::filesystem::create_directories(dir / "proc/77");
  test::write_text(dir / "proc/77/cmdline", argv);
  const host::HostRoot root(dir.path());
  auto proc = host::ProcDir::open(root);
  ASSERT_TRUE(proc);
  const auto got = host::read_proc_cmdline(*proc, 77);
  ASSERT_TRUE(got) << got.error().detail;
  ASSERT_EQ(got->size(), 3000u);
  EXPECT_EQ(got->back(), "arg2999");
  const auto limited = proc->read(77, "cmdline", 4096);
  ASSERT_FALSE(limited);
  EXPECT_EQ(limited.error().code, Errc::too_large);
  // Into a buffer: a file that fills it is too_large (the readers then take it whole, above); one
  // shorter than it is its text.
  char buf[4096];
  const auto filled = proc->read_into(77, "cmdline", buf);
  ASSERT_FALSE(filled);
  EXPECT_EQ(filled.error().code, Errc::too_large);
  std::string stat = "77 (a) S 1 77 77 0 -1 4194560";
  for (int i = 0; i < 13; ++i) stat += " 0";
  stat += std::string(3000, ' ') + "\n";  // a stat longer than the scan's stack buffer
  test::write_text(dir / "proc/77/stat", stat);
  const auto long_stat = host::read_proc_stat(*proc, 77);
  ASSERT_TRUE(long_stat) << long_stat.error().detail;
  EXPECT_EQ(long_stat->comm, "a");
  const auto text = proc->read_into(77, "stat", buf);
  ASSERT_TRUE(text) << text.error().detail;
  EXPECT_EQ(*text, stat);
  EXPECT_EQ(proc->read_into(78, "stat", buf).error().code, Errc::not_found);
}

TEST(ProcReaders, NestedNamespaceSeenInSelfStatus) {
  EXPECT_TRUE(
      host::read_in_nested_pid_namespace(host::HostRoot(test::fixture("procs/container"))).value());
  EXPECT_FALSE(
      host::read_in_nested_pid_namespace(host::HostRoot(test::fixture("procs/ollama"))).value());
}

}  // namespace
}  // namespace sparkops::workloads
