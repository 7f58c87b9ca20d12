#!/usr/bin/env python3
"""python/bench/overhead.py — what a call of the Python module costs over the same work in C++.

Usage: PYTHONPATH=build/python python3 python/bench/overhead.py BUILD_DIR   (builds posenc_python_overhead first:
       cmake --build BUILD_DIR --target posenc_python_overhead)

For a small table (sinusoidal vaswani, dim 64, 16 positions) and a small check (rope hf-llama, head_dim 64, hf form,
16 positions, regime hf, one thread), medians over repeats of:
  library   the C++ library / checker call alone                     (posenc_python_overhead)
  driver    the command line's driver in process, in C++             (posenc_python_overhead: cli::run_command)
  module    posenc._posenc.run: the module's entry, flags prepared   (this script)
  python    posenc.table / posenc.check with keyword arguments       (this script)
  program   the posenc program as a subprocess writing a file        (this script; what Python users did before)
Prints a Markdown table and, with --json FILE, the numbers with the machine (CPU, SIMD target, BLAS core).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import posenc
from posenc import _posenc


def median_us(calls, f, repeats=15):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(times)


def main():
    build = sys.argv[1]
    cpp = json.loads(subprocess.run([os.path.join(build, "python", "posenc_python_overhead")], check=True,
                                    capture_output=True, text=True).stdout)
    program = os.path.join(build, "cli", "posenc")
    tmp = tempfile.mkdtemp(prefix="posenc-overhead.")
    table_kw = dict(preset="vaswani", dim=64, positions="0:16")
    table_args = ["table", "sinusoidal", "--preset", "vaswani", "--dim", "64", "--positions", "0:16"]
    rope = dict(preset="hf-llama", head_dim=64, form="hf", regime="hf", positions="0:16", threads=1)
    cache = posenc.table("rope", **{k: v for k, v in rope.items() if k != "threads"})
    np.save(os.path.join(tmp, "c.npy"), cache)
    check_args = ["check", "rope", "--preset", "hf-llama", "--head-dim", "64", "--form", "hf", "--regime", "hf",
                  "--positions", "0:16", "--threads", "1"]
    rows = {
        "table": {
            **cpp["table"],
            "module_us": median_us(200, lambda: _posenc.run(table_args + ["--format", "npy", "--out", "<out>"], {}, {})),
            "python_us": median_us(200, lambda: posenc.table("sinusoidal", **table_kw)),
            "program_us": median_us(5, lambda: subprocess.run([program] + table_args + ["--out", "t.npy"], cwd=tmp,
                                                               check=True), repeats=5),
        },
        "check": {
            **cpp["check"],
            "module_us": median_us(10, lambda: _posenc.run(check_args + ["--in", "<array>", "--format", "json",
                                                                        "--out", "<out>"], {"<array>": cache}, {})),
            "python_us": median_us(10, lambda: posenc.check("rope", cache, **rope)),
            "program_us": median_us(3, lambda: subprocess.run([program] + check_args + ["--in", "c.npy", "--format",
                                                               "json", "--out", "r.json"], cwd=tmp, check=True),
                                    repeats=5),
        },
    }
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    info = posenc.info()
    machine = {"cpu": cpu, "cores": os.cpu_count(), "simd": info["simd"].get("target"), "blas": info["blas"].get("core")}
    print(f"machine: {machine}\n")
    print("| call | library (C++) | driver (C++) | module entry | Python API | program (subprocess) | Python API - C++ driver |")
    print("|---|---|---|---|---|---|---|")
    for name, r in rows.items():
        print(f"| small {name} | {r['library_us']:.1f} us | {r['driver_us']:.1f} us | {r['module_us']:.1f} us | "
              f"{r['python_us']:.1f} us | {r['program_us']:.0f} us | {r['python_us'] - r['driver_us']:.1f} us |")
    if "--json" in sys.argv:
        with open(sys.argv[sys.argv.index("--json") + 1], "w") as f:
            json.dump({"machine": machine, "calls": rows}, f, indent=1)


if __name__ == "__main__":
    main()
