# posenc_build.cmake — what keeps the build short (issue "two commands that finish").
#
# Measured per object with Ninja's log on a 2-core machine (GCC 12, before these measures: 1,802 CPU-seconds,
# 14 min wall): the test programs' objects were two thirds of it, almost all of it GCC's front end (templates of
# GoogleTest/RapidCheck, nlohmann/json, Boost.Multiprecision and the spec descriptions) and -O3 code generation
# for code that runs once per case. Precompiled headers were tried and lost: GCC's .gch of these headers is
# 250-290 MB per target, and loading one costs about what parsing the headers did (14 min 20 s wall, sys time
# doubled). What is done instead:
#   * posenc_test_code(<target>): test-only programs (claims, oracle self-tests, misuse tests, the accuracy sweep)
#     and the budget rows (data built once at start-up) compiled at POSENC_TEST_OPT (default -O1); the CLI's
#     per-scheme registration files (argument glue) at POSENC_GLUE_OPT (default -O1). What is timed or held to a
#     bound keeps the build type's level: lib/ (the fast code), reference/ (the oracles), the checkers
#     (posenc_verify), the measuring harnesses (posenc_test_support) and the CLI's readers and writers.
#     (Incidentally, -O1 on the budget rows also avoids GCC 12's -O3 false -Wmaybe-uninitialized on the
#     destructors of their string temporaries.)
#   * posenc_unity(<target>): unity builds of the targets whose files each parse the same heavy headers (the CLI's
#     scheme files: ~10 of their ~20 CPU-seconds each are CLI11, nlohmann/json and the spec descriptions; the claims:
#     ~7 of ~20 are GoogleTest, RapidCheck and Boost.Multiprecision): POSENC_UNITY_BATCH files per compiled unit
#     (default 8, which keeps two units per target for two cores). Each such file keeps its own names in a namespace
#     of its own (an anonymous namespace would be shared by the files of a unit). POSENC_UNITY=OFF builds file by file.
#   * ccache, when installed and POSENC_CCACHE is ON (default), for developers' rebuilds.
#   * POSENC_WERROR: warnings are errors (CI sets it: the Release build has none, and a new one fails CI).

set(POSENC_TEST_OPT "-O1" CACHE STRING "Optimisation of test-only programs' own code (the code under test keeps the build type's)")
set(POSENC_GLUE_OPT "-O1" CACHE STRING "Optimisation of the CLI's per-scheme registration files (argument glue)")
option(POSENC_CCACHE "Compile through ccache when it is installed" ON)
option(POSENC_WERROR "Treat compiler warnings as errors" OFF)
option(POSENC_UNITY "Unity builds of the targets posenc_unity() names" ON)
set(POSENC_UNITY_BATCH 8 CACHE STRING "Source files per unity unit")
if(POSENC_WERROR)
  add_compile_options(-Werror)
endif()

# POSENC_TEST_TIMEOUT_SCALE: every ctest entry's timeout is its stated seconds times this integer. The stated
# timeouts bound the Release suite; scripts/sanitize.sh sets 10 for its ASan+UBSan build, which runs the suite
# several times slower (with coverage counters, the accuracy sweep's smoke run passed 300 s and the bad-input
# sweep 900 s at 338848f). posenc_scale_test_timeouts() applies it to the entries of the calling directory (CMake
# 3.25 sets test properties only there); posenc_discover_scheme_tests scales the discovered tests' own.
set(POSENC_TEST_TIMEOUT_SCALE 1 CACHE STRING "Factor on every ctest entry's timeout (sanitizer builds)")
function(posenc_scale_test_timeouts)
  if(POSENC_TEST_TIMEOUT_SCALE EQUAL 1)
    return()
  endif()
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS tests)
    get_test_property(${t} TIMEOUT seconds)
    if(seconds)
      math(EXPR seconds "${seconds} * ${POSENC_TEST_TIMEOUT_SCALE}")
      set_tests_properties(${t} PROPERTIES TIMEOUT ${seconds})
    endif()
  endforeach()
endfunction()

# POSENC_PYTHON3: the interpreter the Python-driven ctest entries run, the first python3 on PATH resolved to the
# program itself (its sys.executable). A version manager's shim (pyenv's is a shell script that execs
# `pyenv exec`) costs ~0.35 s per start against ~0.03 s; cli.commands starts python3 71 times, which was 34 of
# its 50 s. Empty when there is no python3.
if(NOT DEFINED POSENC_PYTHON3)
  find_program(POSENC_PYTHON3_ON_PATH python3)
  set(resolved "")
  if(POSENC_PYTHON3_ON_PATH)
    execute_process(COMMAND ${POSENC_PYTHON3_ON_PATH} -c "import sys; print(sys.executable)"
                    OUTPUT_VARIABLE resolved OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0 OR NOT EXISTS "${resolved}")
      set(resolved ${POSENC_PYTHON3_ON_PATH})
    endif()
  endif()
  set(POSENC_PYTHON3 "${resolved}" CACHE FILEPATH "python3 for the Python-driven tests (PATH's, shims resolved)")
endif()

if(POSENC_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(POSENC_CCACHE_PROGRAM ccache)
  if(POSENC_CCACHE_PROGRAM)
    set(CMAKE_CXX_COMPILER_LAUNCHER ${POSENC_CCACHE_PROGRAM})
  endif()
endif()

# posenc_test_code(<target>): a test-only target's own objects at POSENC_TEST_OPT (after the build type's flags,
# so it wins). posenc_test_code(SOURCES <file>...): the same for single files of another target.
function(posenc_test_code target)
  posenc_optimise_at("${POSENC_TEST_OPT}" ${target} ${ARGN})
endfunction()

# posenc_glue_code(<target> | SOURCES <file>...): argument glue at POSENC_GLUE_OPT.
function(posenc_glue_code)
  posenc_optimise_at("${POSENC_GLUE_OPT}" ${ARGN})
endfunction()

function(posenc_optimise_at level target)
  if(NOT level)
    return()
  endif()
  separate_arguments(opt UNIX_COMMAND "${level}")
  if(target STREQUAL "SOURCES")
    set_property(SOURCE ${ARGN} APPEND PROPERTY COMPILE_OPTIONS ${opt})
  else()
    target_compile_options(${target} PRIVATE ${opt})
  endif()
endfunction()

# posenc_unity(<target> [<batch>]): the target's files compiled POSENC_UNITY_BATCH (or <batch>) at a time (see the top
# of this file). Its compile options must be the target's (CMake leaves files with options of their own out of the
# units).
function(posenc_unity target)
  set(batch ${POSENC_UNITY_BATCH})
  if(ARGC GREATER 1)
    set(batch ${ARGV1})
  endif()
  if(POSENC_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${batch})
  endif()
endfunction()
