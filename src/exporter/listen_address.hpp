#pragma once
// --listen values: "127.0.0.1:9877", "localhost:9877", "[::1]:9877", "0.0.0.0:9877", ":9877"
// (every interface), "9877" (loopback). Port 0 asks the kernel for a free port (tests).

#include <string>
#include <string_view>

#include "base/result.hpp"

namespace sparkops::exporter {

struct ListenAddress {
  std::string host;  // as given to bind(): "127.0.0.1", "::1", "0.0.0.0", "::"
  int port = 0;
  bool loopback = false;  // 127.0.0.0/8, ::1 or "localhost"
};

Result<ListenAddress> parse_listen_address(std::string_view text);

}  // namespace sparkops::exporter
