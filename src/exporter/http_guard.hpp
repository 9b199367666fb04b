#pragma once
// The exporter's admission rules, kept apart from sockets so they are tested as values.
//
// ConnectionTable: every open connection, with its peer and phase. A new connection is refused
// when its peer already holds `max_per_peer` (loopback peers excepted: any local user can send
// from all of 127.0.0.0/8, so the limit would only ever refuse the local scraper). When the table
// is full, the connection that has waited longest for a request head (a slow or idle client) is
// evicted to make room; only when every connection is being answered is the newcomer refused.
// So a slow client costs at most one slot for one header deadline and never a scrape its place.
//
// HostCheck: the Host header a request may carry (DNS rebinding: a page on attacker.example that
// re-resolves to 127.0.0.1 reaches the server with "Host: attacker.example"). Accepted: IP
// literals (they cannot be rebound), "localhost" forms when bound to loopback, this machine's
// host name when bound to every interface, and names the operator allows.
//
// Both are thread-safe where noted.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "exporter/listen_address.hpp"

namespace sparkops::exporter {

struct ConnectionLimits {
  // A quarter of the common 1024 soft RLIMIT_NOFILE (systemd's default), leaving descriptors for
  // the /proc and /sys reads of each tick; cpp-httplib's select() path also refuses fds >= 1024.
  std::size_t max_total = 256;
  // Browsers open at most 6 connections per host (Chromium's and Firefox's per-host limit);
  // 16 leaves room for two dashboards and a Prometheus behind one NAT address.
  std::size_t max_per_peer = 16;
};

// True for 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104 (numeric addresses as getnameinfo prints).
bool is_loopback_peer(std::string_view numeric_address);

class ConnectionTable {
 public:
  enum class Phase { awaiting_request, responding };
  enum class Verdict { admitted, refused_peer_limit, refused_full };
  struct Admission {
    Verdict verdict = Verdict::refused_full;
    std::uint64_t id = 0;  // when admitted
    int evicted_fd = -1;   // a connection shut down to make room, or -1
  };
  using Clock = std::chrono::steady_clock;

  explicit ConnectionTable(ConnectionLimits limits) : limits_(limits) {}

  // Thread-safe. On eviction the evicted connection's socket is shut down (both directions)
  // under the table's lock, so its thread's next read or write fails; its fd stays open (and
  // cannot be reused) until that thread calls release().
  Admission admit(const std::string& peer, int fd, Clock::time_point now);
  // Thread-safe. A connection starts awaiting_request; `since` orders eviction.
  void set_phase(std::uint64_t id, Phase phase, Clock::time_point now);
  // Thread-safe; call before closing the fd.
  void release(std::uint64_t id);
  // Thread-safe: shuts every socket down, then waits until every connection is released.
  void shutdown_all_and_wait();
  std::size_t size() const;

 private:
  struct Entry {
    std::string peer;
    int fd = -1;
    Phase phase = Phase::awaiting_request;
    Clock::time_point since{};
    bool evicted = false;
  };

  ConnectionLimits limits_;
  mutable std::mutex mutex_;
  std::condition_variable released_;
  std::map<std::uint64_t, Entry> entries_;
  std::map<std::string, std::size_t, std::less<>> per_peer_;
  std::uint64_t next_id_ = 1;
};

class HostCheck {
 public:
  // `machine_names`: this host's names, accepted when bound to every interface.
  HostCheck(const ListenAddress& listen, std::vector<std::string> allowed_names,
            std::vector<std::string> machine_names);
  // `host_header` as sent ("name", "name:port", "[v6]:port"); compared case-insensitively
  // without the port. Immutable after construction, so concurrent calls are safe.
  bool allows(std::string_view host_header) const;

 private:
  std::vector<std::string> names_;  // lower case
};

}  // namespace sparkops::exporter
