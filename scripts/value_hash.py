#!/usr/bin/env python3
"""scripts/value_hash.py — a SHA-256 of every number a fixed set of posenc commands writes, to show that a change
(a refactor, a move, another SIMD target) left every value bit-identical.

  scripts/value_hash.py POSENC [--out FILE]          hash the configurations, write {config: sha256} as JSON
  scripts/value_hash.py POSENC --compare FILE        exit 1 naming every configuration whose values differ

Configurations: every `Example:` line of every `posenc <verb> <scheme> --help` that reads no input file, that line
with each of the scheme's presets instead of its own, and with `--dtype f64` where the command takes it; plus the
relative-attention scores (Transformer-XL, XLNet, TENER) in both forms, with and without memory, masks and segment
terms, and the other verbs that read inputs (RoPE apply and scores per layout, ALiBi, KERPLE, FIRE, T5, Shaw, DeBERTa
and NEZHA scores, T5's and FIRE's bias), from inputs drawn here by a fixed generator. Outputs are .npy (every bit of every value) or, for commands
whose output is a verdict or a list, their JSON with the run-dependent members (paths, timing) removed. A command
that refuses a combination is recorded as refused (with its exit status), so a change in what is accepted shows too.
Compare runs on one machine with one OpenBLAS core (`posenc info`): scores that go through BLAS depend on the kernels
it picks. Standard library only; a run takes about a minute on 2 cores."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERBS = ("table", "freqs", "index", "bias", "apply", "scores", "ids", "shift")


def write_npy(path: str, shape: tuple, seed: int) -> None:
    """A little-endian float32 .npy of `shape`, values in [-1, 1) from a 64-bit LCG (the same for the same seed)."""
    n = 1
    for s in shape:
        n *= s
    x = (seed * 6364136223846793005 + 1442695040888963407) % 2**64
    vals = []
    for _ in range(n):
        x = (x * 6364136223846793005 + 1442695040888963407) % 2**64
        vals.append(((x >> 40) / 2**23) - 1.0)
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join(f"{s}, " for s in shape)
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + struct.pack(f"<{n}f", *vals))


def relative_configs(d: str) -> dict:
    """{name: argv} of scores of the sinusoid-relative schemes, with their input files written into d."""
    def npy(name, shape, seed):
        path = os.path.join(d, name)
        write_npy(path, shape, seed)
        return path

    H, dh, dm = 2, 8, 16
    q5, k5, k9 = npy("q5.npy", (H, 5, dh), 1), npy("k5.npy", (H, 5, dh), 2), npy("k9.npy", (H, 9, dh), 3)
    q300, k300 = npy("q300.npy", (H, 300, dh), 4), npy("k300.npy", (H, 300, dh), 5)
    u, v, s = npy("u.npy", (H, dh), 6), npy("v.npy", (H, dh), 7), npy("s.npy", (H, dh), 8)
    r_net, r = npy("r_net.npy", (H * dh, dm), 9), npy("r.npy", (dm, H, dh), 10)
    seg = npy("seg.npy", (2, H, dh), 11)
    txl = ["--heads", str(H), "--d-head", str(dh), "--d-model", str(dm), "--r-net", r_net, "--r-w-bias", u,
           "--r-r-bias", v]
    xl = ["--heads", str(H), "--d-head", str(dh), "--d-model", str(dm), "--r", r, "--r-w-bias", u, "--r-r-bias", v]
    te = ["--heads", str(H), "--d-head", str(dh), "--r-w-bias", u, "--r-r-bias", v]
    out = {}
    for form in ("blas", "direct"):
        f = ["--form", form]
        out[f"scores transformer_xl {form}"] = ["scores", "transformer_xl", *txl, "--q", q5, "--k", k5, *f]
        out[f"scores transformer_xl memory {form}"] = ["scores", "transformer_xl", *txl, "--q", q5, "--k", k9, *f]
        out[f"scores transformer_xl long {form}"] = ["scores", "transformer_xl", *txl, "--q", q300, "--k", k300, *f]
        out[f"scores xlnet {form}"] = ["scores", "xlnet", *xl, "--q", q5, "--k", k5, *f]
        out[f"scores xlnet segments {form}"] = ["scores", "xlnet", *xl, "--q", q5, "--k", k9, "--token-types",
                                                "00111", "--r-s-bias", s, "--seg-embed", seg, *f]
        out[f"scores xlnet long {form}"] = ["scores", "xlnet", *xl, "--q", q300, "--k", k300, *f]
        out[f"scores tener {form}"] = ["scores", "tener", *te, "--q", q5, "--k", k5, *f]
        out[f"scores tener long {form}"] = ["scores", "tener", *te, "--q", q300, "--k", k300, *f]
    out["scores xlnet ef"] = ["scores", "xlnet", "--what", "ef", "--heads", str(H), "--d-head", str(dh), "--q", q5,
                              "--k", k9, "--r-s-bias", s, "--seg-embed", seg, "--token-types", "00111"]
    return out


def file_configs(d: str) -> dict:
    """{name: argv} of the other verbs that read inputs (apply, scores, t5's bias, FIRE's weights), inputs written
    into d (FIRE's weights: the fixtures in cli/tests/data)."""
    def npy(name, shape, seed):
        path = os.path.join(d, name)
        write_npy(path, shape, seed)
        return path

    fire_w = str(ROOT / "cli" / "tests" / "data" / "fire_h4_w8.json")
    q, k = npy("bq.npy", (4, 6, 16), 21), npy("bk.npy", (4, 9, 16), 22)
    v = npy("bv.npy", (4, 9, 16), 23)
    table = npy("t5table.npy", (32, 4), 24)
    keyt, valt = npy("keyt.npy", (9, 16), 25), npy("valt.npy", (9, 16), 26)
    pk, pq = npy("pk.npy", (4, 8, 16), 27), npy("pq.npy", (4, 8, 16), 28)
    nq, nk, nv = npy("nq.npy", (12, 6, 64), 29), npy("nk.npy", (12, 9, 64), 30), npy("nv.npy", (12, 9, 64), 31)
    x = npy("x.npy", (7, 2, 64), 32)
    rq, rk = npy("rq.npy", (6, 64), 33), npy("rk.npy", (9, 64), 34)
    out = {}
    for preset in ("hf-llama", "gpt-j", "ggml-neox", "roformer"):
        out[f"apply rope {preset}"] = ["apply", "rope", "--preset", preset, "--head-dim", "64", "--in", x,
                                       "--positions", "3:10"]
        out[f"apply rope {preset} far"] = ["apply", "rope", "--preset", preset, "--head-dim", "64", "--in", x,
                                           "--positions", "1000000:1000007"]
        out[f"scores rope {preset}"] = ["scores", "rope", "--preset", preset, "--head-dim", "64", "--q", rq, "--k", rk,
                                        "--q-positions", "100:106"]
    for preset in ("gpt-neox", "bloom", "mpt"):
        out[f"scores alibi {preset}"] = ["scores", "alibi", "--preset", preset, "--heads", "4", "--q", q, "--k", k]
    out["scores kerple"] = ["scores", "kerple", "--preset", "kerple-log", "--heads", "4", "--bias-p", "1.2",
                            "--bias-a", "0.05", "--q", q, "--k", k]
    for order in ("fma", "unfused"):
        out[f"bias fire {order}"] = ["bias", "fire", "--preset", "fire", "--weights", fire_w, "--key-length", "9",
                                     "--mlp-sum", order]
    out["scores fire"] = ["scores", "fire", "--preset", "fire", "--weights", fire_w, "--heads", "4", "--q", q, "--k", k]
    for preset in ("t5-encoder", "t5-decoder"):
        out[f"bias t5 {preset}"] = ["bias", "t5", "--preset", preset, "--heads", "4", "--table", table,
                                    "--key-length", "40"]
        out[f"scores t5 {preset}"] = ["scores", "t5", "--preset", preset, "--heads", "4", "--table", table, "--q", q,
                                      "--k", k]
    out["scores shaw t2t"] = ["scores", "shaw", "--preset", "t2t", "--max-relative-position", "4", "--head-dim", "16",
                              "--key-table", keyt, "--value-table", valt, "--q", q, "--k", k, "--v", v]
    out["scores deberta"] = ["scores", "deberta", "--position-buckets", "4", "--max-relative-positions", "4",
                             "--heads", "4", "--head-dim", "16", "--pos-key", pk, "--pos-query", pq, "--q", q, "--k", k]
    out["scores nezha"] = ["scores", "nezha", "--preset", "nezha-cn-base", "--q", nq, "--k", nk]
    out["scores nezha output"] = ["scores", "nezha", "--preset", "nezha-cn-base", "--q", nq, "--k", nk, "--v", nv]
    return out


def help_examples(posenc: str, verb: str, scheme: str) -> list:
    text = subprocess.run([posenc, verb, scheme, "--help"], capture_output=True, text=True).stdout
    return [shlex.split(line[len("Example:"):])[1:] for line in text.splitlines() if line.startswith("Example:")]


def reads_files(argv: list) -> bool:
    return any(a.endswith((".npy", ".json")) and not prev.startswith("--out")
               for prev, a in zip(argv, argv[1:]))


def example_configs(posenc: str) -> dict:
    listing = json.loads(subprocess.run([posenc, "list", "--format", "json"], capture_output=True, text=True,
                                        check=True).stdout)
    out = {}
    for s in listing["schemes"]:
        presets = [p["name"] for p in s["presets"]]
        for verb in s["verbs"]:
            if verb not in VERBS:
                continue
            for n, argv in enumerate(help_examples(posenc, verb, s["name"])):
                if reads_files(argv):
                    continue
                out[f"{verb} {s['name']} example {n}"] = argv
                if "--preset" in argv:
                    i = argv.index("--preset")
                    for p in presets:
                        out[f"{verb} {s['name']} example {n} preset {p}"] = argv[:i + 1] + [p] + argv[i + 2:]
                if "--dtype" not in argv:
                    out[f"{verb} {s['name']} example {n} f64"] = argv + ["--dtype", "f64"]
    return out


def digest(posenc: str, argv: list, d: str) -> str:
    """sha256 of the command's .npy output (or its stdout when it writes JSON or CSV), or 'refused <status>'."""
    argv = list(argv)
    out = os.path.join(d, "out.npy")
    if "--out" in argv:
        argv[argv.index("--out") + 1] = out
    elif "--format" not in argv:
        argv += ["--out", out]
    if os.path.exists(out):
        os.remove(out)
    proc = subprocess.run([posenc, *argv], capture_output=True, cwd=d)
    if proc.returncode != 0:
        return f"refused {proc.returncode}"
    data = open(out, "rb").read() if os.path.exists(out) else re.sub(rb'"file":\s*"[^"]*"', b"", proc.stdout)
    return hashlib.sha256(data).hexdigest()


def main(argv: list) -> int:
    if not argv or argv[0].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    posenc = os.path.abspath(argv[0])
    with tempfile.TemporaryDirectory() as d:
        configs = {**example_configs(posenc), **relative_configs(d), **file_configs(d)}
        hashes = {name: digest(posenc, cmd, d) for name, cmd in sorted(configs.items())}
    refused = sum(v.startswith("refused") for v in hashes.values())
    print(f"value_hash.py: {len(hashes)} configurations ({len(hashes) - refused} with values, {refused} refused)")
    if "--compare" in argv:
        want = json.load(open(argv[argv.index("--compare") + 1]))
        diff = sorted(k for k in set(want) | set(hashes) if want.get(k) != hashes.get(k))
        for k in diff:
            print(f"  differs: {k}: {want.get(k, '(absent)')} -> {hashes.get(k, '(absent)')}")
        print(f"value_hash.py: {len(diff)} of {len(hashes)} configurations differ")
        return 1 if diff else 0
    if "--out" in argv:
        with open(argv[argv.index("--out") + 1], "w") as f:
            json.dump(hashes, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
