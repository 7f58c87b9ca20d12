"""Google Benchmark JSON -> one record per benchmark instance, with the posenc naming convention parsed:

    <scheme>/<family>/<variant>/<key>:<value>/<key>:<value>...
    e.g. sinusoidal/table/exact_f32/L:4096/d:512/threads:1
(parse_name drops the scheme prefix; scheme_of() reads it, and each Record keeps it in .scheme — the report
gives every scheme its own pages and hands them only that scheme's benchmarks).

Repetitions: the median aggregate is used when present (else the mean aggregate, else the median of the
iteration runs). Google Benchmark's own suffixes (real_time, process_time, manual_time, repeats:, min_time:,
min_warmup_time:, iterations:) are not arguments and are ignored for matching.
"""
from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

GB_FLAGS = {"real_time", "process_time", "manual_time"}
GB_KEYS = {"repeats", "min_time", "min_warmup_time", "iterations"}
DTYPE_TOKEN = re.compile(r"(?:^|_)(f32|f64|f16|bf16)(?=_|$)")
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
AGGREGATE_SUFFIX = re.compile(r"_(mean|median|stddev|cv)$")

# Which variants are in-run baselines, and what a kernel's ratio to them means.
BASELINE_KINDS = (
    # kind, label, matches (family, variant)
    ("bandwidth", "streaming-store bandwidth", lambda f, v: v.startswith(("stream_store", "streaming_store"))),
    ("rmw", "read-modify-write bandwidth", lambda f, v: v.startswith(("rmw", "read_modify_write"))),
    ("plainloop", "plain loop", lambda f, v: v.startswith(("plainloop", "plain_loop"))),
    ("sgemm", "sgemm of the same shape", lambda f, v: f == "sgemm" or v.startswith("sgemm")),
)


@dataclass
class Record:
    file: str
    name: str                     # run name without aggregate suffix
    family: str
    variant: str
    args: dict                    # ordered key -> value strings (dtype and threads included when named)
    dtype: str | None
    threads: int
    seconds: float | None         # per iteration, of the time GB reports (real_time)
    bytes_per_second: float | None
    items_per_second: float | None
    counters: dict = field(default_factory=dict)   # other numeric fields (user counters)
    statistic: str = "single run"  # "median of 5", "mean of 3", ...
    baseline: str | None = None    # kind from BASELINE_KINDS, None for a kernel
    scheme: str | None = None      # first name segment; None for a one-segment name

    @property
    def match_args(self) -> tuple:
        """The arguments a baseline must share with a kernel (everything but the dtype)."""
        return tuple((k, v) for k, v in self.args.items() if k != "dtype")

    @property
    def size(self) -> float | None:
        """x axis of throughput plots: L·d if named, else the product of the numeric non-thread args."""
        keys = [k for k in ("L", "d") if k in self.args] or [
            k for k in self.args if k not in ("threads", "dtype")]
        prod = 1.0
        for k in keys:
            try:
                prod *= float(self.args[k])
            except ValueError:
                return None
        return prod if keys else None

    @property
    def size_label(self) -> str:
        keys = [k for k in ("L", "d") if k in self.args] or [k for k in self.args if k not in ("threads", "dtype")]
        return "·".join(keys) or "size"

    @property
    def label(self) -> str:
        return f"{self.family}/{self.variant}" if self.variant else self.family


def parse_name(name: str) -> tuple:
    """(family, variant, args) from a benchmark name following the posenc convention."""
    parts = name.split("/")
    segments = parts[1:] if len(parts) > 1 else parts  # the first segment is the scheme
    family, variant, args = segments[0], [], {}
    for seg in segments[1:]:
        if ":" in seg:
            key, _, value = seg.partition(":")
            if key not in GB_KEYS:
                args[key] = value
        elif seg not in GB_FLAGS:
            variant.append(seg)
    return family, "/".join(variant), args


def scheme_of(name: str) -> str | None:
    """The scheme a benchmark name belongs to (its first segment), None for a one-segment name."""
    parts = name.split("/")
    return parts[0] if len(parts) > 1 and parts[0] else None


def dtype_of(variant: str, args: dict) -> str | None:
    if "dtype" in args:
        return args["dtype"]
    m = DTYPE_TOKEN.search(variant)
    return m.group(1) if m else None


def baseline_kind(family: str, variant: str) -> str | None:
    for kind, _, test in BASELINE_KINDS:
        if test(family, variant):
            return kind
    return None


def _num(x):
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


