#include "exporter/http_guard.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace sparkops::exporter {
namespace {

using Verdict = ConnectionTable::Verdict;
using Phase = ConnectionTable::Phase;

// A socket pair stands in for a client connection, so eviction's shutdown() has a real socket.
struct Pair {
  Pair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0); }
  ~Pair() {
    ::close(fd[0]);
    ::close(fd[1]);
  }
  bool peer_sees_eof() const {
    char c;
    return ::recv(fd[1], &c, 1, MSG_DONTWAIT) == 0;
  }
  int fd[2] = {-1, -1};
};

ConnectionTable::Clock::time_point at(int seconds) {
  return ConnectionTable::Clock::time_point{} + std::chrono::seconds{seconds};
}

TEST(ConnectionTable, RefusesAPeerOverItsLimit) {
  ConnectionTable table({/*max_total=*/10, /*max_per_peer=*/2});
  Pair a, b, c, d;
  EXPECT_EQ(table.admit("10.0.0.7", a.fd[0], at(0)).verdict, Verdict::admitted);
  const auto second = table.admit("10.0.0.7", b.fd[0], at(0));
  EXPECT_EQ(second.verdict, Verdict::admitted);
  EXPECT_EQ(table.admit("10.0.0.7", c.fd[0], at(0)).verdict, Verdict::refused_peer_limit);
  EXPECT_EQ(table.admit("10.0.0.8", d.fd[0], at(0)).verdict, Verdict::admitted);
  table.release(second.id);
  EXPECT_EQ(table.admit("10.0.0.7", c.fd[0], at(0)).verdict, Verdict::admitted);
}

TEST(ConnectionTable, LoopbackPeersShareOnlyTheTotal) {
  ConnectionTable table({/*max_total=*/10, /*max_per_peer=*/2});
  std::vector<std::unique_ptr<Pair>> pairs;
  for (int i = 0; i < 5; ++i) {
    pairs.push_back(std::make_unique<Pair>());
    EXPECT_EQ(table.admit("127.0.0.1", pairs.back()->fd[0], at(0)).verdict, Verdict::admitted);
  }
  EXPECT_EQ(table.size(), 5U);
}

TEST(ConnectionTable, FullTableEvictsTheLongestWaitingClient) {
  ConnectionTable table({/*max_total=*/2, /*max_per_peer=*/16});
  Pair slow, busy, fresh;
  const auto s = table.admit("10.0.0.1", slow.fd[0], at(0));
  const auto b = table.admit("10.0.0.2", busy.fd[0], at(1));
  table.set_phase(b.id, Phase::responding, at(1));
  const auto f = table.admit("10.0.0.3", fresh.fd[0], at(5));
  EXPECT_EQ(f.verdict, Verdict::admitted);
  EXPECT_EQ(f.evicted_fd, slow.fd[0]);
  EXPECT_TRUE(slow.peer_sees_eof()) << "the evicted socket is shut down";
  EXPECT_FALSE(busy.peer_sees_eof());
  table.release(s.id);
  EXPECT_EQ(table.size(), 2U);
}

TEST(ConnectionTable, RefusesWhenEveryConnectionIsBeingAnswered) {
  ConnectionTable table({/*max_total=*/1, /*max_per_peer=*/16});
  Pair a, b;
  const auto first = table.admit("10.0.0.1", a.fd[0], at(0));
  table.set_phase(first.id, Phase::responding, at(0));
  EXPECT_EQ(table.admit("10.0.0.2", b.fd[0], at(1)).verdict, Verdict::refused_full);
}

TEST(LoopbackPeer, CoversTheWholeLoopbackRange) {
  EXPECT_TRUE(is_loopback_peer("127.0.0.1"));
  EXPECT_TRUE(is_loopback_peer("127.45.6.7"));
  EXPECT_TRUE(is_loopback_peer("::1"));
  EXPECT_TRUE(is_loopback_peer("::ffff:127.0.0.1"));
  EXPECT_FALSE(is_loopback_peer("10.0.0.1"));
  EXPECT_FALSE(is_loopback_peer("::ffff:10.0.0.1"));
  EXPECT_FALSE(is_loopback_peer("1270::1"));
}

ListenAddress listen(std::string host, bool loopback) {
  return ListenAddress{std::move(host), 9877, loopback};
}

TEST(HostCheck, LoopbackServerAnswersLocalNamesAndLiterals) {
  const HostCheck check(listen("127.0.0.1", true), {}, {"spark-01"});
  EXPECT_TRUE(check.allows("127.0.0.1:9877"));
  EXPECT_TRUE(check.allows("localhost:9877"));
  EXPECT_TRUE(check.allows("LOCALHOST"));
  EXPECT_TRUE(check.allows("[::1]:9877"));
  EXPECT_TRUE(check.allows("app.localhost"));
  EXPECT_FALSE(check.allows("attacker.example:9877")) << "DNS rebinding";
  EXPECT_FALSE(check.allows("spark-01")) << "machine names only on a wildcard bind";
  EXPECT_FALSE(check.allows(""));
}

TEST(HostCheck, WildcardServerAnswersItsMachineNames) {
  const HostCheck check(listen("0.0.0.0", false), {"grafana-proxy.lab"},
                        {"spark-01.lab", "spark-01"});
  EXPECT_TRUE(check.allows("spark-01:9877"));
  EXPECT_TRUE(check.allows("Spark-01.lab"));
  EXPECT_TRUE(check.allows("grafana-proxy.lab:443"));
  EXPECT_TRUE(check.allows("192.168.1.20:9877"));
  EXPECT_FALSE(check.allows("localhost")) << "not bound to loopback";
  EXPECT_FALSE(check.allows("spark-01.attacker.example"));
}

}  // namespace
}  // namespace sparkops::exporter
