#include "exporter/listen_address.hpp"

#include <arpa/inet.h>

#include "base/text.hpp"

namespace sparkops::exporter {

namespace {

bool is_loopback_host(std::string_view host) {
  if (host == "localhost") return true;
  in_addr v4{};
  const std::string h(host);
  if (::inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, h.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

}  // namespace

Result<ListenAddress> parse_listen_address(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return fail(Errc::invalid_argument,
                "--listen " + quote_for_message(text) + ": " + std::string(why));
  };
  ListenAddress out;
  std::string_view host;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return bad("expected [IPv6]:PORT");
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else if (const auto colon = text.rfind(':'); colon != std::string_view::npos) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos)
      return bad("put an IPv6 address in brackets: [::1]:9877");
    if (host.empty()) host = "0.0.0.0";
  } else {
    host = "127.0.0.1";
    port = text;
  }
  const auto number = parse_u64(port);
  if (!number || *number > 65535) return bad("port must be a number 0-65535");
  if (host.empty()) return bad("empty host");
  in_addr v4{};
  in6_addr v6{};
  const std::string h(host);
  if (h != "localhost" && ::inet_pton(AF_INET, h.c_str(), &v4) != 1 &&
      ::inet_pton(AF_INET6, h.c_str(), &v6) != 1) {
    return bad("host must be an IP address or localhost");
  }
  out.host = h;
  out.port = static_cast<int>(*number);
  out.loopback = is_loopback_host(host);
  return out;
}

}  // namespace sparkops::exporter
