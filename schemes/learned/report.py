"""Report module of learned absolute position embeddings (BERT, GPT-2, RoBERTa, fairseq, OPT): its speed headline,
a table of the position ids each preset's id map gives for padded inputs (right and left padding, a cache, holes in
the attention mask), and the numbers behind "a learned table has no relative structure": <row(p), row(p + k)> of a
random table (as the models initialise theirs) varies with p for a fixed k, the sinusoidal table's does not.

Every number comes from figures-learned.json (schemes/learned/figures.cpp, run by posenc_figures: the ids, the random
table, the rows and the dot products); this module only draws."""
from __future__ import annotations

from .. import md
from ..figure_data import FigureData, figure

SCHEME = "learned"

CLAIMS_LINK = "[claims](claims.md#scheme-learned)"


def _yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


def _ids_text(ids) -> str:
    return md.code(", ".join(str(i) for i in ids))


# --- (a) the ids of each preset -------------------------------------------------------------------------------

@figure("ids", "tab-learned-ids", "table")
def _ids_table(ctx, fig: dict, name: str) -> tuple:
    presets, examples = fig["presets"], fig["examples"]
    rows = []
    for e in examples:
        inputs = f"{md.code(','.join(str(t) for t in e['tokens']))} / {md.code(e['mask'])} / {e['past']}"
        rows.append([md.cell(e["label"]), inputs] + [_ids_text(e["ids"][p["preset"]]) for p in presets])
    table = md.table(["input", "tokens / attention mask / past"] +
                     [f"{p['preset']} ({md.cell(p['id_map'])})" for p in presets], rows,
                     ["l", "l"] + ["l"] * len(presets))
    cache = examples[fig["cache_example"]]["ids"]
    cap = ("**(a) The position ids each preset gives.** For each input (token ids; the attention mask, which covers "
           "the past cached tokens and then the L tokens of this call; past), the ids `posenc ids learned --preset P` "
           "prints: the rows of the table the tokens look up. Token id 1 is the padding token (padding_idx 1 of "
           "RoBERTa, fairseq and OPT). arange (BERT, GPT-2 when the caller passes no position_ids) numbers every "
           "token, padding included, from past: right padding leaves the real tokens at 0 … 3, left padding moves "
           "them to 2 … 5. make_positions (RoBERTa, fairseq) gives padding tokens the row padding_idx = 1 and counts "
           "the other tokens from padding_idx + 1 = 2, on either side of the padding; with a cache it adds past to "
           "that count, as if every cached token were real: the cache row gives "
           f"{_ids_text(cache['roberta'])}. cumsum_mask (OPT) counts the ones of the attention mask over "
           "the cache and the new tokens, adds offset − 1 = 1, and gives 1 where the mask is 0: padding in the "
           f"cache is not counted ({_ids_text(cache['opt'])}), and a hole inside the sequence gets 1 "
           "while the count resumes after it. Presets of one map give equal ids in every row here: bert and gpt2 "
           f"{_yes(fig['same_bert_gpt2'])}, roberta and fairseq {_yes(fig['same_roberta_fairseq'])} (they differ "
           "in their tables' rows, not in the ids). Every id equals the map's definition (posenc/learned_spec.hpp) "
           "as the oracle evaluates it (reference::learned_position_ids, an independent transcription; claim "
           "LEARNED-IDS-1): " + _yes(fig["ids_equal_oracle"]) + ". Data: position_ids of each preset's spec "
           "(`posenc ids learned --preset P --tokens T --mask M --past N` gives the same ids) for the "
           f"{len(presets)} presets and the {len(examples)} inputs. See {CLAIMS_LINK}.")
    return table, cap


# --- (b) no relative structure --------------------------------------------------------------------------------

