// The pure pieces of `sparkops watch`: live step tracking, live slowdown edges, record splitting,
// the sidecar written beside the log, memory pressure events, the summary and the anchor.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "base/text.hpp"
#include "base/wait_status.hpp"
#include "diagnose/live_slowdown.hpp"
#include "support/test_support.hpp"
#include "trainlog/live_tracker.hpp"
#include "trainlog/parse_log.hpp"
#include "trainlog/sidecar.hpp"
#include "watch/run_folder.hpp"
#include "watch/watch_child.hpp"
#include "watch/watch_events.hpp"
#include "watch/watch_output.hpp"
#include "watch/watch_summary.hpp"

namespace sparkops::watch {
namespace {

const SystemTime kT0{std::chrono::seconds{1762680372}};

TEST(LiveTracker, TqdmStepsAreReportedAsTheyArriveWithTheirRate) {
  trainlog::LiveTracker t;
  std::vector<trainlog::LiveStep> out;
  for (int i = 1; i <= 30; ++i) {
    const std::string rec = fmt::format(" {}/100 [00:{:02d}<01:00,  0.50s/it]", i, i);
    t.feed(rec, static_cast<std::uint64_t>(i * 40), kT0 + std::chrono::seconds{i}, out);
  }
  ASSERT_EQ(t.format(), trainlog::LogFormat::tqdm);
  ASSERT_EQ(out.size(), 30U);  // the held records are replayed once detection decided
  EXPECT_EQ(out.back().step, 30);
  EXPECT_DOUBLE_EQ(*out.back().seconds, 0.5);
  EXPECT_EQ(out.back().time, kT0 + std::chrono::seconds{30});
  const auto series = t.finish();
  ASSERT_TRUE(series);
  EXPECT_EQ(series->steps.size(), 30U);
  EXPECT_EQ(series->time_basis, trainlog::TimeBasis::sidecar);
}

// A run whose busiest bars are start-up and data work: weights loading, a datasets Map, a
// tokenizer pass, each with more updates than the training bar. None is a live step; the live
// steps are the training bar's, as analyze picks it (tqdm_scan.hpp classify_bar).
TEST(LiveTracker, LoadingAndMapBarsAreNeverLiveSteps) {
  trainlog::LiveTracker t;
  std::vector<trainlog::LiveStep> out;
  std::uint64_t offset = 0;
  const auto feed = [&](const std::string& rec) {
    t.feed(rec, offset, kT0, out);
    offset += rec.size() + 1;
  };
  for (int i = 1; i <= 40; ++i) {
    feed(fmt::format("Loading weights: {:3d}%|#  | {}/473 [00:{:02d}<00:10, 40.00it/s]", i / 5, i,
                     i % 60));
  }
  for (int i = 1; i <= 40; ++i) {
    feed(fmt::format("Map: {:3d}%|#  | {}/10000 [00:{:02d}<00:20, 500.00 examples/s]", i / 4,
                     i * 250, i % 60));
    feed(fmt::format("Tokenizing: {:3d}%|#  | {}/10000 [00:{:02d}<00:20, 500.00it/s]", i / 4,
                     i * 250, i % 60));
  }
  for (int i = 1; i <= 25; ++i) {
    feed(fmt::format("  {}%|#  | {}/500 [00:{:02d}<10:00,  1.20s/it]", i / 5, i, i));
  }
  ASSERT_TRUE(t.format());
  ASSERT_EQ(out.size(), 25U);
  for (const auto& s : out) EXPECT_LE(s.step, 25);
  EXPECT_DOUBLE_EQ(*out.back().seconds, 1.2);
  const auto series = t.finish();
  ASSERT_TRUE(series);
  ASSERT_EQ(series->steps.size(), 25U);  // analyze's answer on the same text
  EXPECT_EQ(series->steps.back().step, 25);
}

// HF Trainer's nested evaluation bar has no description either; the banner's step count says
// which undescribed bar is training, live as offline.
TEST(LiveTracker, TheTrainerBannerPicksTheTrainingBarLive) {
  trainlog::LiveTracker t;
  std::vector<trainlog::LiveStep> out;
  std::uint64_t offset = 0;
  const auto feed = [&](const std::string& rec) {
    t.feed(rec, offset, kT0, out);
    offset += rec.size() + 1;
  };
  feed("***** Running training *****");
  feed("  Total optimization steps = 50");
  feed("  2%|#  | 1/50 [00:02<01:40,  2.00s/it]");
  for (int i = 1; i <= 30; ++i)
    feed(fmt::format("  {}%|#  | {}/200 [00:0{}<00:10, 20.00it/s]", i / 2, i, i % 10));
  feed("  4%|#  | 2/50 [00:04<01:36,  2.00s/it]");
  ASSERT_TRUE(t.format());
  ASSERT_FALSE(out.empty());
  for (const auto& s : out) EXPECT_LE(s.step, 2) << "an evaluation-bar position became a step";
  EXPECT_EQ(out.back().step, 2);
}

TEST(LiveTracker, MegatronStepsComeFromTheParser) {
  trainlog::LiveTracker t;
  std::vector<trainlog::LiveStep> out;
  for (int i = 1; i <= 25; ++i) {
    const std::string rec = fmt::format(
        " iteration       {:>3}/     100 | consumed samples:          {} | elapsed time per "
        "iteration (ms): 250.0 |",
        i, i * 8);
    t.feed(rec, static_cast<std::uint64_t>(i * 120), kT0, out);
  }
  ASSERT_EQ(t.format(), trainlog::LogFormat::megatron);
  ASSERT_FALSE(out.empty());
  EXPECT_DOUBLE_EQ(*out.back().seconds, 0.25);
}

TEST(LiveTracker, UnrecognisedOutputGivesUpAndFinishesEmpty) {
  trainlog::LiveTrackerOptions o;
  o.max_detect_bytes = 1000;
  trainlog::LiveTracker t(o);
  std::vector<trainlog::LiveStep> out;
  for (int i = 0; i < 100; ++i) t.feed("just some program output", 0, kT0, out);
  EXPECT_TRUE(t.gave_up());
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(t.finish());
}

TEST(LiveSlowdown, BaselineThenSustainedSlowStepsStartAndCalmStepsEnd) {
  diagnose::LiveSlowdownOptions o;
  o.slowdown.warmup_steps = 2;
  o.baseline_samples = 4;
  o.slowdown.sustain_steps = 3;
  diagnose::LiveSlowdownDetector d(o);
  std::int64_t step = 0;
  std::vector<diagnose::LiveSlowdownEvent> events;
  const auto feed = [&](double s, int n) {
    for (int i = 0; i < n; ++i) {
      if (auto e = d.feed(++step, s, std::nullopt)) events.push_back(*e);
    }
  };
  feed(5.0, 2);  // warm-up: not part of the baseline
  feed(1.0, 4);
  EXPECT_EQ(d.baseline_seconds(), 1.0);
  feed(2.0, 2);  // two slow steps, then one calm one inside the same episode
  feed(1.0, 1);
  feed(2.0, 3);  // the third slow measurement confirms it (6 of 7 s above the threshold)
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].edge, diagnose::SlowdownEdge::start);
  EXPECT_EQ(events[0].first_step, 7);
  EXPECT_EQ(events[0].step, 10);
  EXPECT_DOUBLE_EQ(events[0].ratio, 2.0);
  feed(1.0, 2);  // a recovery must be sustained: sustain_steps calm measurements
  ASSERT_EQ(events.size(), 1U);
  feed(1.0, 1);
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[1].edge, diagnose::SlowdownEdge::end);
  EXPECT_EQ(d.slowdowns(), 1U);
}

