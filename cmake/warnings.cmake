# sparkops_warnings: the one warnings target every library, binary and test links (docs/design.md §10).
add_library(sparkops_warnings INTERFACE)
target_compile_options(sparkops_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wconversion -Wshadow)
if(SPARKOPS_WERROR)
  target_compile_options(sparkops_warnings INTERFACE -Werror)
endif()

# sparkops_module(NAME [SOURCES...] DEPS...) declares one module as a static library sparkops_<NAME>.
# Without SOURCES it takes every .cpp in the calling folder, so a new file needs no CMake edit.
function(sparkops_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPS" ${ARGN})
  if(NOT M_SOURCES)
    file(GLOB M_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  endif()
  add_library(sparkops_${name} STATIC ${M_SOURCES})
  target_include_directories(sparkops_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(sparkops_${name} PUBLIC ${M_DEPS} PRIVATE sparkops_warnings)
endfunction()

# sparkops_test(NAME [SOURCES...] DEPS...) declares one test executable registered with CTest.
# Without SOURCES it takes every *_test.cpp in the calling folder.
function(sparkops_test name)
  cmake_parse_arguments(T "" "" "SOURCES;DEPS" ${ARGN})
  if(NOT T_SOURCES)
    file(GLOB T_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cpp)
  endif()
  if(NOT T_SOURCES)
    # An empty test folder (a module whose tests are not written yet) must not break configure.
    message(STATUS "sparkops_test(${name}): no *_test.cpp in ${CMAKE_CURRENT_SOURCE_DIR}, skipped")
    return()
  endif()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_DEPS} sparkops_test_support GTest::gtest GTest::gmock
                        GTest::gtest_main sparkops_warnings)
  add_dependencies(${name} sparkops)  # CLI tests run the binary (src/ is added before tests/)
  gtest_discover_tests(${name} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    PROPERTIES ENVIRONMENT "SPARKOPS_SOURCE_DIR=${PROJECT_SOURCE_DIR};SPARKOPS_BUILD_DIR=${PROJECT_BINARY_DIR}"
    DISCOVERY_TIMEOUT 60)
endfunction()
