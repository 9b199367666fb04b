#pragma once
// Aho-Corasick over bytes: finds every occurrence of a fixed set of needles in one pass, so the OOM
// classifier reads a 1 GB log once whatever the number of patterns. Built once, then immutable
// (safe to share between threads); the per-stream position lives in MultiMatcher::State.

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace sparkops {

class MultiMatcher {
 public:
  // Needles are matched byte for byte (the classifier lowercases both sides). Empty needles are
  // ignored. Index i in callbacks is the needle's position in `needles`.
  explicit MultiMatcher(const std::vector<std::string_view>& needles);

  struct State {
    std::uint32_t node = 0;
  };

  // Advances by one byte and calls on_match(needle_index) for every needle that ends at it.
  template <class OnMatch>
  void step(State& state, unsigned char byte, OnMatch&& on_match) const {
    state.node = delta_[state.node * class_count_ + classes_[byte]];
    for (std::uint32_t i = out_begin_[state.node]; i < out_begin_[state.node + 1]; ++i) {
      on_match(out_[i]);
    }
  }

  std::size_t node_count() const { return out_begin_.size() - 1; }

 private:
  std::array<std::uint8_t, 256> classes_{};  // byte -> alphabet class; 0 = not in any needle
  std::uint32_t class_count_ = 1;
  std::vector<std::uint32_t> delta_;      // full DFA: node * class_count_ + class -> node
  std::vector<std::uint32_t> out_begin_;  // CSR offsets into out_, one past per node
  std::vector<std::uint32_t> out_;        // needle indices ending at each node (incl. suffixes)
};

}  // namespace sparkops
