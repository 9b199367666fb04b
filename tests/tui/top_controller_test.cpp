#include "tui/top_controller.hpp"

#include <csignal>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/proc_pid.hpp"

#include "model_fixture.hpp"

namespace sparkops::tui {
namespace {

class FakeSignaller final : public ProcessSignaller {
 public:
  std::string refuse_reason;
  std::vector<std::uint32_t> sent;
  std::string refusal(const status::WorkloadLine&) const override { return refuse_reason; }
  std::string terminate(const status::WorkloadLine& w) override {
    sent.push_back(w.pid);
    return "SIGTERM sent to PID " + std::to_string(w.pid);
  }
};

Input key(char c) {
  return Input{Input::Kind::character, c};
}
const Input kDown{Input::Kind::down, 0};
const Input kUp{Input::Kind::up, 0};

struct ControllerTest : ::testing::Test {
  TopModel model = test::busy_gb10_model();
  FakeSignaller signaller;
  TopController c{ViewState{}, signaller};
};

TEST_F(ControllerTest, QuitHelpSortFreeze) {
  EXPECT_EQ(c.on_input(key('?'), model), Command::redraw);
  EXPECT_TRUE(c.view().help);
  EXPECT_EQ(c.on_input(key('x'), model), Command::redraw);  // any key closes help
  EXPECT_FALSE(c.view().help);
  c.on_input(key('c'), model);
  EXPECT_EQ(c.view().sort, SortKey::cap);
  c.on_input(key('a'), model);
  EXPECT_EQ(c.view().sort, SortKey::age);
  c.on_input(key('m'), model);
  EXPECT_EQ(c.view().sort, SortKey::memory);
  EXPECT_EQ(c.on_input(key('f'), model), Command::redraw);
  EXPECT_TRUE(c.view().frozen);
  EXPECT_EQ(c.on_input(key('f'), model), Command::refresh_now);
  EXPECT_FALSE(c.view().frozen);
  EXPECT_EQ(c.on_input(key('q'), model), Command::quit);
}

TEST_F(ControllerTest, IntervalStepsAndStopsAtTheEnds) {
  c.on_input(key('+'), model);
  EXPECT_EQ(c.view().interval, std::chrono::milliseconds{2000});
  for (int i = 0; i < 20; ++i) c.on_input(key('+'), model);
  EXPECT_EQ(c.view().interval, kIntervalSteps.back());
  for (int i = 0; i < 20; ++i) c.on_input(key('-'), model);
  EXPECT_EQ(c.view().interval, kIntervalSteps.front());
}

TEST_F(ControllerTest, OffLadderIntervalStepsToNeighbours) {
  ViewState v;
  v.interval = std::chrono::milliseconds{1500};
  TopController d(v, signaller);
  d.on_input(key('-'), model);
  EXPECT_EQ(d.view().interval, std::chrono::milliseconds{1000});
}

TEST_F(ControllerTest, SelectionMovesWithinTheTable) {
  c.on_input(kUp, model);
  EXPECT_EQ(c.view().selected, 0u);
  for (int i = 0; i < 10; ++i) c.on_input(kDown, model);
  EXPECT_EQ(c.view().selected, 2u);  // three workloads
}

TEST_F(ControllerTest, KillNeedsConfirmationAndSignalsTheSelectedRow) {
  c.on_input(kDown, model);  // memory order: trainer 114687, vLLM 4174, orphan 6100
  c.on_input(key('k'), model);
  ASSERT_TRUE(c.view().confirm_pid);
  EXPECT_EQ(*c.view().confirm_pid, 4174u);
  EXPECT_TRUE(signaller.sent.empty());
  c.on_input(key('y'), model);
  EXPECT_FALSE(c.view().confirm_pid);
  ASSERT_EQ(signaller.sent.size(), 1u);
  EXPECT_EQ(signaller.sent[0], 4174u);
  EXPECT_EQ(c.view().message, "SIGTERM sent to PID 4174");
}

TEST_F(ControllerTest, AnyOtherKeyCancelsTheKill) {
  c.on_input(key('k'), model);
  ASSERT_TRUE(c.view().confirm_pid);
  c.on_input(key('q'), model);  // not a quit while asking: it answers "no"
  EXPECT_FALSE(c.view().confirm_pid);
  EXPECT_TRUE(signaller.sent.empty());
  EXPECT_NE(c.view().message.find("cancelled"), std::string::npos);
}

TEST_F(ControllerTest, RefusedProcessIsNeverAskedAbout) {
  signaller.refuse_reason = "not sent: PID 114687 belongs to uid 0";
  c.on_input(key('k'), model);
  EXPECT_FALSE(c.view().confirm_pid);
  EXPECT_EQ(c.view().message, signaller.refuse_reason);
  c.on_input(key('y'), model);
  EXPECT_TRUE(signaller.sent.empty());
}

TEST_F(ControllerTest, NothingToKillSaysSo) {
  TopModel quiet = test::quiet_model_without_gpu();
  c.on_input(key('k'), quiet);
  EXPECT_FALSE(c.view().confirm_pid);
  EXPECT_EQ(c.view().message, "no workload to signal");
}

TEST(SystemSignaller, RefusesOnACapturedRoot) {
  auto s = make_system_signaller(host::HostRoot("/tmp"));
  status::WorkloadLine w;
  w.pid = 4242;
  w.uid = 1000;
  const std::string why = s->refusal(w);
  EXPECT_NE(why.find("captured"), std::string::npos) << why;
  EXPECT_EQ(s->terminate(w), why);
}

TEST(SystemSignaller, RefusesOtherUsersProcessesAndUnknownOwners) {
  auto s = make_system_signaller(host::HostRoot("/"));
  status::WorkloadLine w;
  w.pid = 4242;
  EXPECT_NE(s->refusal(w).find("owner of PID 4242 is unknown"), std::string::npos);
  if (::geteuid() != 0) {
    w.uid = ::geteuid() + 1;
    EXPECT_NE(s->refusal(w).find("only its owner or root"), std::string::npos);
  }
}

TEST(SystemSignaller, SignalsOwnChildAndRefusesAReusedPid) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  auto stat = host::read_proc_stat(host::HostRoot("/"), static_cast<std::uint32_t>(child));
  ASSERT_TRUE(stat);
  auto s = make_system_signaller(host::HostRoot("/"));
  status::WorkloadLine w;
  w.pid = static_cast<std::uint32_t>(child);
  w.uid = ::getuid();
  w.start_ticks = stat->start_ticks + 1;  // another process than the one scanned
  EXPECT_NE(s->terminate(w).find("now another process"), std::string::npos);
  w.start_ticks = stat->start_ticks;
  EXPECT_NE(s->terminate(w).find("SIGTERM sent"), std::string::npos);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

}  // namespace
}  // namespace sparkops::tui
