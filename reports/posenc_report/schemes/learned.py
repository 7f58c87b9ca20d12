"""Report module of learned absolute position embeddings (BERT, GPT-2, RoBERTa, fairseq, OPT): its speed headline,
a table of the position ids each preset's id map gives for padded inputs (right and left padding, a cache, holes in
the attention mask), and the numbers behind "a learned table has no relative structure": <row(p), row(p + k)> of a
random table (as the models initialise theirs) varies with p for a fixed k, the sinusoidal table's does not.

Every id and every table row comes from the posenc CLI (`posenc ids learned`, `posenc table learned`, `posenc table
sinusoidal`, `--format json`); the ids are checked here against the three maps' definitions, the random table is
drawn here (Python's random, seeded; written as a float32 .npy with struct) and the dot products are summed here in
float64 (math.fsum). Without a CLI the tables are not drawn and the page says why."""
from __future__ import annotations

import math
import os
import random
import struct
import tempfile

from .. import md
from ..cli_data import CliData

SCHEME = "learned"

# benchmarks/learned_bench.cpp: rows/<variant>/rows:<R>/dim:<d>/L:<L>/threads:1 (LearnedPlan::rows of L ids from a
# float64 table; variants gather_f32, gather_f64; baselines stream_store_f32 — the DRAM write limit — store_f32 and
# memcpy_f32 of the same output bytes, and their f64 forms) and ids/<variant>/L:1048576/threads:1 (position_ids of
# each map: arange, make_positions, cumsum_mask; baseline plainloop: std::vector<int64_t>(L) written with 0 .. L-1).
# bench.py sizes a record by L alone here (the key is "dim", not "d"), so the rows headline is the best ratio at
# L = 32768 over the two tables.
HEADLINE_KERNELS = (
    {"family": "rows", "variant": "gather_f32", "baseline": "bandwidth",
     "what": "gather of 32768 rows from a float64 table into float32 vs the streaming store of the same output bytes"},
    {"family": "ids", "variant": "cumsum_mask", "baseline": "plainloop",
     "what": "OPT's cumsum_mask ids of 2^20 tokens vs a plain loop writing 2^20 int64 (ids/s ÷ ids/s)"},
)

CLAIMS_LINK = "[claims](claims.md#scheme-learned)"
PRESETS = ("bert", "gpt2", "roberta", "fairseq", "opt")

# (a) The examples: (label, token ids, attention mask over past + L entries, past). Token id 1 is the padding token
# of RoBERTa, fairseq and OPT (padding_idx 1); 0 and 2 are RoBERTa's <s> and </s>, 713 and 16 ordinary words.
EXAMPLES = (
    ("right padding", (0, 713, 16, 2, 1, 1), "111100", 0),
    ("left padding", (1, 1, 0, 713, 16, 2), "001111", 0),
    ("a cache: past 4, the first cached token padding", (16, 2), "011111", 4),
    ("holes in the attention mask", (0, 713, 1, 16, 1, 2), "110101", 0),
)

# (b) Relative structure: <row(p), row(p + k)> for p = 0 .. REL_P - 1 and k in REL_K, tables of REL_DIM columns; the
# random table is N(0, INIT_STD^2) as BERT, RoBERTa and OPT initialise their position embeddings (initializer_range /
# init_std 0.02), rounded to float32 and seeded.
REL_P, REL_K, REL_DIM = 256, (1, 4, 16), 64
INIT_STD, SEED = 0.02, 20240517


