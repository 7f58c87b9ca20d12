#!/usr/bin/env python3
"""cli/tests/convention_tables.py — sinusoidal tables computed the way real implementations compute them.

Usage: python3 convention_tables.py OUTDIR [--rows N (256)] [--dim D (64)] [--verify]

Writes one .npy (version 1.0) per table into OUTDIR plus manifest.json, a list of
  {"file", "description", "dtype" (f16|bf16|f32|f64), "rows", "dim", "expect", "check_args", "identify_args"}
with expect = {"identify": preset or null, "regime": exact|emulated (null when identify is null),
               "check": {"preset", "regime", "verdict": pass|fail}, "differs": spec field or null}
(fairseq_libm_1ulp also has "within_envelope_only": true). Row i of every table is position i, except
err_offset, whose deliberate error is exactly that row i holds position i + 1. The tests of `posenc check` /
`posenc identify` run `posenc check FILE <check_args>` and `posenc identify FILE <identify_args>`.

Python 3 standard library only (no numpy). Float32 tensors are emulated with f32(x) = round-to-nearest of a
double after every float32 operation; Python floats / numpy float64 are doubles; exp/sin/cos of a float32
argument are math.exp/sin/cos (the C libm, double) rounded to float32.

Implementations emulated (CONVENTIONS.md §2.1; commits in §4):
  * HF transformers xlm/modeling_xlm.py create_sinusoidal_embeddings (paper, interleaved):
      position_enc[p][j] = p / np.power(10000, 2 * (j // 2) / dim)   (float64)
      out[:, 0::2] = FloatTensor(np.sin(position_enc[:, 0::2])); out[:, 1::2] = ... np.cos(...)  (-> float32)
  * HF transformers marian/modeling_marian.py MarianSinusoidalPositionalEmbedding._init_weight (also RoFormer):
      same float64 position_enc; out[:, :sentinel] = sin(position_enc[:, 0::2]),
      out[:, sentinel:] = cos(position_enc[:, 1::2])   ([sin | cos] halves, -> float32)
  * tensor2tensor layers/common_attention.py get_timing_signal_1d (all float32, TF):
      position = to_float(range(length) + start_index)
      log_timescale_increment = math.log(max_ts / min_ts) / tf.maximum(to_float(num_timescales) - 1, 1)
      inv_timescales = min_ts * tf.exp(to_float(range(num_timescales)) * -log_timescale_increment)
      scaled_time = position[:, None] * inv_timescales[None, :]
      signal = concat([sin(scaled_time), cos(scaled_time)], 1); pad([[0, 0], [0, channels % 2]])
  * fairseq modules/sinusoidal_positional_embedding.py SinusoidalPositionalEmbedding.get_embedding
    (+ utils.make_positions, which is why row p is position number p and row padding_idx is zero):
      half_dim = embedding_dim // 2; emb = math.log(10000) / (half_dim - 1)        (Python double)
      emb = torch.exp(torch.arange(half_dim, dtype=torch.float) * -emb)            (float32)
      emb = torch.arange(num_embeddings, dtype=torch.float).unsqueeze(1) * emb.unsqueeze(0)
      emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1); zero column if odd; emb[padding_idx, :] = 0
  * Transformer-XL pytorch/mem_transformer.py PositionalEmbedding (kimiyoung/transformer-xl@01102106; HF XLNet's
    relative_positional_encoding computes the same), all float32:
      inv_freq = 1 / (10000 ** (torch.arange(0.0, demb, 2.0) / demb))   (division, pow, reciprocal in float32)
      sinusoid_inp = torch.ger(pos_seq, inv_freq); cat([sin, cos])      (the txl_f32 table)
    and a Transformer-XL-style table with the frequencies rounded once from double (f32(1/10000^(2k/d))) for
    err_f32_angle: the angle formed in float32 is not the "exact" regime; it lies within the envelope of the
    transformer-xl preset's emulation (a frequency within an ulp or two of the pow form's).

The fairseq_f64 table is the exact fairseq table (correctly rounded doubles), computed with `decimal`
(50 significant digits); --verify uses the same evaluator to print, per table, the distance of every entry
from the exact value of the spec its check names (in ulps of the stored dtype) or, for the emulated regime,
from the correctly rounded float32 emulation (bit differences).
"""
import argparse
import ast
import decimal
import json
import math
import os
import struct
import sys
from decimal import Decimal

BASE = 10000  # every convention here uses base 10000 (t2t: max_timescale 1e4, min_timescale 1)

