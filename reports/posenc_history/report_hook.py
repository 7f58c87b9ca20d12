"""What the report generator (reports/generate.py --history DB) uses: the results directory's run compared with
the previous comparable run of the history, and history.md.

The run being reported is the history's copy when it has been imported (its run id), else the results directory
parsed in memory (nothing is written to the database). Its previous run is store.previous_for's: the latest
earlier run with the same mode and selection, on the same machine fingerprint when there is one."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from posenc_report import md

from . import compare, page, parse, render, schema, store
from .errors import HistoryError

ARROW = {"regression": "▼", "improvement": "▲"}


@dataclass
class View:
    db: Path
    comparison: compare.Comparison | None
    note: str                          # why there is no comparison, or how the base was chosen

    def ratio_row(self, file: str, kernel: str, kind: str):
        if self.comparison is None:
            return None
        return next((r for r in self.comparison.rows if r.what == "ratio" and r.file == file and r.name == kernel
                     and r.kind == kind), None)

    def cell(self, file: str, kernel: str, kinds) -> str:
        """The performance page's "vs previous run" cell: the change of each ratio, marked where significant."""
        parts = []
        for kind in kinds:
            r = self.ratio_row(file, kernel, kind)
            if r is None or r.change is None:
                continue
            text = render.pct(r.change)
            if r.verdict in ARROW:
                text = f"**{ARROW[r.verdict]} {text}** (p {r.q:.2g})"
            parts.append((f"{kind} " if len(kinds) > 1 else "") + text)
        return "<br>".join(parts) or "—"

    def arrow(self, file: str, kernel: str, kind: str) -> str:
        """▲ / ▼ with the change where the ratio moved significantly beyond the threshold, else ''."""
        r = self.ratio_row(file, kernel, kind)
        return f"{ARROW[r.verdict]} {render.pct(r.change)}" if r is not None and r.verdict in ARROW else ""

    @property
    def summary(self) -> str:
        if self.comparison is None:
            return f"No comparison with an earlier run: {self.note}."
        c = self.comparison
        s = c.settings
        return (f"Compared with the previous comparable run {md.icode(c.base.run_id)} ({self.note}) from the "
                f"history `{self.db.name}`: the change of each ratio is the Hodges–Lehmann estimate over the "
                f"per-repetition ratios; ▼/▲ mark changes with Mann–Whitney U p < {s.alpha:g} beyond ±"
                f"{s.threshold * 100:g} % ({md.plural(len(c.regressions), 'regression')}, "
                f"{md.plural(len(c.improvements), 'improvement')} among the gated comparisons).")


def _current(conn, results_dir: Path, main_run: str | None):
    if main_run:
        hit = conn.execute("SELECT id FROM runs WHERE run_id = ?", (main_run,)).fetchone()
        if hit:
            return store.load_run(conn, hit[0])
    return parse.parse(results_dir)


def attach(db, results_dir, main_run: str | None) -> View:
    db = Path(db)
    conn = schema.open_db(db, create=False)
    try:
        new = _current(conn, Path(results_dir), main_run)
    except HistoryError as e:
        return View(db, None, f"the results directory's run could not be read ({e})")
    pk, how = store.previous_for(conn, new.run_id, new.started, new.mode, new.selection, new.fingerprint,
                                 new.pk if new.pk is not None else -1)
    if pk is None:
        return View(db, None, how)
    return View(db, compare.compare(store.load_run(conn, pk), new), how)


def history_page(db, out_dir: Path, renderer, note: str) -> str:
    conn = schema.open_db(Path(db), create=False)
    return page.build(conn, out_dir, renderer, note)
