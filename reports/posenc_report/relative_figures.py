"""What the report modules of the sinusoid-relative attentions (Transformer-XL, XLNet, TENER) share: the index
matrix of a small call, drawn from the scheme's figure data (figures-<scheme>.json: the plan's indices(), written by
schemes/<scheme>/figures.cpp) as a table in which the entries the code's shift leaves undefined (junk, -1) are
marked, and the yes / **no** of a fact the data states."""
from __future__ import annotations

from . import md
from .figure_data import FigureData, not_drawn


def yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


def index_figure(data: FigureData, figure: str, scheme: str, what, claim: str, see: str, call: str,
                 verb: str) -> tuple:
    """(Markdown table, caption) of the figure data's `figure` {"query_length", "key_length", "indices"}: entry (i, j)
    is the table row it reads, "·" where undefined (-1). `what(query_length, key_length)`: the caption's opening;
    `claim`: the id of the claim that every entry is the definition's row; `see`: the claims link and ids the caption ends with; `call`: the library call the matrix
    comes from; `verb`: the `posenc index` arguments that give the same matrix."""
    name = f"table-{scheme}-index"
    fig = data.get(figure)
    if fig is None:
        return not_drawn(name, data.error, "table"), ""
    lq, lk, rows = fig["query_length"], fig["key_length"], fig["indices"]
    body = [[f"{i} ({lk - lq + i})", *["·" if v == -1 else md.num(v) for v in r]] for i, r in enumerate(rows)]
    table = md.table(["i (q_i)", *[f"j = {j}" for j in range(lk)]], body, ["l"] + ["r"] * lk)
    cap = (f"{what(lq, lk)} That every entry is the definition's row, and the undefined ones (−1) exactly the marked "
           f"ones, is a claim ({claim}). Data: {call}, {lq} queries, {lk} keys (`posenc index {scheme} "
           f"{verb + ' ' if verb else ''}--query-length {lq} --key-length {lk}` gives the same matrix). See {see}.")
    return table, cap
