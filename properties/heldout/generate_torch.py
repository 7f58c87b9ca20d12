#!/usr/bin/env python3
"""properties/heldout/generate_torch.py — held-out vectors from the real Transformer-XL, HF XLNet and TENER code.

Not run by the build or CI. Needs PyTorch (Debian's python3-torch is enough: `apt-get install --no-install-recommends
python3-torch`, then run with /usr/bin/python3) and the three source files, which are not part of posenc:

  --txl    kimiyoung/transformer-xl@01102106 pytorch/mem_transformer.py
  --xlnet  huggingface/transformers@98ad48f2 src/transformers/models/xlnet/modeling_xlnet.py
  --tener  fastnlp/TENER@d2614d50 modules/relative_transformer.py

The whole files import things this generator does not need (the adaptive softmax, transformers' model machinery),
so it takes from each file only the classes and methods named in SOURCES, by parsing it (ast), and executes their
source unchanged in a namespace holding torch, nn, F and math. The manifest records, for each one, its line and a
SHA-256 of its source text, so a run from the full files and a run from excerpts of them can be compared.

What is the implementations' code and what is glue: the R tables, the shifts and every score (attn_score as it
enters F.softmax, captured there) are computed by their code. The glue, written here after the callers the
comments cite, is what their model classes do around it: the inputs (random projections through their own
nn.Linear / parameters), Transformer-XL's pos_seq, clamp and dec_attn_mask (MemTransformerLM._forward), XLNet's
seg_mat and the h-stream mask (XLNetModel.forward), and k_head_r = einsum(r, self.r) (XLNetRelativeAttention.forward).

Also, optional, HF NEZHA's and BERT's self-attention (relative_key / relative_key_query):
  --nezha  huggingface/transformers@0172c3ec src/transformers/models/nezha/modeling_nezha.py
  --bert   huggingface/transformers@004ad5f5 src/transformers/models/bert/modeling_bert.py

Usage: /usr/bin/python3 generate_torch.py --txl F --xlnet F --tener F [--nezha F --bert F] OUTDIR
"""
import argparse, ast, hashlib, json, math, os, platform, sys, textwrap, types

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F_real

SOURCES = {
    "txl": ("kimiyoung/transformer-xl@01102106eeb627c592a023cd7f9f799b7d11b27f", "pytorch/mem_transformer.py",
            ["PositionalEmbedding", "RelMultiHeadAttn", "RelPartialLearnableMultiHeadAttn"]),
    "xlnet": ("huggingface/transformers@98ad48f2eee8e1ff50e153df239fe1d591dde386",
              "src/transformers/models/xlnet/modeling_xlnet.py",
              ["XLNetRelativeAttention.rel_shift_bnij", "XLNetRelativeAttention.rel_attn_core",
               "XLNetModel.create_mask", "XLNetModel.positional_embedding", "XLNetModel.relative_positional_encoding"]),
    "tener": ("fastnlp/TENER@d2614d509dffb9b30636e3523a2f8f0dc4876708", "modules/relative_transformer.py",
              ["RelativeEmbedding", "RelativeSinusoidalPositionalEmbedding", "RelativeMultiHeadAttn"]),
    "nezha": ("huggingface/transformers@0172c3ecffb30100f5cf2f787cde19628651ee4b",
              "src/transformers/models/nezha/modeling_nezha.py",
              ["NezhaRelativePositionsEncoding", "NezhaSelfAttention.transpose_for_scores",
               "NezhaSelfAttention.forward"]),
    "bert": ("huggingface/transformers@004ad5f50b627b59bf0d581c31bc0052b6cfd40b",
             "src/transformers/models/bert/modeling_bert.py",
             ["BertSelfAttention.transpose_for_scores", "BertSelfAttention.forward"]),
}


class SoftmaxTap:
    """Stands in for torch.nn.functional in the executed code: records what enters softmax (the pre-softmax
    scores), then calls the real one. Everything else is the real module."""

    def __init__(self):
        self.seen = []

    def __getattr__(self, name):
        return getattr(F_real, name)

    def softmax(self, x, *args, **kwargs):
        self.seen.append(x.detach().clone())
        return F_real.softmax(x, *args, **kwargs)


