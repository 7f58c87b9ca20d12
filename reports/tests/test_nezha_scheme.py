"""Tests of the NEZHA report module (reports/posenc_report/schemes/nezha.py): its helpers against hand-computed
tables and index matrices (the sinusoid of the shifted index r, HF's float32 steps, r = clip(j − q_i, −K, K) + K),
its speed headline on fabricated benchmark names of benchmarks/nezha_bench.cpp (the table against its plain loop,
the attend kernel paired with the scores family's sgemm), and its figures without a CLI, from a fake CLI (a Python
script that writes what `posenc table nezha` / `posenc index nezha --format json` write, computed from the
definition), from CLIs that get the definition wrong or print the wrong shape and, where build/cli/posenc is built
with nezha, from the real CLI (python3 -m unittest discover -s reports/tests)."""
from __future__ import annotations

import math
import os
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from posenc_report import bench, schemes, summary  # noqa: E402
from posenc_report.schemes import nezha  # noqa: E402
from samples import FakeCliTest, bench_entry, cli_has_scheme, write_fake  # noqa: E402

REPO = HERE.parent.parent
CLI = REPO / "build" / "cli" / "posenc"

# The fake CLI: `table nezha` and `index nezha` of the preset (schemes/nezha/spec.cpp) with --max-relative-position,
# --depth, --regime and --dtype overrides, JSON as cli/schemes/nezha.cpp writes it (f32 entries in 9 significant
# digits: they read back to the float32 number, not to it exactly).
FAKE = r'''
import json, math, struct, sys

def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]

args = sys.argv[1:]
verb, scheme, rest = args[0], args[1], args[2:]
assert scheme == "nezha" and verb in ("table", "index"), args
opt, i = {}, 0
while i < len(rest):
    k, v = rest[i], rest[i + 1]
    i += 2
    opt[k] = v
assert opt.pop("--format") == "json"
assert opt.pop("--preset", "nezha-cn-base") == "nezha-cn-base"
spec = {"max_relative_position": int(opt.pop("--max-relative-position", 64)), "depth": int(opt.pop("--depth", 64)),
        "regime": opt.pop("--regime", "hf")}
K, d = spec["max_relative_position"], spec["depth"]
if verb == "table":
    dtype = opt.pop("--dtype", "f32")
    assert not opt, opt
    def entry(r, c):
        t = c // 2
        if spec["regime"] == "exact":
            a = r * 10000.0 ** (-2.0 * t / d)
            return math.sin(a) if c % 2 == 0 else math.cos(a)
        w = f32(math.exp(f32(f32(2 * t) * f32(-math.log(10000.0) / d))))
        a = f32(f32(r) * w)
        return f32(math.sin(a) if c % 2 == 0 else math.cos(a))
    table = [[entry(r, c) for c in range(d)] for r in range(2 * K + 1)]
    if dtype == "f32":
        table = [[float("%.9g" % f32(v)) for v in row] for row in table]
    print(json.dumps({"scheme": "nezha", "spec": spec, "dtype": dtype, "note": "row r = the sinusoid of r",
                      "table": table}))
else:
    lq, lk = int(opt.pop("--query-length")), int(opt.pop("--key-length"))
    assert not opt, opt
    def idx(i, j):
        u = j - (lk - lq + i)
        return max(-K, min(K, u)) + K
    print(json.dumps({"scheme": "nezha", "spec": spec, "note": "r = clip(j - q_i, -K, K) + K", "table_rows": 2 * K + 1,
                      "query_length": lq, "key_length": lk,
                      "indices": [[idx(i, j) for j in range(lk)] for i in range(lq)]}))
'''

# K = 2, 5 x 5: clip(j - i, -2, 2) + 2, worked by hand (row i: query i; the diagonal reads row K = 2).
K2 = [[2, 3, 4, 4, 4],
      [1, 2, 3, 4, 4],
      [0, 1, 2, 3, 4],
      [0, 0, 1, 2, 3],
      [0, 0, 0, 1, 2]]


class Renderer:
    def __init__(self):
        self.plots = []

    def image(self, plot, alt):
        self.plots.append(plot)
        return f"IMG {plot.name} {len(plot.series)}"


class Ctx:
    def __init__(self, cli):
        self.cli, self.figure_notes, self.renderer = cli, [], Renderer()


def table_rows(markdown: str) -> list:
    """The body rows of every Markdown table in `markdown`, as lists of stripped cells."""
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in markdown.splitlines()
            if line.startswith("| ") and not line.startswith("| i (q_i)") and not line.startswith("| ---")
            and not line.startswith("| preset")]



