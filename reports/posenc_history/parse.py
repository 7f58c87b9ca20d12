"""A results directory (as scripts/main.sh, scripts/bench.sh or the committed reports/latest/data/ hold it) ->
RunData. Reading and normalising the files is posenc_report's (inputs.load, bench.records, bench.find_baseline,
bench.ratio, accuracy_page.with_property_measurements), so the history holds the numbers the report shows."""
from __future__ import annotations

import datetime as dt
import hashlib
from collections import defaultdict
from pathlib import Path

from posenc_report import accuracy_page, bench, inputs, runs

from . import fingerprint
from .errors import HistoryError
from .model import BenchData, FileData, RatioData, RunData

PATTERNS = ("run.json", inputs.PROOFS_GLOB, inputs.ACCURACY_GLOB, inputs.BENCH_GLOB)
TIME_UNITS = bench.TIME_UNITS


def _text(value):
    """A run.json field that may be a list (main.sh writes machine.cpu_flags as one) as one space-separated string."""
    return " ".join(map(str, value)) if isinstance(value, list) else value


def result_files(directory: Path) -> list:
    """The files of a results directory that the history reads, sorted."""
    found = set()
    for pattern in PATTERNS:
        found |= {p for p in directory.glob(pattern) if p.is_file()}
    return sorted(found)


