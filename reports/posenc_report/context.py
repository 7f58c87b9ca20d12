"""What every page builder receives: the inputs, where to write, the plot renderer, and results of
pages built earlier (the index summarises the others; figures.md reuses accuracy's plots)."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .gnuplot import Renderer
from .inputs import Inputs

PAGES = (("index.md", "Overview"), ("claims.md", "Claims"), ("accuracy.md", "Accuracy"),
         ("performance.md", "Performance"), ("figures.md", "Figures"))

_TEST_DEF = re.compile(r"\b(?:RC_GTEST_PROP|RC_GTEST_FIXTURE_PROP|TEST|TEST_F|TEST_P)\(\s*(\w+)\s*,\s*(\w+)")


@dataclass
class Context:
    inputs: Inputs
    out_dir: Path
    renderer: Renderer
    repo: Path | None = None
    cli: str | None = None
    summaries: dict = field(default_factory=dict)      # page file -> summary dict returned by its builder
    _tests: dict | None = None

    @property
    def readme_link(self) -> str:
        here = Path(__file__).resolve().parent.parent / "README.md"
        return Path(os.path.relpath(here, self.out_dir.resolve())).as_posix()

    @property
    def nav(self) -> str:
        return " · ".join(f"[{title}]({name})" for name, title in PAGES)

    def test_link(self, test: str | None) -> str | None:
        """Markdown link to the definition of test 'Suite.Name' under <repo>/properties, if found."""
        if not test or not self.repo:
            return None
        if self._tests is None:
            self._tests = self._index_tests()
        hit = self._tests.get(test)
        if not hit:
            return None
        path, line = hit
        rel = Path(os.path.relpath(path, self.out_dir.resolve())).as_posix()
        return f"[{path.name}:{line}]({rel}#L{line})"

    def _index_tests(self) -> dict:
        index = {}
        root = Path(self.repo).resolve() / "properties"
        if not root.is_dir():
            return index
        for path in sorted(p for p in root.rglob("*") if p.suffix in (".cpp", ".cc", ".cxx", ".hpp", ".h")):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for m in _TEST_DEF.finditer(text):
                name = f"{m.group(1)}.{m.group(2)}"
                index.setdefault(name, (path, text.count("\n", 0, m.start()) + 1))
        return index
