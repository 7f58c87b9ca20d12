"""One run as Python data: what the importer builds from a results directory and what the store loads back from
the database, so comparisons work the same on both (the report generator compares a results directory that
was never imported with the runs of the history)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class FileData:
    name: str                     # file stem: bench-auto, proofs-properties, accuracy
    kind: str                     # bench | proofs | accuracy
    fingerprint: str | None       # machine fingerprint of the program that wrote it
    machine: dict                 # the fingerprint's fields
    meta: dict                    # meta block (proofs, accuracy) or benchmark context
    program_run: str | None = None


@dataclass
class BenchData:
    """One benchmark of one file: the reported statistic and every repetition."""
    file: str
    name: str
    scheme: str | None
    family: str
    variant: str
    dtype: str | None
    threads: int
    args: dict
    baseline_kind: str | None
    seconds: float | None         # the report's statistic (median aggregate, else mean, else median of reps)
    bytes_per_second: float | None
    items_per_second: float | None
    statistic: str
    samples: list = field(default_factory=list)   # [{"repetition", "real_time_s", "cpu_time_s", ...}]

    @property
    def times(self) -> list:
        return [s["real_time_s"] for s in self.samples if s.get("real_time_s")]

    @property
    def args_text(self) -> str:
        return "/".join(f"{k}:{v}" for k, v in self.args.items())


@dataclass
class RatioData:
    """A kernel against one in-run baseline: kernel throughput ÷ baseline throughput (bandwidth kinds) or the
    speed-up (plain loop, sgemm), as posenc_report.bench.ratio forms it; larger is better."""
    file: str
    kernel: str
    baseline: str
    kind: str
    value: float | None           # of the reported (median) records: the report's number
    how: str | None
    samples: dict = field(default_factory=dict)   # repetition index -> ratio of that repetition's pair

    @property
    def values(self) -> list:
        return [v for _, v in sorted(self.samples.items()) if v is not None and v > 0]


@dataclass
class RunData:
    run_id: str
    commit: str | None
    dirty: bool
    started: str
    mode: str
    selection: str
    fingerprint: str | None
    machine: dict
    source: str
    digest: str
    kernel: str | None = None
    os: str | None = None
    cpu_flags: str | None = None
    compiler: str | None = None
    compile_flags: str | None = None
    build_type: str | None = None
    environment: dict = field(default_factory=dict)
    run_json: dict | None = None
    files: list = field(default_factory=list)      # [FileData]
    benches: list = field(default_factory=list)    # [BenchData]
    ratios: list = field(default_factory=list)     # [RatioData]
    budget: list = field(default_factory=list)     # [{"file", "row_id", "bound", "measured", ...}]
    claims: list = field(default_factory=list)     # [{"file", "claim_id", "status", "cases", ...}]
    pk: int | None = None                          # the runs.id once stored

    def file(self, name: str) -> FileData | None:
        return next((f for f in self.files if f.name == name), None)

    @property
    def label(self) -> str:
        return self.run_id

    @property
    def short_commit(self) -> str:
        return (self.commit or "unknown")[:7] + ("+dirty" if self.dirty else "")
