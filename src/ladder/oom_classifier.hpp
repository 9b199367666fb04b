#pragma once
// Streaming OOM classifier (docs/oom-ladder.md "Classifying a failure"). Feed it text in chunks of
// any size; it keeps a bounded window (tens of KiB) and the facts it extracted, so a 1 GB log or a
// 10 MB line without a newline is classified in constant memory. One pass, all patterns at once.
//
// Kind: the highest-precedence signal class seen (oom_signals.hpp explains the order).
// Phase: decided at the LAST occurrence of that class (a traceback's final line is the error that
// ended the job) from what the text said before it:
//   1. server_admission is load by definition (a server admits a model while loading it);
//   2. a load marker inside the current Python traceback wins (vLLM's start-up profile run calls
//      the model's forward; a resume inside trainer.train() loads a checkpoint);
//   3. otherwise the nearest load or step marker before the error, within 64 KiB of text;
//   4. otherwise unknown. Markers after the error never count: a retry that succeeded afterwards
//      says nothing about when the failure happened.

#include <array>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "ladder/multi_matcher.hpp"
#include "ladder/oom_report.hpp"
#include "ladder/oom_signals.hpp"
#include "ladder/oom_text.hpp"

namespace sparkops {

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
  struct ClassRecord {
    bool seen = false;
    std::uint64_t count = 0;
    OomPhase phase = OomPhase::unknown;
    oomsig::Facts facts;
    std::string_view display;
  };

  void scan_new_bytes();
  void handle_ready(bool at_end);
  void handle(const Pending& p);
  void on_signal(const oomsig::Needle& needle, std::uint64_t start, std::uint64_t end,
                 const oomtext::DenseView& window, std::size_t local_start, std::size_t local_end);
  OomPhase phase_at(std::uint64_t event_end) const;
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
  std::optional<std::uint64_t> last_load_;
  std::optional<std::uint64_t> last_step_;
  std::optional<std::uint64_t> traceback_start_;
  bool bitsandbytes_ = false;
};

// Classifies a whole text.
Result<OomReport> classify_oom_text(std::string_view text);
// Streams a FILE* in 64 KiB chunks; `name` is used in errors ("-" for stdin).
Result<OomReport> classify_oom_stream(std::FILE* in, std::string_view name);
// Opens and streams a file; errors name the path.
Result<OomReport> classify_oom_file(const std::filesystem::path& path);

}  // namespace sparkops