class LearnedCli(CliData):
    """`posenc ids learned`, `posenc table learned` and `posenc table sinusoidal` as Python data, each call made once
    (cached); `error` says why not, once one failed (later calls then return None)."""

    def ids(self, preset: str, tokens, mask: str, past: int) -> dict | None:
        """{"ids": [int] * len(tokens), "spec": {...}} of one sequence."""
        args = ("ids", "learned", "--preset", preset, "--tokens", ",".join(str(t) for t in tokens), "--mask", mask,
                "--past", str(past))
        data = self.run(args)
        if data is None:
            return None
        ids, spec = data.get("ids"), data.get("spec")
        if not isinstance(ids, list) or len(ids) != len(tokens) or not all(isinstance(i, int) for i in ids) \
                or not isinstance(spec, dict):
            self.fail(args, f"expected \"ids\": {len(tokens)} integers and a \"spec\" object")
            return None
        return {"ids": ids, "spec": spec}

    def _rows(self, args: tuple, n: int, dim: int) -> list | None:
        data = self.run(args)
        if data is None:
            return None
        rows = data.get("rows")
        if not isinstance(rows, list) or len(rows) != n or \
                not all(isinstance(r, list) and len(r) == dim for r in rows):
            self.fail(args, f"expected \"rows\" of shape [{n}, {dim}]")
            return None
        try:
            return [[float(v) for v in r] for r in rows]
        except (TypeError, ValueError) as e:
            self.fail(args, f"{type(e).__name__}: {e}")
            return None

    def learned_rows(self, weights: str, n: int, dim: int) -> list | None:
        """Rows 0 .. n-1 of the table in `weights` (arange ids, preset bert), as float64."""
        args = ("table", "learned", "--preset", "bert", "--weights", weights, "--length", str(n), "--dtype", "f64")
        rows = self._rows(args, n, dim)
        if rows is not None and self.run(args).get("ids") != list(range(n)):
            self.fail(args, f"expected \"ids\" 0 .. {n - 1}")
            return None
        return rows

    def sinusoidal_rows(self, n: int, dim: int) -> list | None:
        """PE(0) .. PE(n-1) of the vaswani table, float64."""
        return self._rows(("table", "sinusoidal", "--preset", "vaswani", "--dim", str(dim), "--positions", f"0:{n}",
                           "--dtype", "f64"), n, dim)


def _not_drawn(name: str, why: str, kind: str = "table") -> str:
    return f"*({kind} `{name}` not drawn: {md.cell(why)})*"


def expected_ids(spec: dict, tokens, mask: str, past: int) -> list:
    """The ids of posenc/learned_spec.hpp, written out here: arange offset + past + t; make_positions
    (cumsum(token != padding_idx) + past) * m + padding_idx; cumsum_mask (cumsum(a) * a - 1)[past:] + offset."""
    id_map, pad, offset = spec.get("id_map"), spec.get("padding_idx"), spec.get("offset")
    n = len(tokens)
    if id_map == "arange":
        return [offset + past + t for t in range(n)]
    out, run = [], 0
    if id_map == "make_positions":
        for tok in tokens:
            m = int(tok != pad)
            run += m
            out.append((run + past) * m + pad)
        return out
    if id_map == "cumsum_mask":
        bits = [int(c) for c in mask]
        for a in bits:
            run += a
            out.append(run * a - 1 + offset)
        return out[past:]
    raise ValueError(f"unknown id map {id_map!r}")


def _ids_text(ids) -> str:
    return md.code(", ".join(str(i) for i in ids))


# --- (a) the ids of each preset -------------------------------------------------------------------------------

