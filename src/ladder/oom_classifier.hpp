#pragma once
// Streaming OOM classifier (docs/oom-ladder.md "Classifying a failure"). Feed it text in chunks of
// any size; it keeps a bounded window (tens of KiB) and the facts it extracted, so a 1 GB log or a
// 10 MB line without a newline is classified in constant memory. One pass, all patterns at once.
//
// Kind: the highest-precedence signal class seen (oom_signals.hpp explains the order).
// Phase (load / step / eval / save): decided at the LAST occurrence of that class (a traceback's
// final line is the error that ended the job):
//   1. server_admission is load by definition (a server admits a model while loading it);
//   2. a start-up failure stated right after the error ("failed to load all models", "EngineCore
//      failed to start", llama.cpp's "error loading model") within 2 KiB: the program itself says
//      which stage failed;
//   3. a load marker inside the current Python traceback wins (vLLM's start-up profile run calls
//      the model's forward; a resume inside trainer.train() loads a checkpoint);
//   4. otherwise the last phase marker before the error, within 64 KiB of text;
//   5. otherwise, when nothing before the error places it, the first job-description word after
//      it within 64 KiB (Role::step_context: prose that quotes an error first and says afterwards
//      that the job was training). Other markers after the error never count: a retry that
//      succeeded afterwards says nothing about when the failure happened;
//   6. otherwise unknown.
// phase_evidence is the line of the marker that decided (the signal's own line for rule 1).
// A text with no OOM signal is not_oom; if it carries a near miss (an illegal memory access, a
// SIGSEGV, a tolerated NvMap error 12), the report names it and takes its phase by the same rules,
// at its FIRST occurrence (a near miss does not end the job, so the first report is the one the
// text is about).

#include <array>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "ladder/multi_matcher.hpp"
#include "ladder/oom_report.hpp"
#include "ladder/oom_signals.hpp"
#include "ladder/oom_text.hpp"

namespace sparkops::ladder {

class OomClassifier {
 public:
  OomClassifier();

  void feed(std::string_view chunk);
  // Empty input -> invalid_argument; input that is binary data (NUL bytes, an ELF or gzip header)
  // -> malformed; otherwise the report (kind not_oom when nothing matched).
  Result<OomReport> finish();

  std::uint64_t bytes_seen() const { return raw_bytes_; }
  // Bytes held in buffers right now (for the bounded-memory test).
  std::size_t buffered_bytes() const;

 private:
  struct Pending {
    std::uint32_t needle;
    std::uint64_t end;  // dense offset one past the match
  };
  // A phase marker: where it starts and ends (dense offsets), its phase, and its line, quoted
  // lazily (a tqdm log has a marker per bar update; only the ones a failure keeps, or the last
  // ones when the window is trimmed, are ever quoted).
  struct Mark {
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    OomPhase phase = OomPhase::unknown;
    bool quoted = false;
    std::string line;
  };
  // One failure's position and the markers that place it.
  struct Event {
    bool seen = false;
    std::uint64_t end = 0;        // dense offset of the occurrence that decides
    std::optional<Mark> before;   // rules 1, 3, 4
    std::optional<Mark> outcome;  // rule 2
    std::optional<Mark> after;    // rule 5
    std::optional<Mark> decided() const;
  };
  struct ClassRecord {
    Event event;
    std::uint64_t count = 0;
    oomsig::Facts facts;
    std::string_view display;
    std::string line;  // the signal's own line (server_admission's phase evidence)
  };

  void scan_new_bytes();
  void handle_ready(bool at_end);
  void handle(const Pending& p);
  void on_signal(const oomsig::Needle& needle, std::uint64_t start, std::uint64_t end,
                 const oomtext::DenseView& window, std::size_t local_start, std::size_t local_end);
  void on_marker(OomPhase phase, oomsig::Role role, std::uint64_t start, std::uint64_t end);
  void quote(Mark& mark) const;  // fills mark.line from the window, once
  void on_near_miss(const oomsig::Needle& needle, std::uint64_t end,
                    const oomtext::DenseView& window, std::size_t local_start);
  void place(Event& event, std::uint64_t end) const;
  std::optional<Mark> before(std::uint64_t event_end) const;
  void trim();

  const MultiMatcher* matcher_;
  MultiMatcher::State state_;
  oomtext::DenseNormalizer normalizer_;
  oomtext::DenseText dense_;  // a window of the dense stream
  std::uint64_t base_ = 0;    // dense offset of dense_.lower[0]
  std::size_t scanned_ = 0;   // bytes of dense_ already run through the matcher
  std::deque<Pending> pending_;
  std::array<ClassRecord, oomsig::kSignalClassCount> records_{};

  std::uint64_t raw_bytes_ = 0;
  std::uint64_t head_nul_bytes_ = 0;  // NUL bytes in the first 64 KiB
  std::string head_;                  // first bytes, for magic numbers
  std::uint64_t signal_count_ = 0;
  std::optional<Mark> last_mark_;  // the last phase marker of any phase
  std::optional<Mark> last_load_;  // the last load marker
  std::optional<std::uint64_t> traceback_start_;
  Event near_miss_;
  std::string_view near_miss_display_;
  bool bitsandbytes_ = false;
  bool xid_fault_ = false;  // the last driver signal was an Xid 31 fault
};

// Classifies a whole text.
Result<OomReport> classify_oom_text(std::string_view text);
// Streams a FILE* in 64 KiB chunks; `name` is used in errors ("-" for stdin).
Result<OomReport> classify_oom_stream(std::FILE* in, std::string_view name);
// Opens and streams a file; errors name the path.
Result<OomReport> classify_oom_file(const std::filesystem::path& path);

}  // namespace sparkops::ladder
