# Script mode: writes OUT, a C++ file defining `const std::string_view VAR` with IN's bytes.
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR byte_len "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," body "${hex}")
file(WRITE ${OUT} "// Generated from ${IN}; do not edit.\n#include <string_view>\nnamespace sparkops::embedded {\nstatic const char ${VAR}_bytes[] = {${body} '\\0'};\nextern const std::string_view ${VAR};\nconst std::string_view ${VAR}{${VAR}_bytes, ${byte_len}};\n}\n")
