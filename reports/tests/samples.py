"""Fabricated result files in the documented schemas, for testing the generator (written to a temporary
directory by the tests; never committed as data). Run `python3 reports/tests/samples.py DIR` to write a
full set for a manual look."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

RUN_ID = "0123456789ab@2025-01-01T11:55:00Z"
META = {"commit": "0123456789abcdef0123456789abcdef01234567", "run_id": RUN_ID, "compiler": "GNU 12.2.0",
        "flags": "-O3 -march=native -fopenmp", "build_type": "Release", "blas_library": "OpenBLAS 0.3.21",
        "blas_core": "Prescott", "blas_core_best": "SkylakeX", "blas_fallback": True, "blas_threads": 1,
        "omp_threads": 2, "rc_params": "max_success=10000 seed=42", "date": "2025-01-01T12:00:00Z"}


def claim(cid, test, statement, oracle, status, cases, row=None, metric=None, bound=None, err=None,
          worst=None, regions=None, scheme="sinusoidal", source="seed 000"):
    return {"id": cid, "scheme": scheme, "test": test, "statement": statement, "source": source, "oracle": oracle,
            "status": status, "cases": cases, "budget_row": row, "metric": metric, "bound": bound,
            "max_error": err, "worst_input": worst, "regions": regions or {}}


def proofs_sinusoidal():
    return {"meta": {**META, "program": "properties_sinusoidal"}, "claims": [
        claim("SIN-ROT-1", "Sinusoidal.ShiftByKIsAFixedRotation", "PE(p+k) = T(k) PE(p), T(k) independent of p",
              "identity", "passed", 1000, "sinusoidal.shift.f32", "err_S", 0.5, 0.31, "p=48039 k=-17 d=64",
              {"p>=2^24": 120, "p near 2^k": 300, "d odd": 0}),
        claim("SIN-NORM-1", "Sinusoidal.NormIsHalfDim", "|PE(p)|^2 = d/2", "identity", "passed", 1000,
              "sinusoidal.norm.f64", "err_S", 1.0, 0.25, "p=131071 d=512", {"p>=2^24": 99}),
        claim("SIN-DOT-1", "Sinusoidal.DotDependsOnlyOnOffset", "PE(p)·PE(p+k) = Σ cos(k w_i), symmetric in k",
              "identity", "passed", 800, "sinusoidal.dot.f64", "err_S", 2.0, 0.75, "p=2^20 k=3", source="seed 003"),
        claim("SIN-TAB-1", "Sinusoidal.TableMatchesOracle", "|PE_f32(p,i) - PE(p,i)| <= bound ulp(max(|r|,1))",
              "reference", "passed", 5000, "sinusoidal.table.f32", "err_S", 0.5, 0.49, "p=2^40-1 i=0"),
        claim("SIN-DIST-1", "Sinusoidal.DistinctPositionsHaveDistinctEncodings", "p != q  =>  PE(p) != PE(q)",
              "identity", "failed", 37, None, None, None, None, "p=0 q=2^40 d=2 (halves | interleaved)",
              {"d=2": 37}, source="seed 001"),
        claim("SIN-EXT-1", "Sinusoidal.ExtendsToUnseenPositions", "PE defined for every p < 2^40", "identity",
              "not run", 0, source="seed 002"),
        claim("SIN-BLAS-1", "Sinusoidal.BlasRotationAgreesWithDirectShift", "rot(T(k), PE) = PE(p+k) directly",
              "differential", "passed", 300, "sinusoidal.shift.f32", "err_S", 0.5, 0.7, "p=7 k=2^30"),
        claim("SIN-CHECK-1", "SinusoidalCheck.ReportsEveryPreset", "posenc check passes every preset's table",
              "reference", "passed", 40, "sinusoidal.table.f32", "err_S", 0.5, 0.25, LONG_WORST),
    ]}


# A worst input as long as the real `posenc check` reports (a JSON dump), to be shortened in tables.
LONG_WORST = "vaswani f16 report: " + json.dumps(
    {"reference": "exact", "budget_row": "sinusoidal.check.exact.f16", "verdict": "pass", "entries": 1752,
     "bands": [{"entries": 1680 + i, "over_bound": 0, "max_metric": 0.24986735678347508 - i * 1e-9}
               for i in range(6)], "END_OF_WORST_INPUT": True})


def proofs_zeta():
    return {"meta": {**META, "program": "properties_zeta", "rc_params": "max_success=2000 seed=7"}, "claims": [
        claim("ZETA-BUCKET-1", "ZetaBias.BucketIsMonotoneInDistance", "bucket(|j-i|) nondecreasing", "identity",
              "passed", 2000, scheme="zeta", source="Raffel et al. 2020", regions={"|j-i|>=128": 500}),
    ]}


def accuracy():
    def pts(f):
        return [{"position": p, "max_error": f(p), "mean_error": f(p) / 3}
                for p in [0, 1, 2, 1000, 48039, 131071, 2**20, 2**24, 2**32, 2**40]]
    return {"meta": {**META, "program": "accuracy_harness"},
            "budget": [
                {"id": "sinusoidal.table.f32", "scheme": "sinusoidal", "quantity": "table entry", "dtype": "f32",
                 "regime": "exact", "domain": "0 <= p <= 2^40", "metric": "err_S (S=1)", "bound": 0.5,
                 "why": "computed in double then rounded: |δ| <= 2^-40 relative, far below 1/2 ulp_f32(1)",
                 "measured_max": 0.4999, "worst_input": "p=2^40-1 i=0", "samples": 100000},
                {"id": "sinusoidal.table.f64", "scheme": "sinusoidal", "quantity": "table entry", "dtype": "f64",
                 "regime": "exact", "domain": "0 <= p <= 2^40", "metric": "err_S (S=1)", "bound": 1.0,
                 "why": "double-double angle reduction: |δθ| <= 2^-100 |θ|", "measured_max": 0.62,
                 "worst_input": "p=48039 i=2", "samples": 100000},
                {"id": "sinusoidal.shift.f32", "scheme": "sinusoidal", "quantity": "rotated pair", "dtype": "f32",
                 "regime": "exact", "domain": "|k| <= 2^30", "metric": "err_S", "bound": 0.5,
                 "why": "two products and a sum in float32, S = |x0 cos| + |x1 sin|", "measured_max": 0.7,
                 "worst_input": "p=7 k=2^30", "samples": 5000},
                {"id": "sinusoidal.dot.f64", "scheme": "sinusoidal", "quantity": "dot product", "dtype": "f64",
                 "regime": "exact", "domain": "d <= 4096", "metric": "err_S", "bound": 2.0,
                 "why": "pairwise summation", "measured_max": None, "worst_input": None, "samples": 0},
            ],
            "series": [
                {"scheme": "sinusoidal", "preset": "vaswani", "regime": "exact", "dtype": "f32", "dim": 512,
                 "metric": "err_S (S=1)", "budget_row": "sinusoidal.table.f32",
                 "points": pts(lambda p: 0.49 - 0.1 / (1 + math.log2(p + 1)))},
                {"scheme": "sinusoidal", "preset": "fairseq", "regime": "exact", "dtype": "f32", "dim": 512,
                 "metric": "err_S (S=1)", "points": pts(lambda p: 0.45 if p else 0.0)},
                {"scheme": "sinusoidal", "preset": "fairseq", "regime": "emulated", "dtype": "f32", "dim": 512,
                 "metric": "err_S (S=1)", "reference": "emulated", "points": pts(lambda p: 0.3)},
                {"scheme": "sinusoidal", "preset": "fairseq", "regime": "emulated", "dtype": "f32", "dim": 512,
                 "metric": "err_S (S=1)", "reference": "exact", "points": pts(lambda p: p * 2.0**-20)},
                {"scheme": "sinusoidal", "preset": "tensor2tensor", "regime": "emulated", "dtype": "f32",
                 "dim": 512, "metric": "err_S (S=1)", "reference": "exact", "points": pts(lambda p: p * 2.0**-21)},
                {"scheme": "sinusoidal", "preset": "vaswani", "regime": "exact", "dtype": "f64", "dim": 512,
                 "metric": "err_S (S=1)", "budget_row": "sinusoidal.table.f64", "points": pts(lambda p: 0.5)},
            ]}


def _gb_entries(name, seconds, bytes_, items, reps=3, counters=None):
    """Google Benchmark entries for one benchmark with `reps` repetitions and aggregates."""
    out = []
    times = [seconds * f for f in (1.0, 1.3, 0.95, 1.1, 0.9)[:reps]]   # mean != median
    for i, t in enumerate(times):
        out.append({"name": name, "family_index": 0, "per_family_instance_index": 0, "run_name": name,
                    "run_type": "iteration", "repetitions": reps, "repetition_index": i, "threads": 1,
                    "iterations": 100, "real_time": t * 1e9, "cpu_time": t * 1e9, "time_unit": "ns",
                    "bytes_per_second": bytes_ / t, "items_per_second": items / t, **(counters or {})})
    if reps > 1:
        srt = sorted(times)
        med = srt[len(srt) // 2]
        mean = sum(times) / len(times)
        for agg, t in (("mean", mean), ("median", med), ("stddev", 0.01 * seconds)):
            out.append({"name": f"{name}_{agg}", "family_index": 0, "per_family_instance_index": 0,
                        "run_name": name, "run_type": "aggregate", "repetitions": reps, "threads": 1,
                        "aggregate_name": agg, "aggregate_unit": "time", "iterations": reps,
                        "real_time": t * 1e9, "cpu_time": t * 1e9, "time_unit": "ns",
                        "bytes_per_second": bytes_ / t if agg != "stddev" else 0.0,
                        "items_per_second": items / t if agg != "stddev" else 0.0, **(counters or {})})
    return out


def bench_sinusoidal():
    entries = []
    speed = {"exact_f32": 8e9, "exact_f64": 9e9, "emulated_f32": 6e9, "plainloop_f32": 0.4e9,
             "plainloop_f64": 0.5e9, "stream_store": 20e9}       # bytes/s
    for threads in (1, 2):
        for L in (256, 4096, 262144):
            d = 512
            for variant, bps in speed.items():
                size = 8 if variant.endswith("f64") else 4
                bytes_ = L * d * size
                bps = bps * (1.8 if threads == 2 else 1) * (0.8 if L == 262144 else 1)
                entries += _gb_entries(f"sinusoidal/table/{variant}/L:{L}/d:{d}/threads:{threads}/real_time",
                                       bytes_ / bps, bytes_, L * d,
                                       counters={"ratio_to_plainloop": 20.0} if variant == "exact_f32" else None)
    for L in (1024, 65536):
        for variant, t in (("blas_rot", 2e-4), ("blas_gemm", 5e-4), ("regenerate", 1e-4)):
            entries += _gb_entries(f"sinusoidal/shift/{variant}/L:{L}/d:128/threads:1", t * L / 1024, L * 128 * 4, L * 128)
        entries += _gb_entries(f"sinusoidal/sgemm/plain/L:{L}/d:128/threads:1", 4e-4 * L / 1024, L * 128 * 4, L * 128)
    context = {"date": "2025-01-01T12:05:00+00:00", "host_name": "bench-host", "executable": "./bench_sinusoidal",
               "num_cpus": 2, "mhz_per_cpu": 2800, "cpu_scaling_enabled": False, "library_build_type": "release",
               "load_avg": [0.5, 0.4, 0.3], "posenc_commit": META["commit"], "compiler": "GNU 12.2.0",
               "blas_core": "Prescott", "blas_core_best": "SkylakeX", "blas_fallback": "true", "blas_threads": "1",
               "omp_threads": "2", "posenc_run_id": RUN_ID, "blas_forced": "false",
               "simd_target": "avx512", "simd_targets": "avx512,avx2,scalar", "store_isa": "AVX3"}
    return {"context": context, "benchmarks": entries}


def bench_zeta():
    """A scheme without a report module: a kernel and its streaming-store baseline at two sizes."""
    entries = []
    for L in (512, 8192):
        for variant, bps in (("bias_f32", 5e9), ("stream_store", 20e9)):
            bytes_ = L * L * 4
            entries += _gb_entries(f"zeta/bias/{variant}/L:{L}/threads:1", bytes_ / bps, bytes_, L * L)
    return {"context": {**bench_sinusoidal()["context"], "executable": "./bench_zeta"}, "benchmarks": entries}


def schemes_json():
    """`posenc list --format json`, cut down."""
    def preset(name, summary):
        return {"name": name, "summary": summary, "implementation": f"{name} reference code",
                "commit": f"example/{name}@0000000000000000000000000000000000000000", "spec": {}}
    return {"schemes": [
        {"name": "sinusoidal", "summary": "sinusoidal absolute encoding", "verbs": ["table"],
         "presets": [preset(n, f"{n} convention") for n in ("vaswani", "marian", "tensor2tensor", "fairseq")]},
        {"name": "zeta", "summary": "a fictional scheme (relative buckets)", "verbs": ["table"],
         "presets": [preset("zeta-small", "32 buckets, max distance 128"), preset("mzeta", "as zeta")]},
    ]}


def run_json(run_id=RUN_ID, failed=()):
    """run.json as scripts/main.sh writes it."""
    return {"run_id": run_id, "commit": run_id.split("@")[0], "started": "2025-01-01T11:55:00Z", "seconds": 741,
            "mode": "default", "property_cases": 15000, "bench_repetitions": 5, "bench_min_time_s": 0.3,
            "machine": {"cpu": "Example CPU 9000 @ 2.10GHz", "logical_cpus": 2, "memory": "24604244 kB",
                        "kernel": "6.1.0-test", "os": "Debian GNU/Linux 12 (bookworm)",
                        "openblas_package": "0.3.21+ds-4", "inherited_OPENBLAS_CORETYPE": "Haswell"},
            "stages": [{"name": "3/6 proofs", "seconds": 400}, {"name": "5/6 benchmarks", "seconds": 300}],
            "failed": list(failed)}


def figures_sinusoidal():
    """figures-sinusoidal.json as posenc_figures writes it (schemes/sinusoidal/figures.cpp), made small: d = 4, three
    positions, offsets k = -2 .. 2 (the values are the formulas' where that is cheap, else made up)."""
    def over_k(f):
        return [[k, f(k)] for k in range(-2, 3)]
    w = [1.0, 0.01]
    closed = over_k(lambda k: sum(math.cos(k * wi) for wi in w))
    return {"scheme": "sinusoidal", "meta": {**META, "program": "posenc_figures"}, "figures": {
        "heatmap": {"dim": 4, "positions": 3, "rows": [[math.sin(p * wi) if i % 2 == 0 else math.cos(p * wi)
                                                        for i, wi in enumerate((1.0, 1.0, 0.01, 0.01))]
                                                       for p in range(3)],
                    "min": -0.416147, "max": 1.0, "norm_error": 2.2e-16},
        "dot_vs_k": {"dim": 4, "half_dim": 2, "closed": closed, "dots": [{"t": 3, "points": closed}],
                     "largest_deviation": 0.0},
        "dot_random_w": {"dim": 4, "t": 3, "dot": closed,
                         "seeds": [{"seed": 1, "points": over_k(lambda k: 0.1 * k)}]},
        "random_w_vs_t": {"seed": 1, "series": [{"t": 3, "points": over_k(lambda k: 0.2 * k)}]},
        "preset_frequencies": {"dim": 4, "pairs": 2, "last_paper": 0.01, "presets": [
            {"preset": p, "points": [[k, wi] for k, wi in enumerate(w)]} for p in ("vaswani", "tensor2tensor")]},
        "frequency_ratio": {"dims": [{"d": 4, "points": [[0.0, 1.0], [1.0, 1.0]], "last": 1.0}]}}}


def write(directory, accuracy_file=True, broken_bench=False, run_file=True, schemes_file=True, figures_file=True):
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    files = {"proofs-sinusoidal.json": proofs_sinusoidal(), "proofs-zeta.json": proofs_zeta(),
             "bench-sinusoidal.json": bench_sinusoidal(), "bench-zeta.json": bench_zeta()}
    if accuracy_file:
        files["accuracy.json"] = accuracy()
    if run_file:
        files["run.json"] = run_json(failed=["proofs:properties"])
    if schemes_file:
        files["schemes.json"] = schemes_json()
    if figures_file:
        files["figures-sinusoidal.json"] = figures_sinusoidal()
    for name, data in files.items():
        (d / name).write_text(json.dumps(data, indent=1), encoding="utf-8")
    if broken_bench:
        (d / "bench-broken.json").write_text('{"context": {}, "benchmarks": [', encoding="utf-8")
    return d


if __name__ == "__main__":
    write(sys.argv[1] if len(sys.argv) > 1 else "/tmp/posenc-samples", broken_bench="--broken" in sys.argv)


# ---- helpers of the scheme-module tests (test_<scheme>_scheme.py) --------------------------------------------


def bench_entry(name, ms, bytes_per_second=None, items_per_second=None):
    """One Google Benchmark iteration record of `name` taking `ms` milliseconds."""
    e = {"name": name, "run_name": name, "run_type": "iteration", "real_time": ms, "time_unit": "ms",
         "iterations": 1}
    if bytes_per_second is not None:
        e["bytes_per_second"] = bytes_per_second
    if items_per_second is not None:
        e["items_per_second"] = items_per_second
    return e
