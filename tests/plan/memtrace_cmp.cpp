// Reads tracer configs (a JSON list, tools/memtrace/memtrace/run.py keys) on stdin and prints, per
// config, what the C++ side predicts for the same step: the terms memtrace measures.
#include <iostream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "plan/step_terms.hpp"

int main() {
  const std::string text{std::istreambuf_iterator<char>(std::cin), {}};
  const auto in = nlohmann::json::parse(text, nullptr, false);
  if (in.is_discarded() || !in.is_array()) {
    std::cerr << "memtrace_cmp: stdin: not a JSON list\n";
    return 2;
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : in) {
    auto r = sparkops::plan::step_terms_from_json(c);
    if (!r) {
      std::cerr << "memtrace_cmp: " << r.error().detail << "\n";
      return 2;
    }
    out.push_back(*r);
  }
  std::cout << out.dump(1) << "\n";
  return 0;
}
