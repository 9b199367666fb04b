#include "base/result.hpp"

namespace sparkops {

std::string_view errc_name(Errc code) {
  switch (code) {
    case Errc::not_found:
      return "not found";
    case Errc::permission_denied:
      return "permission denied";
    case Errc::malformed:
      return "malformed";
    case Errc::io:
      return "I/O error";
    case Errc::unsupported:
      return "unsupported";
    case Errc::invalid_argument:
      return "invalid argument";
    case Errc::too_large:
      return "too large";
    case Errc::gpu_lost:
      return "GPU lost";
    case Errc::gpu_hung:
      return "GPU hung";
    case Errc::timed_out:
      return "timed out";
    case Errc::conflict:
      return "refused";
  }
  return "error";
}

}  // namespace sparkops
