#include "tui/top_model.hpp"

#include <algorithm>

namespace sparkops::tui {

std::string_view sort_key_name(SortKey key) {
  switch (key) {
    case SortKey::memory:
      return "memory";
    case SortKey::cap:
      return "cap";
    case SortKey::age:
      return "age";
  }
  return "memory";
}

namespace {

int cap_rank(const status::WorkloadLine& w) {
  if (w.cap == "capped") return 0;
  if (w.cap == "fixed") return 1;
  return 2;
}

}  // namespace

std::vector<const status::WorkloadLine*> sorted_workloads(const status::StatusReport& report,
                                                          SortKey key) {
  std::vector<const status::WorkloadLine*> rows;
  if (!report.workloads) return rows;
  for (const auto& w : *report.workloads) rows.push_back(&w);
  auto by = [key](const status::WorkloadLine* a, const status::WorkloadLine* b) {
    switch (key) {
      case SortKey::memory:
        if (a->actual_bytes.value_or(0) != b->actual_bytes.value_or(0))
          return a->actual_bytes.value_or(0) > b->actual_bytes.value_or(0);
        break;
      case SortKey::cap:
        if (cap_rank(*a) != cap_rank(*b)) return cap_rank(*a) < cap_rank(*b);
        if (a->claim_bytes.value_or(0) != b->claim_bytes.value_or(0))
          return a->claim_bytes.value_or(0) > b->claim_bytes.value_or(0);
        break;
      case SortKey::age: {
        const auto aa = a->age.value_or(std::chrono::milliseconds{-1});
        const auto ba = b->age.value_or(std::chrono::milliseconds{-1});
        if (aa != ba) return aa > ba;
        break;
      }
    }
    return a->pid < b->pid;
  };
  std::stable_sort(rows.begin(), rows.end(), by);
  return rows;
}

}  // namespace sparkops::tui