class NNTap:
    """Stands in for torch.nn in the executed code (HF calls nn.functional.softmax or nn.Softmax(dim)(x)): the same
    recording as SoftmaxTap; everything else is the real torch.nn."""

    def __init__(self, tap):
        self.functional = tap

        class Softmax(nn.Softmax):
            def forward(self_, x):
                return tap.softmax(x, dim=self_.dim)
        self.Softmax = Softmax

    def __getattr__(self, name):
        return getattr(nn, name)


def load(path, key, manifest):
    """The named classes / methods of `path`, executed from their own source text."""
    text = open(path, encoding="utf-8").read()
    tree = ast.parse(text)
    repo, rel, names = SOURCES[key]
    tap = SoftmaxTap()
    from typing import Optional, Tuple
    ns = {"torch": torch, "nn": NNTap(tap), "F": tap, "math": math, "np": np, "Optional": Optional, "Tuple": Tuple,
          "__name__": f"heldout_{key}"}
    found = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        if node.name in names:
            found[node.name] = node
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and f"{node.name}.{item.name}" in names:
                found[f"{node.name}.{item.name}"] = item
    missing = [n for n in names if n not in found]
    if missing:
        sys.exit(f"{path}: not found: {missing}")
    out = {}
    for name in names:  # in order: base classes first
        node = found[name]
        src = ast.get_source_segment(text, node, padded=True)
        manifest["sources"][f"{key}:{name}"] = {"repo": repo, "file": rel, "line": node.lineno,
                                                "sha256": hashlib.sha256(src.encode()).hexdigest()}
        if "." in name:  # a method: executed as a plain function (its @staticmethod line dropped)
            fsrc = textwrap.dedent(src)
            fsrc = "\n".join(l for l in fsrc.splitlines() if l.strip() != "@staticmethod")
            exec(compile(fsrc, f"{rel}:{name}", "exec"), ns)
            out[name] = ns[node.name]
        else:
            exec(compile(src, f"{rel}:{name}", "exec"), ns)
            out[name] = ns[name]
    return out, tap


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--txl", required=True)
    ap.add_argument("--xlnet", required=True)
    ap.add_argument("--tener", required=True)
    ap.add_argument("--nezha", help="huggingface/transformers@0172c3ec src/transformers/models/nezha/modeling_nezha.py")
    ap.add_argument("--bert", help="huggingface/transformers@004ad5f5 src/transformers/models/bert/modeling_bert.py")
    ap.add_argument("out")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(20261126)
    torch.set_num_threads(1)
    manifest = {"generator": "properties/heldout/generate_torch.py", "python": platform.python_version(),
                "torch": torch.__version__, "numpy": np.__version__, "cpu": platform.machine(),
                "device": "cpu (torch CPU kernels, 1 thread)", "sources": {}, "cases": []}
    try:  # Debian's build reports 1.13.0a0; the package version says which release it is
        import subprocess
        manifest["torch_package"] = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Version}", "python3-torch"],
                                                   capture_output=True, text=True).stdout or None
    except OSError:
        pass

    def save(name, arr, **info):
        arr = np.ascontiguousarray(arr)
        np.save(os.path.join(a.out, name + ".npy"), arr)
        manifest["cases"].append({"file": name + ".npy", "dtype": str(arr.dtype), "shape": list(arr.shape), **info})

    def f32(t):
        return t.detach().to(torch.float32).numpy()

    with torch.no_grad():
        # ---- Transformer-XL ------------------------------------------------------------------------------
        txl, tap = load(a.txl, "txl", manifest)
        # R tables: PositionalEmbedding(pos_seq) with pos_seq = klen - 1 .. 0 (clamped), MemTransformerLM._forward.
        for d_model, klen, clamp in ((32, 2048, -1), (64, 300, 40)):
            pos_seq = torch.arange(klen - 1, -1, -1.0)
            if clamp > 0:
                pos_seq.clamp_(max=clamp)
            R = txl["PositionalEmbedding"](d_model)(pos_seq)[:, 0, :]
            save(f"txl_table_d{d_model}_k{klen}_c{clamp}", f32(R), kind="txl-table", d_model=d_model, key_length=klen,
                 clamp_len=clamp)
        # Scores: RelPartialLearnableMultiHeadAttn.forward; attn_score captured as it enters softmax.
        n_head, d_head, d_model = 2, 8, 32
        for qlen, mlen, clamp, same_length, mem_len in ((9, 0, -1, False, 0), (9, 7, -1, False, 0),
                                                        (12, 128, 20, False, 0), (9, 7, -1, True, 7),
                                                        (6, 10, -1, True, 12)):
            klen = qlen + mlen
            attn = txl["RelPartialLearnableMultiHeadAttn"](n_head, d_model, d_head, 0.0)
            attn.eval()
            w = torch.randn(qlen, 1, d_model)
            mems = torch.randn(mlen, 1, d_model) if mlen else None
            u = torch.randn(n_head, d_head)
            v = torch.randn(n_head, d_head)
            pos_seq = torch.arange(klen - 1, -1, -1.0)
            if clamp > 0:
                pos_seq.clamp_(max=clamp)
            r = txl["PositionalEmbedding"](d_model)(pos_seq)
            # dec_attn_mask as MemTransformerLM._forward builds it (bool: torch >= 1.2 masks with bool)
            ones = torch.ones(qlen, klen)
            if same_length:
                mask_len = klen - mem_len
                mask_shift_len = qlen - mask_len if mask_len > 0 else qlen
                dec_attn_mask = (torch.triu(ones, 1 + mlen) + torch.tril(ones, -mask_shift_len)).bool()[:, :, None]
            else:
                dec_attn_mask = torch.triu(ones, diagonal=1 + mlen).bool()[:, :, None]
            heads = {}
            hook = attn.qkv_net.register_forward_hook(lambda m, i, o: heads.__setitem__("w", o.detach().clone()))
            tap.seen.clear()
            attn(w, r, u, v, attn_mask=dec_attn_mask, mems=mems)
            hook.remove()
            score = tap.seen[-1][:, :, 0, :].permute(2, 0, 1)  # [n_head, qlen, klen]
            wq, wk, _ = torch.chunk(heads["w"], 3, dim=-1)
            q = wq[-qlen:, 0].reshape(qlen, n_head, d_head).permute(1, 0, 2)
            k = wk[:, 0].reshape(klen, n_head, d_head).permute(1, 0, 2)
            name = f"txl_scores_q{qlen}_m{mlen}_c{clamp}" + (f"_same{mem_len}" if same_length else "")
            for part, arr in (("q", q), ("k", k), ("u", u), ("v", v), ("r_net", attn.r_net.weight)):
                save(f"{name}_{part}", f32(arr), kind="txl-scores-input", case=name)
            save(f"{name}_scores", f32(score), kind="txl-scores", case=name, d_model=d_model, heads=n_head,
                 d_head=d_head, query_length=qlen, memory=mlen, clamp_len=clamp, same_length=same_length,
                 mem_len=mem_len, max_position=klen - 1 if clamp <= 0 else min(klen - 1, clamp))

        # ---- XLNet ---------------------------------------------------------------------------------------
        xl, tap = load(a.xlnet, "xlnet", manifest)
        n_head, d_head, d_model = 2, 8, 32

        def model_ns(attn_type, bi_data, clamp_len, same_length=False):
            m = types.SimpleNamespace(d_model=d_model, attn_type=attn_type, bi_data=bi_data, clamp_len=clamp_len,
                                      same_length=same_length, device=torch.device("cpu"))
            m.positional_embedding = xl["XLNetModel.positional_embedding"]
            m.relative_positional_encoding = types.MethodType(xl["XLNetModel.relative_positional_encoding"], m)
            m.create_mask = types.MethodType(xl["XLNetModel.create_mask"], m)
            return m

        # R tables: relative_positional_encoding(qlen, klen, bsz=2) with bi_data: batch 0 forward, 1 backward.
        for attn_type, qlen, klen, clamp in (("bi", 64, 96, -1), ("uni", 40, 72, 30), ("bi", 512, 1024, -1)):
            pe = model_ns(attn_type, True, clamp).relative_positional_encoding(qlen, klen, bsz=2)
            for b, direction in ((0, "forward"), (1, "backward")):
                save(f"xlnet_table_{attn_type}_q{qlen}_k{klen}_c{clamp}_{direction}", f32(pe[:, b, :]),
                     kind="xlnet-table", d_model=d_model, attn_type=attn_type, query_length=qlen, key_length=klen,
                     clamp_len=clamp, direction=direction)
        # Scores: rel_attn_core on a stand-in `self` holding the attention's parameters.
        for attn_type, qlen, mlen, clamp, same_length, segments in (
                ("bi", 10, 0, -1, False, None), ("bi", 10, 0, -1, False, [0, 0, 0, 0, 1, 1, 1, 1, 1, 2]),
                ("uni", 8, 6, 5, False, [0, 0, 1, 1, 1, 0, 0, 1]), ("uni", 8, 6, -1, True, None),
                ("bi", 7, 5, 3, False, [1, 1, 1, 0, 0, 0, 0])):
            klen = qlen + mlen
            m = model_ns(attn_type, True, clamp, same_length)
            att = types.SimpleNamespace(
                r_w_bias=torch.randn(n_head, d_head), r_r_bias=torch.randn(n_head, d_head),
                r_s_bias=torch.randn(n_head, d_head), seg_embed=torch.randn(2, n_head, d_head),
                scale=1 / (d_head ** 0.5), dropout=lambda x: x,
                rel_shift_bnij=xl["XLNetRelativeAttention.rel_shift_bnij"])
            r_param = torch.randn(d_model, n_head, d_head) * 0.2
            bsz = 2  # bi_data: batch 0 uses the forward half, batch 1 the backward half
            q_head = torch.randn(qlen, bsz, n_head, d_head)
            k_head_h = torch.randn(klen, bsz, n_head, d_head)
            v_head_h = torch.randn(klen, bsz, n_head, d_head)
            pos_emb = m.relative_positional_encoding(qlen, klen, bsz=bsz)
            k_head_r = torch.einsum("ibh,hnd->ibnd", pos_emb, r_param)  # XLNetRelativeAttention.forward
            seg_mat = None
            if segments is not None:  # XLNetModel.forward: one-hot "different segment", memory has type 0
                tt = torch.tensor(segments, dtype=torch.long)[:, None].expand(qlen, bsz)
                cat_ids = torch.cat([torch.zeros(mlen, bsz, dtype=torch.long), tt], 0) if mlen else tt
                seg_mat = F_real.one_hot((tt[:, None] != cat_ids[None, :]).long(), num_classes=2).float()
            attn_mask = None
            if attn_type == "uni":  # XLNetModel.forward: create_mask, then (mask > 0) as float; h-stream's
                attn_mask = m.create_mask(qlen, mlen)[:, :, None, None]  # non_tgt_mask equals it here
                attn_mask = (attn_mask > 0).float()
                non_tgt = torch.cat([torch.zeros(qlen, mlen), -torch.eye(qlen)], -1) if mlen else -torch.eye(qlen)
                attn_mask = ((attn_mask + non_tgt[:, :, None, None]) > 0).float()
            tap.seen.clear()
            xl["XLNetRelativeAttention.rel_attn_core"](att, q_head, k_head_h, v_head_h, k_head_r, seg_mat=seg_mat,
                                                       attn_mask=attn_mask)
            score = tap.seen[-1]  # [bsz, n_head, qlen, klen]
            name = f"xlnet_scores_{attn_type}_q{qlen}_m{mlen}_c{clamp}" + ("_same" if same_length else "") + \
                   ("_seg" if segments else "")
            inputs = {"r_w_bias": att.r_w_bias, "r_r_bias": att.r_r_bias, "r_s_bias": att.r_s_bias,
                      "seg_embed": att.seg_embed, "r": r_param}
            for part, arr in inputs.items():
                save(f"{name}_{part}", f32(arr), kind="xlnet-scores-input", case=name)
            for b, direction in ((0, "forward"), (1, "backward")):
                save(f"{name}_{direction}_q", f32(q_head[:, b].permute(1, 0, 2)), kind="xlnet-scores-input", case=name)
                save(f"{name}_{direction}_k", f32(k_head_h[:, b].permute(1, 0, 2)), kind="xlnet-scores-input",
                     case=name)
                save(f"{name}_{direction}_scores", f32(score[b]), kind="xlnet-scores", case=name,
                     direction=direction, d_model=d_model, heads=n_head, d_head=d_head, attn_type=attn_type,
                     query_length=qlen, memory=mlen, clamp_len=clamp, same_length=same_length,
                     token_types=segments)

        # ---- TENER ---------------------------------------------------------------------------------------
        tn, tap = load(a.tener, "tener", manifest)
        # R tables: the module's pos_embed(mask) for calls of length L (L > 600: the table is rebuilt with its
        # padding row at t = -L).
        for d_head, L in ((16, 11), (15, 40), (10, 700)):
            pe = tn["RelativeSinusoidalPositionalEmbedding"](d_head, 0, 1200)
            save(f"tener_table_d{d_head}_L{L}", f32(pe(torch.ones(1, L, dtype=torch.long))), kind="tener-table",
                 d_head=d_head, length=L)
        # Scores: RelativeMultiHeadAttn.forward (attn after the scale and the padding mask, as it enters softmax).
        for n_head, d_model, L, pad, scale in ((2, 32, 13, 3, False), (2, 32, 13, 0, True), (1, 20, 610, 5, False)):
            r_w = torch.randn(n_head, d_model // n_head)
            r_r = torch.randn(n_head, d_model // n_head)
            attn = tn["RelativeMultiHeadAttn"](d_model, n_head, 0.0, r_w_bias=r_w, r_r_bias=r_r, scale=scale)
            attn.eval()
            x = torch.randn(1, L, d_model)
            mask = torch.ones(1, L, dtype=torch.long)
            if pad:
                mask[0, L - pad:] = 0
            qkv = {}
            hook = attn.qkv_linear.register_forward_hook(lambda m, i, o: qkv.__setitem__("o", o.detach().clone()))
            tap.seen.clear()
            attn(x, mask)
            hook.remove()
            score = tap.seen[-1][0]  # [n_head, L, L]
            q, k, _ = torch.chunk(qkv["o"], 3, dim=-1)
            q = q[0].reshape(L, n_head, -1).permute(1, 0, 2)
            k = k[0].reshape(L, n_head, -1).permute(1, 0, 2)
            name = f"tener_scores_h{n_head}_d{d_model // n_head}_L{L}_pad{pad}" + ("_scaled" if scale else "")
            rows = list(range(L)) if L <= 64 else [0, 1, 2, L // 2, L - pad - 1, L - 2, L - 1]
            for part, arr in (("q", q), ("k", k), ("r_w_bias", r_w), ("r_r_bias", r_r)):
                save(f"{name}_{part}", f32(arr), kind="tener-scores-input", case=name)
            save(f"{name}_scores", f32(score[:, rows, :]), kind="tener-scores", case=name, heads=n_head,
                 d_head=d_model // n_head, length=L, key_mask="1" * (L - pad) + "0" * pad, scale_scores=scale,
                 rows=rows)

        # ---- NEZHA and BERT relative_key / relative_key_query (HF self-attention on a stand-in `self`) ------
        # The stand-in holds what their __init__ sets (query/key/value nn.Linear with bias, head sizes, dropout,
        # NEZHA's NezhaRelativePositionsEncoding, BERT's distance_embedding nn.Embedding); q, k, v are recorded as
        # their own transpose_for_scores returns them (key, value, then query, in forward's order).
        def stand_in(fns, n_head, d_head, **extra):
            m = types.SimpleNamespace(num_attention_heads=n_head, attention_head_size=d_head,
                                      all_head_size=n_head * d_head, query=nn.Linear(n_head * d_head, n_head * d_head),
                                      key=nn.Linear(n_head * d_head, n_head * d_head),
                                      value=nn.Linear(n_head * d_head, n_head * d_head), dropout=lambda x: x,
                                      is_decoder=False, **extra)
            seen = []
            tfs = types.MethodType(fns[0], m)
            m.transpose_for_scores = lambda x: seen.append(tfs(x)) or seen[-1]
            return m, seen

        def run_self_attention(key, fns, tap, name, n_head, d_head, L, info, **extra):
            m, seen = stand_in(fns, n_head, d_head, **extra)
            h = torch.randn(1, L, n_head * d_head)
            tap.seen.clear()
            out = types.MethodType(fns[1], m)(h)[0]  # context_layer [1, L, n_head * d_head]
            k, v, q = (t[0] for t in seen)  # [n_head, L, d_head] each
            score = tap.seen[-1][0]
            for part, arr in (("q", q), ("k", k), ("v", v)):
                save(f"{name}_{part}", f32(arr), kind=f"{key}-scores-input", case=name)
            save(f"{name}_output", f32(out[0].reshape(L, n_head, d_head).permute(1, 0, 2)),
                 kind=f"{key}-output", case=name, heads=n_head, d_head=d_head, length=L, **info)
            save(f"{name}_scores", f32(score), kind=f"{key}-scores", case=name, heads=n_head, d_head=d_head, length=L,
                 **info)
            return m

        if a.nezha:
            nz, tap = load(a.nezha, "nezha", manifest)
            for n_head, d_head, K, L, length in ((2, 16, 4, 13, 32), (2, 8, 64, 80, 96)):
                rpe = nz["NezhaRelativePositionsEncoding"](length, d_head, K)
                name = f"nezha_h{n_head}_d{d_head}_K{K}_L{L}"
                run_self_attention("nezha", (nz["NezhaSelfAttention.transpose_for_scores"],
                                             nz["NezhaSelfAttention.forward"]), tap, name, n_head, d_head, L,
                                   {"max_relative_position": K}, relative_positions_encoding=rpe)
                # the table itself: row r of the (2K + 1)-row sinusoid is the encoding at distance r - K
                table = rpe(K + 1)[0, :, :]  # row 0: distances 0 .. K, indices K .. 2K
                full = torch.cat([rpe(K + 1)[:, 0, :].flip(0)[:-1], table], 0)  # indices 0 .. 2K
                save(f"nezha_table_d{d_head}_K{K}", f32(full), kind="nezha-table", d_head=d_head,
                     max_relative_position=K)
        if a.bert:
            bt, tap = load(a.bert, "bert", manifest)
            for pet, n_head, d_head, max_pos, L in (("relative_key", 2, 16, 24, 13),
                                                    ("relative_key_query", 2, 16, 24, 24)):
                emb = nn.Embedding(2 * max_pos - 1, d_head)
                name = f"bert_{pet}_h{n_head}_d{d_head}_P{max_pos}_L{L}"
                run_self_attention("bert", (bt["BertSelfAttention.transpose_for_scores"],
                                            bt["BertSelfAttention.forward"]), tap, name, n_head, d_head, L,
                                   {"position_embedding_type": pet, "max_position_embeddings": max_pos},
                                   position_embedding_type=pet, max_position_embeddings=max_pos,
                                   distance_embedding=emb)
                save(f"{name}_distance_embedding", f32(emb.weight), kind="bert-scores-input", case=name)

    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"{len(manifest['cases'])} files, {len(manifest['sources'])} sources -> {a.out}")


if __name__ == "__main__":
    main()
