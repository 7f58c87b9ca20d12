"""What every page builder receives: the inputs (scoped to one scheme on a scheme's pages), where to write,
the plot renderer, and results of pages built earlier (the scheme's index summarises its other pages;
figures.md reuses accuracy's plots). Links (README, test sources) are relative to the page's own directory."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .figure_data import FigureData
from .gnuplot import Renderer
from .inputs import Inputs

# The pages of one scheme, in <out>/<scheme>/ (the same for every scheme).
PAGES = (("index.md", "Summary"), ("claims.md", "Claims"), ("accuracy.md", "Accuracy"),
         ("performance.md", "Performance"), ("figures.md", "Figures"))

# A test definition at the start of a line (not in a comment): GoogleTest / RapidCheck macros and posenc's claim
# macros (properties/support/claims.hpp).
_TEST_DEF = re.compile(r"^[ \t]*(?:RC_GTEST_PROP|RC_GTEST_FIXTURE_PROP|TEST|TEST_F|TEST_P|POSENC_PROPERTY|"
                       r"POSENC_CLAIM_TEST|POSENC_REGRESSION)\(\s*(\w+)\s*,\s*(\w+)", re.MULTILINE)


@dataclass
class Context:
    inputs: Inputs
    out_dir: Path
    renderer: Renderer | None
    repo: Path | None = None
    summaries: dict = field(default_factory=dict)      # page file -> summary dict returned by its builder
    scheme: str | None = None                          # None on the overview
    module: object = None                              # the scheme's report module (schemes/<name>.py), if any
    main_run: str | None = None                        # the overview's run (run.json's id)
    problems: list = field(default_factory=list)       # [(where, message)] for the overview's problem list
    figure_notes: list = field(default_factory=list)   # [(label, markdown)] a figures module adds
    shared: dict = field(default_factory=dict)         # caches shared by all contexts of one generation

    def figure_data(self) -> FigureData:
        """The scheme's figures-<scheme>.json (posenc_figures) from the results directory."""
        return FigureData(self.inputs.all.results_dir, self.scheme or "?")

    @property
    def readme_link(self) -> str:
        here = Path(__file__).resolve().parent.parent / "README.md"
        return Path(os.path.relpath(here, self.out_dir.resolve())).as_posix()

    @property
    def nav(self) -> str:
        links = " · ".join(f"[{title}]({name})" for name, title in PAGES)
        return f"**{self.scheme}:** {links} · [All schemes](../index.md)" if self.scheme else links

    def test_link(self, test: str | None) -> str | None:
        """Markdown link to the definition of test 'Suite.Name' under <repo>/schemes or <repo>/properties, if found."""
        if not test or not self.repo:
            return None
        if "tests" not in self.shared:
            self.shared["tests"] = self._index_tests()
        hit = self.shared["tests"].get(test)
        if not hit:
            return None
        path, line = hit
        rel = Path(os.path.relpath(path, self.out_dir.resolve())).as_posix()
        return f"[{path.name}:{line}]({rel}#L{line})"

    def _index_tests(self) -> dict:
        index = {}
        roots = [Path(self.repo).resolve() / d for d in ("properties", "schemes")]
        for path in sorted(p for root in roots if root.is_dir() for p in root.rglob("*")
                           if p.suffix in (".cpp", ".cc", ".cxx", ".hpp", ".h")):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for m in _TEST_DEF.finditer(text):
                name = f"{m.group(1)}.{m.group(2)}"
                index.setdefault(name, (path, text.count("\n", 0, m.start()) + 1))
        return index