TEST(LiveSlowdown, OneStalledStepIsAStallWithItsDurationNotASlowdown) {
  diagnose::LiveSlowdownOptions o;
  o.slowdown.warmup_steps = 0;
  o.baseline_samples = 4;
  o.slowdown.sustain_steps = 3;
  diagnose::LiveSlowdownDetector d(o);
  std::vector<diagnose::LiveSlowdownEvent> events;
  std::int64_t step = 0;
  for (const double s : {1.0, 1.0, 1.0, 1.0, 1.0, 61.0, 1.0, 1.0, 1.0}) {
    if (auto e = d.feed(++step, s, std::nullopt)) events.push_back(*e);
  }
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].edge, diagnose::SlowdownEdge::stall);
  EXPECT_EQ(events[0].first_step, 6);
  EXPECT_DOUBLE_EQ(events[0].stall_seconds, 60.0);
  EXPECT_EQ(d.slowdowns(), 0U);
  EXPECT_EQ(d.stalls(), 1U);
}

TEST(LiveSlowdown, AFlickeringPaceIsNeitherSlowdownNorStall) {
  // Slow, calm, slow, calm...: five slow measurements, but only 7 of 11 s (0.64) above
  // the threshold (min_wall_share 0.75).
  diagnose::LiveSlowdownOptions o;
  o.slowdown.warmup_steps = 0;
  o.baseline_samples = 4;
  o.slowdown.sustain_steps = 5;
  diagnose::LiveSlowdownDetector d(o);
  std::vector<diagnose::LiveSlowdownEvent> events;
  std::int64_t step = 0;
  for (const double s :
       {1.0, 1.0, 1.0, 1.0, 1.4, 1.0, 1.4, 1.0, 1.4, 1.0, 1.4, 1.0, 1.4, 1.0, 1.0}) {
    if (auto e = d.feed(++step, s, std::nullopt)) events.push_back(*e);
  }
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(d.slowdowns(), 0U);
}

