#!/usr/bin/env bash
# The sanitizer suite (.ci/run runs it after the README's test command):
#  1. AddressSanitizer + UndefinedBehaviorSanitizer: everything but the benchmarks built into build-asan/, and
#     the test command's ctest suite run there (bounded case counts as in the Release suite; not the "full" label,
#     i.e. the bad-input sweep tries two values per option here, every value in the Release run). Any report fails
#     the run.
#     Left out: cli.faults, whose LD_PRELOAD shim and address-space limits (ulimit -v) cannot work under ASan
#     (ASan must be the first library loaded and reserves terabytes of address space); it runs in the Release
#     suite. With POSENC_COVERAGE=1 (the main job) the same build is instrumented for coverage (gcc --coverage):
#     after the run, gcovr measures the line and branch coverage of lib/, spec/, cli/, verify/ and the product parts of schemes/ (not the oracles, claims, sweeps, benchmarks, figures) by the suite (counters
#     are zeroed first, so the figures are this run's).
#  2. ThreadSanitizer: posenc's worker pool through the public API (posenc_api_tests: concurrent host
#     threads, tables, RoPE caches and rotations) built into build-tsan/. (libgomp is not instrumented, which is
#     one reason the library's threads are its own; the oracles' OpenMP loops in properties/ are not run here.)
#  Every ctest entry's timeout is 10 times the Release suite's here (POSENC_TEST_TIMEOUT_SCALE): the suite runs
#     several times slower under the sanitizers, more so with coverage counters.
#  ci: the bounded form .ci/run uses (the whole-suite ASan run above took ~35 min of ctest plus a ~25 min build
#     on 2 cores, and with the Release build and suite it pushed CI past its 90 min at 422683d): ASan+UBSan over the
#     public API only (posenc_api_tests: misuse of every public function, the worker pool from host threads; and
#     posenc_cli_tests: the .npy reader), i.e. the library, spec and CLI core without the oracles, then TSan as in 2.
#     The main job runs `all`.
# Usage: scripts/sanitize.sh [asan|tsan|all|ci]   (default all)
# With POSENC_RESULTS_DIR set (the main job), writes sanitize.json (per run: tests, failures, sanitizer
# reports, seconds) and, with POSENC_COVERAGE=1, coverage.json + coverage-detail.json (gcovr) there; without a
# results directory the coverage summary is printed only. Exit status: 0 when every run is clean.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-all}
"$root/scripts/install-deps.sh" || exit 1
results=${POSENC_RESULTS_DIR:-}
# Nothing this script builds or runs writes result files of its own: the builds' test discovery and the tests
# would otherwise replace the main job's (this script writes sanitize.json and coverage.json itself).
unset POSENC_RESULTS_DIR
status=0
runs=()   # one JSON object per sanitizer run, for sanitize.json
record() {  # record NAME BUILD_FLAGS LOG SECONDS EXIT_STATUS
  local name=$1 flags=$2 log=$3 seconds=$4 rc=$5 tests failed reports
  tests=$(grep -oE 'tests failed out of [0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1)
  # GoogleTest programs (one or more in the log): the sum of their "N tests from M test suites ran" lines.
  [[ -z $tests ]] && tests=$(grep -oE '^\[==========\] [0-9]+ tests? from [0-9]+ test suites? ran' "$log" |
                             awk '{s += $2} END {if (NR) print s}')
  failed=$(grep -oE '[0-9]+ tests failed out of' "$log" | grep -oE '^[0-9]+' | tail -1)
  [[ -z $failed ]] && failed=$(grep -oE '^\[  FAILED  \] [0-9]+ tests?,' "$log" | grep -oE '[0-9]+' |
                              awk '{s += $1} END {if (NR) print s}')
  reports=$(grep -cE 'ERROR: (AddressSanitizer|LeakSanitizer)|WARNING: ThreadSanitizer|runtime error:' "$log")
  runs+=("{\"name\": \"$name\", \"flags\": \"$flags\", \"tests\": ${tests:-0}, \"failed\": ${failed:-0}, \"sanitizer_reports\": ${reports:-0}, \"seconds\": $seconds, \"exit_status\": $rc}")
  echo "[sanitize] $name: ${tests:-0} tests, ${failed:-0} failed, ${reports:-0} sanitizer reports, ${seconds} s, exit status $rc"
  [[ $rc -eq 0 && ${reports:-0} -eq 0 ]] || status=1
}

configure() {  # configure BUILD_DIR FLAGS
  local build=$1 flags=$2
  mkdir -p "$build"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPOSENC_BUILD_TESTS=ON \
    -DPOSENC_BUILD_BENCHMARKS=OFF -DPOSENC_BUILD_CLI=ON -DPOSENC_TEST_TIMEOUT_SCALE=10 \
    -DPOSENC_BUILD_PYTHON=OFF `# an instrumented module cannot be imported by an uninstrumented python3` \
    "-DCMAKE_CXX_FLAGS=$flags" "-DCMAKE_EXE_LINKER_FLAGS=$flags" "-DCMAKE_SHARED_LINKER_FLAGS=$flags" \
    "-DCMAKE_MODULE_LINKER_FLAGS=$flags" >"$build/configure.log" 2>&1 || { cat "$build/configure.log"; return 1; }
}

if [[ $what == all || $what == asan ]]; then
  build=${POSENC_ASAN_BUILD_DIR:-$root/build-asan}
  asan_flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
  # Coverage (POSENC_COVERAGE=1, the main job): gcc --coverage with plain counter updates, named explicitly:
  # the driver picks atomic updates (-fprofile-update=prefer-atomic) whenever -pthread is on the command line,
  # as it is here, and atomic counters in the threaded kernels made the suite ~4x slower (992 s; a test ran
  # past its ctest timeout). Counters of code the worker pool's threads run concurrently may miss increments;
  # what coverage reports — whether a line or branch ran at all — is unaffected.
  cov_flags=""
  [[ ${POSENC_COVERAGE:-0} == 1 ]] && cov_flags="--coverage -fprofile-abs-path -fprofile-update=single"
  echo "[sanitize] ASan+UBSan${cov_flags:+ (+ coverage)} build in $build"
  if configure "$build" "$asan_flags${cov_flags:+ $cov_flags}" && cmake --build "$build" -j"$(nproc)"; then
    echo "[sanitize] ASan+UBSan: ctest"
    find "$build" -name '*.gcda' -delete
    # Not detect_stack_use_after_return: GCC 12's fake stack frames are only 32-byte aligned, and the AVX-512
    # table writer's 64-byte-aligned locals then fault on an aligned store (vmovdqa64 to an address = 32 mod 64,
    # seen in fused_parts under gdb), a limitation of the sanitizer, not a defect of the code.
    t0=$(date +%s)
    (cd "$build" && ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:check_initialization_order=1:strict_init_order=1 \
       UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
       ctest --output-on-failure -j2 --timeout 1800 -LE 'cli:faults|full') 2>&1 | tee "$build/ctest.log"
    rc=${PIPESTATUS[0]}
    record "asan+ubsan: ctest (the test command's suite but cli.faults)" "$asan_flags" "$build/ctest.log" $(( $(date +%s) - t0 )) "$rc"
    [[ -n $cov_flags ]] && echo "[sanitize] coverage (gcovr) of lib/, spec/, cli/, verify/, schemes/"
    # --gcov-ignore-parse-errors: the plain counters of code the worker pool's threads share can end up
    # inconsistent, and gcov then prints a negative branch count ("branch 4 taken -43" in table_writer.cpp),
    # which gcovr would otherwise refuse as a whole; the line is skipped, the rest of the file counted.
    # gcovr through scripts/gcovr_lambdas.py: GCC numbers the lambdas of the SpecTraits field tables differently in
    # different translation units ({lambda(RopeSpec const&)#10} at line 314 in one unity unit, 267 in another; T5,
    # DeBERTa, FIRE, RoPE), and Debian's gcovr 5.2 asserts that a function of one name has one line; the wrapper
    # merges them at the first line (which lines and branches ran is unaffected). One job (-j 1, ~30 s here): with
    # -j 2 such an assertion in a worker thread once left gcovr waiting forever (main job at 7528621); in one thread
    # an error ends it with a non-zero status.
    gcov_args=(-r "$root" --object-directory "$build" --filter "$root/lib/" --filter "$root/spec/" --filter "$root/cli/"
               --filter "$root/verify/" --filter "$root/schemes/"
               --exclude "$root/cli/tests/" --exclude "$root/schemes/[a-z_0-9]+/(oracle|oracle_test|claims|misuse_test|sweep|measure|generators|config_test|bench|figures)\.(cpp|hpp)"
               --exclude-throw-branches --exclude-unreachable-branches --gcov-ignore-parse-errors -j 1)
    if [[ -z $cov_flags ]]; then
      :
    elif [[ -n $results ]]; then
      mkdir -p "$results"
      /usr/bin/python3 "$root/scripts/gcovr_lambdas.py" "${gcov_args[@]}" --json-summary-pretty --json-summary "$results/coverage.json" \
        --json "$results/coverage-detail.json" --print-summary || status=1
    else
      /usr/bin/python3 "$root/scripts/gcovr_lambdas.py" "${gcov_args[@]}" --print-summary -o /dev/null || status=1
    fi
  else
    record "asan+ubsan: build" "$asan_flags" /dev/null 0 1
  fi
fi

if [[ $what == ci ]]; then
  # Its own directory: the whole-suite build (with coverage in the main job) keeps its flags and objects.
  build=${POSENC_ASAN_CI_BUILD_DIR:-$root/build-asan-ci}
  asan_flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
  echo "[sanitize] ASan+UBSan build of posenc_api_tests and posenc_cli_tests in $build"
  if configure "$build" "$asan_flags" && cmake --build "$build" -j"$(nproc)" --target posenc_api_tests posenc_cli_tests; then
    t0=$(date +%s)
    # The same options as the whole-suite run (see above for why not detect_stack_use_after_return).
    { ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:check_initialization_order=1:strict_init_order=1 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$build/properties/posenc_api_tests" &&
      ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$build/cli/posenc_cli_tests"; } 2>&1 | tee "$build/api.log"
    rc=${PIPESTATUS[0]}
    record "asan+ubsan: posenc_api_tests + posenc_cli_tests" "$asan_flags" "$build/api.log" $(( $(date +%s) - t0 )) "$rc"
  else
    record "asan+ubsan: build" "$asan_flags" /dev/null 0 1
  fi
fi

if [[ $what == all || $what == tsan || $what == ci ]]; then
  build=${POSENC_TSAN_BUILD_DIR:-$root/build-tsan}
  echo "[sanitize] TSan build of posenc_api_tests in $build"
  tsan_flags="-fsanitize=thread -fno-omit-frame-pointer"
  if configure "$build" "$tsan_flags" && cmake --build "$build" -j"$(nproc)" --target posenc_api_tests; then
    echo "[sanitize] TSan: posenc_api_tests"
    # Without the fork test: TSan cannot start threads in the child of a multi-threaded fork (it says so and dies).
    t0=$(date +%s)
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 "$build/properties/posenc_api_tests" --gtest_filter='-*Fork*' \
      2>&1 | tee "$build/tsan.log"
    rc=${PIPESTATUS[0]}
    record "tsan: posenc_api_tests (worker pool, all but the fork test)" "$tsan_flags" "$build/tsan.log" \
      $(( $(date +%s) - t0 )) "$rc"
  else
    record "tsan: build" "$tsan_flags" /dev/null 0 1
  fi
fi

if [[ -n $results ]]; then
  mkdir -p "$results"
  { echo "{\"schema\": \"posenc-sanitize-1\", \"compiler\": \"$(c++ --version | head -1)\", \"runs\": ["
    (IFS=,; echo "${runs[*]}")
    echo "]}"; } >"$results/sanitize.json"
fi
if [[ $status -eq 0 ]]; then echo "[sanitize] done: no sanitizer reports"; else echo "[sanitize] FAILED"; fi
exit $status
