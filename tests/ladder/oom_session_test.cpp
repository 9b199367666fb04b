// The `oom` session below the command line: state loading, the text read from a stream, what is
// recorded and when the state file is written.

#include "ladder/oom_session.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "base/console.hpp"
#include "support/test_support.hpp"

namespace sparkops::ladder {
namespace {

constexpr std::string_view kOom =
    "Traceback (most recent call last):\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n";

// A stdio stream over `text`, closed when the holder dies.
struct Stream {
  std::string text;
  std::FILE* f = nullptr;
  explicit Stream(std::string_view t) : text(t) { f = fmemopen(text.data(), text.size(), "r"); }
  ~Stream() {
    if (f != nullptr) std::fclose(f);
  }
};

TEST(OomSession, ClassifiesTheStreamWithoutWritingTheState) {
  test::TempDir dir;
  Stream in(kOom);
  OomRequest rq;
  rq.state_path = (dir / "ladder.json").string();
  rq.input = in.f;
  ManualClock clock;
  auto s = begin_oom(rq, clock);
  ASSERT_TRUE(s) << s.error().detail;
  ASSERT_TRUE(s->view.report);
  EXPECT_TRUE(is_memory_failure(*s->view.report));
  EXPECT_FALSE(s->state_exists);
  ASSERT_TRUE(conclude_oom(*s, rq, OomRun{}, OutputTrust::checked, clock));
  ASSERT_TRUE(s->view.state.last_oom);
  EXPECT_FALSE(s->view.state_saved);  // classifying alone writes nothing
  EXPECT_FALSE(std::filesystem::exists(dir / "ladder.json"));
  EXPECT_EQ(oom_exit_code(*s), kExitOk);
}

// A file is read in one pass: the progress hook sees the bytes grow to the file's size.
TEST(OomSession, AFileIsReadOnceWithProgress) {
  test::TempDir dir;
  std::string text;
  while (text.size() < 200 * 1024) text += "INFO 05-01 10:00:00 llm_engine.py:200] step\n";
  text += kOom;
  test::write_text(dir / "server.log", text);
  OomRequest rq;
  rq.log = (dir / "server.log").string();
  rq.state_path = (dir / "ladder.json").string();
  std::vector<std::uint64_t> seen;
  rq.progress = [&seen](std::uint64_t done) { seen.push_back(done); };
  ManualClock clock;
  auto s = begin_oom(rq, clock);
  ASSERT_TRUE(s) << s.error().detail;
  ASSERT_TRUE(s->view.report);
  EXPECT_TRUE(is_memory_failure(*s->view.report));
  ASSERT_GE(seen.size(), 2U);  // 64 KiB reads
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_EQ(seen.back(), text.size());
}

TEST(OomSession, AMissingFileIsNamed) {
  test::TempDir dir;
  OomRequest rq;
  rq.log = (dir / "absent.log").string();
  rq.state_path = (dir / "ladder.json").string();
  ManualClock clock;
  auto s = begin_oom(rq, clock);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, Errc::not_found);
  EXPECT_NE(s.error().detail.find("absent.log: cannot open"), std::string::npos)
      << s.error().detail;
}

TEST(OomSession, NamedStateFileIsWritten) {
  test::TempDir dir;
  Stream in(kOom);
  OomRequest rq;
  rq.state_path = (dir / "ladder.json").string();
  rq.state_given = true;
  rq.input = in.f;
  ManualClock clock;
  auto s = begin_oom(rq, clock);
  ASSERT_TRUE(s) << s.error().detail;
  ASSERT_TRUE(conclude_oom(*s, rq, OomRun{}, OutputTrust::checked, clock));
  EXPECT_TRUE(s->view.state_saved);
  auto reloaded = load_ladder_state(rq.state_path);
  ASSERT_TRUE(reloaded) << reloaded.error().detail;
  EXPECT_TRUE(reloaded->last_oom);
}

TEST(OomSession, ImplicitTerminalInputIsNotRead) {
  test::TempDir dir;
  OomRequest rq;
  rq.state_path = (dir / "ladder.json").string();
  rq.input = nullptr;  // must not be touched
  rq.input_is_terminal = true;
  ManualClock clock;
  auto s = begin_oom(rq, clock);
  ASSERT_TRUE(s) << s.error().detail;
  EXPECT_FALSE(s->view.report);
}

TEST(OomSession, DoneRecordsTheStepAndSaves) {
  test::TempDir dir;
  OomRequest rq;
  rq.state_path = (dir / "ladder.json").string();
  rq.done = "flush";
  rq.input = nullptr;  // --done without --log reads nothing
  ManualClock clock;
  auto s = begin_oom(rq, clock);
  ASSERT_TRUE(s) << s.error().detail;
  ASSERT_TRUE(conclude_oom(*s, rq, OomRun{}, OutputTrust::checked, clock));
  ASSERT_TRUE(s->view.recorded);
  EXPECT_EQ(s->view.recorded->step, LadderStep::flush);
  EXPECT_TRUE(std::filesystem::exists(dir / "ladder.json"));
}

TEST(OomSession, BadStepAndResultNameTheFlag) {
  test::TempDir dir;
  OomRequest rq;
  rq.state_path = (dir / "ladder.json").string();
  rq.input = nullptr;
  rq.done = "7";
  ManualClock clock;
  auto bad_step = begin_oom(rq, clock);
  ASSERT_FALSE(bad_step);
  EXPECT_EQ(bad_step.error().detail.rfind("--done 7: unknown step", 0), 0u);
  rq.done = "1";
  rq.result = "maybe";
  auto bad_result = begin_oom(rq, clock);
  ASSERT_FALSE(bad_result);
  EXPECT_EQ(bad_result.error().detail, "--result maybe: expected oom or ok");
}

TEST(OomSession, CorruptStateIsAnError) {
  test::TempDir dir;
  test::write_text(dir / "ladder.json", "{ not json");
  OomRequest rq;
  rq.state_path = (dir / "ladder.json").string();
  rq.input = nullptr;
  rq.input_is_terminal = true;
  ManualClock clock;
  auto s = begin_oom(rq, clock);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, Errc::malformed);
}

}  // namespace
}  // namespace sparkops::ladder
