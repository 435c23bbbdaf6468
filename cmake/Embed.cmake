# ocltune_embed(<output.cpp> <symbol> <files...>): generate a source embedding <files> as
# ocltune::<symbol>[] (see harness/embedded_file.h); regenerated whenever a file changes.
function(ocltune_embed output symbol)
  # '|' rather than ';' separates the files: a ';' in a custom command argument splits it.
  list(JOIN ARGN "|" files)
  add_custom_command(
    OUTPUT "${output}"
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${output} -DSYMBOL=${symbol} "-DFILES=${files}"
            -P ${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake
    DEPENDS ${ARGN} ${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake
    COMMENT "Embedding ${symbol}"
    VERBATIM)
endfunction()
