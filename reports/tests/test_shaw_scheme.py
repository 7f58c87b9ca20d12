"""Tests of the Shaw / BERT relative_key report module (reports/posenc_report/schemes/shaw.py): its helpers against
hand-computed index matrices (t2t's sign and BERT's) and score terms (the synthetic table, the fixed query, the
relative term and its checks, the .npy it writes), its speed headline on fabricated benchmark names of
benchmarks/shaw_bench.cpp (the attend kernel paired with the scores family's sgemm), and its figures without a CLI,
from a fake CLI (a Python script that writes what `posenc index shaw` and `posenc scores shaw --format json` write,
computed from the definition), from CLIs that get the sign or the scale wrong or print the wrong shape and, where
build/cli/posenc is built with shaw, from the real CLI (python3 -m unittest discover -s reports/tests)."""
from __future__ import annotations

import ast
import math
import os
import struct
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from posenc_report import bench, schemes, summary  # noqa: E402
from posenc_report.schemes import shaw  # noqa: E402
from samples import FakeCliTest, bench_entry, cli_has_scheme, write_fake  # noqa: E402

REPO = HERE.parent.parent
CLI = REPO / "build" / "cli" / "posenc"

# The fake CLI: `index shaw` and `scores shaw` of the three presets (schemes/shaw/spec.cpp) with
# --max-relative-position, --sign and --clip overrides, JSON as cli/schemes/shaw.cpp writes it; a geometry an
# unclipped table cannot index is refused; scores read float64 .npy inputs (--mask none only, one head) and need
# --value-table when the spec has values.
FAKE = r'''
import ast, json, struct, sys

PRESETS = {
    "t2t": {"sign": "key_minus_query", "max_relative_position": 20, "clip": True, "key_query": False,
            "values": True, "head_dim": 64},
    "bert-relative-key": {"sign": "query_minus_key", "max_relative_position": 511, "clip": False,
                          "key_query": False, "values": False, "head_dim": 64},
    "bert-relative-key-query": {"sign": "query_minus_key", "max_relative_position": 511, "clip": False,
                                "key_query": True, "values": False, "head_dim": 64},
}

def read_npy(path):
    data = open(path, "rb").read()
    n = struct.unpack("<H", data[8:10])[0]
    head = ast.literal_eval(data[10:10 + n].decode("latin1"))
    assert head["descr"] == "<f8" and not head["fortran_order"], head
    rows, cols = head["shape"]
    vals = struct.unpack("<%dd" % (rows * cols), data[10 + n:])
    return [list(vals[r * cols:(r + 1) * cols]) for r in range(rows)]

args = sys.argv[1:]
verb, scheme, rest = args[0], args[1], args[2:]
assert verb in ("index", "scores") and scheme == "shaw", args
opt, i = {}, 0
while i < len(rest):
    if "=" in rest[i]:
        k, v = rest[i].split("=", 1)
        i += 1
    else:
        k, v = rest[i], rest[i + 1]
        i += 2
    opt[k] = v
assert opt.pop("--format") == "json"
spec = dict(PRESETS[opt.pop("--preset", "t2t")])
if "--max-relative-position" in opt:
    spec["max_relative_position"] = int(opt.pop("--max-relative-position"))
if "--sign" in opt:
    spec["sign"] = opt.pop("--sign")
if "--clip" in opt:
    spec["clip"] = opt.pop("--clip") == "true"
k = spec["max_relative_position"]
if verb == "scores":
    table = read_npy(opt.pop("--key-table"))
    values = opt.pop("--value-table", None)
    if spec["values"] and values is None:
        sys.stderr.write("posenc: error: --value-table: required: the spec has values = true\n")
        sys.exit(2)
    q, kk = read_npy(opt.pop("--q")), read_npy(opt.pop("--k"))
    assert opt.pop("--mask") == "none"
    lq, lk = len(q), len(kk)
    assert len(table) == 2 * k + 1 and len(table[0]) == len(q[0]) == len(kk[0]) == spec["head_dim"]
else:
    lq, lk = int(opt.pop("--query-length")), int(opt.pop("--key-length"))
assert not opt, opt
if not spec["clip"] and lk > k + 1:
    sys.stderr.write("posenc: shaw: key_length = %d is out of range; accepted: <= max_relative_position + 1\n" % lk)
    sys.exit(2)
def idx(i, j):
    d = j - (lk - lq + i)
    d = d if spec["sign"] == "key_minus_query" else -d
    return max(-k, min(k, d)) + k
head = {"scheme": "shaw", "spec": spec, "query_length": lq, "key_length": lk}
if verb == "index":
    head.update({"note": "table row clip(d, -k, k) + k of query row i (at lk - lq + i) and key j",
                 "max_relative_position": k, "table_rows": 2 * k + 1,
                 "indices": [[idx(i, j) for j in range(lk)] for i in range(lq)]})
else:
    scale = 1.0 / spec["head_dim"] ** 0.5
    # each product once per distinct pair of rows (the report repeats one query and one key over every row)
    ids = {}
    qi, kj = [ids.setdefault(tuple(r), len(ids)) for r in q], [ids.setdefault(tuple(r), len(ids)) for r in kk]
    rows, memo = {v: list(r) for r, v in ids.items()}, {}
    def dot(a, b, table_row=False):
        key = (a, b, table_row)
        if key not in memo:
            memo[key] = sum(x * y for x, y in zip(rows[a], table[b] if table_row else rows[b]))
        return memo[key]
    scores = [[scale * (dot(qi[i], kj[j]) + dot(qi[i], idx(i, j), True)
                        + (dot(kj[j], idx(i, j), True) if spec["key_query"] else 0.0))
               for j in range(lk)] for i in range(lq)]
    head = {"scheme": "shaw", "spec": spec, "shape": [1, lq, lk], "scale": scale, "mask": "none",
            "note": "scores[h][i][j] = scale * <q[h][i], k[h][j]> + bias[h][i][j] (-inf where masked)",
            "scores": scores}
print(json.dumps(head))
'''

