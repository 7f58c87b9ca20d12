"""A scheme's figure data: figures-<scheme>.json, written by posenc_figures (reports/figures/figures.hpp) into the
results directory. The report modules draw from it and do no maths of their own: every number a figure plots or its
caption quotes is in the file. Nothing here raises: a missing or broken file, or a figure the file lacks, leaves
`error` saying why, and the module prints a "not drawn" note instead of the figure."""
from __future__ import annotations

import functools
import json
from pathlib import Path

from . import md

FILE = "figures-{scheme}.json"


def not_drawn(name: str, why: str, kind: str = "plot") -> str:
    """The Markdown a figure or table shows in place of itself when its data is missing."""
    return f"*({kind} `{name}` not drawn: {md.cell(why)})*"


def figure(key: str, name: str, kind: str = "plot"):
    """Decorator of a report module's figure: `fn(ctx, fig, name, *args) -> (image, caption)`, given the object
    `key` of the figure data, becomes `fn(ctx, data, *args)` that returns the "not drawn" note (`name`: the figure's
    id; `kind`: "plot" or "table") with an empty caption when the file lacks it."""
    def wrap(fn):
        @functools.wraps(fn)
        def run(ctx, data: "FigureData", *args) -> tuple:
            fig = data.get(key)
            if fig is None:
                return not_drawn(name, data.error, kind), ""
            return fn(ctx, fig, name, *args)
        return run
    return wrap


class FigureData:
    """figures-<scheme>.json of a results directory: `get(figure)`, and `error` (why the last get gave None)."""

    def __init__(self, results_dir, scheme: str):
        self.scheme = scheme
        self.file_error = None   # why the file gives no figures at all
        self.missing = []        # figure ids asked for that the file lacks
        self._last = None
        self.path = Path(results_dir) / FILE.format(scheme=scheme) if results_dir else None
        self.figures, self.meta = {}, {}
        if self.path is None:
            self.file_error = "no results directory"
            return
        try:
            doc = json.loads(self.path.read_text())
        except FileNotFoundError:
            self.file_error = f"{self.path.name} not found (scripts/main.sh writes it with posenc_figures)"
            return
        except (OSError, ValueError) as e:
            self.file_error = f"{self.path.name}: {type(e).__name__}: {e}"
            return
        if not isinstance(doc, dict) or doc.get("scheme") != scheme:
            self.file_error = f"{self.path.name}: not the figure data of {scheme}"
        elif doc.get("error") is not None:
            self.file_error = f"posenc_figures failed for {scheme}: {doc['error']}"
        elif not isinstance(doc.get("figures"), dict):
            self.file_error = f"{self.path.name}: no \"figures\" object"
        else:
            self.figures = doc["figures"]
            self.meta = doc.get("meta") if isinstance(doc.get("meta"), dict) else {}

    def get(self, figure: str) -> dict | None:
        """The figure's object, or None (and `error` set) when the file has none."""
        if self.file_error:
            return None
        value = self.figures.get(figure)
        if not isinstance(value, dict):
            self._last = f"{self.path.name} has no figure \"{figure}\""
            self.missing.append(figure)
            return None
        self._last = None
        return value

    @property
    def error(self) -> str | None:
        """Why the last get() gave None: the file's problem, or the figure it lacks (None after a figure it has)."""
        return self.file_error or self._last

    def note(self) -> tuple:
        """The (label, Markdown) row of the figures page's methods block saying where the data came from."""
        if self.file_error:
            return "figure data", f"not drawn: {md.cell(self.file_error)}"
        run = self.meta.get("run_id") or self.meta.get("commit") or "?"
        return "figure data", (f"`posenc_figures` (reports/figures, schemes/{self.scheme}/figures.cpp): "
                               f"{self.path.name}, run {md.cell(str(run))}"
                               + (f"; not drawn, missing from it: {', '.join(self.missing)}" if self.missing else ""))
