#pragma once
// The metric dicts Hugging Face Trainer and TRL print, one per line:
//   {'loss': 1.2345, 'grad_norm': 0.52, 'learning_rate': 0.0002, 'epoch': 0.1}
//   {'loss': '1.2345', 'grad_norm': '0.5200', 'epoch': '0.1'}          (newer TRL: strings)
//   {'train_runtime': 3600.1, 'train_samples_per_second': 1.2, ..., 'epoch': 3.0}
// Keys are matched exactly; values that are not numbers (or numeric strings) are skipped.

#include <string_view>
#include <utility>
#include <vector>

namespace sparkops::trainlog {

using PyDictEntries = std::vector<std::pair<std::string_view, double>>;

// Parses the first "{...}" on the line; false when there is none or it is not a flat dict.
bool parse_py_dict(std::string_view line, PyDictEntries& out);

// The value for `key`, if present.
const double* dict_value(const PyDictEntries& entries, std::string_view key);

}  // namespace sparkops::trainlog