_STANDARD = {"family_index", "per_family_instance_index", "repetitions", "repetition_index", "threads",
             "iterations", "real_time", "cpu_time", "bytes_per_second", "items_per_second"}


def _record(file: str, run_name: str, entry: dict, statistic: str) -> Record:
    family, variant, args = parse_name(run_name)
    unit = TIME_UNITS.get(entry.get("time_unit", "ns"), 1e-9)
    t = _num(entry.get("real_time"))
    threads = args.get("threads", entry.get("threads", 1))
    try:
        threads = int(threads)
    except (TypeError, ValueError):
        threads = 1
    counters = {k: v for k, v in entry.items() if k not in _STANDARD and _num(v) is not None}
    return Record(file=file, name=run_name, family=family, variant=variant, args=args,
                  dtype=dtype_of(variant, args), threads=threads, seconds=t * unit if t is not None else None,
                  bytes_per_second=_num(entry.get("bytes_per_second")),
                  items_per_second=_num(entry.get("items_per_second")), counters=counters,
                  statistic=statistic, baseline=baseline_kind(family, variant), scheme=scheme_of(run_name))


def _median_entry(entries: list) -> dict:
    """Field-wise median of iteration runs (used when GB wrote no aggregates)."""
    out = dict(entries[0])
    for key in ("real_time", "cpu_time", "bytes_per_second", "items_per_second", *entries[0].keys()):
        values = [_num(e.get(key)) for e in entries]
        if values and all(v is not None for v in values):
            out[key] = statistics.median(values)
    return out


def records(file: str, data: dict) -> list:
    """One Record per distinct run name, in first-appearance order."""
    groups: dict = {}
    for e in data.get("benchmarks", []):
        if not isinstance(e, dict) or not isinstance(e.get("name"), str) or e.get("error_occurred"):
            continue
        run = e["run_name"] if isinstance(e.get("run_name"), str) else AGGREGATE_SUFFIX.sub("", e["name"])
        groups.setdefault(run, {"iteration": [], "aggregate": {}})
        if e.get("run_type") == "aggregate":
            m = AGGREGATE_SUFFIX.search(e["name"])
            groups[run]["aggregate"][str(e.get("aggregate_name") or (m.group(1) if m else "?"))] = e
        else:
            groups[run]["iteration"].append(e)
    out = []
    for run, g in groups.items():
        n = len(g["iteration"]) or g["aggregate"].get("median", {}).get("repetitions")
        if "median" in g["aggregate"]:
            out.append(_record(file, run, g["aggregate"]["median"], f"median of {n}"))
        elif "mean" in g["aggregate"]:
            out.append(_record(file, run, g["aggregate"]["mean"], f"mean of {n}"))
        elif len(g["iteration"]) > 1:
            out.append(_record(file, run, _median_entry(g["iteration"]), f"median of {n} (computed)"))
        elif g["iteration"]:
            out.append(_record(file, run, g["iteration"][0], "single run"))
    return out


def find_baseline(kernel: Record, pool: list, kind: str) -> Record | None:
    """The in-run baseline of `kind` for `kernel`: same file, same family (sgemm: any family), same arguments
    apart from dtype; a baseline that names a dtype must name the kernel's; one with the kernel's dtype wins
    over one without."""
    best = None
    for b in pool:
        if b.baseline != kind or b.file != kernel.file or b.match_args != kernel.match_args:
            continue
        if kind != "sgemm" and b.family != kernel.family:
            continue
        if b.dtype is not None and kernel.dtype is not None and b.dtype != kernel.dtype:
            continue
        if best is None or (b.dtype == kernel.dtype and best.dtype != kernel.dtype):
            best = b
    return best


def ratio(kernel: Record, base: Record | None, kind: str) -> tuple:
    """(value, how) — bandwidth kinds: kernel bytes/s ÷ baseline bytes/s (1.0 = at the memory limit);
    plain loop / sgemm: baseline time ÷ kernel time (speed-up; > 1 means the kernel is faster)."""
    if base is None:
        return None, None
    if kind in ("bandwidth", "rmw"):
        if kernel.bytes_per_second and base.bytes_per_second:
            return kernel.bytes_per_second / base.bytes_per_second, "bytes/s"
    elif kernel.items_per_second and base.items_per_second and kind == "plainloop":
        return kernel.items_per_second / base.items_per_second, "items/s"
    if kernel.seconds and base.seconds:
        return base.seconds / kernel.seconds, "time"
    return None, None
