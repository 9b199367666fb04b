#pragma once
// Pure parsers of nvidia-smi output: the CSV of --query-gpu / --query-compute-apps (with or without
// header, with or without units), the default table, and `nvidia-smi -q`. Every "not available"
// marker ([N/A], N/A, [Not Supported], Not Supported, [Unknown Error], [Insufficient Permissions],
// ...) is an absent figure, never 0. Units are converted once: W -> microwatts, MiB -> bytes,
// C -> millicelsius, us -> nanoseconds.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "gpu/gpu_source.hpp"

namespace sparkops::gpu {

// The fields SmiGpuSource asks for, in order (nvidia-smi --help-query-gpu names).
extern const std::vector<std::string> kSmiQueryGpuFields;
extern const std::vector<std::string> kSmiQueryAppsFields;
// Before driver 535 the bitmask field was named clocks_throttle_reasons.active.
inline constexpr std::string_view kSmiReasonsField = "clocks_event_reasons.active";
inline constexpr std::string_view kSmiReasonsFieldOld = "clocks_throttle_reasons.active";

// True for every marker nvidia-smi prints instead of a value: "[N/A]", "N/A", "[Not Supported]",
// "Not Supported", "[Unknown Error]", "[Insufficient Permissions]", "[GPU is lost]", "" ...
bool smi_is_unavailable(std::string_view cell);

// A number with an optional unit after it: "11.23 W", "0 %", "35", "19135 MiB", "2190 MHz".
// Absent for a marker or anything that is not a number.
std::optional<double> smi_number(std::string_view cell);

// One CSV row as field name -> cell text (trimmed); absent cells hold std::nullopt.
struct SmiCsvRow {
  std::vector<std::pair<std::string, std::optional<std::string>>> cells;
  const std::optional<std::string>* find(std::string_view field) const;
};

// Parses --format=csv output. When the first line is a header ("index, name, memory.total [MiB]")
// its names (units stripped) label the columns; otherwise `fields` does, in order. A row whose
// cell count differs from the header's is malformed. Blank lines are skipped.
Result<std::vector<SmiCsvRow>> parse_smi_csv(std::string_view text,
                                             const std::vector<std::string>& fields);

struct SmiGpuRecord {
  GpuDevice device;
  std::optional<std::string> driver_version;
  GpuSnapshot snapshot;  // processes stay absent; counters too (the CSV has none)
};

// --query-gpu rows to devices and snapshots. Memory is present only when memory.total is a number
// (used/free derived from each other when one is missing). Rows without an index field are
// numbered in order.
Result<std::vector<SmiGpuRecord>> parse_smi_query_gpu(std::string_view text,
                                                      const std::vector<std::string>& fields);

struct SmiComputeApp {
  std::string gpu_uuid;  // empty when not queried or elided ("GPU-...")
  GpuProcess process;
};

// --query-compute-apps rows (gpu_uuid, pid, process_name, used_memory in MiB).
Result<std::vector<SmiComputeApp>> parse_smi_compute_apps(std::string_view text,
                                                          const std::vector<std::string>& fields);

// Plain `nvidia-smi`: the GPU blocks and the Processes table.
struct SmiTableProcess {
  unsigned gpu_index = 0;
  std::uint32_t pid = 0;
  std::string type;  // "C", "G", "C+G"
  std::string name;  // as printed, possibly shortened with "..."
  std::optional<std::uint64_t> used_bytes;
};
struct SmiTable {
  std::optional<std::string> driver_version;
  std::optional<std::string> cuda_version;
  std::vector<SmiGpuRecord> gpus;          // snapshot: temp, pstate, power, limit, util, memory
  std::vector<SmiTableProcess> processes;  // empty when the table is absent or cut
};
// malformed when no GPU block is found.
Result<SmiTable> parse_smi_table(std::string_view text);

// `nvidia-smi -q` (any -d subset): one entry per "GPU <bus id>" section; sections before the
// first GPU (FB Memory Usage quoted alone) make one GPU with an empty bus id.
struct SmiQueryGpu {
  SmiGpuRecord record;        // snapshot.counters from "Clocks Event Reasons Counters" (us -> ns)
  bool fb_memory_na = false;  // "FB Memory Usage" present with Total N/A (unified memory)
  std::optional<std::int64_t> shutdown_margin_millicelsius;  // "GPU Shutdown T.Limit Temp"
  std::optional<std::int64_t> slowdown_margin_millicelsius;  // "GPU Slowdown T.Limit Temp"
};
struct SmiQuery {
  std::optional<std::string> driver_version;
  std::optional<std::string> cuda_version;
  std::vector<SmiQueryGpu> gpus;
};
// malformed when nothing in the text looks like -q output.
Result<SmiQuery> parse_smi_q(std::string_view text);

}  // namespace sparkops::gpu