def _ids_table(ctx, src: LearnedCli) -> tuple:
    name = "tab-learned-ids"
    got = {}
    for label, tokens, mask, past in EXAMPLES:
        for p in PRESETS:
            got[label, p] = src.ids(p, tokens, mask, past)
            if got[label, p] is None:
                return _not_drawn(name, src.error), ""
    maps = {p: got[EXAMPLES[0][0], p]["spec"].get("id_map") for p in PRESETS}
    agree = all(got[label, p]["ids"] == expected_ids(got[label, p]["spec"], tokens, mask, past)
                for label, tokens, mask, past in EXAMPLES for p in PRESETS)
    same = {pair: all(got[e[0], pair[0]]["ids"] == got[e[0], pair[1]]["ids"] for e in EXAMPLES)
            for pair in (("bert", "gpt2"), ("roberta", "fairseq"))}
    rows = []
    for label, tokens, mask, past in EXAMPLES:
        inputs = f"{md.code(','.join(str(t) for t in tokens))} / {md.code(mask)} / {past}"
        rows.append([md.cell(label), inputs] + [_ids_text(got[label, p]["ids"]) for p in PRESETS])
    table = md.table(["input", "tokens / attention mask / past"] +
                     [f"{p} ({md.cell(maps[p])})" for p in PRESETS], rows, ["l", "l"] + ["l"] * len(PRESETS))
    ex = {e[0]: e for e in EXAMPLES}
    cache = ex["a cache: past 4, the first cached token padding"]
    cap = ("**(a) The position ids each preset gives.** For each input (token ids; the attention mask, which covers "
           "the past cached tokens and then the L tokens of this call; past), the ids `posenc ids learned --preset P` "
           "prints: the rows of the table the tokens look up. Token id 1 is the padding token (padding_idx 1 of "
           "RoBERTa, fairseq and OPT). arange (BERT, GPT-2 when the caller passes no position_ids) numbers every "
           "token, padding included, from past: right padding leaves the real tokens at 0 … 3, left padding moves "
           "them to 2 … 5. make_positions (RoBERTa, fairseq) gives padding tokens the row padding_idx = 1 and counts "
           "the other tokens from padding_idx + 1 = 2, on either side of the padding; with a cache it adds past to "
           "that count, as if every cached token were real: the cache row gives "
           f"{_ids_text(got[cache[0], 'roberta']['ids'])}. cumsum_mask (OPT) counts the ones of the attention mask over "
           "the cache and the new tokens, adds offset − 1 = 1, and gives 1 where the mask is 0: padding in the "
           f"cache is not counted ({_ids_text(got[cache[0], 'opt']['ids'])}), and a hole inside the sequence gets 1 "
           "while the count resumes after it. Presets of one map give equal ids in every row here: bert and gpt2 "
           f"{'yes' if same['bert', 'gpt2'] else '**no**'}, roberta and fairseq "
           f"{'yes' if same['roberta', 'fairseq'] else '**no**'} (they differ in their tables' rows, not in the "
           "ids). Every id equals the map's definition (posenc/learned_spec.hpp) evaluated here from the JSON's spec: "
           + ("yes" if agree else "**no**") + ". Data: `posenc ids learned --preset P --tokens T --mask M --past N "
           f"--format json` for the {len(PRESETS)} presets and the {len(EXAMPLES)} inputs. See {CLAIMS_LINK}.")
    return table, cap


# --- (b) no relative structure --------------------------------------------------------------------------------

def float32(x: float) -> float:
    """x rounded to the nearest binary32 (ties to even), as a float."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def random_table(rows: int, dim: int, std: float = INIT_STD, seed: int = SEED) -> list:
    """rows x dim values N(0, std^2), rounded to float32 (Python's random.gauss, seeded)."""
    rng = random.Random(seed)
    return [[float32(rng.gauss(0.0, std)) for _ in range(dim)] for _ in range(rows)]


def write_npy_f32(path: str, table: list) -> None:
    """`table` (a list of equal rows) as a little-endian float32 .npy, NumPy format 1.0."""
    rows, dim = len(table), len(table[0])
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, dim)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % (rows * dim), *[v for r in table for v in r]))


def dot(a, b) -> float:
    return math.fsum(x * y for x, y in zip(a, b))


def dots_by_offset(rows: list, k: int, count: int) -> list:
    """<row(p), row(p + k)> for p = 0 .. count - 1."""
    return [dot(rows[p], rows[p + k]) for p in range(count)]


