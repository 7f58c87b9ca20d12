#!/usr/bin/env python3
"""properties/heldout/generate_hf.py — held-out vectors from the real implementations (PyTorch + transformers).

Not run by the build or CI: posenc's machines have neither PyTorch nor transformers. It was run once on a
machine that has them (see manifest.json: versions, the source file and a SHA-256 of the source of every
function called), and its output is committed next to it in data/; the ctest `heldout.*` entries hold
posenc to those numbers. It calls the implementations' own functions and classes, never a re-implementation,
so the files record what HF code computes, including its float32 steps and PyTorch's own (not correctly
rounded) float32 sin/cos/pow.

Usage: python3 generate_hf.py OUTDIR
"""
import hashlib, inspect, json, math, os, platform, sys

import numpy as np
import torch
import transformers

torch.manual_seed(20261124)
np.random.seed(20261124)
OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
manifest = {"generator": "properties/heldout/generate_hf.py",
            "python": platform.python_version(), "torch": torch.__version__,
            "transformers": transformers.__version__, "numpy": np.__version__,
            "cpu": platform.processor() or platform.machine(), "device": "cpu (torch CPU kernels)",
            "sources": {}, "cases": [], "errors": []}


def cite(fn):
    """Records where a called function comes from (file, line, SHA-256 of its source)."""
    try:
        src = inspect.getsource(fn)
        name = getattr(fn, "__qualname__", str(fn))
        manifest["sources"][f"{fn.__module__}.{name}"] = {
            "file": os.path.relpath(inspect.getsourcefile(fn), os.path.dirname(transformers.__file__)),
            "line": inspect.getsourcelines(fn)[1], "sha256": hashlib.sha256(src.encode()).hexdigest()}
        with open(os.path.join(OUT, "sources.txt"), "a") as f:
            f.write(f"===== {fn.__module__}.{name}\n{src}\n")
    except Exception as e:  # pragma: no cover
        manifest["errors"].append(f"cite {fn}: {e!r}")


def save(name, arr, **info):
    arr = np.ascontiguousarray(arr)
    np.save(os.path.join(OUT, name + ".npy"), arr)
    manifest["cases"].append({"file": name + ".npy", "dtype": str(arr.dtype), "shape": list(arr.shape), **info})


# Positions: a dense run, the places where float32 angles and fast sin/cos go wrong, and long context.
LONG = [4095, 4096, 8191, 32767, 48039, 65535, 100000, 131071, 131072, 262143, 524287, 1000000, 1048575, 1048576]
POSITIONS = list(range(0, 256)) + LONG


def positions_tensor(ps):
    return torch.tensor(ps, dtype=torch.int64).unsqueeze(0)  # (1, P), as position_ids


def hf_rotary(model, config_cls, rotary_cls, apply_fn, name, hd, heads, tokens_positions, **cfg):
    head_dim = hd
    """A model's rotary module (cos, sin caches for position_ids) and its apply_rotary_pos_emb on random q, k."""
    try:
        config = config_cls(**cfg)
        rot = rotary_cls(config=config)
        cite(rotary_cls.forward); cite(apply_fn)
        for f in ("compute_default_rope_parameters", "_compute_default_rope_parameters"):
            if hasattr(rotary_cls, f): cite(getattr(rotary_cls, f))
        dummy = torch.zeros(1, 1, dtype=torch.float32)
        pos = positions_tensor(POSITIONS)
        with torch.no_grad():
            cos, sin = rot(dummy, pos)  # (1, P, rotary_dim) each, [c | c]
        cache = torch.stack([cos[0], sin[0]]).numpy().astype(np.float32)  # (2, P, r): posenc's hf form
        rp = getattr(config, "rope_parameters", None)
        save(f"{name}_cache_hf", cache, kind="rope-cache", model=model, form="hf", positions=POSITIONS,
             head_dim=head_dim, rotary_dim=int(cache.shape[2]), rope_parameters=rp,
             inv_freq=[float(v) for v in rot.inv_freq.tolist()])
        # Rotation: q, k (batch 1, heads, T, head_dim) at per-token positions (offset run and a restart).
        T = len(tokens_positions)
        q = torch.randn(1, heads, T, head_dim, dtype=torch.float32)
        k = torch.randn(1, heads, T, head_dim, dtype=torch.float32)
        with torch.no_grad():
            c2, s2 = rot(dummy, positions_tensor(tokens_positions))
            qr, kr = apply_fn(q, k, c2, s2)
        for tag, x, y in (("q", q, qr), ("k", k, kr)):
            save(f"{name}_apply_{tag}_in", x[0].transpose(0, 1).numpy(), kind="rope-apply-in", model=model)
            save(f"{name}_apply_{tag}_out", y[0].transpose(0, 1).numpy(), kind="rope-apply-out", model=model,
                 input=f"{name}_apply_{tag}_in.npy", positions=tokens_positions, head_dim=head_dim,
                 rotary_dim=int(cache.shape[2]), layout="halves")
    except Exception as e:
        manifest["errors"].append(f"{name}: {e!r}")