# ---- float formats --------------------------------------------------------------------------------


def f32(x):
    """Round a double to the nearest float32 (ties to even), returned as a double."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f32_from_bits(b):
    return struct.unpack("<f", struct.pack("<I", b & 0xFFFFFFFF))[0]


def f32_next_up(x):
    """nextafter(x, +inf) for a finite float32 x."""
    if x == 0.0:
        return f32_from_bits(1)
    b = f32_bits(x)
    return f32_from_bits(b + 1 if x > 0 else b - 1)


def f32_next_down(x):
    return -f32_next_up(-x)


def bf16_bits(x):
    """bfloat16 of a float32 value: upper 16 bits of the float32, rounded to nearest even (no NaNs here)."""
    b = f32_bits(x)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF


def bf16_value(bits):
    return f32_from_bits(bits << 16)


def f16(x):
    return struct.unpack("<e", struct.pack("<e", x))[0]


# ---- .npy version 1.0 -----------------------------------------------------------------------------

NPY_DESCR = {"f16": "<f2", "bf16": "<u2", "f32": "<f4", "f64": "<f8"}


def write_npy(path, rows, dtype):
    """rows: list of equal-length lists of doubles (exact values of the dtype; for bf16 the float32 values,
    converted to bf16 bits here)."""
    n_rows, n_cols = len(rows), len(rows[0])
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }" % (NPY_DESCR[dtype], n_rows, n_cols)
    pad = (-(10 + len(header) + 1)) % 64
    header = header + " " * pad + "\n"
    assert (10 + len(header)) % 64 == 0
    flat = [v for r in rows for v in r]
    if dtype == "f32":
        data = struct.pack("<%df" % len(flat), *flat)
    elif dtype == "f64":
        data = struct.pack("<%dd" % len(flat), *flat)
    elif dtype == "f16":
        data = struct.pack("<%de" % len(flat), *flat)
    else:  # bf16
        data = struct.pack("<%dH" % len(flat), *[bf16_bits(v) for v in flat])
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + data)


def read_npy(path):
    """Returns (descr, shape, flat list of values); '<u2' is decoded as bf16."""
    raw = open(path, "rb").read()
    assert raw[:8] == b"\x93NUMPY\x01\x00", path
    (hlen,) = struct.unpack("<H", raw[8:10])
    head = ast.literal_eval(raw[10:10 + hlen].decode("latin1"))
    n = head["shape"][0] * head["shape"][1]
    body = raw[10 + hlen:]
    code = {"<f2": "e", "<u2": "H", "<f4": "f", "<f8": "d"}[head["descr"]]
    vals = list(struct.unpack("<%d%s" % (n, code), body))
    if code == "H":
        vals = [bf16_value(v) for v in vals]
    return head["descr"], head["shape"], vals


# ---- the implementations --------------------------------------------------------------------------


def xlm_position_enc(p, j, dim):
    """HF position_enc[p][j] = pos / np.power(10000, 2 * (j // 2) / dim): double pow (libm) and double division."""
    return p / BASE ** (2 * (j // 2) / dim)


def vaswani_xlm(rows, dim):
    """create_sinusoidal_embeddings: interleaved, float64 then float32."""
    out = []
    for p in range(rows):
        out.append([f32(math.sin(xlm_position_enc(p, j, dim)) if j % 2 == 0 else math.cos(xlm_position_enc(p, j, dim)))
                    for j in range(dim)])
    return out


def marian_halves(rows, dim, angle=None):
    """MarianSinusoidalPositionalEmbedding._init_weight: [sin(position_enc[:, 0::2]) | cos(position_enc[:, 1::2])].
    angle(p, j, dim) replaces position_enc (used for the deliberate errors)."""
    angle = angle or xlm_position_enc
    out = []
    for p in range(rows):
        s = [f32(math.sin(angle(p, j, dim))) for j in range(0, dim, 2)]
        c = [f32(math.cos(angle(p, j, dim))) for j in range(1, dim, 2)]
        out.append(s + c)
    return out


def t2t_inv_timescales(channels, min_ts=1.0, max_ts=float(BASE)):
    """get_timing_signal_1d, float32 steps up to inv_timescales."""
    h = channels // 2
    log_inc = f32(f32(math.log(float(max_ts) / float(min_ts))) / f32(max(float(h) - 1.0, 1.0)))
    inv = []
    for k in range(h):
        arg = f32(f32(float(k)) * -log_inc)
        inv.append(f32(f32(min_ts) * f32(math.exp(arg))))
    return inv


def t2t_signal(rows, channels, start_index=0):
    inv = t2t_inv_timescales(channels)
    out = []
    for i in range(rows):
        pos = f32(float(i + start_index))
        scaled = [f32(pos * w) for w in inv]
        out.append([f32(math.sin(a)) for a in scaled] + [f32(math.cos(a)) for a in scaled] + [0.0] * (channels % 2))
    return out


def fairseq_freqs_f32(dim):
    """get_embedding, float32 steps up to the frequency vector (emb is a Python double, the tensor is float32;
    torch casts the Python scalar -emb to float32 for the float32 multiply)."""
    half = dim // 2
    emb = math.log(BASE) / (half - 1)
    neg = f32(-emb)
    return [f32(math.exp(f32(f32(float(k)) * neg))) for k in range(half)]


def fairseq_from_freqs(freqs, num_embeddings, dim, padding_idx=1):
    out = []
    for p in range(num_embeddings):
        pf = f32(float(p))
        ang = [f32(pf * w) for w in freqs]
        out.append([f32(math.sin(a)) for a in ang] + [f32(math.cos(a)) for a in ang] + [0.0] * (dim % 2))
    if padding_idx is not None:
        out[padding_idx] = [0.0] * dim
    return out


def txl_freqs_f32(dim):
    """Transformer-XL's inv_freq: f32(2k) / d, 10000 ** that, and 1 / that, each a float32 operation (the double
    division and pow rounded once to float32; a quotient of two float32 numbers computed in double rounds to the
    correctly rounded float32 quotient)."""
    return [f32(1.0 / f32(math.pow(10000.0, f32(float(2 * k) / dim)))) for k in range(dim // 2)]


def txl_table(rows, dim):
    """torch.cat([sin(ger(pos_seq, inv_freq)), cos(...)]) with row i at position i (pos_seq in any order)."""
    inv = txl_freqs_f32(dim)
    out = []
    for p in range(rows):
        pf = f32(float(p))
        ang = [f32(pf * w) for w in inv]
        out.append([f32(math.sin(a)) for a in ang] + [f32(math.cos(a)) for a in ang])
    return out


def fairseq_double_f32(positions, dim):
    """The fairseq formula evaluated in double (numpy float64 style) and cast to float32; no padding row."""
    half = dim // 2
    emb = math.log(BASE) / (half - 1)
    w = [math.exp(k * -emb) for k in range(half)]
    out = []
    for p in positions:
        ang = [p * wk for wk in w]
        out.append([f32(math.sin(a)) for a in ang] + [f32(math.cos(a)) for a in ang] + [0.0] * (dim % 2))
    return out


# ---- exact values (decimal) -----------------------------------------------------------------------

PREC = 50
CTX = decimal.Context(prec=PREC, rounding=decimal.ROUND_HALF_EVEN)


def _pi(ctx):
    """Python decimal-module recipe."""
    with decimal.localcontext(ctx) as c:
        c.prec += 4
        three = Decimal(3)
        lasts, t, s, n, na, d, da = 0, three, 3, 1, 0, 0, 24
        while s != lasts:
            lasts = s
            n, na = n + na, na + 8
            d, da = d + da, da + 32
            t = (t * n) / d
            s += t
    return +s


with decimal.localcontext(CTX):
    PI = _pi(CTX)
    HALF_PI = PI / 2
    LN_BASE = Decimal(BASE).ln()
    EPS = Decimal(10) ** -(PREC + 2)


def dec_sincos(x):
    """(sin x, cos x) of a Decimal x to ~PREC digits (|x| <= 2^40)."""
    with decimal.localcontext(CTX) as c:
        c.prec = PREC + 16  # room for the argument reduction of large |x|
        n = int((x / HALF_PI).to_integral_value(rounding=decimal.ROUND_HALF_EVEN))
        r = x - n * HALF_PI
        r2 = r * r
        s, term, i = r, r, 1
        while abs(term) > EPS:
            term = -term * r2 / ((i + 1) * (i + 2))
            s += term
            i += 2
        co, term, i = Decimal(1), Decimal(1), 0
        while abs(term) > EPS:
            term = -term * r2 / ((i + 1) * (i + 2))
            co += term
            i += 2
        q = n % 4
        if q == 0:
            return +s, +co
        if q == 1:
            return +co, -s
        if q == 2:
            return -s, -co
        return -co, +s


_freq_cache = {}


def exact_freqs(rule, dim):
    """Exact omega_k as Decimals: paper 10000^(-2k/d); tensor2tensor 10000^(-k/max(h-1,1)); fairseq 10000^(-k/(h-1))."""
    key = (rule, dim)
    if key not in _freq_cache:
        h = dim // 2
        with decimal.localcontext(CTX):
            if rule == "paper":
                ws = [(-(LN_BASE * 2 * k) / dim).exp() for k in range(h)]
            else:
                den = max(h - 1, 1) if rule == "tensor2tensor" else h - 1
                ws = [(-(LN_BASE * k) / den).exp() for k in range(h)]
        _freq_cache[key] = ws
    return _freq_cache[key]


PRESETS = {  # layout, rule, padding row
    "vaswani": ("interleaved", "paper", None),
    "marian": ("halves", "paper", None),
    "tensor2tensor": ("halves", "tensor2tensor", None),
    "fairseq": ("halves", "fairseq", 1),
    "transformer-xl": ("halves", "paper", None),
}


def exact_row(preset, dim, p):
    """Exact PE(p) of a preset as Decimals (zero-pad column for odd dim, padding row zero)."""
    layout, rule, pad_row = PRESETS[preset]
    h = dim // 2
    if pad_row is not None and p == pad_row:
        return [Decimal(0)] * dim
    s, c = [], []
    for w in exact_freqs(rule, dim):
        with decimal.localcontext(CTX):
            a = p * w
        si, co = dec_sincos(a)
        s.append(si)
        c.append(co)
    if layout == "interleaved":
        row = [v for k in range(h) for v in (s[k], c[k])]
    else:
        row = s + c
    return row + [Decimal(0)] * (dim - 2 * h)


def round_f32(x):
    """Correctly rounded float32 of a Decimal."""
    d = f32(float(x))
    return min((d, f32_next_up(d), f32_next_down(d)), key=lambda v: abs(Decimal(v) - x))


def emulated_row(preset, dim, p):
    """Correctly rounded float32 emulation (what posenc's emulated regime computes): exp and sin/cos rounded once."""
    h = dim // 2
    if preset == "transformer-xl":
        key = ("em", preset, dim)
        if key not in _freq_cache:
            # 1 / RN32(10000^RN32(2k/d)), each step rounded once (decimal pow, then the float32 reciprocal).
            ws = []
            with decimal.localcontext(CTX):
                for k in range(h):
                    t = Decimal(f32(float(2 * k) / dim))
                    ws.append(f32(1.0 / round_f32((LN_BASE * t).exp())))
            _freq_cache[key] = ws
        pf = f32(float(p))
        sc = [dec_sincos(Decimal(f32(pf * w))) for w in _freq_cache[key]]
        return [round_f32(s) for s, _ in sc] + [round_f32(c) for _, c in sc]
    if preset == "tensor2tensor":
        log_inc = f32(f32(float(LN_BASE)) / f32(float(max(h - 1, 1))))
        args = [f32(float(k) * -log_inc) for k in range(h)]
        pad_row = None
    else:
        neg = f32(-(float(LN_BASE) / (h - 1)))
        args = [f32(float(k) * neg) for k in range(h)]
        pad_row = 1
    if pad_row is not None and p == pad_row:
        return [0.0] * dim
    key = ("em", preset, dim)
    if key not in _freq_cache:
        with decimal.localcontext(CTX):
            _freq_cache[key] = [round_f32(Decimal(a).exp()) for a in args]
    pf = f32(float(p))
    ang = [f32(pf * w) for w in _freq_cache[key]]
    sc = [dec_sincos(Decimal(a)) for a in ang]
    return [round_f32(s) for s, _ in sc] + [round_f32(c) for _, c in sc] + [0.0] * (dim - 2 * h)


def ulp(x, dtype):
    """ulp of the dtype at magnitude |x| (a double)."""
    mant, emin = {"f16": (10, -14), "bf16": (7, -126), "f32": (23, -126), "f64": (52, -1022)}[dtype]
    e = math.frexp(abs(x))[1] - 1 if x != 0 else emin
    return math.ldexp(1.0, max(e, emin) - mant)


# ---- the tables -----------------------------------------------------------------------------------


def build(rows, dim):
    """Returns a list of (name, description, dtype, table rows, expect, check_args, identify_args)."""
    d1 = dim + 1
    r9 = max(rows, 4096)

    def check(preset, regime, verdict, n_rows, n_dim, extra=()):
        return ({"preset": preset, "regime": regime, "verdict": verdict},
                ["--preset", preset, "--regime", regime, "--dim", str(n_dim), "--positions", "0:%d" % n_rows] + list(extra))

    def entry(name, description, dtype, table, identify, regime, chk, differs, extra_expect=None, in_dtype=()):
        check_obj, check_args = chk
        expect = {"identify": identify, "regime": regime if identify is not None else None,
                  "check": check_obj, "differs": differs}
        if extra_expect:
            expect.update(extra_expect)
        return {"name": name, "description": description, "dtype": dtype, "table": table, "expect": expect,
                "check_args": check_args + list(in_dtype),
                "identify_args": ["--dim", str(len(table[0]))] + list(in_dtype)}

    vaswani = vaswani_xlm(rows, dim)
    marian = marian_halves(rows, dim)
    fairseq_w32 = fairseq_freqs_f32(dim)
    out = []
    out.append(entry(
        "vaswani_f32", "HF XLM create_sinusoidal_embeddings: interleaved sin/cos of p / 10000^(2(j//2)/d), "
        "float64 numpy then float32", "f32", vaswani, "vaswani", "exact",
        check("vaswani", "exact", "pass", rows, dim), None))
    out.append(entry(
        "marian_f32", "HF Marian _init_weight: [sin | cos] halves of the paper angles, float64 then float32",
        "f32", marian, "marian", "exact", check("marian", "exact", "pass", rows, dim), None))
    out.append(entry(
        "t2t_f32", "tensor2tensor get_timing_signal_1d(length=%d, channels=%d): float32 TF steps" % (rows, dim),
        "f32", t2t_signal(rows, dim), "tensor2tensor", "emulated",
        check("tensor2tensor", "emulated", "pass", rows, dim), None))
    out.append(entry(
        "fairseq_f32", "fairseq get_embedding(num_embeddings=%d, embedding_dim=%d, padding_idx=1): float32 torch "
        "steps, row 1 zero" % (rows, dim), "f32", fairseq_from_freqs(fairseq_w32, rows, dim),
        "fairseq", "emulated", check("fairseq", "emulated", "pass", rows, dim), None))
    fs64 = [[float(v) for v in exact_row("fairseq", dim, p)] for p in range(rows)]
    out.append(entry(
        "fairseq_f64", "fairseq convention exact: sin/cos(p * 10000^(-k/(h-1))) halves, correctly rounded doubles "
        "(decimal, %d digits), row 1 zero" % PREC, "f64", fs64, "fairseq", "exact",
        check("fairseq", "exact", "pass", rows, dim), None))
    out.append(entry(
        "err_layout", "layout error: the Marian [sin | cos] halves table checked as the interleaved vaswani preset",
        "f32", marian, "marian", "exact", check("vaswani", "exact", "fail", rows, dim), "layout"))
    out.append(entry(
        "err_denominator", "rule error: Marian-style halves table (float64 then float32) with the t2t/fairseq "
        "denominator, angle p / 10000^(k/(h-1)); = the exact tensor2tensor table",
        "f32", marian_halves(rows, dim, angle=lambda p, j, d: p / BASE ** ((j // 2) / (d // 2 - 1))),
        "tensor2tensor", "exact", check("marian", "exact", "fail", rows, dim), "rule"))
    out.append(entry(
        "err_offset", "first-position error: fairseq formula in float64 then float32, row i = position i + 1, "
        "no padding row", "f32", fairseq_double_f32(range(1, rows + 1), dim), None, "exact",
        check("fairseq", "exact", "fail", rows, dim), "first_position"))
    out.append(entry(
        "err_f32_angle", "regime error: Marian frequencies, float32 w = f32(1/10000^(2k/d)) and float32 angle "
        "f32(p * w) (Transformer-XL-style), sin/cos in double then float32, %d rows" % r9,
        "f32", marian_halves(r9, dim, angle=lambda p, j, d: f32(f32(float(p)) * f32(1.0 / BASE ** (2 * (j // 2) / d)))),
        "transformer-xl", "emulated", check("marian", "exact", "fail", r9, dim), "regime"))
    out.append(entry(
        "txl_f32", "Transformer-XL PositionalEmbedding(demb=%d) at pos_seq 0..%d: float32 inv_freq = 1 / 10000 ** "
        "(arange(0, d, 2) / d), torch.ger and sin/cos in float32" % (dim, rows - 1), "f32", txl_table(rows, dim),
        "transformer-xl", "emulated", check("transformer-xl", "emulated", "pass", rows, dim), None))
    w_1ulp = [f32_next_up(w) if k % 2 == 1 else w for k, w in enumerate(fairseq_w32)]
    out.append(entry(
        "fairseq_libm_1ulp", "fairseq get_embedding float32 steps, with exp off by +1 float32 ulp for odd k "
        "(a real-libm expf error), row 1 zero", "f32", fairseq_from_freqs(w_1ulp, rows, dim),
        "fairseq", "emulated", check("fairseq", "emulated", "pass", rows, dim), None,
        extra_expect={"within_envelope_only": True}))
    out.append(entry(
        "vaswani_f16", "vaswani_f32 stored as float16 (round to nearest even from float32)", "f16",
        [[f16(v) for v in r] for r in vaswani], "vaswani", "exact", check("vaswani", "exact", "pass", rows, dim), None))
    out.append(entry(
        "vaswani_bf16", "vaswani_f32 stored as bfloat16 bits ('<u2', round to nearest even from float32)", "bf16",
        [[bf16_value(bf16_bits(v)) for v in r] for r in vaswani], "vaswani", "exact",
        check("vaswani", "exact", "pass", rows, dim), None, in_dtype=("--in-dtype", "bf16")))
    out.append(entry(
        "t2t_odd_f32", "tensor2tensor get_timing_signal_1d(length=%d, channels=%d): odd channels, one zero column "
        "at the end" % (rows, d1), "f32", t2t_signal(rows, d1), "tensor2tensor", "emulated",
        check("tensor2tensor", "emulated", "pass", rows, d1), None))
    return out


# ---- verification ---------------------------------------------------------------------------------


def verify(outdir, manifest):
    """Per table: reads the file back and compares it with what its check spec says."""
    cache = {}
    for e in manifest:
        _, shape, vals = read_npy(os.path.join(outdir, e["file"]))
        n_rows, dim = shape
        preset, regime = e["expect"]["check"]["preset"], e["expect"]["check"]["regime"]
        worst, worst_at, n_off, n_bits, worst_abs = 0.0, None, 0, 0, 0.0
        for p in range(n_rows):
            key = (preset, regime, dim, p)
            if key not in cache:
                cache[key] = exact_row(preset, dim, p) if regime == "exact" else emulated_row(preset, dim, p)
            ref = cache[key]
            for j in range(dim):
                v = vals[p * dim + j]
                if regime == "exact":
                    x = ref[j]
                    err = float(abs(Decimal(v) - x)) / ulp(float(x), e["dtype"])
                else:
                    x = ref[j]
                    err = abs(v - x) / ulp(x, "f32")
                    n_bits += v != x
                    worst_abs = max(worst_abs, abs(v - x))
                if err > 0.5:
                    n_off += 1
                if err > worst:
                    worst, worst_at = err, (p, j)
        what = ("max err %.6g ulp(%s) vs exact, %d entries > 0.5 ulp" % (worst, e["dtype"], n_off) if regime == "exact"
                else "max diff %.6g ulp(f32) (%.3g absolute) vs correctly rounded emulation, %d entries differ"
                % (worst, worst_abs, n_bits))
        print("%-20s check %s/%s (%s): %s, worst at (p, col) = %s"
              % (e["file"], preset, regime, e["expect"]["check"]["verdict"], what, worst_at))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--rows", type=int, default=256)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--verify", action="store_true",
                    help="read every table back and print its distance from its check spec (slow: decimal)")
    a = ap.parse_args(argv)
    if a.dim < 4 or a.dim % 2:
        ap.error("--dim must be even and >= 4 (the paper presets reject odd d; fairseq needs d/2 - 1 > 0)")
    if a.rows < 3:
        ap.error("--rows must be >= 3 (fairseq row 2 is the first token)")
    os.makedirs(a.outdir, exist_ok=True)
    manifest = []
    for t in build(a.rows, a.dim):
        fname = t["name"] + ".npy"
        write_npy(os.path.join(a.outdir, fname), t["table"], t["dtype"])
        manifest.append({"file": fname, "description": t["description"], "dtype": t["dtype"],
                         "rows": len(t["table"]), "dim": len(t["table"][0]), "expect": t["expect"],
                         "check_args": t["check_args"], "identify_args": t["identify_args"]})
    with open(os.path.join(a.outdir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print("wrote %d tables and manifest.json to %s" % (len(manifest), a.outdir))
    if a.verify:
        verify(a.outdir, manifest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
