# Writes OUTPUT, a header defining NPUCC_COMMIT (the source tree's git commit, 12 digits, or
# "unknown" outside a git checkout) and NPUCC_COMMIT_MODIFIED (1 when tracked files differ
# from it), for `npucc --version`. Run at every build (src/CMakeLists.txt), so a commit
# made after configuring is named; the file is rewritten only when it changes, so a build
# without a new commit recompiles nothing.
#   cmake -DSOURCE_DIR=... -DOUTPUT=... -P build_commit.cmake
set(commit unknown)
set(modified 0)
find_program(GIT git)
if(GIT)
  execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE failed ERROR_QUIET)
  if(NOT failed AND head MATCHES "^[0-9a-f]+$")
    set(commit ${head})
    execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} status --porcelain --untracked-files=no
                    OUTPUT_VARIABLE changes RESULT_VARIABLE failed ERROR_QUIET)
    if(failed OR NOT changes STREQUAL "")
      set(modified 1)
    endif()
  endif()
endif()
set(text "#define NPUCC_COMMIT \"${commit}\"\n#define NPUCC_COMMIT_MODIFIED ${modified}\n")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
else()
  set(old "")
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUTPUT} "${text}")
endif()