TOKENS = list(range(7, 7 + 24)) + list(range(0, 8)) + [100000, 1048575]  # offset run, packed restart, long

from transformers.models.llama import modeling_llama as ml
hf_rotary("hf-llama", ml.LlamaConfig, ml.LlamaRotaryEmbedding, ml.apply_rotary_pos_emb, "hf_llama_theta1e4_d128",
          128, 4, TOKENS, hidden_size=512, num_attention_heads=4, head_dim=128, rope_theta=10000.0,
          max_position_embeddings=4096)
hf_rotary("hf-llama (Llama 3 theta, no scaling)", ml.LlamaConfig, ml.LlamaRotaryEmbedding, ml.apply_rotary_pos_emb,
          "hf_llama_theta5e5_d128", 128, 4, TOKENS, hidden_size=512, num_attention_heads=4, head_dim=128,
          rope_theta=500000.0, max_position_embeddings=8192)
hf_rotary("hf-llama", ml.LlamaConfig, ml.LlamaRotaryEmbedding, ml.apply_rotary_pos_emb, "hf_llama_theta1e4_d64",
          64, 4, TOKENS, hidden_size=256, num_attention_heads=4, head_dim=64, rope_theta=10000.0,
          max_position_embeddings=4096)
# 16-bit activations: HF casts cos/sin to the activations' dtype and rotates in it (bf16 / f16 arithmetic). The
# inputs are saved as float32 (their values are exact there); bf16 outputs as their uint16 bit patterns.
try:
    config = ml.LlamaConfig(hidden_size=512, num_attention_heads=4, head_dim=128, rope_theta=10000.0,
                            max_position_embeddings=4096)
    rot = ml.LlamaRotaryEmbedding(config=config)
    for dt, tag in ((torch.bfloat16, "bf16"), (torch.float16, "f16")):
        q = torch.randn(1, 4, len(TOKENS), 128, dtype=torch.float32).to(dt)
        k = torch.randn(1, 4, len(TOKENS), 128, dtype=torch.float32).to(dt)
        with torch.no_grad():
            c2, s2 = rot(q, positions_tensor(TOKENS))  # cos/sin in q's dtype
            qr, kr = ml.apply_rotary_pos_emb(q, k, c2, s2)
        for name, a, b in (("q", q, qr), ("k", k, kr)):
            xin = a[0].transpose(0, 1).float().numpy()
            yout = b[0].transpose(0, 1).contiguous()
            save(f"hf_llama_theta1e4_d128_{tag}_apply_{name}_in", xin, kind="rope-apply-in", model="hf-llama " + tag)
            out = yout.view(torch.int16).numpy().view(np.uint16) if tag == "bf16" else yout.numpy()
            save(f"hf_llama_theta1e4_d128_{tag}_apply_{name}_out", out, kind="rope-apply-out-16", model="hf-llama " + tag,
                 input=f"hf_llama_theta1e4_d128_{tag}_apply_{name}_in.npy", positions=TOKENS, head_dim=128,
                 rotary_dim=128, layout="halves", dtype16=tag)
except Exception as e:
    manifest["errors"].append(f"hf-llama 16-bit: {e!r}")

from transformers.models.gpt_neox import modeling_gpt_neox as mn
hf_rotary("gpt-neox", mn.GPTNeoXConfig, mn.GPTNeoXRotaryEmbedding, mn.apply_rotary_pos_emb, "gpt_neox_pct025_d64",
          64, 4, TOKENS, hidden_size=256, num_attention_heads=4, rotary_pct=0.25, partial_rotary_factor=0.25,
          rotary_emb_base=10000, rope_theta=10000.0, max_position_embeddings=2048)

