"""What the report modules of the sinusoid-relative attentions (Transformer-XL, XLNet, TENER) share: the index
matrix of a small call from the posenc CLI (`posenc index <scheme> --format json`), checked against the scheme's
definition here and drawn as a table in which the entries the code's rel_shift leaves undefined (junk) are marked."""
from __future__ import annotations

from . import md
from .cli_data import CliData


def index_figure(ctx, scheme: str, args: tuple, lq: int, lk: int, want, what: str, claims: str) -> tuple:
    """(Markdown table, caption) of `posenc index <scheme> *args --query-length lq --key-length lk`: entry (i, j) is
    the table row it reads, "·" where undefined (-1); want(i, j) is the definition's row (None: undefined)."""
    src = CliData(ctx.cli)
    data = src.run(("index", scheme, *args, "--query-length", str(lq), "--key-length", str(lk)))
    name = f"table-{scheme}-index"
    if data is None or "indices" not in data:
        why = src.error or "no indices in the CLI's output"
        return f"*(table `{name}` not drawn: {md.cell(why)})*", what
    rows = data["indices"]
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
    cap = (f"{what} Checked here: {verdict}. Data: `posenc index {scheme} {' '.join(args)} --query-length {lq} "
           f"--key-length {lk} --format json`. See {claims}.")
    return table, cap
