// toml++'s compiled part, built here instead of linking libtomlplusplus.so (cmake/linking.cmake):
// with TOML_HEADER_ONLY=0, the one translation unit that defines TOML_IMPLEMENTATION compiles
// the library's non-inline functions from its installed headers.
#define TOML_IMPLEMENTATION
#include <toml++/toml.h>
