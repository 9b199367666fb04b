# sparkops_embed(TARGET VAR FILE) compiles FILE's bytes into TARGET as
# `extern const std::string_view VAR` (declared by the user), so data/ and web/ ship inside the binary.
function(sparkops_embed target var file)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/embed_${var}.cpp)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DIN=${file} -DOUT=${out} -DVAR=${var} -P ${PROJECT_SOURCE_DIR}/cmake/embed_file.cmake
    DEPENDS ${file} ${PROJECT_SOURCE_DIR}/cmake/embed_file.cmake
    COMMENT "Embedding ${file}")
  target_sources(${target} PRIVATE ${out})
endfunction()
