"""Tests of the DeBERTa report module (reports/posenc_report/schemes/deberta.py): its helpers against hand-computed
buckets, gather indices and score terms (HF's float32 steps and the exact regime, the synthetic tables, the .npy it
writes and reads), and its figures without a CLI, from a fake CLI (a Python script that writes what `posenc index
deberta --format json` and `posenc scores deberta --format npy` write, computed from the definition), from CLIs that
get the sign or p2c's index wrong or print the wrong shape and, where build/cli/posenc is built with DeBERTa, from
the real CLI: the bucket curves' shape (identity to 128, 255 at 511, HF growing past it, the 2023 original clamped),
the c2p / p2c terms against rel, the exact-vs-float32 table and the small index matrices
(python3 -m unittest discover -s reports/tests)."""
from __future__ import annotations

import math
import os
import struct
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from posenc_report import schemes  # noqa: E402
from posenc_report.schemes import deberta  # noqa: E402
from samples import FakeCliTest, cli_has_scheme, write_fake  # noqa: E402

REPO = HERE.parent.parent
CLI = REPO / "build" / "cli" / "posenc"

# The fake CLI: `index deberta` (--what relative|c2p) and `scores deberta` (float64 .npy in, --out .npy, one head) of
# the deberta-v3-base preset (schemes/deberta/spec.cpp) with --position-buckets, --max-relative-positions, --clamp,
# --regime, --heads and --head-dim overrides, as cli/schemes/deberta.cpp writes them: queries at 0..Lq-1, rel = i - j.
# Its exact bucket is ceil(v) in double, or near an integer the least t with (M / mid)^t >= (a / mid)^N in integers;
# its hf bucket HF's float32 steps.
FAKE = r'''
import ast, json, math, struct, sys

def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]

def read_npy(path):
    data = open(path, "rb").read()
    n = struct.unpack("<H", data[8:10])[0]
    head = ast.literal_eval(data[10:10 + n].decode("latin1"))
    assert head["descr"] == "<f8" and not head["fortran_order"], head
    rows, cols = head["shape"]
    vals = struct.unpack("<%dd" % (rows * cols), data[10 + n:])
    return [list(vals[r * cols:(r + 1) * cols]) for r in range(rows)]

def write_npy(path, shape, vals):
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }" % ", ".join(map(str, shape))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%dd" % len(vals), *vals))

args = sys.argv[1:]
verb, scheme, rest = args[0], args[1], args[2:]
assert verb in ("index", "scores") and scheme == "deberta", args
opt, i = {}, 0
while i < len(rest):
    if "=" in rest[i]:
        k, v = rest[i].split("=", 1)
        i += 1
    else:
        k, v = rest[i], rest[i + 1]
        i += 2
    opt[k] = v
assert opt.pop("--preset", "deberta-v3-base") == "deberta-v3-base"
spec = {"position_buckets": 256, "max_relative_positions": 512, "clamp": False, "regime": "hf", "c2p": True,
        "p2c": True, "heads": 12, "head_dim": 64}
for flag, key, conv in (("--position-buckets", "position_buckets", lambda v: None if v == "none" else int(v)),
                        ("--max-relative-positions", "max_relative_positions", int),
                        ("--clamp", "clamp", lambda v: v == "true"), ("--regime", "regime", str),
                        ("--heads", "heads", int), ("--head-dim", "head_dim", int)):
    if flag in opt:
        spec[key] = conv(opt.pop(flag))
span = spec["position_buckets"] or spec["max_relative_positions"]
memo = {}

def rel_of(i, j):
    return i - j

def bucket(rel):
    if rel in memo:
        return memo[rel]
    bs = spec["position_buckets"]
    if bs is None:
        return rel
    mid, M = bs // 2, spec["max_relative_positions"] - 1
    N = mid - 1
    r = max(-M, min(M, rel)) if spec["clamp"] else rel
    a = abs(r)
    if a <= mid:
        b = r
    else:
        if spec["regime"] == "exact":
            v = math.log(a / mid) / math.log(M / mid) * N
            t = math.ceil(v)
            if abs(v - round(v)) < 1e-9:            # near an integer: the least t with M^t mid^N >= a^N mid^t
                t = max(0, round(v) - 1)
                while M ** t * mid ** N < a ** N * mid ** t:
                    t += 1
        else:
            x = f32(f32(a) / f32(mid))
            y = f32(f32(math.log(x)) / f32(math.log(f32(M / mid))))
            t = math.ceil(f32(y * f32(N)))
        b = (mid + t) if r > 0 else -(mid + t)
    memo[rel] = b
    return b

def c_of(i, j):
    return max(0, min(2 * span - 1, bucket(rel_of(i, j)) + span))

if verb == "index":
    fmt = opt.pop("--format")
    assert fmt == "json"
    what = opt.pop("--what", "relative")
    lq, lk = int(opt.pop("--query-length")), int(opt.pop("--key-length"))
    assert not opt, opt
    key = "indices" if what == "c2p" else "relative_positions"
    f = c_of if what == "c2p" else (lambda i, j: bucket(rel_of(i, j)))
    print(json.dumps({"scheme": "deberta", "spec": spec, "what": what, "span": span, "note": "query i at position i",
                      "query_length": lq, "key_length": lk, key: [[f(i, j) for j in range(lk)] for i in range(lq)]}))
else:
    assert opt.pop("--format") == "npy"
    out = opt.pop("--out")
    pk, pq = read_npy(opt.pop("--pos-key")), read_npy(opt.pop("--pos-query"))
    q, kk = read_npy(opt.pop("--q")), read_npy(opt.pop("--k"))
    assert not opt, opt
    lq, lk, d = len(q), len(kk), spec["head_dim"]
    assert spec["heads"] == 1 and len(pk) == len(pq) == 2 * span and len(q[0]) == len(kk[0]) == len(pk[0]) == d
    if lq > lk:
        sys.stderr.write("posenc: error: --q: %d queries but --k has %d keys (Lq <= Lk)\n" % (lq, lk))
        sys.exit(2)
    scale = 1.0 / math.sqrt(d * (1 + spec["c2p"] + spec["p2c"]))
    ids = {}
    qi, kj = [ids.setdefault(tuple(r), len(ids)) for r in q], [ids.setdefault(tuple(r), len(ids)) for r in kk]
    vec = {v: r for r, v in ids.items()}
    products = {}
    def dot(a, b, table=None):
        key = (a, b, id(table))
        if key not in products:
            products[key] = sum(x * y for x, y in zip(vec[a], vec[b] if table is None else table[b]))
        return products[key]
    def score(i, j):
        return scale * (dot(qi[i], kj[j]) + (dot(qi[i], c_of(i, j), pk) if spec["c2p"] else 0.0)
                        + (dot(kj[j], c_of(i, j), pq) if spec["p2c"] else 0.0))
    seen, vals = {}, []
    for i in range(lq):
        for j in range(lk):
            key = (qi[i], kj[j], i - j)          # a score depends on the two rows and i - j only
            if key not in seen:
                seen[key] = score(i, j)
            vals.append(seen[key])
    write_npy(out, (1, lq, lk), vals)
'''


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
            if line.startswith("| ") and not line.startswith("| i |") and not line.startswith("| ---")]



