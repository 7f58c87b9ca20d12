"""Tests of the learned-positions report module (reports/posenc_report/schemes/learned.py): its helpers, its speed
headline on fabricated benchmark names of benchmarks/learned_bench.cpp, and its tables without a CLI, from a fake CLI
(a Python script that writes what `posenc ids learned`, `posenc table learned` and `posenc table sinusoidal` write
with --format json, computed from the definitions) and, where build/cli/posenc is built with the learned scheme,
from the real CLI (python3 -m unittest discover -s reports/tests)."""
from __future__ import annotations

import json
import math
import os
import re
import struct
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from posenc_report import bench, schemes, summary  # noqa: E402
from samples import FakeCliTest, bench_entry, cli_has_scheme  # noqa: E402
from posenc_report.schemes import learned  # noqa: E402

REPO = HERE.parent.parent
CLI = REPO / "build" / "cli" / "posenc"

# The fake CLI: `ids learned` and `table learned` (the three id maps, the presets' specs), `table sinusoidal
# --preset vaswani` (interleaved sin/cos), JSON as the real CLI writes it.
FAKE = r'''
import ast, json, math, struct, sys

args = sys.argv[1:]
verb, scheme, rest = args[0], args[1], args[2:]
opt = {}
i = 0
while i < len(rest):
    if "=" in rest[i]:
        k, v = rest[i].split("=", 1)
        i += 1
    else:
        k, v = rest[i], rest[i + 1]
        i += 2
    opt[k] = v
PRESETS = {"bert": ("arange", 1, 0), "gpt2": ("arange", 1, 0), "roberta": ("make_positions", 1, 0),
           "fairseq": ("make_positions", 1, 0), "opt": ("cumsum_mask", 1, 2)}
if scheme == "learned":
    id_map, pad, offset = PRESETS[opt["--preset"]]
    spec = {"id_map": id_map, "padding_idx": pad, "offset": offset}
    past = int(opt.get("--past", "0"))
    tokens = [int(t) for t in opt["--tokens"].split(",")] if "--tokens" in opt else None
    mask = [int(c) for c in opt["--mask"]] if "--mask" in opt else None
    n = int(opt["--length"]) if "--length" in opt else len(tokens) if tokens else len(mask) - past
    if id_map == "arange":
        ids = [offset + past + t for t in range(n)]
    elif id_map == "make_positions":
        ids, run = [], 0
        for t in tokens:
            m = int(t != pad)
            run += m
            ids.append((run + past) * m + pad)
    else:
        ids, run = [], 0
        for a in mask:
            run += a
            ids.append(run * a - 1 + offset)
        ids = ids[past:]
    out = {"scheme": "learned", "spec": spec, "past": past, "ids": ids}
    if verb == "table":
        with open(opt["--weights"], "rb") as f:
            data = f.read()
        hlen = struct.unpack("<H", data[8:10])[0]
        header = ast.literal_eval(data[10:10 + hlen].decode())
        rows, dim = header["shape"]
        vals = struct.unpack("<%df" % (rows * dim), data[10 + hlen:])
        out["rows"] = [list(vals[i * dim:(i + 1) * dim]) for i in ids]
    print(json.dumps(out))
else:
    d = int(opt["--dim"])
    a, b = (int(x) for x in opt["--positions"].split(":"))
    w = [10000.0 ** (-2.0 * k / d) for k in range(d // 2)]
    rows = [[f(p * wk) for wk in w for f in (math.sin, math.cos)] for p in range(a, b)]
    print(json.dumps({"scheme": "sinusoidal", "spec": {"dim": d}, "positions": list(range(a, b)), "rows": rows}))
'''


class Ctx:
    def __init__(self, cli):
        self.cli, self.figure_notes, self.renderer = cli, [], None



