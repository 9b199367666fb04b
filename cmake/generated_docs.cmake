# sparkops(1) and the bash/zsh/fish completions, generated at build time from the binary's own
# command tree (`sparkops help --man`, `sparkops completion SHELL`), installed by `cmake --install`
# and shipped in the .deb. A cross build needs CMAKE_CROSSCOMPILING_EMULATOR (e.g. qemu-aarch64)
# to run the target binary; without one these files are not built or packaged, and it says so.
if(CMAKE_CROSSCOMPILING AND NOT CMAKE_CROSSCOMPILING_EMULATOR)
  message(WARNING "cross build without CMAKE_CROSSCOMPILING_EMULATOR: no man page or completions")
  return()
endif()

set(SPARKOPS_GENERATED_DIR ${CMAKE_BINARY_DIR}/generated)
set(sparkops_generated)
foreach(spec "man/sparkops.1|help --man" "bash/sparkops|completion bash"
             "zsh/_sparkops|completion zsh" "fish/sparkops.fish|completion fish")
  string(REPLACE "|" ";" parts "${spec}")
  list(GET parts 0 rel)
  list(GET parts 1 args)
  set(out ${SPARKOPS_GENERATED_DIR}/${rel})
  get_filename_component(dir ${out} DIRECTORY)
  file(MAKE_DIRECTORY ${dir})
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:sparkops> "-DARGS=${args}" -DOUT=${out}
            "-DEMULATOR=${CMAKE_CROSSCOMPILING_EMULATOR}" -P ${PROJECT_SOURCE_DIR}/cmake/run_to_file.cmake
    DEPENDS sparkops ${PROJECT_SOURCE_DIR}/cmake/run_to_file.cmake
    COMMENT "Generating ${rel}"
    VERBATIM)
  list(APPEND sparkops_generated ${out})
endforeach()
add_custom_target(sparkops_generated_docs ALL DEPENDS ${sparkops_generated})

install(FILES ${SPARKOPS_GENERATED_DIR}/man/sparkops.1
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT sparkops)
install(FILES ${SPARKOPS_GENERATED_DIR}/bash/sparkops
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT sparkops)
install(FILES ${SPARKOPS_GENERATED_DIR}/zsh/_sparkops
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions COMPONENT sparkops)
install(FILES ${SPARKOPS_GENERATED_DIR}/fish/sparkops.fish
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d COMPONENT sparkops)
