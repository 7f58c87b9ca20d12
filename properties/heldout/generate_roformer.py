#!/usr/bin/env python3
"""properties/heldout/generate_roformer.py — held-out RoFormer vectors from HF transformers' own RoFormer code.

Not run by the build or CI: posenc's machines have no transformers. Run once on a machine with PyTorch and
transformers (CPU only, a few seconds; no GPU, network or model download is used), and commit its output next to
generate_hf.py's in data/hf/ (posenc's `heldout.hf` reads it from there):

    python3 properties/heldout/generate_roformer.py properties/heldout/data/hf

It writes roformer_table_*.npy, roformer_rot_*.npy, roformer_manifest.json (versions, and for every function
called its file, line and a SHA-256 of its source, as generate_hf.py's manifest.json does) and roformer_sources.txt
(the cited source text) into OUTDIR, and touches nothing else there. It calls the implementation's own class and
method, never a re-implementation (transformers/models/roformer/modeling_roformer.py):

  RoFormerSinusoidalPositionalEmbedding   the table: create_weight() (transformers 5; older releases fill the weight
                                          in _init_weight), float64 numpy `pos / np.power(10000, 2 * (j // 2) /
                                          dim)`, np.sin / np.cos, cast to float32 by torch.FloatTensor; and forward()
                                          (rows past_key_values_length .. + seq_len - 1)
  RoFormerSelfAttention.apply_rotary_position_embeddings
                                          q * cos_pos + rotate_every_two(q) * sin_pos, for q, k and v (rotary_value)

so the files record the float64 numpy table as this machine's numpy computes it (its own libm / SVML pow, sin, cos)
and the float32 rotation as PyTorch's CPU kernels compute it.

Without the transformers package (posenc's machines: Debian's PyTorch 1.13 and NumPy, no transformers), --source
runs the same class and method from a copy of modeling_roformer.py taken from the transformers repository (kept
outside posenc's tree; the two classes' text is enough): the two definitions are cut out of the file as written (ast) and executed as they stand,
with numpy, torch and math in scope; transformers 5's `nn.Embedding(..., _freeze=True)` keyword, which PyTorch 1.13
lacks, is accepted and applied as requires_grad=False (it changes no value). The manifest then names the commit
given with --commit and the file's SHA-256 in place of an installed version.

Usage: python3 generate_roformer.py OUTDIR                                       (torch, transformers, numpy)
       python3 generate_roformer.py OUTDIR --source modeling_roformer.py --commit SHA   (torch, numpy)
"""
import argparse, ast, hashlib, inspect, json, math, os, platform, sys, types

import numpy as np
import torch

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--source", help="a copy of transformers' models/roformer/modeling_roformer.py (no package needed)")
ap.add_argument("--commit", help="with --source: the transformers commit the copy was taken at")
args = ap.parse_args()
if args.source and not args.commit:
    ap.error("--source needs --commit (the transformers commit the file comes from)")
if args.source:
    transformers = types.SimpleNamespace(__version__=f"source huggingface/transformers@{args.commit}",
                                         __file__=os.path.abspath(args.source))
else:
    import transformers
OUT = args.out
os.makedirs(OUT, exist_ok=True)
torch.manual_seed(20261129)
np.random.seed(20261129)
torch.set_num_threads(1)
manifest = {"generator": "properties/heldout/generate_roformer.py",
            "python": platform.python_version(), "torch": torch.__version__,
            "transformers": transformers.__version__, "numpy": np.__version__,
            "cpu": platform.processor() or platform.machine(), "device": "cpu (torch CPU kernels, 1 thread)",
            "sources": {}, "cases": [], "errors": []}
try:  # numpy's own build: which SIMD kernels (SVML) its float64 sin / cos / power may use on this CPU
    manifest["numpy_cpu_features"] = {k: bool(v) for k, v in np.core._multiarray_umath.__cpu_features__.items()
                                      if k.startswith("AVX512") or k in ("AVX2", "FMA3")}
except Exception:
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as feats
        manifest["numpy_cpu_features"] = {k: bool(v) for k, v in feats.items()
                                          if k.startswith("AVX512") or k in ("AVX2", "FMA3")}
    except Exception as e:  # pragma: no cover
        manifest["numpy_cpu_features"] = repr(e)
SRC = os.path.join(OUT, "roformer_sources.txt")
if os.path.exists(SRC):
    os.remove(SRC)


def cite(fn):
    """Records where a called function comes from (file, line, SHA-256 of its source)."""
    try:
        src = inspect.getsource(fn)
        name = getattr(fn, "__qualname__", str(fn))
        manifest["sources"][f"{fn.__module__}.{name}"] = {
            "file": os.path.relpath(inspect.getsourcefile(fn), os.path.dirname(transformers.__file__)),
            "line": inspect.getsourcelines(fn)[1], "sha256": hashlib.sha256(src.encode()).hexdigest()}
        with open(SRC, "a") as f:
            f.write(f"===== {fn.__module__}.{name}\n{src}\n")
    except Exception as e:  # pragma: no cover
        manifest["errors"].append(f"cite {fn}: {e!r}")


def save(name, arr, **info):
    arr = np.ascontiguousarray(arr)
    np.save(os.path.join(OUT, name + ".npy"), arr)
    manifest["cases"].append({"file": name + ".npy", "dtype": str(arr.dtype), "shape": list(arr.shape), **info})


