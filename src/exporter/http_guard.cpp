#include "exporter/http_guard.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>

#include "base/text.hpp"

namespace sparkops::exporter {

bool is_loopback_peer(std::string_view a) {
  return starts_with(a, "127.") || a == "::1" || starts_with(a, "::ffff:127.");
}

ConnectionTable::Admission ConnectionTable::admit(const std::string& peer, int fd,
                                                  Clock::time_point now) {
  const std::lock_guard lock(mutex_);
  Admission a;
  auto count = per_peer_.find(peer);
  if (!is_loopback_peer(peer) && count != per_peer_.end() &&
      count->second >= limits_.max_per_peer) {
    a.verdict = Verdict::refused_peer_limit;
    return a;
  }
  std::size_t live = 0;
  for (const auto& [id, e] : entries_) live += e.evicted ? 0 : 1;
  if (live >= limits_.max_total) {
    Entry* oldest = nullptr;
    for (auto& [id, e] : entries_) {
      if (e.evicted || e.phase != Phase::awaiting_request) continue;
      if (oldest == nullptr || e.since < oldest->since) oldest = &e;
    }
    if (oldest == nullptr) {
      a.verdict = Verdict::refused_full;
      return a;
    }
    oldest->evicted = true;
    ::shutdown(oldest->fd, SHUT_RDWR);
    a.evicted_fd = oldest->fd;
  }
  a.verdict = Verdict::admitted;
  a.id = next_id_++;
  entries_.emplace(a.id, Entry{peer, fd, Phase::awaiting_request, now, false});
  ++per_peer_[peer];
  return a;
}

void ConnectionTable::set_phase(std::uint64_t id, Phase phase, Clock::time_point now) {
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(id);
  if (it == entries_.end()) return;
  it->second.phase = phase;
  it->second.since = now;
}

void ConnectionTable::release(std::uint64_t id) {
  // Notified under the lock: the waiter may destroy the table as soon as it sees it empty.
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(id);
  if (it == entries_.end()) return;
  const auto peer = per_peer_.find(it->second.peer);
  if (peer != per_peer_.end() && --peer->second == 0) per_peer_.erase(peer);
  entries_.erase(it);
  released_.notify_all();
}

void ConnectionTable::shutdown_all_and_wait() {
  std::unique_lock lock(mutex_);
  for (auto& [id, e] : entries_) {
    if (!e.evicted) ::shutdown(e.fd, SHUT_RDWR);
    e.evicted = true;
  }
  released_.wait(lock, [this] { return entries_.empty(); });
}

std::size_t ConnectionTable::size() const {
  const std::lock_guard lock(mutex_);
  return entries_.size();
}

namespace {

// "Name:8080" -> "name"; "[::1]:80" -> "::1"; "::1" (unbracketed, not valid in Host) stays.
std::string host_part(std::string_view h) {
  h = trim(h);
  if (!h.empty() && h.front() == '[') {
    const auto close = h.find(']');
    h = close == std::string_view::npos ? h.substr(1) : h.substr(1, close - 1);
  } else if (std::count(h.begin(), h.end(), ':') == 1) {
    h = h.substr(0, h.find(':'));
  }
  return to_lower(h);
}

bool is_ip_literal(const std::string& host) {
  unsigned char buf[16];
  return ::inet_pton(AF_INET, host.c_str(), buf) == 1 ||
         ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

}  // namespace

HostCheck::HostCheck(const ListenAddress& listen, std::vector<std::string> allowed_names,
                     std::vector<std::string> machine_names) {
  for (auto& n : allowed_names) names_.push_back(host_part(n));
  const std::string bound = host_part(listen.host);
  if (listen.loopback) {
    names_.emplace_back("localhost");
    names_.emplace_back("localhost.localdomain");
  }
  if (bound == "0.0.0.0" || bound == "::" || bound.empty()) {
    for (auto& n : machine_names) names_.push_back(host_part(n));
  } else if (!is_ip_literal(bound)) {
    names_.push_back(bound);  // --listen myhost.lan:9877
  }
}

bool HostCheck::allows(std::string_view host_header) const {
  const std::string host = host_part(host_header);
  if (host.empty()) return false;
  if (is_ip_literal(host)) return true;
  if (ends_with(host, ".localhost") || host == "localhost") {
    // RFC 6761: *.localhost names resolve to loopback and are not rebindable, but only a loopback
    // server should answer to them.
    return std::find(names_.begin(), names_.end(), "localhost") != names_.end();
  }
  return std::find(names_.begin(), names_.end(), host) != names_.end();
}

}  // namespace sparkops::exporter