TEST(RecordSplitter, SplitsOnNewlineAndCarriageReturnAcrossChunks) {
  RecordSplitter s(8);
  std::vector<std::pair<std::string, std::uint64_t>> got;
  const auto sink = [&](std::string_view r, std::uint64_t o) {
    got.emplace_back(std::string(r), o);
  };
  s.feed("ab\r", 0, sink);
  s.feed("cd", 3, sink);
  s.feed("e\n\nf", 5, sink);
  s.feed("0123456789", 9, sink);  // "f0123456" passes on at the cap
  s.finish(sink);
  ASSERT_EQ(got.size(), 4U);
  EXPECT_EQ(got[0], std::make_pair(std::string("ab"), std::uint64_t{0}));
  EXPECT_EQ(got[1], std::make_pair(std::string("cde"), std::uint64_t{3}));
  EXPECT_EQ(got[2], std::make_pair(std::string("f0123456"), std::uint64_t{8}));
  EXPECT_EQ(got[3], std::make_pair(std::string("789"), std::uint64_t{16}));
}

TEST(OutputSink, SidecarStampsRecordStartsAndAnalyzeReadsIt) {
  test::TempDir dir;
  const auto log = dir / "train.log";
  auto sidecar = log;
  sidecar += ".times";
  const int saved = ::dup(STDOUT_FILENO);  // the terminal half goes to /dev/null here
  const int null_fd = ::open("/dev/null", O_WRONLY);
  ::dup2(null_fd, STDOUT_FILENO);
  {
    auto sink = OutputSink::open(log, sidecar);
    ASSERT_TRUE(sink) << sink.error().detail;
    for (int i = 1; i <= 30; ++i) {
      const std::string text = fmt::format(" {}/30 [00:{:02d}<00:30,  1.00s/it]\r", i, i);
      sink->forward(1, text, kT0 + std::chrono::seconds{i});
    }
    sink->flush_sidecar();
  }
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  ::close(null_fd);
  const std::string sidecar_text = test::slurp(sidecar);
  const auto lines = split_lines(sidecar_text);
  ASSERT_EQ(lines.size(), 30U);
  EXPECT_EQ(lines[0], "2025-11-09T09:26:13.000Z\t0");
  const auto series = trainlog::parse_log_file(log, {});
  ASSERT_TRUE(series) << series.error().detail;
  EXPECT_EQ(series->time_basis, trainlog::TimeBasis::sidecar);
  ASSERT_EQ(series->steps.size(), 30U);
  EXPECT_EQ(series->steps.back().time, kT0 + std::chrono::seconds{30});
}

TEST(PressureTracker, LowAvailableStartsAnEpisodeAndRecoveryEndsIt) {
  PressureTracker p({0.10, 0.05});
  sampling::Sample s;
  s.wall_time = kT0;
  s.host.mem_total_bytes = 100ULL << 30;
  s.host.mem_available_bytes = 50ULL << 30;
  EXPECT_FALSE(p.feed(s));
  s.host.mem_available_bytes = 2ULL << 30;
  const auto start = p.feed(s);
  ASSERT_TRUE(start);
  EXPECT_EQ(*start,
            "2025-11-09T09:26:12.000Z start cause=memory_pressure mem_available_gib=2.0 "
            "mem_total_gib=100.0\n");
  EXPECT_FALSE(p.feed(s));
  s.interval = std::chrono::seconds{1};
  s.host_deltas.psi_mem_some_us = 500'000;  // half the interval stalled
  s.host.mem_available_bytes = 50ULL << 30;
  EXPECT_FALSE(p.feed(s));  // still on: PSI
  s.host_deltas.psi_mem_some_us = 0;
  const auto end = p.feed(s);
  ASSERT_TRUE(end);
  EXPECT_TRUE(
      starts_with(*end, "2025-11-09T09:26:12.000Z end cause=memory_pressure psi_some_share=0.000"));
}

