#include "diagnose/thermal_log.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/file_io.hpp"
#include "base/text.hpp"
#include "base/time_format.hpp"
#include "sampling/sample_columns.hpp"
#include "trainlog/record_reader.hpp"

namespace sparkops::diagnose {

namespace {

// A header cell's meaning: nvidia-smi's local-time `timestamp`, one of the table's columns, or
// nothing this reader uses.
struct Field {
  enum class Kind { ignore, time_local, column } kind = Kind::ignore;
  const sampling::SampleColumn* column = nullptr;
};

// "power.draw [W]" -> "power.draw"
std::string_view column_name(std::string_view header_cell) {
  std::string_view s = trim(header_cell);
  if (const auto br = s.find(" ["); br != std::string_view::npos) s = trim(s.substr(0, br));
  return s;
}

Field lookup(std::string_view name) {
  if (name == "timestamp") return {Field::Kind::time_local, nullptr};
  if (const sampling::SampleColumn* c = sampling::find_sample_column(name))
    return {Field::Kind::column, c};
  return {};
}

bool is_time(const Field& f) {
  return f.kind == Field::Kind::time_local ||
         (f.kind == Field::Kind::column && f.column->form == sampling::CellForm::timestamp_utc);
}

// Applies one cell; false when a required cell (the timestamp) is unusable.
bool apply(const Field& f, std::string_view cell, sampling::SampleRow& s, bool& has_time,
           const ThermalReadOptions& options) {
  switch (f.kind) {
    case Field::Kind::time_local: {
      const auto t = parse_timestamp(trim(cell));
      if (!t) return false;
      s.time = *t - options.tz_offset;
      has_time = true;
      return true;
    }
    case Field::Kind::column:
      if (!sampling::parse_cell(*f.column, cell, s)) return false;
      has_time = has_time || f.column->form == sampling::CellForm::timestamp_utc;
      return true;
    case Field::Kind::ignore:
      return true;
  }
  return true;
}

// One CSV row, RFC 4180 quoting (sparkops quotes a host sensor name holding ',' or '"').
void split_csv(std::string_view row, std::vector<std::string>& out) {
  out.clear();
  std::string cell;
  bool quoted = false;
  for (std::size_t i = 0; i < row.size(); ++i) {
    const char c = row[i];
    if (quoted) {
      if (c == '"' && i + 1 < row.size() && row[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(std::move(cell));
      cell.clear();
    } else {
      cell += c;
    }
  }
  out.push_back(std::move(cell));
}

class Accumulator {
 public:
  Accumulator(ThermalLog& log, const ThermalReadOptions& options) : log_(log), options_(options) {}

  void add(const sampling::SampleRow& s) {
    if (s.gpu_index) {
      if (!gpu_set_) {
        gpu_ = *s.gpu_index;
        gpu_set_ = true;
      }
      if (*s.gpu_index != gpu_) {
        ++log_.other_gpu_rows;
        return;
      }
    }
    if (!log_.samples.empty() && s.time < log_.samples.back().time) {
      ++log_.backwards_rows;
      return;
    }
    if (log_.samples.size() >= options_.max_samples) {
      ++log_.skipped_rows;
      return;
    }
    log_.samples.push_back(s);
  }

 private:
  ThermalLog& log_;
  const ThermalReadOptions& options_;
  std::int64_t gpu_ = 0;  // the first GPU index seen (gpu_set_)
  bool gpu_set_ = false;
};

bool parse_json_row(std::string_view line, sampling::SampleRow& s,
                    const ThermalReadOptions& options) {
  const auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  bool has_time = false;
  for (const auto& [key, value] : j.items()) {
    const Field f = lookup(key);
    if (f.kind == Field::Kind::ignore || value.is_null()) continue;
    if (value.is_string()) {
      if (!apply(f, value.get_ref<const std::string&>(), s, has_time, options)) return false;
    } else if (f.kind == Field::Kind::column) {
      sampling::parse_json_cell(*f.column, value, s);
    }
  }
  return has_time;
}

}  // namespace

std::string_view thermal_format_name(ThermalFormat f) {
  switch (f) {
    case ThermalFormat::nvidia_smi:
      return "nvidia_smi";
    case ThermalFormat::extended_csv:
      return "extended_csv";
    case ThermalFormat::jsonl:
      return "jsonl";
  }
  return "nvidia_smi";
}

Result<ThermalLog> parse_thermal_log(std::string_view text, const ThermalReadOptions& options,
                                     std::string_view name) {
  ThermalLog log;
  Accumulator acc(log, options);
  auto reader = trainlog::RecordReader::from_text(text);
  trainlog::LogLine line;
  std::vector<Field> columns;
  std::vector<std::string> cells;
  bool header_seen = false;
  bool jsonl = false;
  const bool ends_clean = !text.empty() && (text.back() == '\n' || text.back() == '\r');
  while (reader.next(line)) {
    const std::string_view t = trim(line.text);
    if (t.empty() || t.front() == '#') continue;
    const bool last = line.offset + line.text.size() >= text.size();
    sampling::SampleRow s;
    if (!header_seen) {
      header_seen = true;
      if (t.front() == '{') {
        jsonl = true;
        log.format = ThermalFormat::jsonl;
      } else {
        split_csv(t, cells);
        bool has_time = false;
        for (const auto& cell : cells) {
          const Field f = lookup(column_name(cell));
          has_time = has_time || is_time(f);
          columns.push_back(f);
        }
        if (!has_time) {
          if (cells.size() >= 3 && parse_timestamp(cells[0])) {
            // `--format=csv,noheader`: the skill's three columns in their query order.
            columns = {lookup("timestamp"), lookup("temperature.gpu"), lookup("power.draw")};
          } else {
            return fail(Errc::malformed,
                        fmt::format("{}: not a thermal sample file: the header has no timestamp "
                                    "column (expected `timestamp,temperature.gpu,power.draw`, "
                                    "sparkops' `timestamp_utc,...` CSV or JSONL); got {}",
                                    name, quote_for_message(t, 60)));
          }
        } else {
          const Field first = lookup(column_name(cells[0]));
          log.format = (first.kind == Field::Kind::column &&
                        first.column->form == sampling::CellForm::timestamp_utc) ||
                               t.find("timestamp_utc") != std::string_view::npos
                           ? ThermalFormat::extended_csv
                           : ThermalFormat::nvidia_smi;
          continue;
        }
      }
    }
    bool ok = true;
    if (jsonl) {
      ok = parse_json_row(t, s, options);
    } else {
      split_csv(t, cells);
      if (cells.size() != columns.size()) {
        ok = false;
      } else {
        bool has_time = false;
        for (std::size_t i = 0; i < cells.size() && ok; ++i) {
          ok = apply(columns[i], cells[i], s, has_time, options);
        }
        ok = ok && has_time;
      }
    }
    if (!ok) {
      if (last && !ends_clean) {
        log.torn_last_line = true;
      } else {
        ++log.skipped_rows;
      }
      continue;
    }
    acc.add(s);
  }
  if (!header_seen)
    return fail(Errc::malformed, fmt::format("{}: empty thermal sample file", name));
  return log;
}

Result<ThermalLog> read_thermal_log(const std::filesystem::path& path,
                                    const ThermalReadOptions& options) {
  auto text = read_file(path, std::size_t{1} << 30, NonRegular::read);  // `--thermal <(...)` too
  if (!text) return tl::unexpected(text.error());
  return parse_thermal_log(*text, options, path.string());
}

std::vector<std::string> describe_thermal_notes(const ThermalLog& log) {
  std::vector<std::string> out;
  if (log.skipped_rows)
    out.push_back(fmt::format("skipped {} unreadable sample row(s)", log.skipped_rows));
  if (log.backwards_rows) {
    out.push_back(
        fmt::format("skipped {} sample row(s) whose time went backwards", log.backwards_rows));
  }
  if (log.other_gpu_rows) {
    out.push_back(fmt::format("ignored {} row(s) for other GPUs", log.other_gpu_rows));
  }
  if (log.torn_last_line) out.push_back("ignored a torn last line");
  return out;
}

}  // namespace sparkops::diagnose
