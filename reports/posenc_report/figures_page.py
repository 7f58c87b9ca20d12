"""figures.md: the scheme's own figures (drawn by its report module, schemes/<name>/report.py) and its accuracy plots
again. A scheme without a module gets the accuracy plots and a note."""
from __future__ import annotations

from . import md, methods, schemes


def build(ctx) -> tuple:
    module, scheme = ctx.module, ctx.scheme or "?"
    figures, body = [], ""
    if module is None:
        body = (f"No scheme figures module: `schemes/{scheme}/report.py` does not exist, so this "
                "scheme has no figures of its own yet (reports/README.md, \"Adding a scheme\"). Its accuracy plots "
                "follow.\n")
    else:
        try:
            figures = schemes.draw(module, ctx)
        except Exception as e:                      # the accuracy plots below still get written
            why = f"{type(e).__name__}: {e}"
            ctx.problems.append((f"{scheme}/figures.md", f"schemes/{scheme}/report.py figures(): {why}"))
            body = f"The scheme's figures module failed: {md.code(why, table=False)}.\n"
        else:
            body = ("".join(md.figure(img, cap) for img, cap in figures) if figures
                    else "The scheme's figures module draws no figures.\n")
    metas = ctx.inputs.proofs.metas + ctx.inputs.accuracy.metas
    text = methods.header(ctx, f"Figures: {scheme}", metas, ctx.figure_notes)
    text += md.section("Scheme figures", body)
    acc = ctx.summaries.get("accuracy.md", {}).get("figures") or []
    text += md.section("Accuracy against position", "".join(md.figure(img, cap) for img, cap in acc) if acc
                       else md.not_run("Accuracy plots", "no accuracy series (see [accuracy](accuracy.md))"))
    return text, {"ran": True, "figures": figures, "module": module is not None}