TEST(WatchEvents, SlowdownLineCarriesTheThermalSample) {
  diagnose::LiveSlowdownEvent e;
  e.step = 120;
  e.first_step = 116;
  e.time = kT0;
  e.seconds = 0.5;
  e.baseline_seconds = 0.1;
  e.ratio = 5.0;
  sampling::Sample s;
  sampling::GpuReading g;
  g.snapshot.temp_millicelsius = 81000;
  g.snapshot.power_microwatts = 11170000;
  s.gpus.push_back(g);
  EXPECT_EQ(format_slowdown_event(e, kT0, &s),
            "2025-11-09T09:26:12.000Z start cause=slowdown step=120 first_step=116 seconds=0.500 "
            "baseline_s=0.100 ratio=5.00 gpu_temp_c=81 power_w=11.17\n");
}

TEST(WatchSummary, TextNamesExitDurationStepsAndMemory) {
  WatchOutcome o;
  o.exit_code = 137;
  o.term_signal = 9;
  o.started = kT0;
  o.ended = kT0 + std::chrono::seconds{90};
  o.output_bytes = 1234;
  o.live_baseline_seconds = 0.1;
  o.last_seconds = 0.5;
  o.launch_used_bytes = 10ULL << 30;
  o.peak_used_bytes = 30ULL << 30;
  WatchSummaryView v;
  v.command = {"python", "train.py"};
  v.dir = "run";
  v.log = "run/train.log";
  v.outcome = &o;
  v.plan_peak_bytes = 25ULL << 30;
  test::expect_golden("golden/watch/summary.txt", render_watch_summary_text(v));
  test::expect_golden("golden/watch/summary.json", watch_summary_json(v).dump(2) + "\n");
}

TEST(RunFolder, ASecondRunOfTheSameSecondGetsTheNextName) {
  const test::TempDir dir;
  const auto base = dir / "sparkops-run-20261201T120000Z";
  auto first = create_fresh_run_folder(base);
  auto second = create_fresh_run_folder(base);
  auto third = create_fresh_run_folder(base);
  ASSERT_TRUE(first && second && third);
  EXPECT_EQ(*first, base);
  EXPECT_EQ(second->string(), base.string() + "-2");
  EXPECT_EQ(third->string(), base.string() + "-3");
  EXPECT_TRUE(std::filesystem::is_directory(*third));
  const auto missing_parent = create_fresh_run_folder(dir / "no/such/parent/run");
  ASSERT_FALSE(missing_parent);
  EXPECT_NE(missing_parent.error().detail.find("no/such/parent/run"), std::string::npos);
}

// The pty child: both streams are terminals of the size asked for, output unchanged.
TEST(ChildPty, StreamsAreTerminalsOfTheGivenSize) {
  winsize ws{};
  ws.ws_col = 111;
  ws.ws_row = 33;
  auto child = spawn_child({"/bin/sh", "-c", "stty size <&1; stty size <&2 >&2; printf 'x\\n'"},
                           ChildOutput::pty, ws);
  ASSERT_TRUE(child) << child.error().detail;
  EXPECT_TRUE(child->pty);
  std::string out, err;
  for (auto [fd, text] : {std::pair{child->out_fd, &out}, std::pair{child->err_fd, &err}}) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    char buf[256];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
      text->append(buf, static_cast<std::size_t>(n));
    ::close(fd);
  }
  int status = 0;
  ::waitpid(child->pid, &status, 0);
  EXPECT_EQ(exit_code_from_wait_status(status), 0);
  EXPECT_EQ(out, "33 111\nx\n");
  EXPECT_EQ(err, "33 111\n");
}

}  // namespace
}  // namespace sparkops::watch
