#pragma once
// Result<T>: the return type of every operation that can fail in an expected way (docs/design.md
// §2). Exceptions are reserved for bugs and caught once in main.

#include <string>
#include <string_view>
#include <utility>

#include <tl/expected.hpp>

namespace sparkops {

enum class Errc {
  not_found,          // file, field, device or model does not exist
  permission_denied,  // exists but the caller may not read or act on it
  malformed,          // content present but not in the expected form
  io,                 // read/write failure other than the above
  unsupported,        // the machine or driver does not provide this
  invalid_argument,   // bad user input (flag value, path, number)
  too_large,          // input over a safety bound
  gpu_lost,           // the GPU fell off the bus or the driver went away
  gpu_hung,           // a GPU driver call has not returned within its watchdog timeout
  timed_out,          // an operation outlived its deadline (a helper program was killed)
  conflict,           // the requested action is refused by a rule (e.g. ladder order)
};

std::string_view errc_name(Errc code);

struct Error {
  Errc code;
  std::string detail;  // one line, names the input and the problem
};

template <class T>
using Result = tl::expected<T, Error>;

using Status = tl::expected<void, Error>;

inline tl::unexpected<Error> fail(Errc code, std::string detail) {
  return tl::unexpected<Error>(Error{code, std::move(detail)});
}

}  // namespace sparkops
