#include "workloads/contention.hpp"

#include <gtest/gtest.h>

#include "base/units.hpp"

namespace sparkops::workloads {
namespace {

using std::chrono::seconds;

ContentionReading reading_at(int t_seconds) {
  ContentionReading r;
  r.at = SteadyTime{} + seconds(t_seconds);
  return r;
}

std::vector<ContentionKind> kinds(const std::vector<ContentionEvent>& events) {
  std::vector<ContentionKind> out;
  for (const auto& e : events) out.push_back(e.kind);
  return out;
}

TEST(OomLines, VictimFromEitherKernelFormat) {
  const auto a = parse_oom_victim(
      "[12345.678] Out of memory: Killed process 4242 (python3) total-vm:123456kB, "
      "anon-rss:1000kB, file-rss:0kB");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->pid, 4242u);
  EXPECT_EQ(a->name, "python3");
  const auto b = parse_oom_victim(
      "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/"
      ",mems_allowed=0,global_oom,task_memcg=/user.slice,"
      "task=VLLM::EngineCor,pid=5001,uid=1000");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->pid, 5001u);
  EXPECT_EQ(b->name, "VLLM::EngineCor");
  EXPECT_FALSE(parse_oom_victim(
      "NVRM: nvAssertOkFailedNoLog: Assertion failed: NV_ERR_NO_MEMORY (0x00000051)"));
}

TEST(Contention, QuietReadingsGiveNoEvents) {
  ContentionTracker tracker;
  auto r = reading_at(0);
  r.psi_some_avg10 = 0.5;
  r.pgmajfault = 100;
  r.workloads = {{4242, "vLLM", 60 * kGiB}};
  EXPECT_TRUE(tracker.feed(r).empty());
  r.at += seconds(30);
  r.pgmajfault = 200;
  EXPECT_TRUE(tracker.feed(r).empty());
}

TEST(Contention, PressureFaultsRefaultsAndSwapInRising) {
  ContentionTracker tracker;
  auto r = reading_at(0);
  r.psi_some_avg10 = 2.0;
  r.pgmajfault = 1000;
  r.workingset_refault = 5000;
  r.pswpin = 0;
  EXPECT_TRUE(tracker.feed(r).empty());
  r.at += seconds(10);
  r.psi_some_avg10 = 23.5;
  r.psi_full_avg10 = 6.0;
  r.pgmajfault = 1000 + 10 * 500;
  r.workingset_refault = 5000 + 10 * 4000;
  r.pswpin = 10 * 300;
  const auto events = tracker.feed(r);
  EXPECT_EQ(kinds(events),
            (std::vector<ContentionKind>{ContentionKind::psi_some, ContentionKind::psi_full,
                                         ContentionKind::major_faults, ContentionKind::refaults,
                                         ContentionKind::swap_in}));
  EXPECT_EQ(events[0].evidence, "PSI memory some avg10 23.5% (was 2.0%)");
  EXPECT_EQ(events[2].evidence, "500 major faults/s (pgmajfault)");
}

TEST(Contention, CounterResetIsNotARate) {
  ContentionTracker tracker;
  auto r = reading_at(0);
  r.pgmajfault = 1000000;
  tracker.feed(r);
  r.at += seconds(10);
  r.pgmajfault = 5;  // reboot or counter wrap
  EXPECT_TRUE(tracker.feed(r).empty());
}

TEST(Contention, ResidentMemoryFallingWhileRunningIsEviction) {
  ContentionTracker tracker;
  auto r = reading_at(0);
  r.workloads = {{4242, "vLLM", 60 * kGiB}, {5150, "TRL", 20 * kGiB}};
  tracker.feed(r);
  r.at += seconds(30);
  r.workloads = {{4242, "vLLM", 30 * kGiB}, {5150, "TRL", 19 * kGiB}};
  const auto events = tracker.feed(r);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, ContentionKind::evicted);
  EXPECT_EQ(events[0].pid, 4242u);
  EXPECT_EQ(events[0].evidence,
            "vLLM 4242 resident memory fell 60.0 GiB -> 30.0 GiB while still running");
}

TEST(Contention, VanishedWorkloadNamedByOomLineWasKilled) {
  ContentionTracker tracker;
  auto r = reading_at(0);
  r.workloads = {{5001, "vLLM EngineCore", 64 * kGiB}, {77, "tiny", 10 * kMiB}};
  r.oom_kill = 3;
  tracker.feed(r);
  r.at += seconds(30);
  r.workloads.clear();
  r.oom_kill = 4;
  r.kernel_lines = {
      "[350700.1] Out of memory: Killed process 5001 (VLLM::EngineCor) total-vm:1kB, anon-rss:1kB"};
  const auto events = tracker.feed(r);
  EXPECT_EQ(kinds(events),
            (std::vector<ContentionKind>{ContentionKind::oom_kill, ContentionKind::vanished}));
  EXPECT_EQ(events[1].evidence,
            "vLLM EngineCore 5001 gone while holding 64.0 GiB: killed by the kernel OOM killer");
}

TEST(Contention, OomCounterWithoutAKernelLineIsStillReported) {
  ContentionTracker tracker;
  auto r = reading_at(0);
  r.oom_kill = 0;
  tracker.feed(r);
  r.at += seconds(5);
  r.oom_kill = 2;
  const auto events = tracker.feed(r);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].evidence, "vmstat oom_kill rose by 2");
}

}  // namespace
}  // namespace sparkops::workloads
