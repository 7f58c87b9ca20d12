#!/usr/bin/env python3
"""scripts/rope_long_context.py — HF's float32 RoPE cache against the exact one at every position 0 .. 131071
(main job stage 5/9; the data of the RoPE report's long-context figure, reports/posenc_report/schemes/rope.py).

For each model config (cli/tests/data/configs: Llama 3.1 8B, llama3 scaling; Qwen2.5 7B with its YaRN block) and
for the same head unscaled (its base, head_dim and rotary_dim, --scaling none), it asks the CLI for the cos/sin
cache of every position in both regimes,

    posenc table rope <spec> --regime hf|exact --form pairs --positions A:B --format npy --dtype f64

(hf: HF's float32 steps, each correctly rounded — posenc's emulation; exact: the mathematics, to within ~2^-52),
and records max over pairs (cos and sin) of |hf - exact| per quarter-octave position bucket, with the position
and pair where it is reached, and the running maximum over all positions below 1k, 8k, 32k and 128k.

Usage: rope_long_context.py POSENC --out FILE [--configs DIR] [--end N] [--chunk N]
Python 3 standard library only. The commit and run id come from $POSENC_COMMIT / $POSENC_RUN_ID (main.sh) and
from `posenc info --format json`."""
from __future__ import annotations

import argparse
import array
import json
import math
import operator
import os
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = "posenc-rope-long-context-1"
MODELS = (  # (label, config file, scaling named in the legend)
    ("Llama 3.1 8B", "llama-3.1-8b.json", "llama3"),
    ("Qwen2.5 7B", "qwen2.5-7b-instruct-yarn.json", "yarn"),
)
MARKS = (1024, 8192, 32768, 131072)     # the running maximum over positions < mark
BUCKETS_PER_OCTAVE = 4


def bucket_edges(end: int) -> list:
    """[lo, hi) bucket bounds over 0 .. end-1: {0}, then quarter octaves [ceil 2^(j/4), ceil 2^((j+1)/4))."""
    cuts = {0, 1, end}
    j = 0
    while True:
        c = math.ceil(2 ** (j / BUCKETS_PER_OCTAVE))
        if c >= end:
            break
        cuts.add(max(c, 1))
        j += 1
    cuts = sorted(cuts)
    return list(zip(cuts[:-1], cuts[1:]))


def read_npy(path: str) -> tuple:
    """(rows, cols, array('d')) of a little-endian float64 C-order .npy of two dimensions."""
    raw = Path(path).read_bytes()
    if raw[:6] != b"\x93NUMPY":
        raise ValueError(f"{path}: not an .npy file")
    if raw[6] == 1:
        hl, start = struct.unpack("<H", raw[8:10])[0], 10
    else:
        hl, start = struct.unpack("<I", raw[8:12])[0], 12
    header = raw[start:start + hl].decode("latin1")
    if "'<f8'" not in header or "'fortran_order': False" not in header:
        raise ValueError(f"{path}: expected little-endian float64 in C order, header {header.strip()}")
    shape = header[header.index("(") + 1:header.index(")")]
    rows, cols = (int(x) for x in shape.split(",") if x.strip())
    data = array.array("d")
    data.frombytes(raw[start + hl:])
    if sys.byteorder != "little":
        data.byteswap()
    if len(data) != rows * cols:
        raise ValueError(f"{path}: {len(data)} values for shape ({rows}, {cols})")
    return rows, cols, data


def run(cmd: list) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        msg = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise RuntimeError(f"`{' '.join(cmd)}` exited {proc.returncode}: {msg}")
    return proc.stdout


