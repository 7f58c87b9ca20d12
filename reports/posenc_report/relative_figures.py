"""What the report modules of the sinusoid-relative attentions (Transformer-XL, XLNet, TENER) share: the index
matrix of a small call from the posenc CLI (`posenc index <scheme> --format json`), checked against the scheme's
definition here and drawn as a table in which the entries the code's rel_shift leaves undefined (junk) are marked;
RelativeCli, their tables (`posenc table <scheme> --format json`) and scores (`posenc scores <scheme> --format json`
of .npy inputs written here) as Python data; and the float helpers their checks use."""
from __future__ import annotations

import math
import os
import struct

from . import md
from .cli_data import NEG_INF, CliData


def index_figure(ctx, scheme: str, args: tuple, lq: int, lk: int, want, what: str, claims: str,
                 src: CliData | None = None) -> tuple:
    """(Markdown table, caption) of `posenc index <scheme> *args --query-length lq --key-length lk`: entry (i, j) is
    the table row it reads, "·" where undefined (-1); want(i, j) is the definition's row (None: undefined). `src`:
    the module's CLI source (its calls and first error shared with its other figures), else a new one."""
    src = src if src is not None else CliData(ctx.cli)
    data = src.run(("index", scheme, *args, "--query-length", str(lq), "--key-length", str(lk)))
    name = f"table-{scheme}-index"
    rows = data.get("indices") if data is not None else None
    # a matrix of another shape is still drawn (and said to differ); one that is not a list of rows of integers is not
    if not isinstance(rows, list) or not all(isinstance(r, list) and all(is_int(v) for v in r) for r in rows):
        why = src.error or "no matrix of integers as \"indices\" in the CLI's output"
        return f"*(table `{name}` not drawn: {md.cell(why)})*", what
    ok = len(rows) == lq and all(len(r) == lk for r in rows)
    bad = 0
    for i in range(lq if ok else 0):
        for j in range(lk):
            w = want(i, j)
            bad += (rows[i][j] != (-1 if w is None else w))
    table = md.table(["i (q_i)", *[f"j = {j}" for j in range(lk)]],
                     [[f"{i} ({lk - lq + i})", *["·" if v == -1 else md.num(v) for v in r]] for i, r in enumerate(rows)],
                     ["l"] + ["r"] * lk)
    verdict = ("every entry equals the definition's row, and the undefined ones are exactly the marked ones"
               if ok and bad == 0 else f"**{bad if ok else 'the shape'} differ from the definition**")
    cap = (f"{what} Checked here: {verdict}. Data: `posenc index {' '.join((scheme, *args))} --query-length {lq} "
           f"--key-length {lk} --format json`. See {claims}.")
    return table, cap


# ---- shared by the score figures ----------------------------------------------------------------------------------

def is_num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


def not_drawn(name: str, why: str, kind: str = "plot") -> str:
    return f"*({kind} `{name}` not drawn: {md.cell(why)})*"


def f32(x: float) -> float:
    """x rounded to the nearest float32 (ties to even), as a Python float."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def ulp32(x: float) -> float:
    """The spacing of float32 numbers at |x| (2^-149 at 0 and in the subnormal range)."""
    if x == 0:
        return 2.0 ** -149
    _, e = math.frexp(abs(x))            # |x| = m 2^e, 0.5 <= m < 1
    return 2.0 ** max(e - 24, -149)


def halves_row(pos: float, freqs: list) -> list:
    """[sin(pos w_0), .., sin(pos w_{h-1}) | cos(pos w_0), .., cos(pos w_{h-1})]: the [sin | cos] halves row of the
    three schemes' tables, in double."""
    return [math.sin(pos * w) for w in freqs] + [math.cos(pos * w) for w in freqs]


def dot_term(x: list, row: list, scale: float) -> tuple:
    """(scale Σ_c x_c row_c, |scale| Σ_c |x_c row_c|) in double (math.fsum): a position term and the sum of the
    magnitudes of its terms (DESIGN.md §3: a sum of products is held relative to it)."""
    products = [a * b for a, b in zip(x, row)]
    return scale * math.fsum(products), abs(scale) * math.fsum(abs(p) for p in products)


