"""Machine fingerprints: which runs' absolute times may be compared.

The fingerprint hashes what fixes the speed of the hardware and of the libraries the kernels call: the CPU
model, logical CPUs, memory (GiB), the OpenBLAS version and the BLAS core that ran, BLAS and OpenMP thread
counts. It leaves out what a user changes on purpose and wants to see the effect of — the commit, compiler,
flags, build type, POSENC_SIMD (or POSENC_DISABLE_AVX512) — and what does not move timings by itself (kernel and OS version,
the CPU flags list, recorded for the record). Those are stored on the run and listed by `compare` when they
differ. One fingerprint per result file: the main job's fallback benchmark runs the same machine under another
BLAS core, so its file has a fingerprint of its own."""
from __future__ import annotations

import hashlib
import json
import re

FIELDS = ("cpu", "logical_cpus", "memory_gib", "blas_version", "blas_core", "blas_threads", "omp_threads")
_VERSION = re.compile(r"(\d+\.\d+(?:\.\d+)?)")


def _int(value):
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def _memory_gib(value):
    """MemTotal ('24604244 kB') in whole GiB, None when it does not parse."""
    parts = str(value or "").split()
    if len(parts) == 2 and parts[0].isdigit() and parts[1].lower() == "kb":
        return round(int(parts[0]) / 2 ** 20)
    return None


def _blas_version(meta: dict, machine: dict):
    for text in (meta.get("blas_config"), meta.get("blas_library"), machine.get("openblas_package")):
        m = _VERSION.search(str(text or ""))
        if m:
            return m.group(1)
    return None


def fields(machine: dict, meta: dict) -> dict:
    """The fingerprint's fields from run.json's "machine" block and a file's meta block or benchmark context."""
    machine = machine if isinstance(machine, dict) else {}
    meta = meta if isinstance(meta, dict) else {}
    cpu = machine.get("cpu")
    return {"cpu": " ".join(str(cpu).split()) if cpu else None,
            "logical_cpus": _int(machine.get("logical_cpus")) or _int(meta.get("num_cpus")),
            "memory_gib": _memory_gib(machine.get("memory")),
            "blas_version": _blas_version(meta, machine),
            "blas_core": str(meta["blas_core"]) if meta.get("blas_core") else None,
            "blas_threads": _int(meta.get("blas_threads")),
            "omp_threads": _int(meta.get("omp_threads"))}


def digest(values: dict) -> str:
    text = json.dumps({k: values.get(k) for k in FIELDS}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def differences(a: dict, b: dict) -> list:
    """[(field, a's value, b's value)] where two fingerprints' fields differ."""
    return [(k, a.get(k), b.get(k)) for k in FIELDS if a.get(k) != b.get(k)]
