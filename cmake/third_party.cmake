# {fmt} and toml++ linked into the binary instead of as libfmt.so and libtomlplusplus.so: every
# command mapped and relocated both at start-up (with the shared libstdc++ they need), and the
# dynamic loader's symbol lookups were half of `status --json`'s instructions (docs/benchmarks.md
# "Release rows"). Their compiled parts are built here, each one translation unit, from the
# installed headers of the same package (libfmt-dev, libtomlplusplus-dev). Included by the main
# project and by fuzz/.
#
# Both keep the compile definitions of Debian's imported targets (FMT_SHARED, TOML_SHARED_LIB=1:
# they only give the API default visibility, which the HTTP module's --exclude-libs hides again),
# so every object that uses them compiles exactly as against the shared libraries.
add_library(sparkops_fmt STATIC ${CMAKE_CURRENT_LIST_DIR}/fmt_library.cpp)
target_compile_definitions(sparkops_fmt PUBLIC FMT_SHARED)
target_include_directories(sparkops_fmt SYSTEM PUBLIC
  $<TARGET_PROPERTY:fmt::fmt,INTERFACE_INCLUDE_DIRECTORIES>)
# Position-independent: sparkops_base, which uses it, links into the HTTP module too.
set_target_properties(sparkops_fmt PROPERTIES POSITION_INDEPENDENT_CODE ON)

add_library(sparkops_toml STATIC ${CMAKE_CURRENT_LIST_DIR}/toml_library.cpp)
target_compile_options(sparkops_toml PUBLIC -DTOML_HEADER_ONLY=0 -DTOML_SHARED_LIB=1)
target_include_directories(sparkops_toml SYSTEM PUBLIC
  $<TARGET_PROPERTY:tomlplusplus::tomlplusplus,INTERFACE_INCLUDE_DIRECTORIES>)

# ncurses for `top`, from its static archives where installed (libncurses-dev has them): only
# the few functions `top` calls come into the binary, and the commands that never draw a screen
# no longer map and relocate libncursesw and libtinfo. Without the archives, the shared ones.
if(TARGET PkgConfig::NCURSESW)
  find_library(SPARKOPS_NCURSESW_ARCHIVE NAMES libncursesw.a)
  find_library(SPARKOPS_TINFO_ARCHIVE NAMES libtinfo.a)
  add_library(sparkops_ncurses INTERFACE)
  if(SPARKOPS_NCURSESW_ARCHIVE AND SPARKOPS_TINFO_ARCHIVE)
    target_compile_options(sparkops_ncurses INTERFACE
      $<TARGET_PROPERTY:PkgConfig::NCURSESW,INTERFACE_COMPILE_OPTIONS>)
    target_include_directories(sparkops_ncurses INTERFACE
      $<TARGET_PROPERTY:PkgConfig::NCURSESW,INTERFACE_INCLUDE_DIRECTORIES>)
    target_link_libraries(sparkops_ncurses INTERFACE ${SPARKOPS_NCURSESW_ARCHIVE}
                                                     ${SPARKOPS_TINFO_ARCHIVE} ${CMAKE_DL_LIBS})
  else()
    target_link_libraries(sparkops_ncurses INTERFACE PkgConfig::NCURSESW)
  endif()
endif()
