#pragma once
// Aho-Corasick over bytes: finds every occurrence of a fixed set of needles in one pass, so the OOM
// classifier reads a 1 GB log once whatever the number of patterns. Built once, then immutable
// (safe to share between threads); the per-stream position lives in MultiMatcher::State.

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace sparkops::ladder {

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

  // Runs step() over `bytes`; on_match(needle_index, position one past the match in `bytes`).
  // Raw pointers on purpose: this loop sees every byte of the input.
  template <class OnMatch>
  void scan(State& state, std::string_view bytes, OnMatch&& on_match) const {
    const std::uint32_t* delta = delta_.data();
    const std::uint8_t* classes = classes_.data();
    const std::uint32_t* out_begin = out_begin_.data();
    const std::uint32_t* out = out_.data();
    const std::uint32_t count = class_count_;
    std::uint32_t node = state.node;
    const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      node = delta[node * count + classes[data[i]]];
      for (std::uint32_t k = out_begin[node]; k < out_begin[node + 1]; ++k) on_match(out[k], i + 1);
    }
    state.node = node;
  }

  std::size_t node_count() const { return out_begin_.size() - 1; }

 private:
  std::array<std::uint8_t, 256> classes_{};  // byte -> alphabet class; 0 = not in any needle
  std::uint32_t class_count_ = 1;
  std::vector<std::uint32_t> delta_;      // full DFA: node * class_count_ + class -> node
  std::vector<std::uint32_t> out_begin_;  // CSR offsets into out_, one past per node
  std::vector<std::uint32_t> out_;        // needle indices ending at each node (incl. suffixes)
};

}  // namespace sparkops::ladder
