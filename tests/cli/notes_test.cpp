// `notes` carries every warning the text shows: each command is run on the fixtures as text and as
// --json, and every note or warning line of the text ("Warning:", "Orphan:", "GPU:", "!", "note:",
// "Note", the lines of a Notes block) has an entry in the document's `notes` saying the same.

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

// The warning lines of a text, without their marker ("! ", "note: ", "Note       ", "Note: ").
std::vector<std::string> warning_lines(const std::string& text) {
  std::vector<std::string> out;
  bool in_block = false;
  for (const auto raw : split_lines(text)) {
    const std::string_view line = trim(raw);
    if (line == "Notes:" || line == "NOTES") {
      in_block = true;
      continue;
    }
    if (line.empty()) {
      in_block = false;
      continue;
    }
    if (in_block && starts_with(raw, "  ")) {
      out.emplace_back(line);
      continue;
    }
    in_block = false;
    for (const std::string_view marker : {"! ", "note: ", "Note: ", "Note "}) {
      if (starts_with(line, marker)) {
        out.emplace_back(trim(line.substr(marker.size())));
        break;
      }
    }
    for (const std::string_view kept : {"Warning: ", "Orphan: ", "GPU: ", "Scanned "}) {
      if (starts_with(line, kept)) out.emplace_back(line);
    }
  }
  return out;
}