# GPT-J: the sinusoid table [sin | cos] (float32) and the interleaved rotation with repeat_interleave.
try:
    from transformers.models.gptj import modeling_gptj as mj
    cite(mj.create_sinusoidal_positions); cite(mj.apply_rotary_pos_emb); cite(mj.rotate_every_two)
    rotary_dim, head_dim, heads = 64, 256, 4
    n = max(POSITIONS) + 1
    # create_sinusoidal_positions(num_pos, dim) builds every row 0..num_pos-1; keep the rows of POSITIONS.
    table = mj.create_sinusoidal_positions(n, rotary_dim)
    rows = table[torch.tensor(POSITIONS)]
    save("gptj_rd64_table", rows.numpy().astype(np.float32), kind="rope-cache", model="gpt-j", form="gptj",
         positions=POSITIONS, head_dim=head_dim, rotary_dim=rotary_dim)
    x = torch.randn(1, len(TOKENS), heads, head_dim, dtype=torch.float32)  # GPT-J: (batch, seq, heads, dim)
    sincos = table[torch.tensor(TOKENS)].unsqueeze(0)
    sin, cos = torch.split(sincos, rotary_dim // 2, dim=-1)
    x_rot, x_pass = x[:, :, :, :rotary_dim], x[:, :, :, rotary_dim:]
    y = torch.cat([mj.apply_rotary_pos_emb(x_rot, sin, cos), x_pass], dim=-1)
    save("gptj_rd64_apply_in", x[0].numpy(), kind="rope-apply-in", model="gpt-j")
    save("gptj_rd64_apply_out", y[0].numpy(), kind="rope-apply-out", model="gpt-j", input="gptj_rd64_apply_in.npy",
         positions=TOKENS, head_dim=head_dim, rotary_dim=rotary_dim, layout="interleaved")
except Exception as e:
    manifest["errors"].append(f"gpt-j: {e!r}")

# RoFormer: the Marian-style float64 table (cast to float32) and its interleaved rotation.
try:
    from transformers.models.roformer import modeling_roformer as mr
    emb_cls = mr.RoFormerSinusoidalPositionalEmbedding
    cite(emb_cls); cite(mr.RoFormerSelfAttention.apply_rotary_position_embeddings)
    head_dim, heads = 64, 4
    # The table's weight is filled by create_weight() (transformers 5: from the model's _init_weights; older
    # versions: _init_weight); a bare module holds random numbers. Rows up to 131072: create_weight builds the
    # table in a Python loop.
    n = 131073
    emb = emb_cls(n, head_dim)
    with torch.no_grad():
        if hasattr(emb, "create_weight"):
            cite(emb_cls.create_weight)
            emb.weight.copy_(emb.create_weight())
        else:
            emb.weight = emb._init_weight(emb.weight)
    w = emb.weight.detach()
    ro_pos = POSITIONS[:256] + [p for p in LONG if p < n]
    ro_tok = [p for p in TOKENS if p < n]
    save("roformer_d64_table", w[torch.tensor(ro_pos)].numpy().astype(np.float32),
         kind="rope-cache", model="roformer", form="gptj", positions=ro_pos, head_dim=head_dim, rotary_dim=head_dim)
    sinusoidal_pos = w[torch.tensor(ro_tok)][None, None, :, :]  # (1, 1, T, d)
    q = torch.randn(1, heads, len(ro_tok), head_dim, dtype=torch.float32)
    k = torch.randn(1, heads, len(ro_tok), head_dim, dtype=torch.float32)
    qr, kr = mr.RoFormerSelfAttention.apply_rotary_position_embeddings(sinusoidal_pos, q, k)
    for tag, a, b in (("q", q, qr), ("k", k, kr)):
        save(f"roformer_d64_apply_{tag}_in", a[0].transpose(0, 1).numpy(), kind="rope-apply-in", model="roformer")
        save(f"roformer_d64_apply_{tag}_out", b[0].transpose(0, 1).numpy(), kind="rope-apply-out", model="roformer",
             input=f"roformer_d64_apply_{tag}_in.npy", positions=ro_tok, head_dim=head_dim, rotary_dim=head_dim,
             layout="interleaved")
except Exception as e:
    manifest["errors"].append(f"roformer: {e!r}")

# Sinusoidal absolute tables: XLM (paper, interleaved, float64 -> float32), Marian (paper, [sin | cos], float64 ->
# float32), FSMT (fairseq's SinusoidalPositionalEmbedding ported: torch float32 exp, [sin | cos], padding row) and
# M2M100 (the same fairseq formula). Rows at POSITIONS (row index = position number).
SIN_POS = list(range(0, 256)) + [4095, 8191, 32767, 48039, 65535, 100000]


def sin_case(name, model, table, **info):
    rows = table[torch.tensor(SIN_POS)].detach().float().numpy().astype(np.float32)
    save(name, rows, kind="sinusoidal-table", model=model, positions=SIN_POS, **info)


N_SIN = max(SIN_POS) + 1
try:
    from transformers.models.xlm import modeling_xlm as mx
    cite(mx.create_sinusoidal_embeddings)
    out = torch.empty(N_SIN, 512)
    mx.create_sinusoidal_embeddings(N_SIN, 512, out)
    sin_case("xlm_d512_table", "xlm", out, dim=512)
except Exception as e:
    manifest["errors"].append(f"xlm: {e!r}")
try:
    from transformers.models.marian import modeling_marian as mm2
    emb_cls = mm2.MarianSinusoidalPositionalEmbedding
    emb = emb_cls(8192, 512)  # create_weight builds the table in a Python loop: rows up to 8191
    with torch.no_grad():
        if hasattr(emb, "create_weight"):
            cite(emb_cls.create_weight)
            emb.weight.copy_(emb.create_weight())
        else:
            emb.weight = emb._init_weight(emb.weight)
    rows = [p for p in SIN_POS if p < 8192]
    save("marian_d512_table", emb.weight.detach()[torch.tensor(rows)].numpy().astype(np.float32), kind="sinusoidal-table",
         model="marian", positions=rows, dim=512)
except Exception as e:
    manifest["errors"].append(f"marian: {e!r}")
for mod_name, cls_name, tag in (("fsmt", "SinusoidalPositionalEmbedding", "fsmt"),
                                ("m2m_100", "M2M100SinusoidalPositionalEmbedding", "m2m100")):
    try:
        import importlib
        mod = importlib.import_module(f"transformers.models.{mod_name}.modeling_{mod_name}")
        cls = getattr(mod, cls_name)
        cite(cls.get_embedding)
        for d, pad in ((512, 1), (64, 1)):
            table = cls.get_embedding(N_SIN, d, pad)
            sin_case(f"{tag}_d{d}_table", tag, table, dim=d, padding_idx=pad)
    except Exception as e:
        manifest["errors"].append(f"{tag}: {e!r}")

# RoPE scaling (issue 8): HF's init functions, inv_freq and attention factor per rope_type.
try:
    from transformers import modeling_rope_utils as mru
    fns = mru.ROPE_INIT_FUNCTIONS
    for fname, f in fns.items():
        cite(f)
    if hasattr(mru, "dynamic_rope_update"): cite(mru.dynamic_rope_update)
    scalings = [
        ("linear", {"rope_type": "linear", "factor": 4.0}),
        ("dynamic", {"rope_type": "dynamic", "factor": 2.0}),
        ("yarn", {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}),
        ("yarn_b", {"rope_type": "yarn", "factor": 16.0, "beta_fast": 32, "beta_slow": 1, "mscale": 0.707,
                    "mscale_all_dim": 0.707, "original_max_position_embeddings": 4096}),
        ("yarn_notrunc", {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 2048, "truncate": False}),
        ("llama3", {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                    "original_max_position_embeddings": 8192}),
        ("longrope", {"rope_type": "longrope", "short_factor": [1.0 + 0.01 * i for i in range(32)],
                      "long_factor": [1.0 + 0.5 * i for i in range(32)], "original_max_position_embeddings": 4096}),
    ]
    res = []
    for tag, rs in scalings:
        try:
            theta = 500000.0 if tag == "llama3" else 10000.0
            mpe = 131072 if tag in ("llama3", "longrope") else 16384
            config = ml.LlamaConfig(hidden_size=512, num_attention_heads=8, head_dim=64, rope_theta=theta,
                                    max_position_embeddings=mpe, rope_scaling=dict(rs))
            rt = rs["rope_type"]
            f = fns[rt]
            out = {}
            for seq_len in (None, 1024, 8192, 40000):
                try:
                    inv, af = f(config, "cpu", seq_len=seq_len) if seq_len is not None else f(config, "cpu")
                except TypeError:
                    inv, af = f(config, "cpu")
                out[str(seq_len)] = {"inv_freq": [float(v) for v in inv.tolist()], "attention_factor": float(af)}
            res.append({"tag": tag, "rope_scaling": rs, "rope_theta": theta, "head_dim": 64,
                        "max_position_embeddings": mpe, "rope_parameters": getattr(config, "rope_parameters", None),
                        "by_seq_len": out})
        except Exception as e:
            manifest["errors"].append(f"scaling {tag}: {e!r}")
    with open(os.path.join(OUT, "rope_scaling.json"), "w") as fh:
        json.dump(res, fh, indent=1, default=str)
except Exception as e:
    manifest["errors"].append(f"scaling: {e!r}")

# Relative biases (issues 9, 11): T5 buckets, ALiBi (BLOOM, MPT), DeBERTa log buckets.
try:
    from transformers.models.t5 import modeling_t5 as mt
    fn = mt.T5Attention._relative_position_bucket
    cite(fn)
    rel = torch.arange(-3000, 3001, dtype=torch.int64)
    b = {}
    for bi in (True, False):
        for nb, md in ((32, 128), (64, 256), (128, 128), (8, 16), (16, 64)):
            b[f"bi{int(bi)}_nb{nb}_md{md}"] = fn(rel, bidirectional=bi, num_buckets=nb, max_distance=md).tolist()
    with open(os.path.join(OUT, "t5_buckets.json"), "w") as fh:
        json.dump({"relative_position": "key - query", "relative": rel.tolist(), "buckets": b}, fh)
except Exception as e:
    manifest["errors"].append(f"t5: {e!r}")
try:
    from transformers.models.bloom import modeling_bloom as mb
    cite(mb.build_alibi_tensor)
    al = {}
    for n in list(range(1, 33)) + [40, 48, 64, 66, 72, 80, 96, 112, 128]:
        mask = torch.ones(1, 5, dtype=torch.int64)
        t = mb.build_alibi_tensor(mask, n, torch.float32)  # (n, 1, 5) = slope * position
        al[str(n)] = [float(v) for v in t[:, 0, 1].tolist()]
    mask = torch.tensor([[0, 0, 1, 1, 1, 0, 1, 1]], dtype=torch.int64)
    padded = mb.build_alibi_tensor(mask, 6, torch.float32)[:, 0, :].tolist()
    with open(os.path.join(OUT, "alibi_bloom.json"), "w") as fh:
        json.dump({"slopes_f32_by_heads": al, "padded_mask": mask.tolist(), "padded_bias_6_heads": padded}, fh)
except Exception as e:
    manifest["errors"].append(f"bloom alibi: {e!r}")
try:
    from transformers.models.mpt import modeling_mpt as mm
    cite(mm.build_mpt_alibi_tensor)
    al = {}
    for n in list(range(1, 33)) + [40, 48, 64, 66, 72, 128]:
        t = mm.build_mpt_alibi_tensor(n, 6, alibi_bias_max=8)  # (n, 1, L)
        al[str(n)] = t[:, 0, :].tolist()
    with open(os.path.join(OUT, "alibi_mpt.json"), "w") as fh:
        json.dump({"sequence_length": 6, "alibi_bias_max": 8, "bias_by_heads": al}, fh)
except Exception as e:
    manifest["errors"].append(f"mpt alibi: {e!r}")
try:
    from transformers.models.deberta_v2 import modeling_deberta_v2 as md
    cite(md.make_log_bucket_position); cite(md.build_relative_position)
    rel = torch.arange(-3000, 3001, dtype=torch.int64)
    out = {}
    for bs, mp in ((256, 512), (128, 512), (64, 256), (32, 64)):
        out[f"bs{bs}_mp{mp}"] = md.make_log_bucket_position(rel, bs, mp).tolist()
    rp = {}
    for (q, k, bs, mp) in ((5, 5, 256, 512), (3, 7, 256, 512), (9, 4, 4, 8), (40, 40, 8, 16)):
        try:  # newer HF: the query and key layers (their size(-2) is the length)
            r = md.build_relative_position(torch.zeros(q, 1), torch.zeros(k, 1), bucket_size=bs, max_position=mp)
        except (TypeError, IndexError):
            r = md.build_relative_position(q, k, bucket_size=bs, max_position=mp)
        rp[f"q{q}_k{k}_bs{bs}_mp{mp}"] = r.tolist()
    with open(os.path.join(OUT, "deberta_buckets.json"), "w") as fh:
        json.dump({"relative": rel.tolist(), "log_bucket": out, "build_relative_position": rp}, fh)
except Exception as e:
    manifest["errors"].append(f"deberta: {e!r}")

with open(os.path.join(OUT, "manifest.json"), "w") as fh:
    json.dump(manifest, fh, indent=1, default=str)
print("errors:", json.dumps(manifest["errors"], indent=1))
print("cases:", len(manifest["cases"]))
