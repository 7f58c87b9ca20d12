#!/usr/bin/env bash
# cli/tests/fault_test.sh — the `posenc` command line under faults (issue "Reliability"): each scenario asserts a
# clear outcome, never a crash, an abort or a hang.
# Usage: fault_test.sh /path/to/posenc /path/to/libposenc_fault_shim.so
#  * thread creation refused (the shim makes every pthread_create fail with EAGAIN): posenc computes with the
#    calling thread and writes the same bytes as an unrestricted run;
#  * an address-space limit (ulimit -v) below what a command needs: one "posenc: error:" line, exit status 1,
#    no output file, no abort (status 134) — before, a std::bad_alloc escaped an OpenMP region and aborted.
# OpenBLAS starts its own threads when it is loaded and exits the process if it cannot (its blas_thread_init);
# posenc cannot intercept that, so the thread scenario runs with OPENBLAS_NUM_THREADS=1 (no OpenBLAS threads).
set -u
POSENC=${1:?usage: fault_test.sh /path/to/posenc /path/to/shim.so}
SHIM=${2:?usage: fault_test.sh /path/to/posenc /path/to/shim.so}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/posenc-fault-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
failures=0
checks=0
pass() { checks=$((checks + 1)); }
fail() { checks=$((checks + 1)); failures=$((failures + 1)); echo "FAIL: $*"; }

# ---- thread creation refused -------------------------------------------------------------------------
# Each command is large enough (>= 2^15 values) to be split over threads.
same_without_threads() {  # same_without_threads NAME ARGS... (the command writes --out NAME.npy)
  local name=$1; shift
  if ! OPENBLAS_NUM_THREADS=1 "$POSENC" "$@" --threads 2 --out "$name-ok.npy" 2>err-ok.txt; then
    fail "$name: unrestricted run failed: $(cat err-ok.txt)"; return
  fi
  OPENBLAS_NUM_THREADS=1 POSENC_FAULT_PTHREAD_CREATE=1 LD_PRELOAD="$SHIM" timeout 120 \
    "$POSENC" "$@" --threads 2 --out "$name-fault.npy" 2>err-fault.txt
  local rc=$?
  if [[ $rc -ne 0 ]]; then fail "$name: exit status $rc when threads cannot be created: $(cat err-fault.txt)"; return; fi
  if ! cmp -s "$name-ok.npy" "$name-fault.npy"; then fail "$name: output differs when threads cannot be created"; return; fi
  pass
}
same_without_threads sin-table table sinusoidal --dim 512 --positions 0:4096
same_without_threads sin-rows table sinusoidal --dim 512 --positions 0:4096:3,7,100000
same_without_threads sin-emulated table sinusoidal --preset tensor2tensor --regime emulated --dim 512 --positions 0:4096
same_without_threads rope-cache table rope --head-dim 128 --form hf --positions 0:8192
same_without_threads rope-cache-hf table rope --preset hf-llama --head-dim 128 --form pairs --positions 0:8192
# The shim itself must bite: a program that needs a thread (python's threading) fails under it.
if command -v python3 >/dev/null 2>&1; then
  if POSENC_FAULT_PTHREAD_CREATE=1 LD_PRELOAD="$SHIM" python3 -c 'import threading; t=threading.Thread(target=int); t.start()' 2>/dev/null
  then fail "the fault shim does not make pthread_create fail"; else pass; fi
fi

# ---- address-space limit -----------------------------------------------------------------------------
expect_clean_failure() {  # expect_clean_failure LIMIT_KIB ARGS...
  local limit=$1; shift
  rm -f out.* ./*.tmp-*
  (ulimit -v "$limit"; exec timeout 120 "$POSENC" "$@") >stdout.txt 2>stderr.txt
  local rc=$?
  if [[ $rc -ne 1 ]]; then fail "posenc $* under ulimit -v $limit: exit status $rc, expected 1 ($(head -c 300 stderr.txt))"; return; fi
  if [[ $(wc -l <stderr.txt) -ne 1 ]] || ! grep -q '^posenc: error: ' stderr.txt; then
    fail "posenc $* under ulimit -v $limit: stderr is not one 'posenc: error:' line:"; cat stderr.txt; return
  fi
  if compgen -G "out.*" >/dev/null || compgen -G "*.tmp-*" >/dev/null; then fail "posenc $*: left an output file"; return; fi
  pass
}
expect_clean_succeeds() {  # expect_clean_succeeds LIMIT_KIB ARGS...
  local limit=$1; shift
  (ulimit -v "$limit"; exec timeout 120 "$POSENC" "$@") >stdout.txt 2>stderr.txt
  local rc=$?
  if [[ $rc -ne 0 ]]; then fail "posenc $* under ulimit -v $limit: exit status $rc ($(head -c 300 stderr.txt))"; else pass; fi
}
# 1.6 GB of f32 under a 1 GiB address space: the output allocation fails.
expect_clean_failure 1048576 table sinusoidal --dim 4096 --positions 0:100000 --out out.npy
expect_clean_failure 1048576 table rope --head-dim 256 --form hf --positions 0:1000000 --out out.npy
# The case: many threads requested under a 4 GiB limit (capped at the processors; no abort).
expect_clean_succeeds 4194304 table sinusoidal --dim 512 --positions 0:64 --threads 450 --out out.npy
expect_clean_succeeds 4194304 table sinusoidal --dim 512 --positions 0:65536 --threads 4096 --out out.npy

echo "fault_test: $checks checks, $failures failures"
[[ $failures -eq 0 ]]
