#pragma once
// One parser per log format (format_*.cpp). The driver (parse_log.cpp) feeds every record in order;
// a parser appends steps and markers through the SeriesBuilder and may finish work at the end
// (choosing the training bar among several tqdm bars, anchoring elapsed times).

#include <memory>
#include <optional>
#include <string_view>

#include "base/clock.hpp"
#include "trainlog/record_reader.hpp"
#include "trainlog/series_builder.hpp"
#include "trainlog/step_series.hpp"

namespace sparkops::trainlog {

struct ParseContext {
  std::optional<SystemTime> start;       // --start: when the run began (anchors elapsed times)
  std::optional<SystemTime> file_mtime;  // last resort anchor for elapsed times (approximate)
  bool sidecar = false;                  // records carry `stamped` times from the .times sidecar
  std::size_t max_steps = 1'000'000;
};

class FormatParser {
 public:
  virtual ~FormatParser() = default;
  virtual void feed(const LogLine& line, SeriesBuilder& out) = 0;
  virtual void finish(SeriesBuilder& out) { (void)out; }
};

std::unique_ptr<FormatParser> make_parser(LogFormat format, const ParseContext& ctx);

// Factories, one per file.
std::unique_ptr<FormatParser> make_tqdm_family_parser(LogFormat format, const ParseContext& ctx);
std::unique_ptr<FormatParser> make_megatron_parser(const ParseContext& ctx);
std::unique_ptr<FormatParser> make_deepspeed_parser(const ParseContext& ctx);
std::unique_ptr<FormatParser> make_mlx_lm_parser(const ParseContext& ctx);
std::unique_ptr<FormatParser> make_llama_cpp_parser(const ParseContext& ctx);
std::unique_ptr<FormatParser> make_llamafactory_parser(const ParseContext& ctx);
std::unique_ptr<FormatParser> make_keras_parser(const ParseContext& ctx);
std::unique_ptr<FormatParser> make_litgpt_parser(const ParseContext& ctx);
std::unique_ptr<FormatParser> make_nanogpt_parser(const ParseContext& ctx);
std::unique_ptr<FormatParser> make_fairseq_parser(const ParseContext& ctx);
std::unique_ptr<FormatParser> make_composer_parser(const ParseContext& ctx);
std::unique_ptr<FormatParser> make_step_lines_parser(const ParseContext& ctx);
std::unique_ptr<FormatParser> make_notebook_parser(const ParseContext& ctx);

// Helpers every line format shares, so they date records and keep markers alike:

// Dates a step record: the sidecar's time when the log came with one (the series' time basis
// becomes `sidecar`); else, with `printed`, the timestamp the line starts with (log_text.hpp
// leading_timestamp; basis `log_timestamps`). False when neither dated it.
bool date_record(const ParseContext& ctx, const LogLine& line, bool printed, StepRecord& record,
                 SeriesBuilder& out);

// A line that is not a step: its marker (markers.hpp detect_marker: eval, checkpoint, restart,
// ...) when it names one, with the trimmed line as the detail and `time` as its time.
void add_line_marker(std::string_view text, SeriesBuilder& out,
                     std::optional<SystemTime> time = std::nullopt);

// Applies the elapsed-time anchors to records without a time: --start, else the file's mtime (which
// dates the last record; marked approximate). Sets the series' time basis.
void anchor_elapsed(StepSeries& series, const ParseContext& ctx);

}  // namespace sparkops::trainlog