void expect_notes_cover_warnings(std::vector<std::string> args) {
  std::string what;
  for (const auto& a : args) what += " " + a;
  const auto text = test::run_sparkops(args);
  args.push_back("--json");
  const auto doc = test::run_sparkops(args);
  ASSERT_EQ(text.exit_code, doc.exit_code) << what << "\n" << text.err << doc.err;
  const auto j = nlohmann::json::parse(doc.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << what << "\n" << doc.out;
  ASSERT_TRUE(j.contains("notes") && j["notes"].is_array()) << what << "\n" << doc.out;
  std::vector<std::string> notes;
  for (const auto& n : j["notes"]) notes.push_back(n.get<std::string>());
  for (const auto& w : warning_lines(text.out)) {
    const bool found = std::any_of(notes.begin(), notes.end(), [&](const std::string& n) {
      return n.find(w) != std::string::npos || w.find(n) != std::string::npos;
    });
    EXPECT_TRUE(found) << what << "\n  the text warns: " << w << "\n  notes: " << j["notes"].dump();
  }
}

std::string root(const std::string& name) {
  return test::fixture("roots/" + name).string();
}
std::string procs(const std::string& name) {
  return test::fixture("procs/" + name).string();
}

const std::vector<std::string> kRoots{"container-cgroup", "gb10-finetune", "gb10-idle",
                                      "gb10-throttled", "x86-bare"};

TEST(NotesCarryWarnings, Status) {
  for (const auto& r : kRoots)
    expect_notes_cover_warnings({"status", "--root", root(r), "--gpu", "none"});
}

TEST(NotesCarryWarnings, Procs) {
  for (const std::string s : {"vllm_uncapped_orphan", "vllm_capped_lora"}) {
    expect_notes_cover_warnings(
        {"procs", "--root", procs(s), "--gpu-apps", procs(s) + "/gpu-apps.csv"});
  }
  expect_notes_cover_warnings({"procs", "--root", procs("vllm_capped_lora"), "--gpu-apps",
                               procs("vllm_capped_lora") + "/gpu-apps.csv", "--overhead", "70"});
  for (const std::string s : {"ollama", "trainers", "vanishing"}) {
    expect_notes_cover_warnings({"procs", "--root", procs(s)});
  }
  for (const auto& r : kRoots)
    expect_notes_cover_warnings({"procs", "--root", root(r), "--gpu", "none"});
}

TEST(NotesCarryWarnings, Plan) {
  for (const auto& r : kRoots) {
    expect_notes_cover_warnings({"plan", "Llama-3.1-8B", "--root", root(r)});
    expect_notes_cover_warnings({"plan", "Llama-3.1-70B", "--method", "full", "--root", root(r)});
    expect_notes_cover_warnings({"plan", "Llama-3.1-8B", "--serve", "vllm", "--root", root(r)});
  }
}

TEST(NotesCarryWarnings, PlanMatrix) {
  for (const auto& r : kRoots) {
    expect_notes_cover_warnings(
        {"plan", "Qwen2.5-7B", "--batch", "1,2", "--seq", "1024,4096", "--root", root(r)});
    // --params assumes a block layout: the matrix's text and JSON both say so.
    expect_notes_cover_warnings(
        {"plan", "--params", "7B", "--batch", "1,2", "--seq", "1024", "--root", root(r)});
  }
  const auto doc = test::run_sparkops(
      {"plan", "--params", "7B", "--batch", "1,2", "--json", "--root", root("gb10-idle")});
  const auto j = nlohmann::json::parse(doc.out);
  ASSERT_TRUE(j["notes"].is_array()) << doc.out;
  EXPECT_FALSE(j["notes"].empty()) << doc.out;
}

TEST(NotesCarryWarnings, FlushAndConfig) {
  const auto flush =
      test::run_sparkops({"flush", "--dry-run", "--json", "--root", root("gb10-idle")});
  const auto f = nlohmann::json::parse(flush.out);
  ASSERT_TRUE(f["notes"].is_array()) << flush.out;
  // A config file that does not load: the text warns on stderr, the document's notes say the same.
  const test::TempDir tmp;
  const auto bad = tmp / "bad.toml";
  test::write_text(bad, "[pool]\noverhed = \"4GB\"\n");
  const auto text = test::run_sparkops({"config", "--config", bad.string()});
  const auto doc = test::run_sparkops({"config", "--json", "--config", bad.string()});
  EXPECT_EQ(doc.exit_code, 2) << doc.err;
  const auto j = nlohmann::json::parse(doc.out);
  ASSERT_TRUE(j["notes"].is_array()) << doc.out;
  ASSERT_EQ(j["notes"].size(), 1u) << doc.out;
  const std::string note = j["notes"][0].get<std::string>();
  EXPECT_NE(note.find("file not applied"), std::string::npos) << note;
  EXPECT_NE(text.err.find(note), std::string::npos) << text.err;
}

TEST(NotesCarryWarnings, OomAndAnalyze) {
  const test::TempDir tmp;
  for (const auto& e : std::filesystem::directory_iterator(test::fixture("oom/corpus"))) {
    if (e.path().extension() != ".txt") continue;
    expect_notes_cover_warnings({"oom", "--root", root("gb10-idle"), "--log", e.path().string(),
                                 "--state", (tmp / "ladder.json").string()});
  }
  for (const auto& e : std::filesystem::directory_iterator(test::fixture("logs"))) {
    const auto ext = e.path().extension();
    if (ext != ".log" && ext != ".jsonl") continue;
    expect_notes_cover_warnings({"analyze", "--log", e.path().string()});
  }
}

// The warnings a command printed on stderr: its "sparkops: " lines but the ones named in `skip`
// (progress banners, events, the closing summary line), without the prefix.
std::vector<std::string> stderr_warnings(const std::string& err,
                                         const std::vector<std::string_view>& skip) {
  std::vector<std::string> out;
  for (const auto line : split_lines(err)) {
    if (!starts_with(line, "sparkops: ")) continue;
    const std::string_view rest = line.substr(10);
    const bool skipped = std::any_of(skip.begin(), skip.end(), [&](std::string_view s) {
      return rest.find(s) != std::string_view::npos;
    });
    if (!skipped) out.emplace_back(rest);
  }
  return out;
}

void expect_in_notes(const nlohmann::json& notes, const std::string& warning,
                     const std::string& what) {
  ASSERT_TRUE(notes.is_array()) << what;
  const bool found = std::any_of(notes.begin(), notes.end(), [&](const nlohmann::json& n) {
    return n.get<std::string>().find(warning) != std::string::npos;
  });
  EXPECT_TRUE(found) << what << "\n  stderr warns: " << warning << "\n  notes: " << notes.dump();
}

// sample prints its warnings on stderr in both modes; the --json summary's notes carry each: here
// the GPU's state (no GPU read) and a torn last line cut from the file it appends to.
TEST(NotesCarryWarnings, Sample) {
  const test::TempDir tmp;
  const std::string out = (tmp / "thermal.log").string();
  const std::vector<std::string> args{"--root", root("gb10-idle"), "sample", "--gpu",
                                      "none",   "--interval",      "10ms",   "--count",
                                      "1",      "--out",           out};
  ASSERT_EQ(test::run_sparkops(args).exit_code, 0);
  for (const bool json : {false, true}) {
    test::write_text(tmp / "torn", test::slurp(out) + "2026/12/01 00:00:00.000, 4");
    std::filesystem::rename(tmp / "torn", out);
    auto a = args;
    if (json) a.push_back("--json");
    const auto r = test::run_sparkops(a);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    if (!json) continue;
    const auto notes = nlohmann::json::parse(r.out)["notes"];
    const auto warnings = stderr_warnings(r.err, {"sampling every", "event ", "tick(s)"});
    ASSERT_FALSE(warnings.empty()) << r.err;
    for (const auto& w : warnings) expect_in_notes(notes, w, "sample");
    expect_in_notes(notes, "bytes of an incomplete last line", "sample: the torn line");
    // The banner's GPU state ("...; GPU: no_library (...)") is a warning too.
    const auto gpu = r.err.find("; GPU: ");
    ASSERT_NE(gpu, std::string::npos) << r.err;
    expect_in_notes(notes, r.err.substr(gpu + 2, r.err.find("; Ctrl-C", gpu) - gpu - 2),
                    "sample: the GPU");
  }
}

// watch: the pre-flight's warnings (a heavy workload running, the status table's "!" and notes)
// and the session's are in the summary's notes, in DIR/summary.json and the --json document.
TEST(NotesCarryWarnings, Watch) {
  const test::TempDir tmp;
  const auto r = test::run_sparkops({"--root", procs("vllm_uncapped_orphan"), "watch", "--gpu",
                                     "none", "--dir", (tmp / "run").string(), "--", "true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto notes = nlohmann::json::parse(test::slurp(tmp / "run/summary.json"))["notes"];
  const auto warnings = stderr_warnings(r.err, {"watching `"});
  ASSERT_FALSE(warnings.empty()) << r.err;
  for (const auto& w : warnings) expect_in_notes(notes, w, "watch");
  expect_in_notes(notes, "heavy GPU workload running: PID 5000", "watch: the heavy workload");
  for (const auto& w : warning_lines(r.err)) expect_in_notes(notes, w, "watch: the status table");
}

TEST(NotesCarryWarnings, TheCheckFindsWarningLines) {
  EXPECT_EQ(
      warning_lines("Pool: x\nWarning: oversubscribed\nNotes:\n  1 vLLM: heavy\n\n  ! flush\n"),
      (std::vector<std::string>{"Warning: oversubscribed", "1 vLLM: heavy", "flush"}));
}

}  // namespace
}  // namespace sparkops
