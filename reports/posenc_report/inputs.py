"""Reading the results directory. Nothing here raises on bad input: problems become `errors` that the
pages print, so a missing or broken file yields a "not run" section instead of a crash.

Every record keeps where it came from: claims, budget rows and series get "_file" (file name), "_run" (run
label, see runs.py) and claims "_program"; benchmark files carry their run on the Loaded. `Inputs.scoped(name)`
is the same data seen through one scheme: what each scheme's pages receive."""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import bench, runs

PROOFS_GLOB = "proofs-*.json"
ACCURACY_GLOB = "accuracy*.json"       # accuracy.json, or several accuracy-<part>.json that are merged
BENCH_GLOB = "bench-*.json"
RUN_FILE = "run.json"                  # the run itself (scripts/main.sh): id, mode, machine, stages
SCHEMES_FILE = "schemes.json"          # `posenc list --format json`: schemes and their presets
UNSPECIFIED = "unspecified"            # scheme of a record that names none


@dataclass
class Loaded:
    """One input file: its parsed JSON (or None), what went wrong, and (once read) its program label, meta
    block and run label."""
    path: Path
    data: object = None
    error: str | None = None
    label: str | None = None
    meta: dict | None = None
    run: str | None = None


@dataclass
class Proofs:
    files: list = field(default_factory=list)      # [Loaded]
    metas: list = field(default_factory=list)      # [(label, meta dict)]; meta has "_run"
    claims: list = field(default_factory=list)     # claim dicts, each with "_program", "_file", "_run" added


@dataclass
class Accuracy:
    files: list = field(default_factory=list)
    metas: list = field(default_factory=list)
    budget: list = field(default_factory=list)
    series: list = field(default_factory=list)


def scheme_of(record: dict) -> str:
    value = record.get("scheme") if isinstance(record, dict) else None
    return str(value).strip() if value is not None and str(value).strip() else UNSPECIFIED


def bench_scheme(name) -> str:
    return (bench.scheme_of(name) if isinstance(name, str) else None) or UNSPECIFIED


@dataclass
class Inputs:
    results_dir: Path
    proofs: Proofs
    accuracy: Accuracy
    bench: list                                    # [Loaded] with GB JSON in .data
    run_file: Loaded | None = None                 # run.json (None: not present)
    schemes_file: Loaded | None = None             # schemes.json (None: not present)
    scheme: str | None = None                      # set on a scoped view
    parent: Inputs | None = None                   # the unscoped inputs of a scoped view

    @property
    def all(self) -> Inputs:
        return self.parent or self

    @property
    def run(self) -> dict:
        """run.json's content ({} when absent or unreadable)."""
        f = self.all.run_file
        return f.data if f is not None and isinstance(f.data, dict) else {}

    def data_files(self) -> list:
        return self.proofs.files + self.accuracy.files + self.bench

    def files(self) -> list:
        extra = [f for f in (self.run_file, self.schemes_file) if f is not None]
        return extra + self.data_files()

    def errors(self) -> list:
        return [(f.path.name, f.error) for f in self.files() if f.error]

    def runs(self) -> list:
        """Run labels of the readable result files (proofs, accuracy, benchmarks), sorted."""
        return sorted({f.run for f in self.data_files() if f.data is not None and f.run})

    def main_run(self) -> str | None:
        """The run the report is about: run.json's id; without one, the only run of the result files."""
        rid = self.run.get("run_id")
        if isinstance(rid, str) and rid.strip():
            return rid.strip()
        found = self.all.runs()
        return found[0] if len(found) == 1 else None

    # --- schemes -------------------------------------------------------------------------------------------
    def catalogue(self) -> list:
        """schemes.json as [{"name", "summary", "presets": [{"name", "summary", "implementation", "commit"}]}]."""
        f = self.all.schemes_file
        data = f.data if f is not None and isinstance(f.data, dict) else {}
        out = []
        for s in _list_of_dicts(data.get("schemes")):
            if s.get("name") is None or str(s["name"]).strip() == "":
                continue
            presets = [{k: (None if p.get(k) is None else str(p.get(k)))
                        for k in ("name", "summary", "implementation", "commit")}
                       for p in _list_of_dicts(s.get("presets")) if p.get("name") is not None]
            out.append({"name": str(s["name"]).strip(), "summary": s.get("summary"), "presets": presets})
        return out

    def catalogue_entry(self, scheme: str) -> dict | None:
        return next((s for s in self.catalogue() if s["name"] == scheme), None)

    def schemes_in_results(self) -> set:
        found = {scheme_of(c) for c in self.proofs.claims}
        found |= {scheme_of(r) for r in self.accuracy.budget + self.accuracy.series}
        for f in self.bench:
            if f.data is not None:
                found |= {bench_scheme(e.get("name")) for e in _list_of_dicts(f.data.get("benchmarks"))}
        return found

    def scheme_names(self, registered=()) -> list:
        """Schemes that get pages: schemes.json's (in its order), then any seen only in results (sorted,
        "unspecified" last); when schemes.json is missing or unreadable, also the registered report modules."""
        names = [s["name"] for s in self.catalogue()]
        seen = sorted(self.schemes_in_results() - set(names), key=lambda n: (n == UNSPECIFIED, n))
        names += seen
        f = self.schemes_file
        if f is None or f.data is None:
            names += sorted(set(registered) - set(names))
        return list(dict.fromkeys(names))

    def scoped(self, scheme: str) -> Inputs:
        """The inputs of one scheme: its claims, budget rows, series and benchmarks, the files that hold them
        (with their metas), and every unreadable file (it may have held some)."""
        base = self.all
        claims = [c for c in base.proofs.claims if scheme_of(c) == scheme]
        budget = [r for r in base.accuracy.budget if scheme_of(r) == scheme]
        series = [s for s in base.accuracy.series if scheme_of(s) == scheme]
        used = {c["_file"] for c in claims} | {r["_file"] for r in budget + series}

        def keep(files):
            return [f for f in files if f.error or f.path.name in used]

        proofs = Proofs(keep(base.proofs.files), [(f.label, f.meta) for f in keep(base.proofs.files) if f.meta is not None],
                        claims)
        acc_files = keep(base.accuracy.files)
        accuracy = Accuracy(acc_files, [(f.label, f.meta) for f in acc_files if f.meta is not None], budget, series)
        bench_files = []
        for f in base.bench:
            if f.data is None:
                if f.error:
                    bench_files.append(f)
                continue
            mine = [e for e in _list_of_dicts(f.data.get("benchmarks")) if bench_scheme(e.get("name")) == scheme]
            if mine:
                bench_files.append(replace(f, data={**f.data, "benchmarks": mine}))
        return Inputs(base.results_dir, proofs, accuracy, bench_files, base.run_file, base.schemes_file,
                      scheme=scheme, parent=base)

    def file_count(self, kind: str) -> int:
        """How many files of `kind` ("proofs", "accuracy", "bench") the results directory holds (all schemes)."""
        base = self.all
        return len({"proofs": base.proofs.files, "accuracy": base.accuracy.files, "bench": base.bench}[kind])


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


