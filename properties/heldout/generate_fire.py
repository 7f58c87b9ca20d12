#!/usr/bin/env python3
"""properties/heldout/generate_fire.py — held-out FIRE biases from the located implementation, on real BLAS kernels.

Not run by the build or CI. Needs PyTorch (Debian's python3-torch is enough: `apt-get install --no-install-recommends
python3-torch`, then run with /usr/bin/python3) and the source file of the one FIRE implementation located
(CONVENTIONS.md §2.15), which is not part of posenc:

  --fire   mcleish7/arithmetic@86022a57 cramming/architectures/embeddings.py   (class FIRE; the file is unchanged
           since 55af9d5e, the commit posenc's fire_spec.hpp cites)

As generate_torch.py does, it takes from the file only the class named in SOURCES, by parsing it (ast), and
executes its source text unchanged in a namespace holding torch and math (the file's other imports, einops and the
rest of cramming, are not needed); the manifest records its line and a SHA-256 of its text.

What is FIRE's code and what is glue: the module's own __init__ and forward (eval mode: positions 0 .. L-1, the
log transforms, the thresholded normalizer and the MLP, two torch.nn.Linear = addmm on the BLAS) compute every
stored number. The glue is the weights: the module's parameters set from a seeded generator (torch's default
Linear init for the MLP, then c, L_multiplier chosen per case) and written out with the state_dict as posenc
reads it (`{k: v.tolist() for k, v in state_dict().items()}`, cli/tests/data/README.md). The MLP's input, FIRE's
`normalized_distances`, is recorded by a forward pre-hook on `self.mlp` (the module's own tensor, not recomputed).

The order in which PyTorch's addmm sums the second Linear is the BLAS kernel's. Debian's torch calls OpenBLAS, which
picks its kernel from OPENBLAS_CORETYPE (read when the library loads), so every case is computed once per core, each
in a child process of this script with the variable set: Haswell (AVX2 + FMA kernels), Sandybridge (AVX, no FMA) and
Prescott (SSE3). The normalized distances do not involve the BLAS and must come out equal in every child; the
manifest says so.

Usage: /usr/bin/python3 generate_fire.py --fire PATH/TO/embeddings.py OUTDIR
"""
import argparse, ast, hashlib, json, math, os, platform, subprocess, sys, zlib

import numpy as np
import torch

SOURCES = {"fire": ("mcleish7/arithmetic@86022a57d38c0fde46444d62e8dcbebcc0af614c",
                    "cramming/architectures/embeddings.py", ["FIRE"])}
CORES = ["Haswell", "Sandybridge", "Prescott"]

# (name, heads, width, L, c, L_multiplier, weight scale, cores): the reference's defaults (12 heads, width 32,
# init_c 0.1, init_L 512: every row at the threshold), trained-looking ones with the threshold inside the rows, a
# narrow MLP with larger weights (cancellation), a negative multiplier (the code's abs), and threshold 0 (the
# normalizer is q itself, eps alone at q = 0).
CASES = [
    ("h12_w32_default", 12, 32, 64, 0.1, 1.0, 1.0, CORES),
    ("h4_w32_thr25", 4, 32, 64, 0.37, 0.05, 1.0, CORES),
    ("h2_w7_negmult", 2, 7, 100, 1.5, -0.1, 3.0, CORES),
    ("h3_w64_thr0", 3, 64, 80, 0.02, 0.0, 1.0, CORES),
]


def load_fire(path, manifest):
    """class FIRE of `path`, executed from its own source text."""
    text = open(path, encoding="utf-8").read()
    tree = ast.parse(text)
    repo, rel, names = SOURCES["fire"]
    node = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == names[0]), None)
    if node is None:
        sys.exit(f"{path}: class FIRE not found")
    src = ast.get_source_segment(text, node, padded=True)
    manifest["sources"]["fire:FIRE"] = {"repo": repo, "file": rel, "line": node.lineno,
                                        "sha256": hashlib.sha256(src.encode()).hexdigest()}
    ns = {"torch": torch, "math": math, "__name__": "heldout_fire"}
    exec(compile(src, f"{rel}:FIRE", "exec"), ns)
    return ns["FIRE"]