def sinusoidal_dot(k: int, dim: int, base: float = 10000.0) -> float:
    """<PE(p), PE(p + k)> of the paper's table: sum over the pairs of cos(omega_i k), omega_i = base^(-2i/d)."""
    return math.fsum(math.cos(k * base ** (-2.0 * i / dim)) for i in range(dim // 2))


def _relative_table(ctx, src: LearnedCli) -> tuple:
    name = "tab-learned-relative"
    n = REL_P + max(REL_K)
    table = random_table(n, REL_DIM)
    with tempfile.TemporaryDirectory(prefix="posenc-report-learned.") as tmp:
        path = os.path.join(tmp, "random_positions.npy")
        write_npy_f32(path, table)
        learned = src.learned_rows(path, n, REL_DIM)
    sinus = src.sinusoidal_rows(n, REL_DIM) if learned is not None else None
    if learned is None or sinus is None:
        return _not_drawn(name, src.error), ""
    rows_ok = learned == table
    stats, facts = {}, []
    for which, rows in (("random", learned), ("sinusoidal", sinus)):
        norm2 = math.fsum(dot(r, r) for r in rows[:REL_P]) / REL_P
        for k in REL_K:
            d = dots_by_offset(rows, k, REL_P)
            mean = math.fsum(d) / REL_P
            sd = math.sqrt(math.fsum((x - mean) ** 2 for x in d) / REL_P)
            stats[which, k] = {"min": min(d), "max": max(d), "mean": mean, "sd": sd, "norm2": norm2,
                               "spread": (max(d) - min(d)) / norm2}
    sin_ok = all(abs(stats["sinusoidal", k]["mean"] - sinusoidal_dot(k, REL_DIM)) <= 1e-12 * REL_DIM for k in REL_K)
    out_rows = []
    for which, label in (("random", f"random N(0, {md.num(INIT_STD)}²), float32 (a learned table at initialisation)"),
                         ("sinusoidal", "sinusoidal, vaswani (PE(p), interleaved sin/cos)")):
        cells = [md.cell(label), md.num(stats[which, REL_K[0]]["norm2"], 4)]
        for k in REL_K:
            s = stats[which, k]
            cells.append(f"{md.num(s['min'], 4)} … {md.num(s['max'], 4)} (sd {md.num(s['sd'], 2)}; "
                         f"{md.num(s['spread'], 2)} of the mean \\|row\\|²)")
        out_rows.append(cells)
    md_table = md.table(["table (64 columns)", f"mean \\|row(p)\\|², p < {REL_P}"] +
                        [f"k = {k}: min … max of ⟨row(p), row(p+k)⟩ over p" for k in REL_K], out_rows,
                        ["l", "r"] + ["l"] * len(REL_K))
    r1, s1 = stats["random", 1], stats["sinusoidal", 1]
    worst_sin = max(stats["sinusoidal", k]["spread"] for k in REL_K)
    least_rand = min(stats["random", k]["spread"] for k in REL_K)
    mean_rand = max(abs(stats["random", k]["mean"]) for k in REL_K)
    ks = ", ".join(str(k) for k in REL_K)
    cap = ("**(b) No relative structure.** A learned table is free parameters, one row per position: nothing in the "
           "scheme makes ⟨row(p), row(p + k)⟩ (the position–position term of a query–key dot product where W_qᵀW_k "
           "is the identity) a function of the offset k alone (claim LEARNED-NOT-RELATIVE-1). Shown for a table as "
           f"the models start training: {n} × {REL_DIM} values drawn N(0, {md.num(INIT_STD)}²) (BERT's and "
           "RoBERTa's initializer_range, OPT's init_std), rounded to float32 (seeded; written to a .npy here and "
           "read back with `posenc table learned`, whose rows equal the values written: " +
           ("yes" if rows_ok else "**no**") +
           f"). For p = 0 … {REL_P - 1}, ⟨row(p), row(p + 1)⟩ takes values from {md.num(r1['min'], 4)} to "
           f"{md.num(r1['max'], 4)} (standard deviation {md.num(r1['sd'], 2)}; mean squared row norm "
           f"{md.num(r1['norm2'], 4)}): for a fixed k it is a different number at each p, and its mean over p is "
           f"within {md.num(mean_rand, 2)} of 0 at k = {ks}, so k does not determine it. The "
           "sinusoidal table's is, in exact arithmetic, the same number at every p: ⟨PE(p), PE(p + k)⟩ = "
           f"Σᵢ cos(ωᵢ k) ({md.num(s1['mean'], 6)} at k = 1). Over p it varies by at most {md.num(worst_sin, 2)} of "
           f"its mean squared row norm at k = {ks} (rounding), the random table's by at least "
           f"{md.num(least_rand, 2)}; its means equal Σᵢ cos(ωᵢ k) computed here: " + ("yes" if sin_ok else "**no**") +
           ". Training may give a table regularities, but nothing in the scheme makes them exact or guarantees them. "
           f"Data: `posenc table learned --preset bert --weights <the random table> --length {n} --dtype f64 "
           f"--format json` and `posenc table sinusoidal --preset vaswani --dim {REL_DIM} --positions 0:{n} "
           f"--dtype f64 --format json`; dot products summed here with math.fsum. See {CLAIMS_LINK}.")
    return md_table, cap


def figures(ctx) -> list:
    src = LearnedCli(ctx.cli)
    out = [_ids_table(ctx, src), _relative_table(ctx, src)]
    ctx.figure_notes.append(("figure data", "the posenc CLI (`posenc ids learned`, `posenc table learned --dtype f64`, "
                             f"`posenc table sinusoidal --dtype f64`; {src.calls} invocations); the random table, the "
                             "definitions of the id maps and the dot products in Python float64"
                             if src.error is None else f"not drawn: {md.cell(src.error)}"))
    return out
