#pragma once
// HostProbe: the host half of a Sample at a per-tick cost of a few small reads. Walking every hwmon
// chip and thermal zone costs hundreds of file opens; the probe does that walk once (and again
// every `rediscover_every` ticks, or on the tick after a remembered file fails to read — a sensor
// vanished or a driver reloaded), remembers which files feed the sample's columns, and then reads
// only those plus meminfo, PSI memory and vmstat. Every remembered file stays open between ticks
// and is re-read with one pread() (base/held_file.hpp), so a tick costs one system call per file.
// While it finds fewer sensors than it once did, it walks again after 1, 2, 4 ... ticks (up to
// `rediscover_every`) so a returning sensor is found. Its results equal read_host_reading()'s. Not
// thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "host/host_reading.hpp"
#include "host/host_root.hpp"

namespace sparkops {

class HostProbe {
 public:
  explicit HostProbe(HostRoot root, std::uint64_t rediscover_every = 300);
  HostReading read();

 private:
  struct TempFile {
    HeldFile file;
    std::string name;  // the name hottest_sensor() gives this channel
  };
  enum class Rail { sys_total, soc_pkg, cpu_gpu, gpu, dc_input };
  struct RailFile {
    HeldFile file;
    Rail rail;
  };
  void discover();

  HostRoot root_;
  std::uint64_t rediscover_every_;
  std::uint64_t reads_since_discovery_ = 0;
  std::uint64_t next_discovery_after_ = 0;  // reads
  std::size_t best_count_ = 0;              // most files a discovery has found
  bool discovered_ = false;
  std::vector<TempFile> temps_;  // candidates for the hottest sensor, in hottest_sensor() order
  std::vector<RailFile> rails_;
  std::optional<HeldFile> meminfo_;     // absent: not open yet, or the file does not exist
  std::optional<HeldFile> psi_memory_;  // absent: no PSI in this kernel
  std::optional<HeldFile> vmstat_;
};

}  // namespace sparkops