def child(fire_path, out, core):
    """One OpenBLAS core (this process was started with OPENBLAS_CORETYPE = core): every case's bias."""
    torch.set_num_threads(1)
    part = {"core": core, "sources": {}, "cases": []}
    FIRE = load_fire(fire_path, part)
    for name, heads, width, L, c, mult, scale, cores in CASES:
        if core not in cores:
            continue
        torch.manual_seed(zlib.crc32(name.encode()) + 20261130)  # the same weights in every child
        m = FIRE(num_heads=heads, mlp_width=width).eval()
        with torch.no_grad():
            m.c.fill_(c)
            m.L_multiplier.fill_(mult)
            for p in m.mlp.parameters():
                p.mul_(scale)
        seen = {}
        hook = m.mlp.register_forward_pre_hook(lambda mod, inp: seen.__setitem__("x", inp[0].detach().clone()))
        with torch.no_grad():
            bias = m(L, "cpu")  # [1, heads, L, L]
        hook.remove()
        b = bias[0].numpy().astype(np.float32)
        x = seen["x"][..., 0].numpy().astype(np.float32)  # [L, L]
        np.save(os.path.join(out, f"fire_{name}_{core.lower()}_bias.npy"), np.ascontiguousarray(b))
        xfile = f"fire_{name}_x.npy"
        xpath = os.path.join(out, xfile)
        if not os.path.exists(xpath):
            np.save(xpath, np.ascontiguousarray(x))
        same_x = bool(np.array_equal(np.load(xpath).view(np.uint32), x.view(np.uint32)))
        weights = {k: v.tolist() for k, v in m.state_dict().items()}
        wfile = f"fire_{name}_weights.json"
        wpath = os.path.join(out, wfile)
        if not os.path.exists(wpath):
            with open(wpath, "w") as fh:
                json.dump(weights, fh)
        same_w = json.load(open(wpath)) == json.loads(json.dumps(weights))
        part["cases"].append({"file": f"fire_{name}_{core.lower()}_bias.npy", "kind": "fire-bias", "case": name,
                              "core": core, "heads": heads, "mlp_width": width, "key_length": L, "c": c,
                              "L_multiplier": mult, "init_L": 512.0, "eps": 1e-6, "weight_scale": scale,
                              "weights": wfile, "x": xfile, "x_equal_to_first_core": same_x,
                              "weights_equal_to_first_core": same_w, "shape": list(b.shape), "dtype": "float32"})
    with open(os.path.join(out, f"part_{core}.json"), "w") as fh:
        json.dump(part, fh)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fire", required=True, help="mcleish7/arithmetic@86022a57 cramming/architectures/embeddings.py")
    ap.add_argument("--core", help=argparse.SUPPRESS)  # internal: the child for one OpenBLAS core
    ap.add_argument("out")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.core:
        return child(a.fire, a.out, a.core)
    manifest = {"generator": "properties/heldout/generate_fire.py", "python": platform.python_version(),
                "torch": torch.__version__, "numpy": np.__version__, "cpu": platform.machine(),
                "device": "cpu (torch CPU kernels, 1 thread; OpenBLAS kernel per OPENBLAS_CORETYPE)",
                "blas": torch.__config__.show().split("BLAS_INFO=")[1].split(",")[0] if "BLAS_INFO=" in
                torch.__config__.show() else None, "sources": {}, "cores": {}, "cases": []}
    try:  # Debian's build reports 1.13.0a0; the package versions say which releases these are
        manifest["torch_package"] = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Version}", "python3-torch"],
                                                   capture_output=True, text=True).stdout or None
        manifest["openblas_package"] = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Version}",
                                                       "libopenblas0-pthread"], capture_output=True, text=True).stdout or None
    except OSError:
        pass
    for stale in os.listdir(a.out):
        if stale.startswith("fire_") or stale.startswith("part_"):
            os.remove(os.path.join(a.out, stale))
    for core in CORES:
        env = dict(os.environ, OPENBLAS_CORETYPE=core, OPENBLAS_VERBOSE="2", OMP_NUM_THREADS="1",
                   OPENBLAS_NUM_THREADS="1")
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--fire", a.fire, "--core", core, a.out],
                           env=env, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"core {core}: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
        # OpenBLAS prints the core it loaded ("Core: Haswell") with OPENBLAS_VERBOSE=2
        loaded = [l.split(":", 1)[1].strip() for l in (r.stdout + r.stderr).splitlines() if l.startswith("Core:")]
        manifest["cores"][core] = {"loaded": loaded[0] if loaded else None}
        part_path = os.path.join(a.out, f"part_{core}.json")
        part = json.load(open(part_path))
        os.remove(part_path)
        manifest["sources"].update(part["sources"])
        manifest["cases"].extend(part["cases"])
    with open(os.path.join(a.out, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1)
    print("cases:", len(manifest["cases"]), "cores:", json.dumps(manifest["cores"]))


if __name__ == "__main__":
    main()