class NezhaModuleTest(FakeCliTest):
    FAKE = FAKE

    def test_registered(self):
        self.assertIn("nezha", schemes.registered())
        self.assertEqual(nezha.SCHEME, "nezha")
        self.assertEqual(schemes.discover()[1], [])
        self.assertEqual(nezha.CLAIMS_LINK, "[claims](claims.md#scheme-nezha)")
        self.assertTrue(callable(nezha.figures))

    def test_headline_kernels(self):
        self.assertEqual([(h["family"], h["variant"], h["baseline"]) for h in nezha.HEADLINE_KERNELS],
                         [("table", "exact_f32", "plainloop"), ("table", "hf_f32", "plainloop"),
                          ("scores", "fused_hf_causal_f32", "sgemm"), ("attend", "hf_causal_f32", "sgemm")])
        self.assertTrue(all(h["baseline"] in schemes.BASELINES and h["what"] for h in nezha.HEADLINE_KERNELS))

    def test_headline_pairs_kernels_with_their_baselines(self):
        args = "heads:1/L:4096/head_dim:64/threads:1"
        data = {"benchmarks": [
            bench_entry("nezha/table/exact_f32/K:64/depth:64/threads:1", 0.01, 3e9, 8e8),
            bench_entry("nezha/table/plainloop_f32/K:64/depth:64/threads:1", 0.01, 3e9, 4e8),
            bench_entry("nezha/table/exact_f32/K:16384/depth:64/threads:1", 2, 2e9, 6e8),
            bench_entry("nezha/table/hf_f32/K:16384/depth:64/threads:1", 1, 4e9, 9e8),
            bench_entry("nezha/table/plainloop_f32/K:16384/depth:64/threads:1", 3, 1e9, 3e8),
            bench_entry("nezha/table/hf_f32/K:16384/depth:64/threads:2", 0.5, 8e9, 1.8e9),   # no plain loop at 2
            bench_entry(f"nezha/scores/fused_hf_causal_f32/{args}", 12),
            bench_entry(f"nezha/scores/sgemm_f32/{args}", 10),
            bench_entry(f"nezha/attend/hf_causal_f32/{args}", 40),
            bench_entry("nezha/attend/hf_causal_f32/heads:1/L:4096/head_dim:64/threads:2", 25),   # no sgemm at 2
        ]}
        head = summary.speed(bench.records("bench-nezha", data), nezha.HEADLINE_KERNELS)
        self.assertEqual([h["record"].name for h in head],
                         ["nezha/table/exact_f32/K:16384/depth:64/threads:1",
                          "nezha/table/hf_f32/K:16384/depth:64/threads:1",
                          f"nezha/scores/fused_hf_causal_f32/{args}", f"nezha/attend/hf_causal_f32/{args}"])
        self.assertAlmostEqual(head[0]["value"], 2.0)          # items/s ÷ the plain loop's items/s
        self.assertEqual(head[0]["how"], "items/s")
        self.assertAlmostEqual(head[1]["value"], 3.0)
        self.assertAlmostEqual(head[2]["value"], 10 / 12)      # sgemm time / fused time
        self.assertAlmostEqual(head[3]["value"], 10 / 40)      # the scores family's sgemm / attend time
        self.assertEqual(head[3]["how"], "time")

    def test_float32_helpers(self):
        self.assertEqual(nezha.f32(0.1), 0.100000001490116119384765625)
        self.assertEqual(nezha.f32(1.0), 1.0)
        self.assertEqual(nezha.ulp32(1.0), 2.0 ** -23)
        self.assertEqual(nezha.ulp32(0.75), 2.0 ** -24)
        self.assertEqual(nezha.ulp32(-3.0), 2.0 ** -22)
        self.assertEqual(nezha.ulp32(0.0), 2.0 ** -149)

    def test_table_entries(self):
        # depth 2: one frequency, w_0 = 1: row r = (sin r, cos r) — row 0 is (0, 1), row K is (sin K, cos K)
        self.assertEqual([nezha.exact_entry(r, c, 2) for r in (0, 3) for c in (0, 1)],
                         [0.0, 1.0, math.sin(3), math.cos(3)])
        self.assertAlmostEqual(nezha.frequency(2, 8), 0.01, places=17)     # 10000^(-4/8)
        self.assertAlmostEqual(nezha.exact_entry(5, 5, 8), math.cos(5 * 0.01), places=15)
        # HF: w_0 = exp(0) = 1 exactly, so column 0 is sin(r) rounded to float32
        self.assertEqual(nezha.hf_frequency(0, 64), 1.0)
        self.assertEqual(nezha.hf_entry(64, 0, 64), nezha.f32(math.sin(64)))
        w32 = nezha.hf_frequency(8, 64)
        self.assertEqual(w32, nezha.f32(w32))
        self.assertLess(abs(w32 - 0.1), 0.1 * 2.0 ** -22)
        self.assertNotEqual(nezha.hf_entry(128, 16, 64), nezha.f32(nezha.exact_entry(128, 16, 64)))
        # the envelope holds the two apart, and is at least half an ulp of the entry
        for r in (0, 1, 64, 128):
            for c in (0, 1, 16, 17, 62, 63):
                h, e = nezha.hf_entry(r, c, 64), nezha.exact_entry(r, c, 64)
                self.assertLessEqual(abs(h - e), nezha.hf_envelope(r, c, 64, h))
                self.assertGreaterEqual(nezha.hf_envelope(r, c, 64, h), nezha.ulp32(h) / 2)
        table = [[nezha.exact_entry(r, c, 4) for c in range(4)] for r in range(5)]
        self.assertEqual(nezha.table_deviation(table, nezha.exact_entry), (0.0, 0, 0))
        table[3][2] += 1e-9
        dev, r, c = nezha.table_deviation(table, nezha.exact_entry)
        self.assertEqual((r, c), (3, 2))
        self.assertAlmostEqual(dev, 1e-9, delta=1e-15)
        self.assertEqual(nezha.row_differences([[0, 1], [0.5, 0.25]], [[0, 1], [0.25, 0.5]]), [0, 0.25])

    def test_index_definition(self):
        self.assertEqual([nezha.definition_index(2, u) for u in range(-4, 5)], [0, 0, 0, 1, 2, 3, 4, 4, 4])
        spec = {"max_relative_position": 2}
        self.assertEqual(nezha.index_mismatches({"spec": spec, "indices": K2}), [])
        self.assertEqual(nezha.index_mismatches({"spec": spec, "indices": K2[2:]}), [])     # the last 3 queries
        transposed = [list(c) for c in zip(*K2)]                                            # query minus key
        self.assertEqual(nezha.index_mismatches({"spec": spec, "indices": transposed})[0], (0, 1, 1, 3))
        self.assertEqual(nezha.offset(0, 0, 1, 8), -7)          # the cached single query sits at Lk - 1
        self.assertEqual(nezha.offset(0, 5, 3, 8), 0)

    def test_score_helpers(self):
        k, depth = 3, 4
        table = [[nezha.exact_entry(r, c, depth) for c in range(depth)] for r in range(2 * k + 1)]
        (_, tk), (_, ones), (_, e0) = nezha.fixed_queries(table, k)
        self.assertEqual(tk, table[k])
        self.assertEqual(ones, [0.5] * 4)
        self.assertEqual(e0, [1.0, 0.0, 0.0, 0.0])
        # q = T[K]: sum_t cos(clip(u) w_t) / sqrt(depth), the K cancels; |T[K]|^2 / sqrt(d) = (d / 2) / sqrt(d) at 0
        for u in range(-6, 7):
            self.assertAlmostEqual(nezha.relative_term(table, tk, k, u), nezha.cosine_sum(u, k, depth), places=14)
        self.assertAlmostEqual(nezha.relative_term(table, tk, k, 0), 1.0, places=14)
        self.assertAlmostEqual(nezha.relative_term(table, e0, k, 0), math.sin(3) / 2, places=15)
        curve = {u: nezha.relative_term(table, ones, k, u) for u in range(-6, 7)}
        self.assertTrue(nezha.flat_beyond(curve, k))
        self.assertNotAlmostEqual(curve[1], curve[-1])
        curve[5] += 1
        self.assertFalse(nezha.flat_beyond(curve, k))
        self.assertEqual((nezha.low_pair(64), nezha.low_pair(4), nezha.low_pair(2)), (8, 1, 0))

    def test_figures_without_a_cli(self):
        ctx = Ctx(None)
        out = nezha.figures(ctx)
        self.assertEqual(len(out), 5)
        for img, cap in out:
            self.assertIn("not drawn: no --cli given", img)
            self.assertEqual(cap, "")
        self.assertEqual([img.split("`")[1] for img, _ in out],
                         ["fig-nezha-table", "fig-nezha-score-offset", "fig-nezha-hf-vs-exact", "table-nezha-index",
                          "table-nezha-presets"])
        self.assertIn("not drawn", ctx.figure_notes[0][1])
        for img, _ in nezha.figures(Ctx(str(REPO / "no" / "such" / "posenc"))):
            self.assertIn("could not run", img)

    def test_figures_from_a_cli_of_the_wrong_shape(self):
        bad = write_fake(self.tmp.name, "posenc-bad", "import json\nprint(json.dumps({'scheme': 'nezha', 'spec': "
                         "{'max_relative_position': 64, 'depth': 64, 'regime': 'exact'}, 'dtype': 'f64', "
                         "'table': [[0]]}))\n")
        for img, cap in nezha.figures(Ctx(bad)):
            self.assertIn("unexpected output of `posenc table nezha --preset nezha-cn-base --regime exact", img)
            self.assertIn("129 rows of 64 numbers", img)
            self.assertEqual(cap, "")

    def test_a_cli_of_the_signed_distance_is_caught(self):
        # the sinusoid of r - K (the signed distance) instead of the shifted index r: NEZHA-CHECK-1's wrong table
        line = 'a = r * 10000.0 ** (-2.0 * t / d)'
        self.assertIn(line, FAKE)
        signed = FAKE.replace(line, 'a = (r - K) * 10000.0 ** (-2.0 * t / d)')
        (img, cap), _, (_, hcap), _, _ = nezha.figures(Ctx(write_fake(self.tmp.name, "posenc-signed", signed)))
        self.assertEqual(img, "IMG fig-nezha-table 5")
        self.assertIn("Row 0 (distance −K, and every distance below it) is (0, 1, 0, 1, …): **no**", cap)
        self.assertIn("not (0, 1, …): **no**", cap)
        self.assertIn("not antisymmetric across the table: **no**", cap)
        self.assertIn("computed here: **no** (largest difference", cap)
        self.assertIn("Every entry is within its envelope: **no**", hcap)

    def test_a_cli_of_the_wrong_sign_is_caught(self):
        line = "u = j - (lk - lq + i)"
        self.assertIn(line, FAKE)
        wrong = write_fake(self.tmp.name, "posenc-sign", FAKE.replace(line, "u = (lk - lq + i) - j"))
        _, _, _, (small, scap), _ = nezha.figures(Ctx(wrong))
        self.assertEqual(table_rows(small)[0], ["0 (0)", "3", "2", "1", "0", "0", "0", "0", "0"])
        self.assertIn("computed here: **no** (first difference at (0, 1): 2 vs 4)", scap)

    def _check_figures(self, cli: str) -> list:
        ctx = Ctx(cli)
        (img, cap), (simg, scap), (himg, hcap), (small, icap), (presets, pcap) = nezha.figures(ctx)
        self.assertEqual((img, simg, himg), ("IMG fig-nezha-table 5", "IMG fig-nezha-score-offset 5",
                                             "IMG fig-nezha-hf-vs-exact 2"))
        table_plot, score_plot, hf_plot = ctx.renderer.plots
        # (a): columns 0, 1, 16, 17 against r = 0..128, and the marker at r = K
        c0, c1, c16, c17, mark = (dict(s.rows) if i < 4 else s.rows for i, s in enumerate(table_plot.series))
        self.assertEqual(sorted(c0), list(range(129)))
        self.assertEqual((c0[0], c1[0], c16[0], c17[0]), (0.0, 1.0, 0.0, 1.0))
        self.assertAlmostEqual(c0[64], math.sin(64), places=15)
        self.assertAlmostEqual(c17[128], math.cos(12.8), places=13)
        self.assertEqual([x for x, _ in mark], [64, 64])
        self.assertIn("row K is (sin K, cos K, …) = (0.92, 0.392, …), not (0, 1, …): yes", cap)
        self.assertIn("T[K + 1][0] = sin 65 = 0.827 and T[K − 1][0] = sin 63 = 0.167", cap)
        for phrase in ("(0, 1, 0, 1, …): yes", "not antisymmetric across the table: yes",
                       "computed here: yes", "(NEZHA-TABLE-1)"):
            self.assertIn(phrase, cap)
        # (b): three queries over u in [-128, 128], flat beyond +-64; q = T[K] peaks at 0 with sqrt(64) / 2 = 4
        tk, ones, e0 = (dict(s.rows) for s in score_plot.series[:3])
        self.assertEqual(sorted(tk), list(range(-128, 129)))
        for curve in (tk, ones, e0):
            self.assertTrue(all(curve[u] == curve[64] for u in range(64, 129)))
            self.assertTrue(all(curve[u] == curve[-64] for u in range(-128, -63)))
        self.assertEqual(max(tk, key=tk.get), 0)
        self.assertAlmostEqual(tk[0], 4.0, places=5)
        self.assertAlmostEqual(e0[0], math.sin(64) / 8, places=6)
        self.assertNotAlmostEqual(ones[1], ones[-1], places=3)
        self.assertEqual([x for x, _ in score_plot.series[3].rows], [-64, -64])
        for phrase in ("flat beyond ±K (one table row each side: clipping): yes", "highest at u = 0 (4;",
                       "within 1.00e-04 of it computed here: yes", "(within 1.00e-04: yes)", "sin 64 / √64 = 0.115"):
            self.assertIn(phrase, scap)
        # (c): HF vs exact per row: 0 at row 0 (not drawn on the log axis), largest at the far rows
        diff, env = (dict(s.rows) for s in hf_plot.series)
        self.assertEqual(hf_plot.logy, 10)
        self.assertEqual(sorted(diff), list(range(1, 129)))
        self.assertTrue(all(diff[r] <= env[r] for r in diff))
        self.assertGreater(max(diff.values()), 1e-6)
        self.assertLess(max(diff.values()), 1e-4)
        self.assertGreater(max(diff[r] for r in range(96, 129)), max(diff[r] for r in range(1, 33)))
        for phrase in ("row 0 is identical", "Every entry is within its envelope: yes",
                       "is a float32 number: yes", "emulated here (math.exp, math.sin, math.cos in double, each "
                       "step rounded to float32): yes", "(NEZHA-TABLE-1, NEZHA-TABLE-2)"):
            self.assertIn(phrase, hcap)
        self.assertIn(f"The largest difference is **{nezha.md.num(max(diff.values()))}** at r = ", hcap)
        # (d): the small matrices, checked here
        rows = table_rows(small)
        self.assertEqual(len(rows), 8 + 3)
        self.assertEqual(rows[0], ["0 (0)", "3", "4", "5", "6", "6", "6", "6", "6"])
        self.assertEqual(rows[7], ["7 (7)", "0", "0", "0", "0", "0", "1", "2", "3"])
        self.assertEqual(rows[8], ["0 (5)", "0", "0", "0", "1", "2", "3", "4", "5"])
        self.assertEqual(rows[8:], [[f"{i} ({5 + i})", *r[1:]] for i, r in enumerate(rows[5:8])])
        for phrase in ("last 3 rows of the square matrix: yes", "computed here: yes",
                       "reads 129 rows (0–128) of its 129", "\"table_rows\" is 2K + 1: yes", "(NEZHA-INDEX-1)"):
            self.assertIn(phrase, icap)
        # (e): the preset and its exact form
        prow = {r[0]: r for r in table_rows(presets)}
        self.assertEqual(prow["`nezha-cn-base`"][:5], ["`nezha-cn-base`", "64", "64", "hf", "129"])
        self.assertEqual(prow["`nezha-cn-base --regime exact`"][:6],
                         ["`nezha-cn-base --regime exact`", "64", "64", "exact", "129", "0.92, 0.392"])
        self.assertIn("holds the f64 one's numbers (HF's entries are float32 numbers): yes", pcap)
        # the exact table against Python's double sin/cos of a double angle: within their own roundings (~1e-14)
        self.assertLessEqual(float(prow["`nezha-cn-base --regime exact`"][6]), 1e-12)
        self.assertNotEqual(prow["`nezha-cn-base`"][6], "0")
        self.assertIn(nezha.CLAIMS_LINK, pcap)
        self.assertNotIn("**no**", cap + scap + hcap + icap + pcap)
        return ctx.figure_notes

    def test_figures_from_a_fake_cli(self):
        notes = self._check_figures(self.fake)
        self.assertEqual(notes, [("figure data", "the posenc CLI (`posenc table nezha` and `posenc index nezha`, "
                                  "`--format json`; 7 invocations)")])

    @unittest.skipUnless(cli_has_scheme(CLI, "nezha"), "posenc CLI not built with nezha")
    def test_figures_from_the_cli(self):
        notes = self._check_figures(str(CLI))
        self.assertIn("7 invocations", notes[0][1])


if __name__ == "__main__":
    unittest.main()