def digest(files: list) -> str:
    h = hashlib.sha256()
    for p in files:
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def iso_utc(text) -> str | None:
    """An ISO 8601 time as YYYY-MM-DDTHH:MM:SSZ (UTC); None when it does not parse."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        t = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.timezone.utc)
    return t.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- benchmarks -----------------------------------------------------------------------------------------------

def _repetitions(data: dict) -> dict:
    """repetition index -> the iteration entries of that repetition (one per benchmark)."""
    out, seen = defaultdict(list), defaultdict(int)
    for e in data.get("benchmarks", []):
        if not isinstance(e, dict) or e.get("run_type") == "aggregate" or e.get("error_occurred"):
            continue
        if not isinstance(e.get("name"), str):
            continue
        run = e["run_name"] if isinstance(e.get("run_name"), str) else e["name"]
        rep = e.get("repetition_index")
        rep = rep if isinstance(rep, int) and not isinstance(rep, bool) else seen[run]
        seen[run] += 1
        out[rep].append(e)
    return out


def _sample(entry: dict, rep: int) -> dict:
    unit = TIME_UNITS.get(entry.get("time_unit", "ns"), 1e-9)

    def num(key, scale=1.0):
        v = entry.get(key)
        return float(v) * scale if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    return {"repetition": rep, "real_time_s": num("real_time", unit), "cpu_time_s": num("cpu_time", unit),
            "iterations": entry.get("iterations") if isinstance(entry.get("iterations"), int) else None,
            "bytes_per_second": num("bytes_per_second"), "items_per_second": num("items_per_second")}


def _bench_data(stem: str, rec, samples: list) -> BenchData:
    return BenchData(file=stem, name=rec.name, scheme=rec.scheme, family=rec.family, variant=rec.variant,
                     dtype=rec.dtype, threads=rec.threads, args=dict(rec.args), baseline_kind=rec.baseline,
                     seconds=rec.seconds, bytes_per_second=rec.bytes_per_second,
                     items_per_second=rec.items_per_second, statistic=rec.statistic, samples=samples)


def bench_file(stem: str, data: dict) -> tuple:
    """([BenchData], [RatioData]) of one Google Benchmark file."""
    recs = bench.records(stem, data)
    reps = _repetitions(data)
    per_rep = {r: {x.name: x for x in bench.records(stem, {"benchmarks": es})} for r, es in reps.items()}
    samples = defaultdict(list)
    for r, entries in sorted(reps.items()):
        for e in entries:
            samples[e.get("run_name") if isinstance(e.get("run_name"), str) else e["name"]].append(_sample(e, r))
    benches = [_bench_data(stem, rec, samples.get(rec.name, [])) for rec in recs]
    ratios = []
    for k in (x for x in recs if x.baseline is None):
        for kind, _, _ in bench.BASELINE_KINDS:
            base = bench.find_baseline(k, recs, kind)
            if base is None:
                continue
            value, how = bench.ratio(k, base, kind)
            rr = RatioData(stem, k.name, base.name, kind, value, how)
            for r, by_name in per_rep.items():
                if k.name in by_name and base.name in by_name:
                    rr.samples[r] = bench.ratio(by_name[k.name], by_name[base.name], kind)[0]
            ratios.append(rr)
    return benches, ratios


# --- accuracy ---------------------------------------------------------------------------------------------------

def _stem(name) -> str:
    return Path(str(name)).stem


def _num(x):
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def budget_rows(inp) -> list:
    """Budget rows as the report's accuracy page shows them (sweep + properties' per-row measurements), plus
    rows that only claims cite (budget_row / bound / max_error of the claim)."""
    merged = accuracy_page.with_property_measurements(inp.accuracy.budget, inp.proofs.claims)
    out, seen = [], set()
    for r in merged:
        key = (_stem(r.get("_file")), r.get("id"))
        if r.get("id") is None or key in seen:
            continue
        seen.add(key)
        out.append({"file": key[0], "row_id": r["id"], "scheme": r.get("scheme"), "quantity": r.get("quantity"),
                    "dtype": r.get("dtype"), "regime": r.get("regime"), "metric": r.get("metric"),
                    "bound": _num(r.get("bound")), "measured": _num(r.get("measured_max")),
                    "worst_input": r.get("worst_input"), "samples": r.get("samples") if isinstance(
                        r.get("samples"), int) else None, "measured_by": r.get("measured_by")})
    known = {r["row_id"] for r in out}
    return out + _claim_only_rows(inp.proofs.claims, known)


def _claim_only_rows(claims: list, known: set) -> list:
    rows = {}
    for c in claims:
        rid, err = c.get("budget_row"), _num(c.get("max_error"))
        if not rid or rid in known or err is None:
            continue
        row = rows.setdefault(rid, {"file": _stem(c.get("_file")), "row_id": rid, "scheme": c.get("scheme"),
                                    "quantity": None, "dtype": None, "regime": None, "metric": c.get("metric"),
                                    "bound": _num(c.get("bound")), "measured": err, "worst_input": None,
                                    "samples": 0, "measured_by": "claims"})
        if err >= row["measured"]:
            row["measured"], row["worst_input"] = err, c.get("worst_input")
        row["samples"] += c.get("cases") if isinstance(c.get("cases"), int) else 0
    return list(rows.values())


def claim_rows(inp) -> list:
    out, seen = [], set()
    for c in inp.proofs.claims:
        key = (_stem(c.get("_file")), c.get("id"))
        if c.get("id") is None or key in seen:
            continue
        seen.add(key)
        out.append({"file": key[0], "claim_id": c["id"], "scheme": c.get("scheme"), "test": c.get("test"),
                    "status": c.get("status"), "cases": c.get("cases") if isinstance(c.get("cases"), int) else None,
                    "budget_row": c.get("budget_row"), "bound": _num(c.get("bound")),
                    "max_error": _num(c.get("max_error")), "worst_input": c.get("worst_input")})
    return out


# --- the run ----------------------------------------------------------------------------------------------------

def _file_entries(inp, machine: dict) -> list:
    out = []
    for kind, files in (("proofs", inp.proofs.files), ("accuracy", inp.accuracy.files), ("bench", inp.bench)):
        for f in files:
            if f.data is None:
                continue
            meta = (f.data.get("context") if kind == "bench" else f.data.get("meta")) or {}
            fields = fingerprint.fields(machine, meta)
            out.append(FileData(f.path.stem, kind, fingerprint.digest(fields), fields, meta,
                                f.run if f.run and not f.run.startswith(("commit ", "unknown run")) else None))
    return out


def _primary(files: list) -> FileData | None:
    benches = [f for f in files if f.kind == "bench"]
    return next((f for f in benches if f.name == "bench-auto"), None) or (benches or files or [None])[0]


def _selection(run: dict) -> str:
    if isinstance(run.get("set"), str) and run["set"]:
        return f"set:{run['set']}"
    if isinstance(run.get("filter"), str) and run["filter"]:
        return f"filter:{run['filter']}"
    return "all"


def _commit(run: dict, files: list) -> tuple:
    raw = run.get("commit") or next((f.meta.get("posenc_commit") or f.meta.get("commit") for f in files
                                     if f.meta.get("posenc_commit") or f.meta.get("commit")), None)
    text = runs.short_commit(raw)
    if not text:
        return None, False
    dirty = text.endswith("+dirty")
    return text.removesuffix("+dirty"), dirty


def _started(run: dict, run_id: str | None, files: list, fallback: str | None) -> str:
    for value in (run.get("started"), (run_id or "").partition("@")[2],
                  *(f.meta.get("date") for f in files), fallback):
        t = iso_utc(value)
        if t:
            return t
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _run_id(run: dict, files: list, commit: str | None, dig: str) -> str:
    rid = run.get("run_id")
    if isinstance(rid, str) and rid.strip():
        return rid.strip()
    ids = {f.program_run for f in files if f.program_run}
    if len(ids) == 1:
        return ids.pop()
    return f"{commit or 'unknown'}@digest:{dig[:12]}"


def _run_json(directory: Path) -> dict:
    path = directory / "run.json"
    if not path.exists():
        return {}
    f = inputs.load_json(path)
    if f.error:
        raise HistoryError(f"{path}: {f.error}; fix or remove it and import again")
    return f.data


def _run_data(run: dict, files: list, paths: list, mode, source, started_fallback) -> RunData:
    """The run's own facts (not yet its benchmarks and accuracy records)."""
    machine = run.get("machine") if isinstance(run.get("machine"), dict) else {}
    dig = digest(paths)
    commit, dirty = _commit(run, files)
    run_id = _run_id(run, files, commit, dig)
    primary = _primary(files)
    meta = primary.meta if primary else {}
    fields = primary.machine if primary else fingerprint.fields(machine, {})
    return RunData(run_id=run_id, commit=commit, dirty=dirty, started=_started(run, run_id, files, started_fallback),
                   mode=mode or (run.get("mode") if isinstance(run.get("mode"), str) else None) or "unknown",
                   selection=_selection(run), fingerprint=fingerprint.digest(fields), machine=fields, source=source,
                   digest=dig, kernel=machine.get("kernel"), os=machine.get("os"), cpu_flags=_text(machine.get("cpu_flags")),
                   compiler=meta.get("compiler"), compile_flags=meta.get("flags") or meta.get("posenc_flags"),
                   build_type=meta.get("build_type") or meta.get("posenc_build_type"),
                   environment=run.get("environment") if isinstance(run.get("environment"), dict) else {},
                   run_json=run or None, files=files)


