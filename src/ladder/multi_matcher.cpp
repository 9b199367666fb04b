#include "ladder/multi_matcher.hpp"

#include <deque>

namespace sparkops::ladder {

MultiMatcher::MultiMatcher(const std::vector<std::string_view>& needles) {
  for (const auto needle : needles) {
    for (const char ch : needle) {
      const auto b = static_cast<unsigned char>(ch);
      if (classes_[b] == 0) classes_[b] = static_cast<std::uint8_t>(class_count_++);
    }
  }
  // Trie first (goto with 0 = absent, node 0 the root), then BFS for failure links, which turns the
  // goto function into a complete DFA.
  std::vector<std::uint32_t> trie(class_count_, 0);
  std::vector<std::vector<std::uint32_t>> own(1);
  for (std::uint32_t index = 0; index < needles.size(); ++index) {
    const auto needle = needles[index];
    if (needle.empty()) continue;
    std::uint32_t node = 0;
    for (const char ch : needle) {
      const auto cls = classes_[static_cast<unsigned char>(ch)];
      auto next = trie[node * class_count_ + cls];
      if (next == 0) {
        next = static_cast<std::uint32_t>(own.size());
        own.emplace_back();
        trie.resize(trie.size() + class_count_, 0);
        trie[node * class_count_ + cls] = next;
      }
      node = next;
    }
    own[node].push_back(index);
  }
  const std::size_t nodes = own.size();
  std::vector<std::uint32_t> fail(nodes, 0);
  delta_.assign(nodes * class_count_, 0);
  std::vector<std::vector<std::uint32_t>> outputs(nodes);
  std::deque<std::uint32_t> queue;
  for (std::uint32_t cls = 0; cls < class_count_; ++cls) {
    const auto child = trie[cls];
    delta_[cls] = child;
    if (child != 0) queue.push_back(child);
  }
  outputs[0] = own[0];
  std::vector<std::uint32_t> order;
  while (!queue.empty()) {
    const auto node = queue.front();
    queue.pop_front();
    order.push_back(node);
    for (std::uint32_t cls = 0; cls < class_count_; ++cls) {
      const auto child = trie[node * class_count_ + cls];
      if (child != 0) {
        fail[child] = delta_[fail[node] * class_count_ + cls];
        delta_[node * class_count_ + cls] = child;
        queue.push_back(child);
      } else {
        delta_[node * class_count_ + cls] = delta_[fail[node] * class_count_ + cls];
      }
    }
  }
  // BFS order guarantees a node's failure target is complete before the node itself.
  for (const auto node : order) {
    outputs[node] = own[node];
    const auto& inherited = outputs[fail[node]];
    outputs[node].insert(outputs[node].end(), inherited.begin(), inherited.end());
  }
  out_begin_.reserve(nodes + 1);
  for (std::size_t node = 0; node < nodes; ++node) {
    out_begin_.push_back(static_cast<std::uint32_t>(out_.size()));
    out_.insert(out_.end(), outputs[node].begin(), outputs[node].end());
  }
  out_begin_.push_back(static_cast<std::uint32_t>(out_.size()));
}

}  // namespace sparkops::ladder
