"""scripts/bench.sh with a stand-in benchmark program (no build): arguments, sets, the run directory and its
run.json, POSENC_RUN_ID passed to the program, the import and the comparison with the previous run."""
import json
import os
import stat
import subprocess
import time

from helpers import ROOT, TempDir

BENCH_SH = str(ROOT / "scripts" / "bench.sh")

# Writes Google Benchmark JSON for two benchmarks; FAKE_SLOW=1 makes the kernel 1.5x slower.
FAKE = r'''#!/usr/bin/python3
import json, os, random, sys
args = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
reps = int(args["--benchmark_repetitions"])
slow = 1.5 if os.environ.get("FAKE_SLOW") == "1" else 1.0
rng = random.Random()
out = []
for name, us in (("sinusoidal/table/exact_f32/L:512/d:64/threads:1", 50.0 * slow),
                 ("sinusoidal/table/stream_store/L:512/d:64/threads:1", 10.0)):
    for i in range(reps):
        t = us * (1 + rng.uniform(-0.01, 0.01))
        out.append({"name": name, "run_name": name, "run_type": "iteration", "repetitions": reps,
                    "repetition_index": i, "threads": 1, "iterations": 100, "real_time": t, "cpu_time": t,
                    "time_unit": "us", "bytes_per_second": 131072 / (t * 1e-6)})
ctx = {"posenc_run_id": os.environ.get("POSENC_RUN_ID", ""), "posenc_commit": os.environ.get("POSENC_COMMIT", ""),
       "blas_core": "SkylakeX", "blas_threads": "1", "omp_threads": "2", "num_cpus": 2,
       "argv": sys.argv[1:], "coretype": os.environ.get("OPENBLAS_CORETYPE")}
json.dump({"context": ctx, "benchmarks": out}, open(args["--benchmark_out"], "w"))
print("fake posenc_bench ran")
'''


class BenchScript(TempDir):
    def setUp(self):
        super().setUp()
        exe = self.tmp / "build" / "benchmarks" / "posenc_bench"
        exe.parent.mkdir(parents=True)
        exe.write_text(FAKE)
        exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
        self.env = {**os.environ, "POSENC_BUILD_DIR": str(self.tmp / "build"),
                    "POSENC_BENCH_OUT": str(self.tmp / "bench"), "OPENBLAS_CORETYPE": "Haswell"}

    def run_sh(self, *args, **env):
        return subprocess.run(["bash", BENCH_SH, "--no-build", "--db", str(self.db), *args], capture_output=True,
                              text=True, env={**self.env, **env}, cwd=str(self.tmp))

    def test_two_runs_then_a_regression(self):
        first = self.run_sh("--filter", "^sinusoidal/table/", "--reps", "5", "--min-time", "0.01")
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertIn("nothing to compare", first.stdout)
        (run_dir,) = list((self.tmp / "bench").iterdir())
        run = json.loads((run_dir / "run.json").read_text())
        self.assertEqual((run["mode"], run["filter"], run["set"], run["bench_repetitions"]),
                         ("bench", "^sinusoidal/table/", None, 5))
        self.assertEqual(run["machine"]["inherited_OPENBLAS_CORETYPE"], "Haswell")
        ctx = json.loads((run_dir / "bench-auto.json").read_text())["context"]
        self.assertEqual(ctx["posenc_run_id"], run["run_id"])
        self.assertIsNone(ctx["coretype"])                     # dropped, as main.sh does
        self.assertIn("--benchmark_enable_random_interleaving=true", ctx["argv"])
        self.assertIn("--benchmark_filter=^sinusoidal/table/", ctx["argv"])
        time.sleep(1.1)                                       # run ids have a resolution of one second
        second = self.run_sh("--filter", "^sinusoidal/table/", "--reps", "5", "--min-time", "0.01")
        self.assertEqual(second.returncode, 0, second.stdout + second.stderr)
        self.assertIn("✅ no regression", second.stdout)
        time.sleep(1.1)
        third = self.run_sh("--filter", "^sinusoidal/table/", "--reps", "5", "--min-time", "0.01", FAKE_SLOW="1")
        self.assertEqual(third.returncode, 1, third.stdout + third.stderr)
        self.assertIn("❌ **REGRESSION**", third.stdout)
        self.assertIn("sinusoidal/table/exact_f32/L:512/d:64/threads:1", third.stdout)

    def test_quick_uses_the_set_file(self):
        proc = self.run_sh("--quick", "--reps", "2")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        (run_dir,) = list((self.tmp / "bench").iterdir())
        run = json.loads((run_dir / "run.json").read_text())
        wanted = [line for line in (ROOT / "benchmarks" / "sets" / "quick.txt").read_text().splitlines()
                  if line.strip() and not line.lstrip().startswith("#")][0].strip()
        self.assertEqual((run["set"], run["filter"]), ("quick", wanted))

    def test_usage_errors(self):
        for args in (("--bogus",), ("--reps", "0"), ("--reps",), ("--min-time", "-1"), ("--set", "no-such-set"),
                     ("--quick", "--filter", "x")):
            proc = self.run_sh(*args)
            self.assertEqual(proc.returncode, 2, args)
            self.assertTrue(proc.stderr.startswith("bench.sh: error: "), proc.stderr)
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
        self.assertFalse((self.tmp / "bench").exists())

    def test_missing_program(self):
        proc = self.run_sh("--filter", "x", POSENC_BUILD_DIR=str(self.tmp / "nowhere"))
        self.assertEqual(proc.returncode, 2)
        self.assertIn("no benchmark program", proc.stderr)