def parse(directory, mode: str | None = None, source: str | None = None,
          started_fallback: str | None = None) -> RunData:
    """The run held by `directory`; HistoryError when it holds nothing the history can use."""
    directory = Path(directory)
    if not directory.is_dir():
        raise HistoryError(f"results directory {directory} does not exist (give a directory holding run.json, "
                           "bench-*.json, accuracy.json, proofs-*.json, as scripts/main.sh writes out/results/)")
    paths = result_files(directory)
    if not paths:
        raise HistoryError(f"{directory} holds none of run.json, bench-*.json, accuracy*.json, proofs-*.json; "
                           "nothing to import")
    run = _run_json(directory)
    inp = inputs.load(directory)
    files = _file_entries(inp, run.get("machine") if isinstance(run.get("machine"), dict) else {})
    out = _run_data(run, files, paths, mode, source or str(directory), started_fallback)
    for f in inp.bench:
        if f.data is not None:
            b, r = bench_file(f.path.stem, f.data)
            out.benches += b
            out.ratios += r
    out.budget, out.claims = budget_rows(inp), claim_rows(inp)
    _refuse_unreadable(inp, out)
    return out


def _refuse_unreadable(inp, run: RunData) -> None:
    """A run whose every data file is unreadable is refused (importing it would record an empty run)."""
    broken = inp.errors()
    if broken and not (run.benches or run.budget or run.claims):
        name, why = broken[0]
        raise HistoryError(f"nothing readable to import: {name}: {why}")