def _read_meta(f: Loaded, label: str) -> None:
    meta = _meta(f.data)
    f.run = runs.of_meta(meta)
    f.label, f.meta = label, {**meta, "_run": f.run}


def load_proofs(results: Path) -> Proofs:
    out = Proofs()
    for path in sorted(results.glob(PROOFS_GLOB)):
        f = load_json(path)
        out.files.append(f)
        if f.data is None:
            continue
        _read_meta(f, str(_meta(f.data).get("program") or path.stem.removeprefix("proofs-")))
        out.metas.append((f.label, f.meta))
        claims = _list_of_dicts(f.data.get("claims"))
        if not claims and "claims" not in f.data:
            f.error = "no 'claims' list"
        for c in claims:
            out.claims.append({**_text_fields(c, CLAIM_TEXT), "_program": f.label, "_file": path.name,
                               "_run": f.run})
    return out


def load_accuracy(results: Path) -> Accuracy:
    out = Accuracy()
    for path in sorted(results.glob(ACCURACY_GLOB)):
        f = load_json(path)
        out.files.append(f)
        if f.data is None:
            continue
        _read_meta(f, str(_meta(f.data).get("program") or path.stem))
        out.metas.append((f.label, f.meta))
        origin = {"_file": path.name, "_run": f.run}
        out.budget += [{**_text_fields(r, BUDGET_TEXT), **origin} for r in _list_of_dicts(f.data.get("budget"))]
        out.series += [{**_text_fields(s, SERIES_TEXT), "points": _list_of_dicts(s.get("points")), **origin}
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
        if f.data is not None:
            f.label, f.run = path.stem, runs.of_bench(f.data["context"])
        files.append(f)
    return files


def load_optional(path: Path) -> Loaded | None:
    """run.json / schemes.json: None when absent, else the Loaded (with .error when unreadable)."""
    return load_json(path) if path.exists() else None


def load(results: Path) -> Inputs:
    results = Path(results)
    return Inputs(results, load_proofs(results), load_accuracy(results), load_bench(results),
                  load_optional(results / RUN_FILE), load_optional(results / SCHEMES_FILE))
