#!/usr/bin/env python3
"""scripts/run_json.py — run.json, a run's record of itself (reports/README.md: the methods block; the history).

Reads the run from the environment scripts/main.sh and scripts/bench.sh set (POSENC_RUN_ID, POSENC_COMMIT,
RUN_STARTED, RUN_MODE, RUN_PARTS, RUN_CASES, RUN_SET, RUN_FILTER, RUN_BENCH_REPS, RUN_BENCH_MIN_TIME, RUN_STAGE_NAMES
and RUN_STAGE_STARTS (else one stage "benchmarks"), RUN_FAILED, RUN_CORETYPE) and the machine from /proc and dpkg.
Usage: run_json.py OUT.json        Python 3 standard library only.
"""
import json
import os
import platform
import subprocess
import sys
import time


def first(path, key):
    try:
        for line in open(path, encoding="utf-8", errors="replace"):
            if line.startswith(key):
                return line.split(":", 1)[1].strip() if ":" in line else line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return None


def pkg(name):
    """The installed version of package `name` for the machine's own architecture (with arm64 added for the
    cross build, a bare name matches both and dpkg-query printed the two versions run together)."""
    try:
        arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True).stdout.strip()
        for query in ([f"{name}:{arch}"] if arch else []) + [name]:
            out = subprocess.run(["dpkg-query", "-W", "-f=${Version}\\n", query], capture_output=True, text=True).stdout
            if out.strip():
                return out.splitlines()[0]
        return None
    except OSError:
        return None


def stages(env, now):
    names = [n for n in env.get("RUN_STAGE_NAMES", "").split("\n") if n]
    starts = [int(s) for s in env.get("RUN_STAGE_STARTS", "").split("\n") if s]
    if not names:
        return [{"name": "benchmarks", "seconds": now - int(env["RUN_STARTED"])}]
    return [{"name": n, "seconds": (starts[i + 1] if i + 1 < len(starts) else now) - starts[i]}
            for i, n in enumerate(names)]


def machine(env):
    flags = (first("/proc/cpuinfo", "flags") or "").split()
    return {"cpu": first("/proc/cpuinfo", "model name"), "logical_cpus": os.cpu_count(),
            "memory": first("/proc/meminfo", "MemTotal"), "kernel": platform.release(),
            "os": first("/etc/os-release", "PRETTY_NAME"), "openblas_package": pkg("libopenblas0-pthread"),
            "cpu_flags": sorted(f for f in flags if f.startswith(("avx", "fma", "sse4", "f16c", "amx"))),
            "inherited_OPENBLAS_CORETYPE": env.get("RUN_CORETYPE") or None}


# Settings a user changes to see their effect (recorded, so that a comparison can name them).
ENVIRONMENT = ("POSENC_SIMD", "POSENC_DISABLE_AVX512", "POSENC_BLAS_AUTO", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def main(out):
    env, now = os.environ, int(time.time())
    run = {
        "run_id": env["POSENC_RUN_ID"], "commit": env["POSENC_COMMIT"],
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(env["RUN_STARTED"]))),
        "seconds": now - int(env["RUN_STARTED"]),
        "mode": env["RUN_MODE"], "parts": env.get("RUN_PARTS", "benchmarks").split(),
        "property_cases": int(env["RUN_CASES"]) if env.get("RUN_CASES") else None,
        # the benchmark set (its name) and the filter that ran (the set's regex, or the user's; neither: all)
        "set": env.get("RUN_SET") if env.get("RUN_SET", "all") not in ("all", "") else None,
        "filter": env.get("RUN_FILTER") or None,
        "bench_repetitions": int(env["RUN_BENCH_REPS"]), "bench_min_time_s": float(env["RUN_BENCH_MIN_TIME"]),
        "machine": machine(env), "environment": {k: env[k] for k in ENVIRONMENT if k in env},
        "stages": stages(env, now), "failed": env.get("RUN_FAILED", "").split(),
    }
    with open(out, "w", encoding="utf-8") as f:
        json.dump(run, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
