#include "ladder/oom_classifier.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>

namespace sparkops::ladder {
namespace {

constexpr std::size_t kLookbehind = 1024;  // dense bytes of context before a match
constexpr std::size_t kLookahead = 512;    // and after it
constexpr std::uint64_t kPhaseWindow = 64 * 1024;
constexpr std::uint64_t kOutcomeWindow = 2 * 1024;  // a stated outcome follows its error closely
constexpr std::size_t kTrimAt = 64 * 1024;
constexpr std::size_t kKeep = 4 * 1024;
constexpr std::uint64_t kBinaryProbe = 64 * 1024;
constexpr std::size_t kChunk = 64 * 1024;

const MultiMatcher& shared_matcher() {
  static const MultiMatcher matcher = [] {
    std::vector<std::string_view> texts;
    for (const auto& n : oomsig::needles()) texts.push_back(n.text);
    return MultiMatcher(texts);
  }();
  return matcher;
}

std::size_t longest_needle() {
  std::size_t longest = 0;
  for (const auto& n : oomsig::needles()) longest = std::max(longest, n.text.size());
  return longest;
}

template <class T>
void take_if(std::optional<T>& into, std::optional<T>&& from) {
  if (from) into = std::move(from);
}

}  // namespace

std::string_view oom_kind_name(OomKind k) {
  switch (k) {
    case OomKind::not_oom:
      return "not_oom";
    case OomKind::cuda_allocator:
      return "cuda_allocator";
    case OomKind::accelerator_runtime:
      return "accelerator_runtime";
    case OomKind::host_oom_killer:
      return "host_oom_killer";
    case OomKind::cgroup_oom_killer:
      return "cgroup_oom_killer";
    case OomKind::server_admission:
      return "server_admission";
    case OomKind::driver:
      return "driver";
  }
  return "not_oom";
}

std::string_view oom_phase_name(OomPhase p) {
  switch (p) {
    case OomPhase::unknown:
      return "unknown";
    case OomPhase::load:
      return "load";
    case OomPhase::step:
      return "step";
    case OomPhase::eval:
      return "eval";
    case OomPhase::save:
      return "save";
  }
  return "unknown";
}

std::optional<OomKind> parse_oom_kind(std::string_view name) {
  for (const auto k : {OomKind::not_oom, OomKind::cuda_allocator, OomKind::accelerator_runtime,
                       OomKind::host_oom_killer, OomKind::cgroup_oom_killer,
                       OomKind::server_admission, OomKind::driver}) {
    if (oom_kind_name(k) == name) return k;
  }
  return std::nullopt;
}

std::optional<OomPhase> parse_oom_phase(std::string_view name) {
  for (const auto p :
       {OomPhase::unknown, OomPhase::load, OomPhase::step, OomPhase::eval, OomPhase::save}) {
    if (oom_phase_name(p) == name) return p;
  }
  return std::nullopt;
}

OomClassifier::OomClassifier() : matcher_(&shared_matcher()) {}

std::size_t OomClassifier::buffered_bytes() const {
  return dense_.lower.capacity() + dense_.orig.capacity() + dense_.flags.capacity() +
         pending_.size() * sizeof(Pending) + head_.capacity();
}

void OomClassifier::feed(std::string_view chunk) {
  if (raw_bytes_ < kBinaryProbe) {
    const auto probe = chunk.substr(0, static_cast<std::size_t>(kBinaryProbe - raw_bytes_));
    head_nul_bytes_ += static_cast<std::uint64_t>(std::count(probe.begin(), probe.end(), '\0'));
    if (head_.size() < 4) head_.append(chunk.substr(0, 4 - head_.size()));
  }
  raw_bytes_ += chunk.size();
  // Normalise in slices so one huge chunk never grows the window past a slice's worth.
  while (!chunk.empty()) {
    const auto slice = chunk.substr(0, kChunk);
    chunk.remove_prefix(slice.size());
    normalizer_.feed(slice, dense_);
    scan_new_bytes();
    handle_ready(false);
    trim();
  }
}

void OomClassifier::scan_new_bytes() {
  const std::uint64_t origin = base_ + scanned_;
  matcher_->scan(state_, std::string_view(dense_.lower).substr(scanned_),
                 [&](std::uint32_t index, std::size_t end) {
                   pending_.push_back(Pending{index, origin + end});
                 });
  scanned_ = dense_.lower.size();
}

void OomClassifier::handle_ready(bool at_end) {
  const std::uint64_t available = base_ + dense_.lower.size();
  while (!pending_.empty() && (at_end || pending_.front().end + kLookahead <= available)) {
    handle(pending_.front());
    pending_.pop_front();
  }
}

void OomClassifier::handle(const Pending& p) {
  const auto& needle = oomsig::needles()[p.needle];
  const std::uint64_t start = p.end - needle.text.size();
  const std::uint64_t window_begin =
      std::max<std::uint64_t>(base_, start > kLookbehind ? start - kLookbehind : 0);
  const std::uint64_t window_end =
      std::min<std::uint64_t>(base_ + dense_.lower.size(), p.end + kLookahead);
  const auto offset = static_cast<std::size_t>(window_begin - base_);
  const auto length = static_cast<std::size_t>(window_end - window_begin);
  const oomtext::DenseView window{std::string_view(dense_.lower).substr(offset, length),
                                  std::string_view(dense_.orig).substr(offset, length),
                                  std::string_view(dense_.flags).substr(offset, length)};
  const auto local_start = static_cast<std::size_t>(start - window_begin);
  const auto local_end = static_cast<std::size_t>(p.end - window_begin);
  if (!oomsig::check_passes(needle, window, local_start, local_end)) return;
  switch (needle.role) {
    case oomsig::Role::signal:
      if (needle.check == oomsig::Check::nvmap_error12 &&
          !oomsig::nvmap_failure_stated(window, local_start)) {
        static const oomsig::Needle tolerated{
            needle.text, oomsig::Role::near_miss, oomsig::SignalClass::driver, oomsig::Check::none,
            "NvMap error 12 with no failure stated (Tegra logs it for CUDA-graph pre-allocations "
            "that vLLM tolerates at start-up)"};
        on_near_miss(tolerated, p.end, window, local_start);
        break;
      }
      on_signal(needle, start, p.end, window, local_start, local_end);
      break;
    case oomsig::Role::load_marker:
    case oomsig::Role::load_outcome:
    case oomsig::Role::step_marker:
    case oomsig::Role::eval_marker:
    case oomsig::Role::save_marker:
    case oomsig::Role::step_context:
      on_marker(oomsig::phase_of(needle.role), needle.role, start, p.end);
      break;
    case oomsig::Role::traceback_start:
      traceback_start_ = p.end;
      break;
    case oomsig::Role::progress_rate:
      if (const auto phase = oomsig::progress_bar_phase(window, local_start)) {
        on_marker(*phase, needle.role, window_begin + local_start, p.end);
      }
      break;
    case oomsig::Role::bitsandbytes:
      bitsandbytes_ = true;
      break;
    case oomsig::Role::near_miss:
      on_near_miss(needle, p.end, window, local_start);
      break;
  }
}

std::optional<OomClassifier::Mark> OomClassifier::Event::decided() const {
  if (outcome) return outcome;
  if (before) return before;
  return after;
}

void OomClassifier::place(Event& event, std::uint64_t end) const {
  event.seen = true;
  event.end = end;
  event.before = before(end);
  if (event.before) quote(*event.before);
  event.outcome.reset();
  event.after.reset();
}

void OomClassifier::quote(Mark& mark) const {
  if (mark.quoted) return;
  mark.quoted = true;
  if (mark.start < base_ || mark.start >= base_ + dense_.lower.size()) return;
  mark.line = oomtext::line_at(dense_.view(), static_cast<std::size_t>(mark.start - base_),
                               kPhaseEvidenceMax);
}

void OomClassifier::on_marker(OomPhase phase, oomsig::Role role, std::uint64_t start,
                              std::uint64_t end) {
  Mark mark{start, end, phase, false, {}};
  const auto later = [&](Event& event) {
    if (!event.seen || event.end >= end) return;
    const auto distance = end - event.end;
    if (role == oomsig::Role::load_outcome && distance <= kOutcomeWindow && !event.outcome) {
      event.outcome = mark;
      quote(*event.outcome);
    }
    if (role == oomsig::Role::step_context && !event.before && !event.after &&
        distance <= kPhaseWindow) {
      event.after = mark;
      quote(*event.after);
    }
  };
  for (auto& record : records_) later(record.event);
  later(near_miss_);
  if (phase == OomPhase::load) last_load_ = mark;
  last_mark_ = std::move(mark);
}

void OomClassifier::on_near_miss(const oomsig::Needle& needle, std::uint64_t end,
                                 const oomtext::DenseView& window, std::size_t local_start) {
  (void)window;
  (void)local_start;
  auto& driver = records_[static_cast<std::size_t>(oomsig::SignalClass::driver)];
  if (xid_fault_ && driver.event.seen && needle.text == "anillegalmemoryaccesswasencountered") {
    // The application's side of the Xid 31 fault: the job ends at its last report.
    place(driver.event, end);
    return;
  }
  if (near_miss_.seen) return;
  place(near_miss_, end);
  near_miss_display_ = needle.display;
}

void OomClassifier::on_signal(const oomsig::Needle& needle, std::uint64_t start, std::uint64_t end,
                              const oomtext::DenseView& window, std::size_t local_start,
                              std::size_t local_end) {
  (void)start;
  auto& record = records_[static_cast<std::size_t>(needle.signal_class)];
  ++record.count;
  ++signal_count_;
  record.display = needle.display;
  place(record.event, end);
  record.line = oomtext::line_at(window, local_start, kPhaseEvidenceMax);
  if (needle.signal_class == oomsig::SignalClass::driver) {
    xid_fault_ = needle.check == oomsig::Check::xid_31;
  }
  auto facts = oomsig::extract_facts(needle.signal_class, window, local_start, local_end);
  take_if(record.facts.requested_bytes, std::move(facts.requested_bytes));
  take_if(record.facts.capacity_bytes, std::move(facts.capacity_bytes));
  take_if(record.facts.free_bytes, std::move(facts.free_bytes));
  take_if(record.facts.pid, std::move(facts.pid));
  take_if(record.facts.process, std::move(facts.process));
}

std::optional<OomClassifier::Mark> OomClassifier::before(std::uint64_t event_end) const {
  const auto near = [event_end](std::uint64_t marker) {
    return marker <= event_end && event_end - marker <= kPhaseWindow;
  };
  if (traceback_start_ && near(*traceback_start_) && last_load_ && near(last_load_->end) &&
      last_load_->end > *traceback_start_) {
    return last_load_;
  }
  if (last_mark_ && near(last_mark_->end)) return last_mark_;
  return std::nullopt;
}

void OomClassifier::trim() {
  if (dense_.lower.size() <= kTrimAt) return;
  const std::uint64_t size_end = base_ + dense_.lower.size();
  std::uint64_t keep_from = size_end - kKeep;
  if (!pending_.empty()) {
    static const std::size_t longest = longest_needle();
    const std::uint64_t earliest = pending_.front().end - longest;
    keep_from = std::min(keep_from, earliest > kLookbehind ? earliest - kLookbehind : 0);
  }
  if (keep_from <= base_) return;
  // The last markers may still place a later failure: quote them while their text is here.
  if (last_mark_) quote(*last_mark_);
  if (last_load_) quote(*last_load_);
  const auto drop = static_cast<std::size_t>(keep_from - base_);
  dense_.lower.erase(0, drop);
  dense_.orig.erase(0, drop);
  dense_.flags.erase(0, drop);
  base_ += drop;
  scanned_ -= drop;
}

Result<OomReport> OomClassifier::finish() {
  normalizer_.finish(dense_);
  scan_new_bytes();
  handle_ready(true);
  if (raw_bytes_ == 0) return fail(Errc::invalid_argument, "empty input: nothing to classify");
  if (head_.rfind("\x1f\x8b", 0) == 0) {
    return fail(Errc::malformed,
                "gzip-compressed data; decompress it first (zcat FILE | sparkops oom)");
  }
  if (head_.rfind("\x7f"
                  "ELF",
                  0) == 0 ||
      head_nul_bytes_ * 100 > std::min(raw_bytes_, kBinaryProbe)) {
    return fail(Errc::malformed, "binary data (NUL bytes), not a log or traceback");
  }
  OomReport report;
  report.signal_count = signal_count_;
  report.bitsandbytes_on_stack = bitsandbytes_;
  const auto take_phase = [&report](const Event& event) {
    if (const auto mark = event.decided()) {
      report.phase = mark->phase;
      report.phase_evidence = mark->line;
    }
  };
  for (std::size_t i = 0; i < records_.size(); ++i) {
    const auto& record = records_[i];
    if (!record.event.seen) continue;
    const auto cls = static_cast<oomsig::SignalClass>(i);
    report.kind = oomsig::kind_of(cls);
    report.evidence = oomsig::evidence_of(cls);
    if (cls == oomsig::SignalClass::server_admission) {
      report.phase = OomPhase::load;
      report.phase_evidence = record.line;
    } else {
      take_phase(record.event);
    }
    report.memory_exhausted = !(cls == oomsig::SignalClass::driver && xid_fault_);
    report.requested_bytes = record.facts.requested_bytes;
    report.capacity_bytes = record.facts.capacity_bytes;
    report.free_bytes = record.facts.free_bytes;
    report.process_pid = record.facts.pid;
    report.process_name = record.facts.process;
    report.evidence_text = std::string(record.display);
    break;
  }
  if (report.kind == OomKind::not_oom && near_miss_.seen) {
    report.near_miss = std::string(near_miss_display_);
    take_phase(near_miss_);
  }
  return report;
}

Result<OomReport> classify_oom_text(std::string_view text) {
  OomClassifier classifier;
  classifier.feed(text);
  return classifier.finish();
}

Result<OomReport> classify_oom_stream(std::FILE* in, std::string_view name) {
  OomClassifier classifier;
  std::vector<char> buffer(kChunk);
  while (true) {
    const auto got = std::fread(buffer.data(), 1, buffer.size(), in);
    if (got > 0) classifier.feed(std::string_view(buffer.data(), got));
    if (got < buffer.size()) {
      if (std::ferror(in) != 0) {
        return fail(Errc::io, fmt::format("{}: read error: {}", name, std::strerror(errno)));
      }
      break;
    }
  }
  auto report = classifier.finish();
  if (!report) return fail(report.error().code, fmt::format("{}: {}", name, report.error().detail));
  return report;
}

Result<OomReport> classify_oom_file(const std::filesystem::path& path) {
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, Closer> file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    const int err = errno;
    const Errc code = err == ENOENT                     ? Errc::not_found
                      : (err == EACCES || err == EPERM) ? Errc::permission_denied
                                                        : Errc::io;
    return fail(code, fmt::format("{}: cannot open: {}", path.string(), std::strerror(err)));
  }
  return classify_oom_stream(file.get(), path.string());
}

}  // namespace sparkops::ladder
