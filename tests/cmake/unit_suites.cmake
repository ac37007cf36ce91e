# Read by ctest (TEST_INCLUDE_FILES of tests/): one CTest test per doctest TEST_SUITE of
# the unit binary, so that `ctest -j2` runs suites side by side instead of the whole unit
# binary as one long test. The suites are listed when ctest starts (`--list-test-suites`),
# so a new TEST_SUITE needs no CMake change. Needs: unit_exe (the binary's path) and
# have_onnxruntime (whether the build has ONNX Runtime).
#
# Test names are "unit:" and the suite without its "npucc::" prefix
# (`ctest -R unit:cache::LocalStorage`, `ctest -L unit` for all of them).

execute_process(COMMAND "${unit_exe}" --list-test-suites
                OUTPUT_VARIABLE listing RESULT_VARIABLE listed ERROR_QUIET)
if(NOT listed EQUAL 0)
  # Not built yet, or it cannot start: one test that runs it whole and reports why.
  add_test(unit "${unit_exe}")
  set_tests_properties(unit PROPERTIES LABELS unit)
  return()
endif()

string(REPLACE "\n" ";" lines "${listing}")
set(suites "")
foreach(line IN LISTS lines)
  # The listing is framed by "[doctest] ..." and "=====" lines.
  if(line STREQUAL "" OR line MATCHES "^\\[doctest\\]" OR line MATCHES "^=+$")
    continue()
  endif()
  list(APPEND suites "${line}")
endforeach()

set(excluded "")
foreach(suite IN LISTS suites)
  string(REGEX REPLACE "^npucc::" "" short "${suite}")
  if(suite MATCHES "[,*?\\\\]")
    # doctest reads ',' as a separator and '*' '?' as wildcards in -ts: such a name cannot
    # be selected alone. A failing test says so.
    add_test("unit:${short}" "${CMAKE_COMMAND}" -E echo
             "rename TEST_SUITE(\"${suite}\"): no ',' '*' '?' or '\\' in suite names")
    set_tests_properties("unit:${short}" PROPERTIES LABELS unit WILL_FAIL TRUE)
    continue()
  endif()
  if(suite MATCHES "::as_root$")
    # Cases that give files to another user: skipped (77, never Passed) unless root.
    add_test("unit:${short}" sh -c
             "[ \"$(id -u)\" = 0 ] || { echo 'skip: ${suite} gives files to another user: run as root'; exit 77; }; exec \"$0\" -ts=\"$1\""
             "${unit_exe}" "${suite}")
    set_tests_properties("unit:${short}" PROPERTIES LABELS unit SKIP_RETURN_CODE 77)
  else()
    add_test("unit:${short}" "${unit_exe}" "-ts=${suite}")
    set_tests_properties("unit:${short}" PROPERTIES LABELS unit)
  endif()
  string(APPEND excluded ",${suite}")
endforeach()

# Built without ONNX Runtime, the suites that run it are not compiled
# (tests/unit/test_runtime_runtime_process.cpp): each is a test that says why and exits 77,
# which CTest reports as Skipped (and .ci/run fails on), never as Passed.
if(NOT have_onnxruntime)
  foreach(short IN ITEMS runtime::runtime_process runtime::runtime_pool)
    add_test("unit:${short}" sh -c
             "echo 'skip: built without ONNX Runtime (scripts/install-onnxruntime, then cmake again)'; exit 77")
    set_tests_properties("unit:${short}" PROPERTIES LABELS unit SKIP_RETURN_CODE 77)
  endforeach()
endif()

# Test cases outside every TEST_SUITE still run, in one test of their own.
if(excluded STREQUAL "")
  add_test("unit:(no suite)" "${unit_exe}")
else()
  string(SUBSTRING "${excluded}" 1 -1 excluded)
  add_test("unit:(no suite)" "${unit_exe}" "-tse=${excluded}")
endif()
set_tests_properties("unit:(no suite)" PROPERTIES LABELS unit)
