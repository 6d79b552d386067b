# Runs `orch conformance DIR` and checks its summary line: no failure, at least MIN_PASSED passed.
# Usage: cmake -DORCH=... -DDIR=... -DMIN_PASSED=N [-DEXTRA="--flag;..."] -P check_conformance.cmake
execute_process(COMMAND ${ORCH} conformance ${DIR} ${EXTRA}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("${out}${err}")
string(REGEX MATCH "conformance: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped" summary "${out}")
if(NOT summary)
  message(FATAL_ERROR "no summary line from orch conformance (exit ${rc})")
endif()
if(NOT CMAKE_MATCH_2 EQUAL 0)
  message(FATAL_ERROR "${CMAKE_MATCH_2} conformance tests failed")
endif()
if(CMAKE_MATCH_1 LESS MIN_PASSED)
  message(FATAL_ERROR "only ${CMAKE_MATCH_1} passed, expected at least ${MIN_PASSED}")
endif()