@figure("relative", "tab-learned-relative", "table")
def _relative_table(ctx, fig: dict, name: str) -> tuple:
    n, dim, count, std, ks = fig["rows"], fig["dim"], fig["positions"], fig["init_std"], fig["offsets"]
    tables = {t["table"]: t for t in fig["tables"]}
    out_rows = []
    for which, label in (("random", f"random N(0, {md.num(std)}²), float32 (a learned table at initialisation)"),
                         ("sinusoidal", "sinusoidal, vaswani (PE(p), interleaved sin/cos)")):
        t = tables[which]
        cells = [md.cell(label), md.num(t["norm2"], 4)]
        for s in t["by_offset"]:
            cells.append(f"{md.num(s['min'], 4)} … {md.num(s['max'], 4)} (sd {md.num(s['sd'], 2)}; "
                         f"{md.num(s['spread'], 2)} of the mean \\|row\\|²)")
        out_rows.append(cells)
    md_table = md.table([f"table ({dim} columns)", f"mean \\|row(p)\\|², p < {count}"] +
                        [f"k = {k}: min … max of ⟨row(p), row(p+k)⟩ over p" for k in ks], out_rows,
                        ["l", "r"] + ["l"] * len(ks))
    r1, s1 = tables["random"]["by_offset"][0], tables["sinusoidal"]["by_offset"][0]
    norm2 = tables["random"]["norm2"]
    k_list = ", ".join(str(k) for k in ks)
    cap = ("**(b) No relative structure.** A learned table is free parameters, one row per position: nothing in the "
           "scheme makes ⟨row(p), row(p + k)⟩ (the position–position term of a query–key dot product where W_qᵀW_k "
           "is the identity) a function of the offset k alone (claim LEARNED-NOT-RELATIVE-1). Shown for a table as "
           f"the models start training: {n} × {dim} values drawn N(0, {md.num(std)}²) (BERT's and "
           "RoBERTa's initializer_range, OPT's init_std), rounded to float32 (seeded; read back through "
           "LearnedPlan::lookup, whose rows equal the values drawn: " + _yes(fig["rows_equal_values_drawn"]) +
           f"). For p = 0 … {fig['last_position']}, ⟨row(p), row(p + {r1['k']})⟩ takes values from {md.num(r1['min'], 4)} to "
           f"{md.num(r1['max'], 4)} (standard deviation {md.num(r1['sd'], 2)}; mean squared row norm "
           f"{md.num(norm2, 4)}): for a fixed k it is a different number at each p, and its mean over p is "
           f"within {md.num(fig['largest_random_mean'], 2)} of 0 at k = {k_list}, so k does not determine it. The "
           "sinusoidal table's is, in exact arithmetic, the same number at every p: ⟨PE(p), PE(p + k)⟩ = "
           f"Σᵢ cos(ωᵢ k) ({md.num(s1['mean'], 6)} at k = {s1['k']}). Over p it varies by at most "
           f"{md.num(fig['worst_sinusoidal_spread'], 2)} of its mean squared row norm at k = {k_list} (rounding), the "
           f"random table's by at least {md.num(fig['least_random_spread'], 2)}; its means equal Σᵢ cos(ωᵢ k) "
           "evaluated in float64: " + _yes(fig["sinusoidal_means_equal_sum_cos"]) +
           ". Training may give a table regularities, but nothing in the scheme makes them exact or guarantees them. "
           f"Data: the random table drawn in figures.cpp (CPython's random.Random({fig['seed']}).gauss, as the "
           f"report drew it before) read through LearnedPlan::lookup (preset bert, {n} tokens, f64; `posenc table "
           f"learned --preset bert --weights <the table as a float32 .npy> --length {n} --dtype f64` gives the same "
           "rows), and SinusoidalPlan::table of the vaswani preset (`posenc table sinusoidal --preset vaswani --dim "
           f"{dim} --positions 0:{n} --dtype f64` gives the same rows); dot products summed exactly (as math.fsum) "
           f"in figures.cpp. See {CLAIMS_LINK}.")
    return md_table, cap


def figures(ctx, data: FigureData) -> list:
    return [_ids_table(ctx, data), _relative_table(ctx, data)]