def series(posenc: str, label: str, scaling: str, spec_args: list, end: int, chunk: int, tmp: str) -> dict:
    """Bucketed max |hf - exact| of one spec over positions 0 .. end-1."""
    freqs = json.loads(run([posenc, "freqs", "rope", *spec_args, "--format", "json"]))
    edges = bucket_edges(end)
    best = [(0.0, lo, 0) for lo, _ in edges]          # (error, position, pair)
    b = 0
    t0 = time.monotonic()
    chunks = []
    for a in range(0, end, chunk):
        z = min(a + chunk, end)
        chunks.append([a, z])
        got = {}
        for regime in ("hf", "exact"):
            out = os.path.join(tmp, f"{regime}.npy")
            run([posenc, "table", "rope", *spec_args, "--regime", regime, "--form", "pairs", "--positions",
                 f"{a}:{z}", "--format", "npy", "--dtype", "f64", "--out", out])
            got[regime] = read_npy(out)
        (rows, cols, hf), (rows2, cols2, ex) = got["hf"], got["exact"]
        if (rows, cols) != (rows2, cols2) or rows != z - a:
            raise RuntimeError(f"{label}: shapes ({rows}, {cols}) and ({rows2}, {cols2}) for positions {a}:{z}")
        for i in range(rows):
            p = a + i
            while p >= edges[b][1]:
                b += 1
            h, e = hf[i * cols:(i + 1) * cols], ex[i * cols:(i + 1) * cols]
            diff = list(map(abs, map(operator.sub, h, e)))
            m = max(diff)
            if m > best[b][0]:
                best[b] = (m, p, diff.index(m) % (cols // 2))
    pairs = cols // 2
    buckets = [{"lo": lo, "hi": hi - 1, "max_abs_error": err, "at_position": p, "at_pair": k}
               for (lo, hi), (err, p, k) in zip(edges, best)]
    below = {str(mk): max((bk["max_abs_error"] for bk in buckets if bk["hi"] < mk), default=0.0)
             for mk in MARKS if mk <= end}
    cmd = ["posenc", "table", "rope", *[a if not a.endswith(".json") else os.path.relpath(a, ROOT) for a in spec_args],
           "--regime", "{hf|exact}", "--form", "pairs", "--positions", "{A}:{B}", "--format", "npy", "--dtype", "f64"]
    print(f"{label}: {pairs} pairs, positions 0..{end - 1} in {len(chunks)} chunks, {time.monotonic() - t0:.1f} s; "
          "max |hf - exact| below " + ", ".join(f"{k}: {v:.3g}" for k, v in below.items()), flush=True)
    return {"label": label, "scaling": scaling, "spec": freqs.get("spec"), "pairs": pairs,
            "attention_factor": freqs.get("attention_factor", 1.0), "command": " ".join(cmd), "chunks": chunks,
            "max_abs_error_below": below, "buckets": buckets}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("posenc", help="the posenc CLI")
    ap.add_argument("--out", required=True, help="the JSON to write (e.g. out/results/rope-long-context.json)")
    ap.add_argument("--configs", default=str(ROOT / "cli" / "tests" / "data" / "configs"))
    ap.add_argument("--end", type=int, default=131072, help="positions 0 .. END-1 (default 131072)")
    ap.add_argument("--chunk", type=int, default=16384, help="positions per CLI call (default 16384)")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    info = json.loads(run([args.posenc, "info", "--format", "json"]))
    build = info.get("build", {})
    out = []
    with tempfile.TemporaryDirectory(prefix="posenc-rope-long-") as tmp:
        for name, file, scaling in MODELS:
            config = os.path.join(args.configs, file)
            scaled = series(args.posenc, f"{name} ({scaling})", scaling, ["--config", config], args.end, args.chunk, tmp)
            spec = scaled["spec"] or {}
            plain = ["--head-dim", str(spec["head_dim"]), "--rotary-dim", str(spec["rotary_dim"]),
                     "--base", repr(float(spec["base"])), "--layout", str(spec["layout"]), "--scaling", "none"]
            out += [scaled, series(args.posenc, f"{name} head unscaled", "none", plain, args.end, args.chunk, tmp)]
    commit = os.environ.get("POSENC_COMMIT") or build.get("commit")
    result = {
        "schema": SCHEMA,
        "meta": {"program": "scripts/rope_long_context.py", "commit": commit, "run_id": os.environ.get("POSENC_RUN_ID", ""),
                 "posenc_version": build.get("version"), "posenc_commit": build.get("commit"),
                 "compiler": build.get("compiler"), "flags": build.get("flags"), "build_type": build.get("build_type"),
                 "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seconds": round(time.monotonic() - t0, 1)},
        "what": "max over pairs (cos and sin) of |hf - exact| per position bucket; hf: HF's float32 steps, each "
                "correctly rounded (posenc's emulation); exact: the mathematics (f64)",
        "positions": [0, args.end - 1], "buckets_per_octave": BUCKETS_PER_OCTAVE,
        "reference_lines": {"ulp_f32(1)": 2.0 ** -23},
        "series": out,
    }
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({result['meta']['seconds']} s)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (RuntimeError, ValueError, OSError, KeyError) as e:
        print(f"rope_long_context.py: {e}", file=sys.stderr)
        sys.exit(1)