def relative_error(got: float, want: tuple) -> float:
    """|got − e| / m for want = (e, m) of dot_term; 0 where both are −inf (an undefined entry, masked), inf where
    only one is, or where m = 0 and got differs from e."""
    e, m = want
    if got == NEG_INF or e == NEG_INF:
        return 0.0 if got == e else math.inf
    return abs(got - e) / m if m > 0 else (0.0 if got == e else math.inf)


def write_npy_nd(path: str, shape: tuple, values: list) -> None:
    """`values` (flat, C order) as a little-endian float64 .npy of `shape`, NumPy format 1.0 (npy.write_npy writes
    2-D only; XLNet's r is [d_model, heads, d_head])."""
    if math.prod(shape) != len(values):
        raise ValueError(f"{len(values)} values for shape {shape}")
    dims = ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }" % dims
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%dd" % len(values), *[float(v) for v in values]))


class RelativeCli(CliData):
    """`posenc table` and `posenc scores` of the sinusoid-relative schemes as Python data; the scores' inputs are
    written as float64 .npy files into `directory` (None: no scores), so the CLI computes in float64."""

    def __init__(self, cli: str | None, directory: str | None = None, timeout: float = 60):
        super().__init__(cli, timeout)
        self.directory = directory

    def npy_file(self, name: str, shape: tuple, values: list) -> str:
        path = os.path.join(self.directory, name)
        write_npy_nd(path, shape, values)
        return path

    def table(self, args: tuple, key: str, rows: int, cols: int | None) -> dict | None:
        """`posenc *args --format json` (a table verb), its "table" (or "rows") checked to be `rows` rows of `cols`
        finite numbers (cols None: of one length, not 0), d[key] (the rows' positions) `rows` integers and "spec" an
        object; None (and `error` set) otherwise."""
        d = self.run(args)
        if d is None:
            return None
        body = "rows" if "rows" in d and "table" not in d else "table"
        t, pos = d.get(body), d.get(key)
        if cols is None and isinstance(t, list) and t and isinstance(t[0], list) and t[0]:
            cols = len(t[0])
        if not isinstance(t, list) or len(t) != rows or not all(
                isinstance(r, list) and len(r) == cols and all(is_num(v) for v in r) for r in t):
            self.fail(args, f"expected \"{body}\": {rows} rows of {cols or 'some'} numbers")
            return None
        if not isinstance(pos, list) or len(pos) != rows or not all(is_int(v) for v in pos) \
                or not isinstance(d.get("spec"), dict):
            self.fail(args, f"expected \"{key}\": {rows} integers and a \"spec\" object")
            return None
        return d

    def scores(self, args: tuple, inputs: tuple, lq: int, lk: int) -> dict | None:
        """`posenc *args --<flag> <file> ... --format json` (a scores verb of one head) with inputs = ((flag, name,
        shape, values), ...) written as .npy files: its "scores" checked to be lq rows of lk numbers or null (−inf:
        undefined or hidden; as floats in d["scores"]), "shape" [1, lq, lk], "scale" a number, "spec" an object;
        None (and `error` set) otherwise. The run is cached by its arguments (file names included), so inputs of
        different contents must have different names."""
        if self.error:
            return None
        if self.directory is None:
            self.error = f"no directory for the .npy inputs of `posenc {' '.join(args[:2])}`"
            return None
        files = []
        for flag, name, shape, values in inputs:
            files += [flag, self.npy_file(name, shape, values)]
        full = (*args, *files)
        d = self.run(full)
        if d is None:
            return None
        rows = d.get("scores")
        if d.get("shape") != [1, lq, lk] or not isinstance(rows, list) or len(rows) != lq or not all(
                isinstance(r, list) and len(r) == lk and all(v is None or is_num(v) for v in r) for r in rows):
            self.fail(full, f"expected \"scores\": {lq} rows of {lk} numbers (shape [1, {lq}, {lk}])")
            return None
        if not is_num(d.get("scale")) or not isinstance(d.get("spec"), dict):
            self.fail(full, "expected \"scale\" and a \"spec\" object")
            return None
        d["scores"] = [[NEG_INF if v is None else float(v) for v in r] for r in rows]
        return d