class LearnedModuleTest(FakeCliTest):
    FAKE = FAKE

    def test_registered(self):
        self.assertIn("learned", schemes.registered())
        self.assertEqual(learned.SCHEME, "learned")
        self.assertEqual(schemes.discover()[1], [])

    def test_expected_ids(self):
        arange = {"id_map": "arange", "padding_idx": 1, "offset": 0}
        roberta = {"id_map": "make_positions", "padding_idx": 1, "offset": 0}
        opt = {"id_map": "cumsum_mask", "padding_idx": 1, "offset": 2}
        self.assertEqual(learned.expected_ids(arange, (5, 1, 1), "", 3), [3, 4, 5])
        self.assertEqual(learned.expected_ids(roberta, (0, 7, 1, 1), "", 0), [2, 3, 1, 1])
        self.assertEqual(learned.expected_ids(roberta, (1, 0, 7), "", 0), [1, 2, 3])
        self.assertEqual(learned.expected_ids(roberta, (16, 2), "", 4), [6, 7])     # past added to the count
        self.assertEqual(learned.expected_ids(opt, (9, 9), "011111", 4), [5, 6])    # cache padding not counted
        self.assertEqual(learned.expected_ids(opt, (9,) * 6, "110101", 0), [2, 3, 1, 4, 1, 5])
        self.assertEqual(learned.expected_ids(opt, (9,) * 4, "0011", 0), [1, 1, 2, 3])
        with self.assertRaises(ValueError):
            learned.expected_ids({"id_map": "nosuch"}, (1,), "1", 0)

    def test_helpers(self):
        self.assertEqual(learned.float32(0.5), 0.5)
        self.assertEqual(learned.float32(0.02), 0.019999999552965164)
        t = learned.random_table(3, 4)
        self.assertEqual(t, learned.random_table(3, 4))                  # seeded
        self.assertTrue(all(learned.float32(v) == v for r in t for v in r))
        self.assertEqual(learned.sinusoidal_dot(0, 64), 32.0)
        self.assertAlmostEqual(learned.sinusoidal_dot(1, 2), math.cos(1.0), places=15)
        self.assertEqual(learned.dots_by_offset([[1, 0], [0, 1], [1, 1]], 1, 2), [0.0, 1.0])
        path = os.path.join(self.tmp.name, "t.npy")
        learned.write_npy_f32(path, [[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]])
        with open(path, "rb") as f:
            data = f.read()
        hlen = struct.unpack("<H", data[8:10])[0]
        self.assertEqual((10 + hlen) % 64, 0)
        self.assertIn("'shape': (2, 3)", data[10:10 + hlen].decode())
        self.assertEqual(struct.unpack("<6f", data[10 + hlen:]), (1.0, -2.0, 0.5, 0.25, 3.0, -1.0))

    def test_headline_pairs_kernels_with_their_baselines(self):
        data = {"benchmarks": [
            bench_entry("learned/rows/gather_f32/rows:514/dim:768/L:512/threads:1", 0.1, 9e9),
            bench_entry("learned/rows/stream_store_f32/rows:514/dim:768/L:512/threads:1", 0.1, 10e9),
            bench_entry("learned/rows/gather_f32/rows:2050/dim:4096/L:32768/threads:1", 100, 6e9),
            bench_entry("learned/rows/stream_store_f32/rows:2050/dim:4096/L:32768/threads:1", 50, 12e9),
            bench_entry("learned/rows/store_f32/rows:2050/dim:4096/L:32768/threads:1", 50, 20e9),
            bench_entry("learned/rows/memcpy_f32/rows:2050/dim:4096/L:32768/threads:1", 50, 8e9),
            bench_entry("learned/rows/gather_f64/rows:2050/dim:4096/L:32768/threads:1", 200, 11e9),
            bench_entry("learned/rows/stream_store_f64/rows:2050/dim:4096/L:32768/threads:1", 200, 22e9),
            bench_entry("learned/ids/cumsum_mask/L:1048576/threads:1", 2, 4e9, 5e8),
            bench_entry("learned/ids/arange/L:1048576/threads:1", 1, 8e9, 1e9),
            bench_entry("learned/ids/plainloop/L:1048576/threads:1", 1, 8e9, 1e9),
        ]}
        head = summary.speed(bench.records("bench-learned", data), learned.HEADLINE_KERNELS)
        self.assertEqual([h["record"].name for h in head],
                         ["learned/rows/gather_f32/rows:2050/dim:4096/L:32768/threads:1",
                          "learned/ids/cumsum_mask/L:1048576/threads:1"])
        self.assertAlmostEqual(head[0]["value"], 0.5)          # vs stream_store_f32, not store, memcpy or f64
        self.assertEqual(head[0]["how"], "bytes/s")
        self.assertAlmostEqual(head[1]["value"], 0.5)          # ids/s of the map / ids/s of the plain loop
        self.assertEqual(head[1]["how"], "items/s")

    def test_tables_without_a_cli(self):
        ctx = Ctx(None)
        out = learned.figures(ctx)
        self.assertEqual(len(out), 2)
        for table, cap in out:
            self.assertIn("not drawn: no --cli given", table)
            self.assertEqual(cap, "")
        self.assertIn("not drawn", ctx.figure_notes[0][1])
        failing = Ctx(str(REPO / "no" / "such" / "posenc"))
        for table, _ in learned.figures(failing):
            self.assertIn("could not run", table)

    def _check_tables(self, cli: str) -> list:
        ctx = Ctx(cli)
        out = learned.figures(ctx)
        (ids, ids_cap), (rel, rel_cap) = out
        self.assertTrue(ids.startswith("| input |"), ids)
        self.assertTrue(rel.startswith("| table (64 columns) |"), rel)
        lines = {ln.split(" | ")[0].strip("| "): ln.split(" | ")[2:] for ln in ids.splitlines()[2:]}
        self.assertEqual(len(lines), len(learned.EXAMPLES))
        self.assertIn("| bert (arange) | gpt2 (arange) | roberta (make_positions) | fairseq (make_positions) | "
                      "opt (cumsum_mask) |", ids.splitlines()[0])
        cells = lambda label: [c.strip(" |`") for c in lines[label]]  # noqa: E731
        self.assertEqual(cells("right padding"), ["0, 1, 2, 3, 4, 5"] * 2 + ["2, 3, 4, 5, 1, 1"] * 3)
        self.assertEqual(cells("left padding"), ["0, 1, 2, 3, 4, 5"] * 2 + ["1, 1, 2, 3, 4, 5"] * 3)
        self.assertEqual(cells("a cache: past 4, the first cached token padding"),
                         ["4, 5"] * 2 + ["6, 7"] * 2 + ["5, 6"])
        self.assertEqual(cells("holes in the attention mask"), ["0, 1, 2, 3, 4, 5"] * 2 + ["2, 3, 1, 4, 1, 5"] * 3)
        self.assertIn("bert and gpt2 yes, roberta and fairseq yes", ids_cap)
        self.assertIn("evaluated here from the JSON's spec: yes.", ids_cap)
        self.assertIn("the cache row gives `6, 7`", ids_cap)
        self.assertIn("padding in the cache is not counted (`5, 6`)", ids_cap)
        # (b): the random table's dot products move with p; the sinusoidal table's do not (rounding only)
        self.assertIn("whose rows equal the values written: yes", rel_cap)
        self.assertIn("its means equal Σᵢ cos(ωᵢ k) computed here: yes.", rel_cap)
        m = re.search(r"varies by at most ([0-9.e+-]+) of its mean squared row norm at k = 1, 4, 16 \(rounding\), "
                      r"the random table's by at least ([0-9.e+-]+);", rel_cap)
        self.assertIsNotNone(m, rel_cap)
        self.assertLess(float(m.group(1)), 1e-12)
        self.assertGreater(float(m.group(2)), 0.1)
        m = re.search(r"⟨row\(p\), row\(p \+ 1\)⟩ takes values from (-?[0-9.e+-]+) to (-?[0-9.e+-]+) \(standard "
                      r"deviation ([0-9.e+-]+); mean squared row norm ([0-9.e+-]+)\)", rel_cap)
        self.assertIsNotNone(m, rel_cap)
        lo, hi, sd, norm2 = (float(g) for g in m.groups())
        self.assertLess(lo, 0)
        self.assertGreater(hi, 0)
        # independent N(0, s^2) rows of 64 columns: the dot has sd s^2 sqrt(64) = 0.0032, |row|^2 ~ 64 s^2 = 0.0256
        self.assertTrue(0.002 < sd < 0.0045, sd)
        self.assertTrue(0.02 < norm2 < 0.031, norm2)
        m = re.search(r"its mean over p is within ([0-9.e+-]+) of 0 at k = 1, 4, 16", rel_cap)
        self.assertIsNotNone(m, rel_cap)
        self.assertLess(float(m.group(1)), 0.002)                 # sd of the mean over 256 p: 0.0032 / 16
        self.assertNotIn("**no**", ids_cap + rel_cap)
        return ctx.figure_notes

    def test_tables_from_a_fake_cli(self):
        notes = self._check_tables(self.fake)
        self.assertIn("(`posenc ids learned`, `posenc table learned --dtype f64`, `posenc table sinusoidal --dtype "
                      "f64`; 22 invocations)", notes[0][1])

    @unittest.skipUnless(cli_has_scheme(CLI, "learned"), "posenc CLI not built with the learned scheme")
    def test_tables_from_the_cli(self):
        notes = self._check_tables(str(CLI))
        self.assertIn("22 invocations", notes[0][1])


if __name__ == "__main__":
    unittest.main()