# t2t's sign with k = 2, 5 x 5: clip(j - i, -2, 2) + 2, worked by hand.
T2T_K2 = [[2, 3, 4, 4, 4],
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



class ShawModuleTest(FakeCliTest):
    FAKE = FAKE

    def test_registered(self):
        self.assertIn("shaw", schemes.registered())
        self.assertEqual(shaw.SCHEME, "shaw")
        self.assertEqual(schemes.discover()[1], [])
        self.assertEqual(shaw.CLAIMS_LINK, "[claims](claims.md#scheme-shaw)")
        self.assertTrue(callable(shaw.figures))

    def test_headline_kernels(self):
        self.assertEqual([(h["family"], h["variant"], h["baseline"]) for h in shaw.HEADLINE_KERNELS],
                         [("index", "t2t_i32", "bandwidth"), ("scores", "fused_t2t_causal_f32", "sgemm"),
                          ("attend", "t2t_causal_f32", "sgemm")])
        self.assertTrue(all(h["baseline"] in schemes.BASELINES and h["what"] for h in shaw.HEADLINE_KERNELS))

    def test_index_by_offset_t2t(self):
        d = {"indices": T2T_K2}
        self.assertEqual(shaw.index_by_offset(d, 5),
                         [(-4, 0), (-3, 0), (-2, 0), (-1, 1), (0, 2), (1, 3), (2, 4), (3, 4), (4, 4)])
        self.assertEqual(shaw.flat_ends(shaw.index_by_offset(d, 5)), (-2, 2))
        spec = {"sign": "key_minus_query", "max_relative_position": 2, "clip": True}
        self.assertEqual(shaw.mismatches({"spec": spec, "indices": T2T_K2}), [])
        self.assertEqual([shaw.definition_index(spec, u) for u in range(-4, 5)], [0, 0, 0, 1, 2, 3, 4, 4, 4])

    def test_index_by_offset_bert_sign(self):
        bert = shaw.transpose(T2T_K2)
        self.assertEqual(bert[0], [2, 1, 0, 0, 0])
        self.assertEqual(bert, [[4 - v for v in r] for r in T2T_K2])   # 2k minus t2t's: SHAW-SIGN-1
        self.assertEqual(shaw.index_by_offset({"indices": bert}, 5),
                         [(-4, 4), (-3, 4), (-2, 4), (-1, 3), (0, 2), (1, 1), (2, 0), (3, 0), (4, 0)])
        spec = {"sign": "query_minus_key", "max_relative_position": 2, "clip": True}
        self.assertEqual(shaw.mismatches({"spec": spec, "indices": bert}), [])
        self.assertEqual(shaw.mismatches({"spec": spec, "indices": T2T_K2})[0], (0, 1, 3, 1))
        # BERT itself: no clamp, d = q_i - j + 511; beyond k there is no row
        unclipped = {"sign": "query_minus_key", "max_relative_position": 511, "clip": False}
        self.assertEqual([shaw.definition_index(unclipped, u) for u in (-511, -1, 0, 1, 511)], [1022, 512, 511, 510, 0])
        self.assertIsNone(shaw.definition_index(unclipped, 512))
        self.assertEqual(shaw.flat_ends([(u, 511 - u) for u in range(-511, 512)]), (-511, 511))

    def test_synthetic_table_and_fixed_query(self):
        q = shaw.fixed_query(64)
        self.assertEqual(q, shaw.fixed_query(64))                                # seeded: the same on every run
        self.assertTrue(all(shaw.struct.unpack("<f", shaw.struct.pack("<f", v))[0] == v for v in q))   # float32
        self.assertLess(abs(math.fsum(v * v for v in q) - 1), 0.5)              # norm about 1
        t2t, bert = shaw.synthetic_table(20, 64), shaw.synthetic_table(511, 64)
        self.assertEqual((len(t2t), len(bert), len(t2t[0])), (41, 1023, 64))
        self.assertEqual(t2t, bert[511 - 20:511 + 21])                          # a(d) does not depend on k
        self.assertEqual(shaw.synthetic_table(3, 4), shaw.synthetic_table(3, 4))
        self.assertNotEqual(shaw.synthetic_table(3, 4, seed=1), shaw.synthetic_table(3, 4))
        small = shaw.synthetic_table(2, 2)
        self.assertEqual(len({tuple(r) for r in small}), 5)                      # every row its own

    def test_relative_term(self):
        table = [[1.0, 0.0], [0.0, 2.0], [3.0, -1.0]]                 # k = 1: rows for d = -1, 0, 1
        q = [2.0, 1.0]
        t2t = {"sign": "key_minus_query", "max_relative_position": 1, "clip": True}
        bert = {"sign": "query_minus_key", "max_relative_position": 1, "clip": True}
        self.assertEqual([shaw.relative_term(table, q, t2t, u, 0.5) for u in (-3, -1, 0, 1, 3)],
                         [(1.0, 1.0), (1.0, 1.0), (1.0, 1.0), (2.5, 3.5), (2.5, 3.5)])
        self.assertEqual([shaw.relative_term(table, q, bert, u, 0.5)[0] for u in (-3, -1, 0, 1, 3)],
                         [2.5, 2.5, 1.0, 1.0, 1.0])                       # the mirror image: row idx(-u)
        unclipped = dict(bert, clip=False)
        self.assertIsNone(shaw.relative_term(table, q, unclipped, 2, 0.5))
        # a 3 x 3 matrix of the t2t scores (every query q, keys zero): u = j - i
        rows = [[shaw.relative_term(table, q, t2t, j - i, 0.5)[0] for j in range(3)] for i in range(3)]
        self.assertEqual(rows, [[1.0, 2.5, 2.5], [1.0, 1.0, 2.5], [1.0, 1.0, 1.0]])
        self.assertEqual(shaw.score_errors(rows, table, q, t2t, 0.5), (0.0, 0, 0))
        rows[1][2] += 3.5e-6                                                     # 1e-6 of the magnitude 3.5
        err, i, j = shaw.score_errors(rows, table, q, t2t, 0.5)
        self.assertEqual((i, j), (1, 2))
        self.assertAlmostEqual(err, 1e-6, delta=1e-12)
        self.assertGreater(shaw.score_errors(rows, table, q, bert, 0.5)[0], 0.1)   # the other sign is caught
        self.assertEqual(shaw.score_errors([[1.0, 2.0, 3.0]], table, q, unclipped, 0.5)[0], math.inf)

    def test_curve_checks(self):
        curve = {u: float(max(-2, min(2, u))) for u in range(-5, 6)}
        self.assertTrue(shaw.flat_beyond(curve, 2))
        self.assertFalse(shaw.flat_beyond(curve, 1))
        self.assertFalse(shaw.flat_beyond(curve, 6))                             # no such offset
        curve[4] = 2.0 + 1e-15
        self.assertFalse(shaw.flat_beyond(curve, 2))                             # equal numbers, not nearly
        self.assertEqual(shaw.mirror_difference({u: curve[-u] for u in curve}, curve, 5), 0.0)
        self.assertEqual(shaw.mirror_difference(curve, curve, 1), 2.0)          # |c(1) - c(-1)| = |1 - (-1)|
        self.assertEqual(shaw.mirror_difference(curve, curve, 6), math.inf)

    def test_write_npy(self):
        path = os.path.join(self.tmp.name, "t.npy")
        shaw.write_npy(path, [[1.0, -2.5, 3], [0.0, 1e-300, 7.0]])
        with open(path, "rb") as f:
            data = f.read()
        n = struct.unpack("<H", data[8:10])[0]
        self.assertEqual(data[:8], b"\x93NUMPY\x01\x00")
        self.assertEqual((10 + n) % 64, 0)                                       # NumPy aligns the data to 64
        self.assertEqual(ast.literal_eval(data[10:10 + n].decode()),
                         {"descr": "<f8", "fortran_order": False, "shape": (2, 3)})
        self.assertEqual(struct.unpack("<6d", data[10 + n:]), (1.0, -2.5, 3.0, 0.0, 1e-300, 7.0))

    def test_offset_queries_are_the_last_keys(self):
        self.assertEqual(shaw.offset(0, 0, 1, 8), -7)          # the cached single query sits at Lk - 1
        self.assertEqual(shaw.offset(0, 5, 3, 8), 0)           # Lq = 3 of Lk = 8: q_0 = 5
        self.assertEqual(shaw.offset(2, 0, 3, 8), -7)

    def test_headline_pairs_kernels_with_their_baselines(self):
        args = "heads:1/L:4096/head_dim:64/threads:1"
        data = {"benchmarks": [
            bench_entry("shaw/index/t2t_i32/heads:1/L:512/threads:1", 0.1, 9e9),
            bench_entry("shaw/index/bert_i32/heads:1/L:512/threads:1", 0.1, 9e9),
            bench_entry("shaw/index/stream_store_i32/heads:1/L:512/threads:1", 0.1, 10e9),
            bench_entry("shaw/index/t2t_i32/heads:1/L:16384/threads:1", 100, 8e9),
            bench_entry("shaw/index/stream_store_i32/heads:1/L:16384/threads:1", 90, 10e9),
            bench_entry("shaw/index/store_i32/heads:1/L:16384/threads:1", 50, 20e9),
            bench_entry(f"shaw/scores/fused_t2t_causal_f32/{args}", 12),
            bench_entry(f"shaw/scores/sgemm_f32/{args}", 10),
            bench_entry(f"shaw/attend/t2t_causal_f32/{args}", 40),
            bench_entry("shaw/attend/t2t_causal_f32/heads:1/L:4096/head_dim:64/threads:2", 25),   # no sgemm at 2
        ]}
        head = summary.speed(bench.records("bench-shaw", data), shaw.HEADLINE_KERNELS)
        self.assertEqual([h["record"].name for h in head],
                         ["shaw/index/t2t_i32/heads:1/L:16384/threads:1",
                          f"shaw/scores/fused_t2t_causal_f32/{args}", f"shaw/attend/t2t_causal_f32/{args}"])
        self.assertAlmostEqual(head[0]["value"], 0.8)          # vs stream_store_i32, not store_i32
        self.assertEqual(head[0]["how"], "bytes/s")
        self.assertAlmostEqual(head[1]["value"], 10 / 12)      # sgemm time / fused time
        self.assertAlmostEqual(head[2]["value"], 10 / 40)      # the scores family's sgemm / attend time
        self.assertEqual(head[2]["how"], "time")

    def test_figures_without_a_cli(self):
        ctx = Ctx(None)
        out = shaw.figures(ctx)
        self.assertEqual(len(out), 4)
        for img, cap in out:
            self.assertIn("not drawn: no --cli given", img)
            self.assertEqual(cap, "")
        self.assertEqual([img.split("`")[1] for img, _ in out], ["fig-shaw-index", "fig-shaw-score-offset",
                                                                  "table-shaw-sign", "table-shaw-presets"])
        self.assertIn("not drawn", ctx.figure_notes[0][1])
        failing = Ctx(str(REPO / "no" / "such" / "posenc"))
        for img, _ in shaw.figures(failing):
            self.assertIn("could not run", img)

    def test_figures_from_a_cli_of_the_wrong_shape(self):
        bad = os.path.join(self.tmp.name, "posenc-bad")
        with open(bad, "w") as f:
            f.write(f"#!{sys.executable}\nimport json\nprint(json.dumps({{'scheme': 'shaw', 'indices': [[0]]}}))\n")
        os.chmod(bad, 0o755)
        ctx = Ctx(bad)
        for img, cap in shaw.figures(ctx):
            self.assertIn("unexpected output of `posenc index shaw --preset t2t", img)
            self.assertIn("61 rows of 61 integers", img)
            self.assertEqual(cap, "")

    def test_a_cli_that_ignores_the_sign_is_caught(self):
        wrong = os.path.join(self.tmp.name, "posenc-one-sign")
        line = 'd = d if spec["sign"] == "key_minus_query" else -d'
        self.assertIn(line, FAKE)
        with open(wrong, "w") as f:
            f.write(f"#!{sys.executable}\n" + FAKE.replace(line, "d = d"))
        os.chmod(wrong, 0o755)
        (img, cap), (_, vcap), (_, scap), _ = shaw.figures(Ctx(wrong))
        self.assertIn("bert-relative-key (d = q_i − j, k = 511, clip false, 512 × 512): non-decreasing in u", cap)
        self.assertIn("computed here: **no** (first difference at (0, 1): 512 vs 510)", cap)
        # the scores of BERT read row idx(u), not idx(-u): no mirror image, and the definition catches it
        self.assertIn("BERT(u) = t2t(−u) for |u| ≤ 20 (largest difference", vcap)
        self.assertIn("of the terms' magnitude: **no**", vcap)
        self.assertIn("scale Σ_c |q_c a^K[idx][c]|: **no** (largest", vcap)
        self.assertIn("t2t is flat beyond ±20", vcap)
        self.assertIn("the same number at every u ≥ 20 and at every u ≤ −20): yes", vcap)
        self.assertIn("transpose of the first: **no**", scap)
        self.assertIn("equals 2k − the first: **no**", scap)
        self.assertIn("last 3 rows of the square matrix: yes", scap)

    def test_a_cli_of_the_wrong_scale_is_caught(self):
        line = "scale = 1.0 / spec[\"head_dim\"] ** 0.5"
        self.assertIn(line, FAKE)
        wrong = write_fake(self.tmp.name, "posenc-scale", FAKE.replace(line, "scale = 1.0 / spec[\"head_dim\"]"))
        _, (img, vcap), _, _ = shaw.figures(Ctx(wrong))
        self.assertEqual(img, "IMG fig-shaw-score-offset 4")
        self.assertIn("scale Σ_c |q_c a^K[idx][c]|: **no** (largest 0.", vcap)
        self.assertIn("the CLI's scale is 1/√head_dim: **no**", vcap)
        self.assertIn("flat beyond ±20 (one table row each side: clipping; the same number at every u ≥ 20 and at "
                      "every u ≤ −20): yes", vcap)

    def test_a_cli_that_refuses_the_scores_is_reported(self):
        line = "    assert opt.pop(\"--mask\") == \"none\""
        self.assertIn(line, FAKE)
        wrong = write_fake(self.tmp.name, "posenc-refuse", FAKE.replace(
            line, line + "\n    sys.stderr.write('posenc: error: --q: bad\\n'); sys.exit(2)"))
        ctx = Ctx(wrong)
        (img, _), (simg, scap), (small, _), _ = shaw.figures(ctx)
        self.assertEqual(img, "IMG fig-shaw-index 2")
        self.assertIn("*(plot `fig-shaw-score-offset` not drawn: `posenc scores shaw --preset t2t --key-table ", simg)
        self.assertIn("exited 2: posenc: error: --q: bad", simg)
        self.assertEqual(scap, "")
        self.assertIn("not drawn", small)                                       # CliData: one failure stops all
        self.assertIn("not drawn: `posenc scores shaw", ctx.figure_notes[0][1])

    def _check_figures(self, cli: str) -> list:
        ctx = Ctx(cli)
        out = shaw.figures(ctx)
        (img, cap), (simg, vcap), (small, scap), (presets, pcap) = out
        self.assertEqual((img, simg), ("IMG fig-shaw-index 2", "IMG fig-shaw-score-offset 4"))
        # (b): scale <q, a^K[idx(u)]> of the fixed query, t2t flat beyond +-20, BERT the mirror image within +-20
        t2t_s, bert_s, *marks = ctx.renderer.plots[1].series
        ts, bs = dict(t2t_s.rows), dict(bert_s.rows)
        self.assertEqual(sorted(ts), list(range(-60, 61)))
        self.assertEqual(sorted(bs), list(range(-60, 61)))
        self.assertEqual([[x for x, _ in m.rows] for m in marks], [[-20, -20], [20, 20]])
        q, a = shaw.fixed_query(64), shaw.synthetic_table(511, 64)            # a[d + 511] = a(d)
        for u in (-60, -21, -20, -7, 0, 1, 19, 20, 60):
            self.assertAlmostEqual(ts[u], sum(x * y for x, y in zip(q, a[max(-20, min(20, u)) + 511])) / 8,
                                   places=13)
            self.assertAlmostEqual(bs[u], sum(x * y for x, y in zip(q, a[-u + 511])) / 8, places=13)
        self.assertTrue(all(ts[u] == ts[20] for u in range(20, 61)))
        self.assertTrue(all(ts[u] == ts[-20] for u in range(-60, -19)))
        self.assertNotEqual(ts[19], ts[20])
        self.assertEqual(len(set(bs.values())), 121)
        for u in range(-20, 21):
            self.assertAlmostEqual(bs[u], ts[-u], places=13)
        for phrase in ("**synthetic**", f"seed {shaw.SEED}", "121 × 121", "drawn is the row of the query at "
                       "position 60", "every u ≤ −20): yes", "(121 different numbers over the 121 offsets: yes)",
                       "within 1.00e-12 of the terms' magnitude: yes", "scale Σ_c |q_c a^K[idx][c]|: yes (largest",
                       "the CLI's scale is 1/√head_dim: yes", "(SHAW-SCORES-1, SHAW-SIGN-1)"):
            self.assertIn(phrase, vcap)
        self.assertIn("(d) t2t and BERT side by side", pcap)
        self.assertIn("(c) The two signs, small", scap)
        t2t, bert = ctx.renderer.plots[0].series
        t2t_pts, bert_pts = dict(t2t.rows), dict(bert.rows)
        self.assertEqual(sorted(t2t_pts), list(range(-60, 61)))
        self.assertEqual(sorted(bert_pts), list(range(-60, 61)))
        # idx - k: t2t = clip(u, -20, 20) rising, flat beyond +-20; BERT = -u, falling, no clip
        self.assertEqual([t2t_pts[u] for u in (-60, -21, -20, -1, 0, 1, 20, 21, 60)],
                         [-20, -20, -20, -1, 0, 1, 20, 20, 20])
        self.assertTrue(all(bert_pts[u] == -u for u in bert_pts))
        self.assertIn("t2t (d = j − q_i, k = 20, clip true, 61 × 61): non-decreasing in u, constant for u ≤ -20 "
                      "(index 0) and for u ≥ 20 (index 40); rows used 41 (0–40) of 41", cap)
        self.assertIn("bert-relative-key (d = q_i − j, k = 511, clip false, 512 × 512): non-increasing in u, no flat "
                      "end (every offset its own row); rows used 1,023 (0–1,022) of 1,023", cap)
        self.assertIn("same index matrix as bert-relative-key (its k·E term reads the same rows): yes", cap)
        self.assertIn("(SHAW-INDEX-2/3, SHAW-SIGN-1)", cap)
        # (b): the transposition, the last rows, the cached query
        rows = table_rows(small)
        self.assertEqual(len(rows), 8 + 8 + 3)
        self.assertEqual(rows[0], ["0 (0)", "3", "4", "5", "6", "6", "6", "6", "6"])
        self.assertEqual(rows[7], ["7 (7)", "0", "0", "0", "0", "0", "1", "2", "3"])
        self.assertEqual(rows[8], ["0 (0)", "3", "2", "1", "0", "0", "0", "0", "0"])
        self.assertEqual(rows[16], ["0 (5)", "0", "0", "0", "1", "2", "3", "4", "5"])
        self.assertEqual(rows[16:], [[f"{i} ({5 + i})", *r[1:]] for i, r in enumerate(rows[5:8])])
        for phrase in ("transpose of the first: yes", "equals 2k − the first: yes", "last 3 rows of the square "
                       "matrix: yes", "is its last row: yes", "computed here: yes"):
            self.assertIn(phrase, scap)
        # (c): the presets from the CLI's own specs
        prow = {r[0]: r for r in table_rows(presets)}
        self.assertEqual(prow["`t2t`"], ["`t2t`", "d = j − q_i", "20", "clamp to [−k, k]", "41", "yes", "no", "64",
                                         "1/√64"])
        self.assertEqual(prow["`bert-relative-key`"][1:7], ["d = q_i − j", "511", "none (key_length ≤ 512)", "1,023",
                                                            "no", "no"])
        self.assertEqual(prow["`bert-relative-key-query`"][6], "yes")
        self.assertIn("Table rows equal 2k + 1 for every preset: yes", pcap)
        self.assertIn("not this geometry", pcap)
        self.assertIn(shaw.CLAIMS_LINK, pcap)
        self.assertNotIn("**no**", cap + vcap + scap + pcap)
        return ctx.figure_notes

    def test_figures_from_a_fake_cli(self):
        notes = self._check_figures(self.fake)
        self.assertEqual(notes, [("figure data", "the posenc CLI (`posenc index shaw` and `posenc scores shaw`, "
                                  "`--format json`; 9 invocations)")])

    @unittest.skipUnless(cli_has_scheme(CLI, "shaw"), "posenc CLI not built with shaw")
    def test_figures_from_the_cli(self):
        notes = self._check_figures(str(CLI))
        self.assertIn("9 invocations", notes[0][1])


if __name__ == "__main__":
    unittest.main()
