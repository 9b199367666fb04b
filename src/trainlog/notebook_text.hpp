#pragma once
// The text of a Hugging Face Trainer notebook display (transformers utils/notebook.py) as a copy of
// the rendered output holds it: the progress label and the metrics table's header and rows
// (format_notebook.cpp quotes the shapes). Pure functions of one trimmed line.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sparkops::trainlog {

struct NotebookLabel {
  std::int64_t value = 0;
  std::int64_t total = 0;
  std::optional<double> elapsed_seconds;  // absent in the first label ("[ 0/60 : < :")
  std::optional<double> rate_per_second;  // "0.19 it/s": iterations per second since the start
};

// "[ 25/60 02:10 < 03:02, 0.19 it/s, Epoch 0.40/1]", "[60/60 05:12, Epoch 0/1]".
std::optional<NotebookLabel> parse_notebook_label(std::string_view line);

struct NotebookColumns {
  std::size_t count = 0;                       // cells per row
  std::size_t training_loss = 1;               // the "Training Loss" cell
  std::optional<std::size_t> validation_loss;  // the "Validation Loss" cell, when evaluating
};

// "Step\tTraining Loss[\tValidation Loss\t...]" (or "Epoch" first); separated by spaces only the
// two- and three-column tables are read (other column names may hold spaces themselves).
std::optional<NotebookColumns> parse_notebook_header(std::string_view line);

struct NotebookRow {
  std::int64_t step = 0;
  std::optional<double> training_loss;    // nullopt for "No log"
  std::optional<double> validation_loss;  // nullopt for "No log" or no such column
};

// "10\t1.234500\t1.345600", "1 1.815900", "20\tNo log\t1.2": cells as the header counts them.
std::optional<NotebookRow> parse_notebook_row(std::string_view line,
                                              const NotebookColumns& columns);

}  // namespace sparkops::trainlog
