#pragma once
// HostProbe: the host half of a Sample at a per-tick cost of a few small reads. Walking every hwmon
// chip and thermal zone costs hundreds of file opens; the probe does that walk once (and again
// every `rediscover_every` ticks, or on the tick after a remembered file fails to read — a sensor
// vanished or a driver reloaded), remembers which files feed the sample's columns, and then reads
// only those plus meminfo, PSI memory and vmstat. Every remembered file stays open between ticks
// and is re-read with one pread() (base/held_file.hpp), so a tick costs one system call per file.
// On the live machine a removed sensor fails that read; in a captured root (regular files, which
// stay readable after an unlink) one inotify watch over the held files (base/removal_watch.hpp)
// notices a removal for one more read per tick, or, without inotify, one fstat per file.
// While it finds fewer sensors than it once did, it walks again after 1, 2, 4 ... ticks (up to
// `rediscover_every`) so a returning sensor is found. Its results equal read_host_reading()'s. Not
// thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/removal_watch.hpp"
#include "host/host_reading.hpp"
#include "host/host_root.hpp"

namespace sparkops::host {

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
  void watch(const HeldFile& file);
  // The file's current content; nullopt when the read fails or (fallback) the file was unlinked.
  std::optional<std::string_view> fresh(HeldFile& file) const;
  std::optional<std::string_view> reread_or_reopen(std::optional<HeldFile>& file,
                                                   std::string_view path);

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
  std::optional<RemovalWatch> watch_;  // captured roots only, renewed by each discovery
  bool check_links_ = false;           // a captured root whose files could not all be watched
};

}  // namespace sparkops::host
