"""Reading the results directory. Nothing here raises on bad input: problems become `errors` that the
pages print, so a missing or broken file yields a "not run" section instead of a crash."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

PROOFS_GLOB = "proofs-*.json"
ACCURACY_GLOB = "accuracy*.json"       # accuracy.json, or several accuracy-<part>.json that are merged
BENCH_GLOB = "bench-*.json"


@dataclass
class Loaded:
    """One input file: its parsed JSON (or None) and what went wrong."""
    path: Path
    data: object = None
    error: str | None = None


@dataclass
class Proofs:
    files: list = field(default_factory=list)      # [Loaded]
    metas: list = field(default_factory=list)      # [(label, meta dict)]
    claims: list = field(default_factory=list)     # claim dicts, each with "_program" added


@dataclass
class Accuracy:
    files: list = field(default_factory=list)
    metas: list = field(default_factory=list)
    budget: list = field(default_factory=list)
    series: list = field(default_factory=list)


@dataclass
class Inputs:
    results_dir: Path
    proofs: Proofs
    accuracy: Accuracy
    bench: list                                    # [Loaded] with GB JSON in .data

    def errors(self) -> list:
        files = self.proofs.files + self.accuracy.files + self.bench
        return [(f.path.name, f.error) for f in files if f.error]


def load_json(path: Path, want: type = dict) -> Loaded:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        return Loaded(Path(path), None, f"cannot read: {e.strerror or e}")
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        return Loaded(Path(path), None, f"not valid JSON: {e}")
    if not isinstance(data, want):
        return Loaded(Path(path), None, f"top level is {type(data).__name__}, expected {want.__name__}")
    return Loaded(Path(path), data)


def _list_of_dicts(value) -> list:
    return [x for x in value if isinstance(x, dict)] if isinstance(value, list) else []


# Fields that are names or text: anything else a producer writes there (a number, a list) becomes its JSON
# text, so that later code can compare, hash and print them without type checks.
CLAIM_TEXT = ("id", "scheme", "test", "statement", "source", "oracle", "status", "budget_row", "metric",
              "worst_input")
BUDGET_TEXT = ("id", "scheme", "quantity", "dtype", "regime", "domain", "metric", "why", "worst_input")
SERIES_TEXT = ("scheme", "preset", "regime", "dtype", "metric", "reference", "budget_row")


def _text_fields(record: dict, keys: tuple) -> dict:
    out = dict(record)
    for k in keys:
        v = out.get(k)
        if v is not None and not isinstance(v, str):
            out[k] = json.dumps(v, sort_keys=True)
    return out


def _meta(data: dict) -> dict:
    meta = data.get("meta")
    return meta if isinstance(meta, dict) else {}


def load_proofs(results: Path) -> Proofs:
    out = Proofs()
    for path in sorted(results.glob(PROOFS_GLOB)):
        f = load_json(path)
        out.files.append(f)
        if f.data is None:
            continue
        meta = _meta(f.data)
        label = str(meta.get("program") or path.stem.removeprefix("proofs-"))
        out.metas.append((label, meta))
        claims = _list_of_dicts(f.data.get("claims"))
        if not claims and "claims" not in f.data:
            f.error = "no 'claims' list"
        for c in claims:
            out.claims.append({**_text_fields(c, CLAIM_TEXT), "_program": label})
    return out


def load_accuracy(results: Path) -> Accuracy:
    out = Accuracy()
    for path in sorted(results.glob(ACCURACY_GLOB)):
        f = load_json(path)
        out.files.append(f)
        if f.data is None:
            continue
        meta = _meta(f.data)
        out.metas.append((str(meta.get("program") or path.stem), meta))
        out.budget += [_text_fields(r, BUDGET_TEXT) for r in _list_of_dicts(f.data.get("budget"))]
        out.series += [{**_text_fields(s, SERIES_TEXT), "points": _list_of_dicts(s.get("points"))}
                       for s in _list_of_dicts(f.data.get("series"))]
    return out


def load_bench(results: Path) -> list:
    files = []
    for path in sorted(results.glob(BENCH_GLOB)):
        f = load_json(path)
        if f.data is not None and not isinstance(f.data.get("benchmarks"), list):
            f.error, f.data = "no 'benchmarks' list (is this Google Benchmark JSON?)", None
        elif f.data is not None and not isinstance(f.data.get("context"), dict):
            f.data["context"] = {}
        files.append(f)
    return files


def load(results: Path) -> Inputs:
    results = Path(results)
    return Inputs(results, load_proofs(results), load_accuracy(results), load_bench(results))