V3 = {"position_buckets": 256, "max_relative_positions": 512, "clamp": False, "regime": "hf"}
SMALL = {"position_buckets": 4, "max_relative_positions": 4, "clamp": False, "regime": "hf"}


class DebertaModule(FakeCliTest):
    FAKE = FAKE

    def test_registered(self):
        self.assertIn("deberta", schemes.registered())
        self.assertEqual(deberta.SCHEME, "deberta")
        self.assertEqual(deberta.CLAIMS_LINK, "[claims](claims.md#scheme-deberta)")
        self.assertTrue(all(h["baseline"] in schemes.BASELINES and h["what"] for h in deberta.HEADLINE_KERNELS))

    def test_buckets_by_rel(self):
        column = {"relative_positions": [[0], [1], [2]]}
        row = {"relative_positions": [[0, -1, -2]]}
        self.assertEqual(deberta.buckets_by_rel(column, row), [(-2, -2), (-1, -1), (0, 0), (1, 1), (2, 2)])

    def test_bucket_definition(self):
        for regime in ("hf", "exact"):
            spec = dict(V3, regime=regime)
            self.assertEqual([deberta.bucket(r, spec) for r in (0, 1, -128, 128, 129, 511, -511, 512)],
                             [0, 1, -128, 128, 129, 255, -255, 256])
            self.assertEqual(deberta.bucket(3000, spec), 418)            # HF: no clamp (deberta_spec.hpp)
            self.assertEqual(deberta.bucket(-3000, dict(spec, clamp=True)), -255)   # the 2023 original
            # mid = 2, M = 3, N = 1: v(3) = ln 1.5 / ln 1.5 = 1 exactly (ceil 1), v(4) = 1.71, v(5) = 2.26,
            # v(6) = 2.71, v(7) = 3.09
            small = dict(SMALL, regime=regime)
            self.assertEqual([deberta.bucket(r, small) for r in range(8)], [0, 1, 2, 3, 4, 5, 5, 6])
            self.assertEqual([deberta.bucket(-r, small) for r in range(8)], [0, -1, -2, -3, -4, -5, -5, -6])
        self.assertEqual(deberta.bucket(-700, {"position_buckets": None, "max_relative_positions": 512}), -700)
        self.assertEqual(deberta._exact_ceil(511, 128, 511, 127), 127)       # v = N exactly
        self.assertEqual(deberta._exact_ceil(9, 3, 27, 4), 2)                # ln 3 / ln 9 · 4 = 2 exactly
        self.assertEqual(deberta._exact_ceil(10, 3, 27, 4), 3)
        self.assertEqual(deberta.span(V3), 256)
        self.assertEqual(deberta.span({"position_buckets": None, "max_relative_positions": 300}), 300)
        self.assertEqual([deberta.gather_index(b, 4) for b in (-9, -5, -4, 0, 3, 4, 6)], [0, 0, 0, 4, 7, 7, 7])
        self.assertEqual(deberta.f32(0.1), 0.100000001490116119384765625)

    def test_matrix_mismatches(self):
        # position_buckets 4, max 4: query 0 against keys 0..7 (rel = -j), worked by hand from the buckets above
        rel = {"spec": SMALL, "relative_positions": [[0, -1, -2, -3, -4, -5, -5, -6]]}
        c2p = {"spec": SMALL, "span": 4, "indices": [[4, 3, 2, 1, 0, 0, 0, 0]]}
        self.assertEqual(deberta.matrix_mismatches(rel), [])
        self.assertEqual(deberta.matrix_mismatches(c2p), [])
        flipped = {"spec": SMALL, "relative_positions": [[0, 1, 2, 3, 4, 5, 5, 6]]}     # j - i
        self.assertEqual(deberta.matrix_mismatches(flipped)[0], (0, 1, 1, -1))
        unclamped = {"spec": SMALL, "span": 4, "indices": [[4, 3, 2, 1, 0, -1, -1, -2]]}
        self.assertEqual(deberta.matrix_mismatches(unclamped), [(0, 5, -1, 0), (0, 6, -1, 0), (0, 7, -2, 0)])

    def test_npy(self):
        path = os.path.join(self.tmp.name, "t.npy")
        deberta.write_npy(path, [[1.0, -2.5, 3], [0.0, 1e-300, 7.0]])
        with open(path, "rb") as f:
            data = f.read()
        self.assertEqual(data[:8], b"\x93NUMPY\x01\x00")
        self.assertEqual((10 + struct.unpack("<H", data[8:10])[0]) % 64, 0)
        self.assertEqual(deberta.read_npy(data), ((2, 3), (1.0, -2.5, 3.0, 0.0, 1e-300, 7.0)))
        f4 = data.replace(b"'<f8'", b"'<f4'")[:-48] + struct.pack("<6f", 1, 2, 3, 4, 5, 0.5)
        self.assertEqual(deberta.read_npy(f4), ((2, 3), (1.0, 2.0, 3.0, 4.0, 5.0, 0.5)))
        for bad, why in ((b"NUMPY" + data[5:], "not a .npy"), (data[:-8], "40 bytes of data"),
                         (data.replace(b"'<f8'", b"'<i8'"), "expected '<f8' or '<f4'"),
                         (data.replace(b"False", b"True "), "Fortran order")):
            with self.assertRaises(ValueError) as e:
                deberta.read_npy(bad)
            self.assertIn(why, str(e.exception))

    def test_synthetic_inputs(self):
        t = deberta.synthetic_table(256, 64, deberta.SEED)
        self.assertEqual((len(t), len(t[0])), (512, 64))
        self.assertEqual(t, deberta.synthetic_table(256, 64, deberta.SEED))         # seeded
        self.assertEqual(len({tuple(r) for r in t}), 512)                            # every row its own
        small, big = deberta.synthetic_table(4, 2, 1), deberta.synthetic_table(8, 2, 1)
        self.assertEqual((len(small), len(big)), (8, 16))
        self.assertTrue(all(small[4 + b] == big[8 + b] for b in range(-4, 4)))     # t(b) does not depend on span
        q = deberta.fixed_vector(64, deberta.SEED)
        self.assertTrue(all(deberta.f32(v) == v for v in q))
        self.assertLess(abs(math.fsum(v * v for v in q) - 1), 0.5)

    def test_position_term_and_errors(self):
        table = [[float(r), 1.0] for r in range(8)]                   # span 4: row c = (c, 1)
        x = [2.0, -1.0]
        # rel 0 reads row 4: (8 - 1) * 0.5; rel 5 -> b 5 -> c 9 clamped to 7: (14 - 1) * 0.5
        self.assertEqual(deberta.position_term(table, x, SMALL, 0, 0.5), (3.5, 4.5))
        self.assertEqual(deberta.position_term(table, x, SMALL, 5, 0.5), (6.5, 7.5))
        self.assertEqual(deberta.position_term(table, x, SMALL, -6, 0.5), (-0.5, 0.5))   # row 0
        rows = [[deberta.position_term(table, x, SMALL, i - j, 0.5)[0] for j in range(8)] for i in range(8)]
        self.assertEqual(deberta.matrix_errors(rows, table, x, SMALL, 0.5), (0.0, 0, 0))
        rows[6][1] += 7.5e-9                                          # rel 5: magnitude 7.5
        err, i, j = deberta.matrix_errors(rows, table, x, SMALL, 0.5)
        self.assertEqual((i, j), (6, 1))
        self.assertAlmostEqual(err, 1e-9, delta=1e-15)
        transposed = [list(r) for r in zip(*rows)]                     # the other sign
        self.assertGreater(deberta.matrix_errors(transposed, table, x, SMALL, 0.5)[0], 0.1)

    def test_regions_and_flat_ends(self):
        rels = range(-640, 641)
        self.assertEqual(deberta.rows_by_region(V3, rels),
                         {"identity": (257, 257), "log": (766, 254), "beyond": (258, 2)})
        self.assertEqual(deberta.flat_ends(V3, rels), (-512, 506))
        self.assertEqual(deberta.flat_ends(V3, range(-300, 301)), (None, None))
        self.assertEqual(deberta.flat_ends(SMALL, range(-7, 8)), (-4, 3))

    def test_figures_without_a_cli(self):
        ctx = Ctx(None)
        out = deberta.figures(ctx)
        self.assertEqual(len(out), 4)
        for img, cap in out:
            self.assertIn("not drawn: no --cli given", img)
            self.assertEqual(cap, "")
        self.assertEqual([img.split("`")[1] for img, _ in out],
                         ["fig-deberta-buckets", "fig-deberta-score-offset", "table-deberta-exact-vs-float32",
                          "table-deberta-index"])
        self.assertIn("not drawn", ctx.figure_notes[0][1])
        for img, _ in deberta.figures(Ctx(str(REPO / "no" / "such" / "posenc"))):
            self.assertIn("could not run", img)

    def test_figures_from_a_cli_of_the_wrong_shape(self):
        bad = write_fake(self.tmp.name, "posenc-bad", "import json\nprint(json.dumps({'scheme': 'deberta', "
                         "'relative_positions': [[0]]}))\n")
        for img, cap in deberta.figures(Ctx(bad)):
            self.assertIn("unexpected output of `posenc index deberta --preset deberta-v3-base --query-length 1501 "
                          "--key-length 1`", img)
            self.assertIn("1501 rows of 1 integers", img)
            self.assertEqual(cap, "")

    def test_a_cli_of_the_wrong_sign_is_caught(self):
        line = "    return i - j"
        self.assertIn(line, FAKE)
        wrong = write_fake(self.tmp.name, "posenc-sign", FAKE.replace(line, "    return j - i"))
        _, (img, scap), _, (small, icap) = deberta.figures(Ctx(wrong))
        self.assertEqual(img, "IMG fig-deberta-score-offset 6")
        self.assertIn("scale Σ_c |x_c T[c][c]|: **no** (largest", scap)
        self.assertIn("computed here: **no** (first difference at (0, 1): 1 vs -1)", icap)
        self.assertIn("minus its transpose (DEBERTA-SIGN-1: rel = i − j, the opposite of Shaw's and T5's j − i): yes",
                      icap)
        self.assertIn("of the CLI's own b: yes", icap)
        self.assertEqual(table_rows(small)[0], ["0", "0", "1", "2", "3", "4", "5", "5", "6"])

    def test_a_cli_whose_p2c_is_not_transposed_is_caught(self):
        line = "(dot(kj[j], c_of(i, j), pq)"
        self.assertIn(line, FAKE)
        wrong = write_fake(self.tmp.name, "posenc-p2c", FAKE.replace(line, "(dot(kj[j], c_of(j, i), pq)"))
        _, (img, scap), _, (_, icap) = deberta.figures(Ctx(wrong))
        self.assertIn("scale Σ_c |x_c T[c][c]|: **no** (largest", scap)
        self.assertIn("of it, p2c at (", scap)
        self.assertNotIn("**no**", icap)

    def _check_figures(self, cli: str) -> list:
        ctx = Ctx(cli)
        (img, cap), (simg, scap), (table, tcap), (small, icap) = deberta.figures(ctx)
        self.assertEqual((img, simg), ("IMG fig-deberta-buckets 2", "IMG fig-deberta-score-offset 6"))
        # (a)
        hf, orig = (dict(s.rows) for s in ctx.renderer.plots[0].series)
        for r in range(-128, 129):
            self.assertEqual((hf[r], orig[r]), (r, r))
        self.assertEqual((hf[511], hf[-511], orig[511]), (255, -255, 255))
        self.assertGreater(hf[1500], 255)                    # HF: no clamp
        self.assertEqual((orig[1500], orig[-1500]), (255, -255))  # 2023: clamped
        self.assertTrue(all(hf[r] == -hf[-r] for r in range(1501)))
        # (b): the c2p term of q and the p2c term of k over rel in [-640, 640], against the synthetic tables
        c2p, p2c, *marks = ctx.renderer.plots[1].series
        cs, ps = dict(c2p.rows), dict(p2c.rows)
        self.assertEqual((sorted(cs), sorted(ps)), (list(range(-640, 641)), list(range(-640, 641))))
        self.assertEqual([m.rows[0][0] for m in marks], [-128, 128, -511, 511])
        k_r, q_r = deberta.synthetic_table(256, 64, deberta.SEED), deberta.synthetic_table(256, 64, deberta.SEED + 10)
        q, k = deberta.fixed_vector(64, deberta.SEED), deberta.fixed_vector(64, deberta.SEED + 20)
        scale = 1 / math.sqrt(3 * 64)
        for rel, row in ((0, 256), (1, 257), (-128, 128), (128, 384), (129, 385), (506, 511), (640, 511),
                         (-511, 1), (-512, 0), (-640, 0)):
            self.assertAlmostEqual(cs[rel], scale * sum(a * b for a, b in zip(q, k_r[row])), places=13)
            self.assertAlmostEqual(ps[rel], scale * sum(a * b for a, b in zip(k, q_r[row])), places=13)
        self.assertEqual(len({round(cs[r], 12) for r in range(-128, 129)}), 257)        # the identity
        self.assertEqual(len({round(cs[r], 12) for r in range(129, 512)}), 127)         # log: 127 rows
        self.assertEqual(len({round(cs[r], 12) for r in range(506, 641)}), 1)           # clamped to row 511
        for phrase in ("**synthetic**", "641 × 641", "(257 offsets, 257 rows: the identity)",
                       "766 offsets share 254 rows", "b(640) = 276", "258 offsets read 2 rows, row 511 for every "
                       "rel ≥ 506 and row 0 for every rel ≤ -512 (b(−511) = -255 reads row 1)",
                       "scale Σ_c |x_c T[c][c]|: yes (largest", "(DEBERTA-SCORES-1, DEBERTA-INDEX-1)"):
            self.assertIn(phrase, scap)
        # (c)
        rows = [line for line in table.splitlines() if line.startswith("| (") and line[3].isdigit()]
        self.assertEqual(len(rows), len(deberta.CONFIGS))
        self.assertIn("(c) Exact vs HF float32 buckets", tcap)
        # (d): b and c of position_buckets 4, max 4, and the first 3 queries
        mrows = table_rows(small)
        self.assertEqual(len(mrows), 8 + 8 + 3)
        self.assertEqual(mrows[0], ["0", "0", "-1", "-2", "-3", "-4", "-5", "-5", "-6"])
        self.assertEqual(mrows[7], ["7", "6", "5", "5", "4", "3", "2", "1", "0"])
        self.assertEqual(mrows[8], ["0", "4", "3", "2", "1", "0", "0", "0", "0"])
        self.assertEqual(mrows[15], ["7", "7", "7", "7", "7", "7", "6", "5", "4"])
        self.assertEqual(mrows[16:], mrows[8:11])
        for phrase in ("(b(5) = b(6) = 5: offsets share a bucket)", "clamps it at rel ∈ {-7, -6, -5, 4, 5, 6, 7}",
                       "clamp(b(i − j) + span, 0, 2 span − 1) computed here: yes", "of the CLI's own b: yes",
                       "every c is in [0, 7]: yes", "\"span\" is position_buckets: yes", "j − i): yes",
                       "the first 3 rows of the square matrix: yes", "(DEBERTA-INDEX-1, DEBERTA-SIGN-1)"):
            self.assertIn(phrase, icap)
        self.assertNotIn("**no**", cap + scap + tcap + icap)
        return ctx.figure_notes

    def test_figures_from_a_fake_cli(self):
        notes = self._check_figures(self.fake)
        self.assertEqual(notes, [("figure data", "the posenc CLI (`posenc index deberta --format json` and `posenc "
                                  "scores deberta --format npy`; 30 invocations)")])

    @unittest.skipUnless(cli_has_scheme(CLI, "deberta"), "posenc CLI with DeBERTa not built")
    def test_from_cli(self):
        notes = self._check_figures(str(CLI))
        self.assertIn("30 invocations", notes[0][1])


if __name__ == "__main__":
    unittest.main()