def load_source(path):
    """The two classes of modeling_roformer.py as written, executed without the rest of the package (--source)."""
    text = open(path).read()
    manifest["source_file_sha256"] = hashlib.sha256(text.encode()).hexdigest()
    manifest["source_note"] = ("--source: each definition's SHA-256 is of its text as written; lines are those of "
                               "the file given, which may be an excerpt")
    want = ("RoFormerSinusoidalPositionalEmbedding", "RoFormerSelfAttention")

    class Embedding(torch.nn.Embedding):  # transformers 5 passes _freeze=True (PyTorch >= 2.0): no value changes
        def __init__(self, *a, _freeze=False, **kw):
            super().__init__(*a, **kw)
            if _freeze:
                self.weight.requires_grad_(False)

    nn = types.SimpleNamespace(**{k: getattr(torch.nn, k) for k in dir(torch.nn) if not k.startswith("__")})
    nn.Embedding = Embedding
    scope = {"np": np, "torch": torch, "nn": nn, "math": math, "__name__": "modeling_roformer"}
    found = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.ClassDef) and node.name in want:
            seg = ast.get_source_segment(text, node)
            exec(compile(ast.Module(body=[node], type_ignores=[]), path, "exec"), scope)
            found[node.name] = scope[node.name]
            for sub in [n for n in node.body if isinstance(n, ast.FunctionDef)]:  # each method as written
                name = f"{node.name}.{sub.name}"
                src = ast.get_source_segment(text, sub)
                manifest["sources"][f"modeling_roformer.{name}"] = {
                    "file": "src/transformers/models/roformer/modeling_roformer.py", "line": sub.lineno,
                    "sha256": hashlib.sha256(src.encode()).hexdigest()}
            with open(SRC, "a") as f:
                f.write(f"===== modeling_roformer.{node.name} (line {node.lineno})\n{seg}\n")
    missing = [w for w in want if w not in found]
    if missing:
        sys.exit(f"{path}: no class {', '.join(missing)}")
    return types.SimpleNamespace(**found)


if args.source:
    mr = load_source(args.source)
else:
    from transformers.models.roformer import modeling_roformer as mr

EMB = mr.RoFormerSinusoidalPositionalEmbedding
APPLY = mr.RoFormerSelfAttention.apply_rotary_position_embeddings
if not args.source:
    cite(EMB)
    cite(EMB.forward)
    cite(APPLY)
    if hasattr(EMB, "create_weight"):
        cite(EMB.create_weight)
    elif hasattr(EMB, "_init_weight"):
        cite(EMB._init_weight)


def table(n_pos, dim):
    """The module with its real table: create_weight() (transformers 5: the model's _init_weights copies it into
    the weight; a bare module holds random numbers until then) or, in older releases, _init_weight in __init__."""
    emb = EMB(n_pos, dim)
    with torch.no_grad():
        if hasattr(emb, "create_weight"):
            emb.weight.copy_(emb.create_weight())
        elif hasattr(EMB, "_init_weight") and not hasattr(emb, "create_weight"):
            emb.weight = emb._init_weight(emb.weight)
    return emb


def mixed(shape):
    """float32 activations of mixed magnitudes (2^-8 .. 2^8 times a normal draw, some exact zeros)."""
    x = torch.randn(*shape, dtype=torch.float32)
    scale = torch.pow(2.0, torch.randint(-8, 9, shape).to(torch.float32))
    x = x * scale
    x[torch.rand(*shape) < 0.02] = 0.0
    return x


# RoFormer's released models: head size 64 (roformer_chinese_base: hidden 768, 12 heads) and 128 (hidden 1536 / 12,
# the v2 large size), max_position_embeddings 1536; the tables here reach 16384 positions.
N_POS = 16385
HARD = [1023, 1024, 1535, 1536, 2047, 4095, 4096, 8191, 8192, 12345, 16383, 16384]
rng = np.random.default_rng(20261129)
CALLS = ((0, 32), (1000, 16), (16360, 25))  # (past_key_values_length, T) of the rotations below
ROWS = sorted(set(range(256)) | set(int(p) for p in rng.integers(256, N_POS, 128)) | set(HARD) |
              {p for past, T in CALLS for p in range(past, past + T)})
for dim in (64, 128):
    try:
        emb = table(N_POS, dim)
        w = emb.weight.detach()
        save(f"roformer_table_d{dim}", w[torch.tensor(ROWS)].numpy().astype(np.float32), kind="roformer-table",
             model="roformer", form="gptj", positions=ROWS, head_dim=dim, rotary_dim=dim, table_rows=N_POS)
        # Rotations: the module's forward gives the rows of a call (past_key_values_length .. + T - 1), then
        # apply_rotary_position_embeddings rotates q, k and v (rotary_value) in float32.
        heads = 2
        for past, T in CALLS:
            sinusoidal_pos = emb((1, T), past)[None, None, :, :]  # [1, 1, T, dim], as RoFormerEncoder.forward
            q, k, v = (mixed((1, heads, T, dim)) for _ in range(3))
            qr, kr, vr = APPLY(sinusoidal_pos, q, k, v)
            positions = list(range(past, past + T))
            for tag, a, b in (("q", q, qr), ("k", k, kr), ("v", v, vr)):
                stem = f"roformer_rot_d{dim}_past{past}_{tag}"
                save(stem + "_in", a[0].transpose(0, 1).contiguous().numpy(), kind="roformer-rot-in", model="roformer")
                save(stem + "_out", b[0].transpose(0, 1).contiguous().numpy(), kind="roformer-rot-out",
                     model="roformer", input=stem + "_in.npy", positions=positions, head_dim=dim, rotary_dim=dim,
                     layout="interleaved", table=f"roformer_table_d{dim}.npy")
    except Exception as e:
        manifest["errors"].append(f"roformer d{dim}: {e!r}")

with open(os.path.join(OUT, "roformer_manifest.json"), "w") as fh:
    json.dump(manifest, fh, indent=1, default=str)
print("errors:", json.dumps(manifest["errors"], indent=1))
print("cases:", len(manifest["cases"]), "->", OUT)
sys.exit(1 if manifest["errors"] else 0)
