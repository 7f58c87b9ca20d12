# posenc_schemes.cmake — registering a scheme without hand edits.
#
# A scheme is added with ONE line in the top-level CMakeLists.txt:
#     posenc_add_scheme(<name> TESTS <TestPrefix>)
# Every part then picks up its file(s) of that scheme by convention (posenc_scheme_files below), and configure
# fails naming the file when a scheme lacks one:
#     schemes/<name>/spec.cpp (+ include/spec/posenc/<name>_spec.hpp)              posenc::spec
#     schemes/<name>/fast.cpp (+ include/lib/posenc/<name>.hpp)                    posenc::posenc
#     schemes/<name>/oracle.cpp (+ include/oracle/posenc/reference/<name>.hpp)     posenc::reference
#     schemes/<name>/oracle_test.cpp                                              posenc_oracle_tests
#     schemes/<name>/budget.hpp, budget.cpp                                       posenc_verify (the budget table)
#     schemes/<name>/cases.hpp                                                    the case table (claims, sweep, benchmarks)
#     schemes/<name>/check.cpp, check.hpp                                         posenc check / identify (posenc_verify)
#     schemes/<name>/claims.cpp (+ measure.cpp, generators.cpp: test support)     posenc_properties
#     schemes/<name>/misuse_test.cpp                                              posenc_api_tests (every public function misused)
#     schemes/<name>/sweep.cpp                                                    posenc_accuracy_sweep
#     schemes/<name>/bench.cpp                                                    posenc_bench
#     schemes/<name>/cli.cpp                                                      posenc (CLI)
#     schemes/<name>/figures.cpp (+ schemes/<name>/report.py)      posenc_figures: the report's figure data
# The three public headers live in the scheme's folder, one include root per layer (include/spec, include/lib,
# include/oracle): each target gets only its own layer's roots (posenc_scheme_include_dirs), so the oracle still
# cannot include the fast path's headers, and each installs into <prefix>/include/posenc/.
# GoogleTest suites of a scheme start with <TestPrefix> (e.g. Sinusoidal, SinusoidalOracleEmulated): ctest
# discovers each test and labels it "<part>:<name>", so `ctest -L sinusoidal` runs one scheme.

function(posenc_add_scheme name)
  cmake_parse_arguments(PARSE_ARGV 1 S "" "TESTS" "")
  if(NOT S_TESTS)
    message(FATAL_ERROR "posenc_add_scheme(${name}): give TESTS <GoogleTest suite prefix>")
  endif()
  set_property(GLOBAL APPEND PROPERTY POSENC_SCHEMES ${name})
  set_property(GLOBAL APPEND PROPERTY POSENC_SCHEME_TEST_PREFIXES ${S_TESTS})
endfunction()

# posenc_scheme_files(<out-var> <pattern>...): for every registered scheme, each pattern (a path relative to the
# project root, with @ standing for the scheme's name) as an absolute path; a missing file is a configure error.
function(posenc_scheme_files out)
  get_property(schemes GLOBAL PROPERTY POSENC_SCHEMES)
  set(files)
  foreach(name IN LISTS schemes)
    foreach(pattern IN LISTS ARGN)
      string(REPLACE "@" "${name}" rel "${pattern}")
      if(NOT EXISTS "${PROJECT_SOURCE_DIR}/${rel}")
        message(FATAL_ERROR "scheme '${name}' is registered (posenc_add_scheme) but has no ${rel}; see cmake/posenc_schemes.cmake")
      endif()
      list(APPEND files "${PROJECT_SOURCE_DIR}/${rel}")
    endforeach()
  endforeach()
  set(${out} ${files} PARENT_SCOPE)
endfunction()

# posenc_discover_scheme_tests(<target> <part> <environment> <timeout> [args...]): one ctest entry per GoogleTest test
# of <target>, run with <args>, labelled "<part>:<scheme>" for the tests of each scheme and "<part>:core" for the
# scheme-independent suites (ctest -L takes a regular expression: `ctest -L sinusoidal`, `ctest -L properties`).
# One label and one environment entry: CMake 3.25's gtest_discover_tests flattens list-valued properties.
function(posenc_discover_scheme_tests target part env timeout)
  include(GoogleTest)
  get_property(schemes GLOBAL PROPERTY POSENC_SCHEMES)
  get_property(prefixes GLOBAL PROPERTY POSENC_SCHEME_TEST_PREFIXES)
  math(EXPR timeout "${timeout} * ${POSENC_TEST_TIMEOUT_SCALE}")
  set(all_prefixes)
  foreach(name prefix IN ZIP_LISTS schemes prefixes)
    gtest_discover_tests(${target} TEST_FILTER "${prefix}*" TEST_PREFIX "${part}." DISCOVERY_TIMEOUT 120
                         EXTRA_ARGS ${ARGN}
                         PROPERTIES LABELS "${part}:${name}" ENVIRONMENT "${env}" TIMEOUT ${timeout})
    list(APPEND all_prefixes "${prefix}*")
  endforeach()
  # MainJobPrograms.*: tests of the main job's programs (the benchmark program), registered by the caller as their
  # own entry with the label "mainjob" (the test command does not build those programs).
  string(JOIN ":" schemes_filter ${all_prefixes} "MainJobPrograms.*")
  gtest_discover_tests(${target} TEST_FILTER "*-${schemes_filter}" TEST_PREFIX "${part}." DISCOVERY_TIMEOUT 120
                       EXTRA_ARGS ${ARGN}
                       PROPERTIES LABELS "${part}:core" ENVIRONMENT "${env}" TIMEOUT ${timeout})
endfunction()

# posenc_scheme_include_dirs(<target> <layer> [INSTALL]): every registered scheme's include/<layer> folder as a
# PUBLIC build include root of <target>; with INSTALL its headers are installed into ${CMAKE_INSTALL_INCLUDEDIR},
# where the installed target's include interface points.
function(posenc_scheme_include_dirs target layer)
  cmake_parse_arguments(PARSE_ARGV 2 S "INSTALL" "" "")
  get_property(schemes GLOBAL PROPERTY POSENC_SCHEMES)
  foreach(name IN LISTS schemes)
    set(dir "${PROJECT_SOURCE_DIR}/schemes/${name}/include/${layer}")
    target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${dir}>)
    if(S_INSTALL)
      install(DIRECTORY ${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
    endif()
  endforeach()
endfunction()
