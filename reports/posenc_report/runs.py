"""Which run produced a result file. main.sh gives every program of one job the same run id
(POSENC_RUN_ID, "<commit>@<start time>"), recorded in meta.run_id (proofs, accuracy) or context.posenc_run_id
(Google Benchmark) and in run.json. Files written before run ids existed, or by a program run by hand, have no
id (absent or ""): they are grouped by commit instead, and labelled so ("commit 924e244b2385 (no run id)")."""
from __future__ import annotations

import re

UNKNOWN = "unknown run (no run id, no commit)"
_SHA = re.compile(r"^([0-9a-fA-F]{7,40})(.*)$")


def short_commit(commit) -> str | None:
    """A commit as recorded, a full sha cut to 12 hex digits (any "+dirty" suffix kept)."""
    if commit is None or str(commit).strip() == "":
        return None
    text = str(commit).strip()
    m = _SHA.match(text)
    return m.group(1)[:12] + m.group(2) if m else text


def label(run_id, commit) -> str:
    if isinstance(run_id, str) and run_id.strip():
        return run_id.strip()
    c = short_commit(commit)
    return f"commit {c} (no run id)" if c else UNKNOWN


def of_meta(meta: dict) -> str:
    """Run of a proofs-*.json / accuracy*.json file, from its meta block."""
    meta = meta if isinstance(meta, dict) else {}
    return label(meta.get("run_id"), meta.get("commit"))


def of_bench(context: dict) -> str:
    """Run of a Google Benchmark file, from its context block."""
    c = context if isinstance(context, dict) else {}
    return label(c.get("posenc_run_id") or c.get("run_id"), c.get("posenc_commit") or c.get("commit"))


def needs_column(runs, main: str | None) -> bool:
    """Whether rows coming from `runs` must name their run: more than one run, or one that is not `main`."""
    runs = {r for r in runs if r}
    return len(runs) > 1 or (main is not None and bool(runs - {main}))


def names(runs) -> str:
    """`a`, `b` — the runs, sorted, as inline code."""
    return ", ".join(f"`{r}`" for r in sorted({r for r in runs if r})) or "*none*"
