// posenc/reference/rope.hpp — the MPFR oracle of rotary position embedding (RoPE).
//
// An independent transcription of the definition in posenc/rope_spec.hpp (it never includes or links lib/):
// direct evaluation of the defining formulas for every pair, no recurrences (except ggml's, which is its
// definition), no BLAS.
//
// Exact regime (RopeRegime::exact). With r = rotary_dim, h = r/2 and pair k = 0..h-1
//   theta_k = base^(-2k/r)   (base: the spec's double taken as an exact binary number),  a = p * theta'_k,
//   theta'_k = theta_k unless spec.scaling says otherwise (below), m = the attention factor (1 unless yarn or
//   longrope),
//   pair k = channels (2k, 2k+1) (interleaved) or (k, k+h) (halves),
//   y_i = m (x_i cos a - x_j sin a),  y_j = m (x_j cos a + x_i sin a);  channels r..head_dim-1 pass through
//   (unscaled by m: HF's partial rotary concatenates the passed channels untouched).
// Context extension in real arithmetic (CONVENTIONS.md §2.11; HF modeling_rope_utils.py, transformers @
// 26892c16b782513fdf938920653228ef63a19d7d, the v5 rope_parameters version). s = factor, L0 = original_context:
//   none     theta'_k = theta_k, m = 1 (every scaling but dynamic and longrope gives exactly this with s = 1: the
//            same bits)
//   linear   theta'_k = theta_k / s                                                   (= positions divided by s)
//   ntk      theta'_k = base'^(-2k/r),  base' = base s^(r/(r-2))
//   dynamic  as ntk with a = s L / max_context - (s - 1) for s, L = max(seq_len, max_context) (seq_len 0: at init,
//            L = max_context, a = 1: theta_k; note s = 1 still gives a = L / max_context for L > max_context)
//   yarn     cd(beta) = r ln(L0 / (2 pi beta)) / (2 ln base);  truncate: low = max(floor(cd(beta_fast)), 0),
//            high = min(ceil(cd(beta_slow)), r - 1); truncate false: the same without floor/ceil. If low == high,
//            the ramp uses high + 1/1000 (the real number). ramp_k = clamp((k - low) / (high - low), 0, 1),
//            theta'_k = theta_k / s * ramp_k + theta_k (1 - ramp_k).
//            m = attention_factor if > 0; else g(s, mscale) / g(s, mscale_all_dim) if both are non-zero; else
//            g(s, 1); g(s, x) = x ln(s) / 10 + 1, and g = 1 for s <= 1.
//   llama3   wl_k = 2 pi / theta_k: theta'_k = theta_k if wl_k < L0 / high_freq_factor, theta_k / s if wl_k > L0 /
//            low_freq_factor, else (both edges) (1 - sm) theta_k / s + sm theta_k, sm = (L0 / wl_k - lff) / (hff - lff).
//            (= theta_k (1/s + clamp(sm, 0, 1) (1 - 1/s)): the three branches are one continuous formula.)
//   longrope theta'_k = theta_k / e_k, e = long_factor if seq_len > L0, else short_factor (seq_len 0: at init, short),
//            the doubles as given (e_k = 1: theta_k itself, the same bits); s enters only m:
//            m = attention_factor if > 0; else 1 for s <= 1; else sqrt(1 + ln s / ln L0). The spec refuses L0 = 1
//            (ln 1 = 0 would divide; HF: ZeroDivisionError) and factors e_k < 1 (LongRoPE's are >= 1).
//   The band decisions (floor/ceil, the llama3 branch) never meet a tie: pi is transcendental, so cd(beta) is
//   never an integer and wl_k never equals L0/hff or L0/lff; the oracle decides them with rigorous error bounds,
//   raising its internal precision until they are certain (Ziv's strategy).
//   Accuracy. Everything is formed at the working precision W = bits + kRopeWorkingMargin (192).
//   theta'_k at W bits: relative error <= 2^(5.2-W). Unscaled: the exponent -2k/r and base^(-2k/r) are rounded to
//   W bits (|-2k/r| ln(base) <= ln(1e12) < 28). Scaled: formed at >= W + 24 bits (ntk/dynamic as
//   exp(-(2k/r) (ln base + r/(r-2) ln a)), |exponent| <= 111; yarn/llama3 as theta_k f_k with the blend factor
//   f_k = 1 - ramp_k (1 - 1/s) in [1/s, 1] whose ramp/sm error is certified at run time to be <= 2^-(W+4)/s),
//   then rounded once to W: relative error <= 2^(0.2-W) (longrope: theta_k at W + 24 bits divided by the exact
//   e_k, rounded once). Pairs with f_k = 1 exactly are theta_k itself, pairs with f_k = 1/s exactly are linear's
//   theta_k / s. Every theta'_k < 2^E, E = 0 for every valid spec (a longrope factor e_k < 1 would
//   need E = max_k max(0, -floor(log2 e_k)), which RopeOracle still adds), and |p| < 2^A (A = bit width of |p| <= 41); RopeOracle forms
//   theta'_k and the angle at W + E bits, so the angle's absolute error is <= 2^(A+6-W) <= 2^-(bits+145): the angle
//   keeps bits + 145 fractional bits at every accepted position, and MPFR reduces it by 2*pi exactly.
//   m at W bits: relative error <= 2^(0.01-W) (formed at W + 24 bits; exactly 1 or the given double where it is).
//     rope_theta:          |returned - theta'_k| <= ulp_bits(theta'_k)/2 + theta'_k 2^-(bits+186)
//     rope_attention_factor: |returned - m|      <= ulp_bits(m)/2 + m 2^-(bits+191)
//     cos, sin (m = 1):    |returned - true|    <= ulp_bits/2 + 2^-(bits+145)        (values in [-1, 1])
//     cos, sin (m != 1):   |returned - m cos a| <= ulp_bits/2 + m 2^-(bits+144)      (values in [-m, m];
//                          m <= 1.4e3 for accepted specs; longrope's computed m <= sqrt(21)), likewise m sin a
//     rotate (channel y):  |returned - y|       <= ulp_bits(y)/2 + m (|x_i| + |x_j|) 2^-(bits+143)
//     score:               |returned - s|       <= ulp_bits(s)/2 + S 2^-(bits+136),
//                          S = m^2 sum over pairs (|q_i|+|q_j|)(|k_i|+|k_j|) + sum over passed channels |q_c k_c|
//   (the last two are DESIGN.md §3's scaled errors; with full rotary the score is m^2 times the unscaled-m one).
//   p = 0 is exact: cos = m rounded once (1 without yarn or longrope), sin 0, rotate returns m x (x rounded once to bits for
//   m = 1: exactly x for bits >= 53). (With xPos, below: m x_{0,k} in place of m.)
//   xPos: read m as the per-pair factor F_{p,k} = m x_{p,k} in every bound above (cos, sin, rotate: F of the position;
//   score: S = sum over pairs m^2 x^q_{m,k} x^k_{n,k} (|q_i|+|q_j|)(|k_i|+|k_j|) + passed channels).
//
// Emulated regimes: the float32 numbers the named implementation computes, each step correctly rounded
// (RN32 = round to nearest-even binary32; RN64 likewise for Python's double arithmetic; pow, log, exp correctly
// rounded — the convention of DESIGN.md §2: real powf/sinf/cosf may be an ulp off, and compilers may contract
// a*b - c*d into an FMA: that is the envelope's business, not the oracle's).
//   hf   (HF Llama/NeoX/GPT-J, Meta Llama):  inv_k = RN32(1 / RN32(pow(RN32(base), e_k))), e_k = RN32(RN32(2k) / RN32(r))
//                                            a = RN32(RN32(p) * inv'_k)  (inv'_k: inv_k or its scaled form, below)
//   ggml (ggml-cpu rope_f32 / rope_yarn):    scale = RN32(pow(RN32(base), RN32(-2 / RN32(r))))
//                                            a = t_k,  t_0 = RN32(p),  t_{j+1} = RN32(t_j * scale);
//                                            linear: a = RN32(fs * t_k), fs = RN32(1 / RN32(s))
//                                            yarn: llama.cpp's YaRN (below)
//   roformer (HF RoFormer, transformers@0166003b4b47ff1c08ed0cd1f88494b4af345c25 models/roformer/modeling_roformer.py
//            RoFormerSinusoidalPositionalEmbedding.create_weight: the float64 numpy table; unchanged from
//            @189e82c53b3fc05782f7819fc8da0bb2a3b316e9 _init_weight):
//                                            w_k = RN64(pow(RN64(base), RN64(2k / r))),  a = RN64(p / w_k)
//                                            c = RN32(RN64(cos a)), s = RN32(RN64(sin a))   (np.cos, then the
//                                            float32 cast); angle() returns the float64 a; the rotation below
//                                            (apply_rotary_position_embeddings: q * cos_pos + rotate_every_two(q) *
//                                            sin_pos, eager float32 kernels); scaling none, no M-RoPE, no xPos.
//   both: c = RN32(RN32(cos a) * M), s = RN32(RN32(sin a) * M) with M = RN32(m_hf) (hf) or ggml's mscale (ggml
//         yarn; 1 for ggml none/linear, and then c = RN32(cos a) exactly);
//         y_i = RN32(RN32(x_i c) - RN32(x_j s)), y_j = RN32(RN32(x_j c) + RN32(x_i s)).
//   ggml yarn (llama.cpp with rope_scaling_type yarn: ext_factor 1, attn_factor 1, freq_scale fs as for linear; the
//   C float arithmetic of ggml_rope_yarn_corr_dim(s), rope_yarn_ramp, rope_yarn, each operation one RN32; float
//   literals are RN32 of their decimal: 0.1f, 0.001f, (float)M_PI = RN32(RN64(pi))):
//     B = RN32(base), b = RN32(beta), P = (float)M_PI, L = RN32(L0) (ggml's n_ctx_orig is an int32: L0 < 2^31 in
//     real use; the oracle takes RN32(L0) for any L0 the spec accepts)
//     cd(b)  = RN32(RN32(RN32(r) RN32(log(RN32(L / RN32(RN32(b 2) P))))) / RN32(2 RN32(log B)))
//     low    = MAX(0, floorf(cd(beta_fast))),  high = MIN(r - 1, ceilf(cd(beta_slow)))   (C macros: a > b ? a : b,
//              a < b ? a : b; IEEE inf/NaN pass through as in C, e.g. for RN32(base) = 1, log B = 0)
//     w      = MAX(0.001f, RN32(high - low))   (ggml divides by 0.001f whenever high <= low: HF and the exact regime
//              add 0.001 only when low == high, and divide by the negative width when high < low)
//     pair k (rope_yarn_ramp with i0 = 2k: the int i0 / 2 = k converted to float):
//              y_k = RN32(RN32(k - low) / w),  mix_k = RN32(1 - MIN(1, MAX(0, y_k)))  (ext_factor 1: ramp_mix = mix_k)
//     angle  a = RN32(RN32(RN32(fs t_k) RN32(1 - mix_k)) + RN32(t_k mix_k))   (theta_interp (1 - ramp_mix) +
//              theta_extrap ramp_mix; theta_extrap = t_k / 1.0f)
//     M      = RN32(1 + RN32(0.1f RN32(log(RN32(1 / fs)))))   (rope_yarn: mscale *= 1.0f + 0.1f * logf(1.0f /
//              freq_scale), attn_factor 1; fs = 1 gives log 1 = 0, M = 1 exactly). log is correctly rounded (logf).
//     mix_k = 1 leaves t_k itself, mix_k = 0 gives RN32(fs t_k) (linear's angle); other pairs blend, so even
//     fs = 1 (factor 1) need not give t_k bit for bit.
//   hf scalings (HF's float32 tensor steps, PyTorch CPU; P_k = RN32(pow(RN32(base), e_k)), S = RN32(s)):
//     linear   inv'_k = RN32(inv_k / S)                                           (inv_freq /= factor)
//     ntk      the default formula with base' = RN64(base * RN64(pow(s, RN64(r / (r-2)))))   (Python doubles)
//     dynamic  seq_len <= max_context (or 0): the module's init inv_freq, i.e. the init function with
//              seq_len = max_context, all in Python doubles: a = RN64(RN64(RN64(s M) / M) - RN64(s - 1)),
//              base' = RN64(base RN64(pow(a, RN64(r/(r-2))))), then the default formula (RN32(base'), which is
//              RN32(base) unless s M / M rounds); seq_len = L > max_context: the forward path
//              (dynamic_frequency_update: L is an int64 0-dim tensor): x = RN32(RN32(RN32(S RN32(L)) / RN32(M))
//              - RN32(RN64(s - 1))), x' = RN32(RN64(pow(x, RN64(r/(r-2))))) (a 0-dim float tensor ** Python
//              float: PyTorch's scalar kernel std::pow(float, double), a double pow rounded to float),
//              base' = RN32(RN32(base) x') (may overflow to +inf: then inv'_0 = 1, inv'_k = 0), inv'_k =
//              RN32(1 / RN32(pow(base', e_k))). rope_hf_dynamic_init_inv_freq gives the init function called
//              with a Python int seq_len instead (the double formula above with L = max(seq_len, M)).
//     yarn     range in Python doubles: cd = RN64(RN64(r RN64(log(RN64(L0 / RN64(RN64(2 beta) pi_64))))) /
//              (2 RN64(log(base)))), floor/ceil when truncate, max(low, 0), min(high, r - 1) (Python ints or
//              floats); high = RN64(high + 0.001) when low == high;  q_k = RN32(RN32(k - RN32(low)) /
//              RN32(high - low)) (high - low: exact for ints, else RN64), ramp_k = clamp(q_k, 0, 1),
//              e_k = RN32(1 - ramp_k), X_k = RN32(1 / P_k), I_k = RN32(1 / RN32(S P_k)),
//              inv'_k = RN32(RN32(I_k RN32(1 - e_k)) + RN32(X_k e_k)).
//              m_hf = attention_factor if > 0; else RN64(g64(s, mscale) / g64(s, mscale_all_dim)) if both
//              non-zero; else g64(s, 1); g64(s, x) = 1 if s <= 1 else RN64(RN64(RN64(0.1 x) RN64(log s)) + 1).
//     llama3   wl_k = RN32(RN32(1 / inv_k) RN32(2 pi_64)) (2 * math.pi / tensor = reciprocal times the scalar),
//              divided: wl_k > RN32(RN64(L0 / lff)); kept: wl_k < RN32(RN64(L0 / hff)); else smoothed:
//              sf = RN32(RN32(RN32(RN32(1 / wl_k) RN32(L0)) - RN32(lff)) / RN32(RN64(hff - lff))),
//              inv'_k = RN32(RN32(RN32(RN32(1 - sf) inv_k) / S) + RN32(sf inv_k)); divided: RN32(inv_k / S).
//     longrope inv'_k = RN32(1 / RN32(RN32(e_k) P_k)), e_k from the list the exact regime takes (HF v5
//              _compute_longrope_parameters: ext_factors a float32 tensor, inv_freq = 1.0 / (ext_factors *
//              base**inv_freq_shape)); a factor whose inv'_k would be +inf (RN32(e_k) P_k < ~2^-128) is refused
//              (Error naming "short_factor" or "long_factor"). m_hf = attention_factor if > 0; else 1.0 if s <= 1;
//              else RN64(sqrt(RN64(1 + RN64(RN64(log s) / RN64(log L0))))) (math.sqrt, math.log: Python floats).
//     m_hf = 1 for every scaling but yarn and longrope.
//   Verified against the real code (float32 steps only; see schemes/rope/oracle.cpp for the lines):
//     HF   transformers@ef46806472a64b0013ed413781e3afed82bfa047 modeling_rope_utils.py
//          _compute_default_rope_parameters; @26892c16b782513fdf938920653228ef63a19d7d modeling_rope_utils.py
//          dynamic_rope_update, _compute_linear_scaling_rope_parameters, _compute_dynamic_ntk_parameters,
//          _compute_yarn_parameters, _compute_llama3_parameters, _compute_longrope_parameters (as quoted in
//          CONVENTIONS.md §2.11 and the spec; the oracle's longrope is checked against the held-out file only); @5dd4a63548857797727ae73eeb6a6e886ea02a3e
//          llama/modeling_llama.py LlamaRotaryEmbedding.forward, rotate_half, apply_rotary_pos_emb;
//          @cb6cd7e984c1482cfcf62aeb3b2921bfeca71e95 gptj/modeling_gptj.py create_sinusoidal_positions,
//          rotate_every_two, apply_rotary_pos_emb
//     Meta meta-llama/llama@0504cf440a50aab815cadccd10a46e7ba70ff344 llama/model.py precompute_freqs_cis,
//          apply_rotary_emb (torch.polar(1, a) and the complex64 product (a+bi)(c+di) = (ac-bd) + (ad+bc)i, taken
//          here as separately rounded products and one rounded sum; torch's complex kernel not re-read)
//     ggml ggml-org/ggml@084bfe1a2112ae79f89ea69262da9743fe049e44 src/ggml-cpu/ops.cpp rope_f32,
//          ggml_rope_cache_init, rope_yarn, rope_yarn_ramp (no freq_factors; ext_factor 0 for none/linear, 1 for
//          yarn; attn_factor 1), unchanged in ggml-org/llama.cpp@0049e3cb202d8a8cebcfdbb137059e7e46627171
//          ggml/src/ggml-cpu/ops.cpp (ggml_compute_forward_rope_flt); ggml-org/ggml@017d02de981d7ee2b8c98ee094d2a430e92a8059
//          src/ggml.c ggml_rope_yarn_corr_dim, ggml_rope_yarn_corr_dims (called with n_dims = r: llama.cpp passes
//          n_rot; ne0 = head_dim only bounds the cache loop)
//     llama.cpp ggml-org/llama.cpp@a5410f046c01d01330c8a42f13b64a211fedf2c3 src/llama-model.cpp load_hparams:
//          rope_freq_scale_train = 1.0f/ropescale (the GGUF float rope.scaling.factor); @4c7103b96d720ea6057eec6ac11a49727f9ecd43
//          src/llama-context.cpp: yarn_ext_factor < 0 (the default) -> 1.0f for YaRN, else 0; yarn_attn_factor = 1.0f
//          (default) * hparams.rope_attn_factor (1 unless the GGUF says otherwise). Later llama.cpp (PR #17945, as
//          stored at ggml-org/llama.cpp@001d906a6d86e2490e394361e7cc6f478b100088 src/llama-context.cpp) sets
//          attn_factor = get_mscale(1/fs, 1) * (1.0f / (1.0f + 0.1f * logf(1/fs))) to cancel the kernel's factor
//          (= RN32(d RN32(1/d)), d = M above: 1, or 1 - 2^-24 for ~15% of d in [1, 2), e.g. factor 12, 19, 33, 36
//          of 2..128: the product M is then one ulp below; not modelled, nor DeepSeek's rope_yarn_log_mul).
//     Held-out: properties/heldout/data/hf/rope_scaling.json (transformers 5.17, PyTorch 2.11 CPU) agrees with the
//          hf inv'_k and m_hf above (schemes/rope/oracle_test.cpp, RopeOracleHeldout).
//   Caveat (not modelled): PyTorch on CUDA divides a tensor by a Python scalar as a * RN32(1/b)
//   (aten/src/ATen/native/cuda/BinaryDivTrueKernel.cu, pytorch@0f57f050df0e969d03e76495ace7ea90ba2b05d8), so an
//   inv_freq built on the GPU has RN32(RN32(2k) * RN32(1/r)) for the exponent; it equals RN32(2k)/RN32(r) when r
//   is a power of two. The CPU kernel divides, RN32(a / b) (div_true_kernel in aten/src/ATen/native/cpu/
//   BinaryOpsKernel.cpp, pytorch@c93798da6d867b0fca8cd48efd9f30e345d63003): the formula above. ggml's positions
//   are int32 (|p| < 2^31); the oracle accepts the spec's |p| <= 2^40 in every regime. HF's stateful dynamic
//   module (a grown cache kept for later shorter calls) is modelled as one forward call at L = seq_len.
//
// Multimodal RoPE (spec.mrope sections | interleaved; CONVENTIONS.md §2.16). A token has three positions
// pos = (t, h, w) (RopeMropePosition); pair k rotates by pos[a(k)], a = rope_mrope_axis(spec, k), and is in every
// other respect (frequency, scaling, attention factor, layout, regime) the pair of the one-position oracle. With
// (s_t, s_h, s_w) = spec.mrope_section (summing to r/2):
//   sections     a(k) = t for k < s_t, h for s_t <= k < s_t + s_h, w otherwise
//   interleaved  a(k) = h if k mod 3 = 1 and k < 3 s_h;  w if k mod 3 = 2 and k < 3 s_w;  t otherwise
//   Verified against the real code:
//     HF   transformers@00b676f8f0489b88652a31d70751cc540dd06305 models/qwen2_vl/modeling_qwen2_vl.py
//          Qwen2VLRotaryEmbedding.forward (freqs of the three position rows with the same inv_freq, emb =
//          cat(freqs, freqs), cos = emb.cos() * attention_scaling) and apply_multimodal_rotary_pos_emb
//          (`mrope_section = mrope_section * 2; cos = torch.cat([m[i % 3] for i, m in
//          enumerate(cos.split(mrope_section, dim=-1))], dim=-1)`, sin likewise, then rotate_half): on the
//          duplicated [c | c] row chunk i < 3 is columns of pairs in [S_i, S_{i+1}) and chunk i + 3 the same pairs'
//          second half, both from row i % 3 = i: the sections rule for both channels of every pair.
//          transformers@00709b862bb8f14a5435bb7195592579168496e4 models/qwen3_vl/modeling_qwen3_vl.py
//          Qwen3VLTextRotaryEmbedding.apply_interleaved_mrope (`freqs_t = freqs[0]; for dim, offset in
//          enumerate((1, 2), start=1): length = mrope_section[dim] * 3; idx = slice(offset, length, 3);
//          freqs_t[..., idx] = freqs[dim, ..., idx]`, applied to the r/2 angles before cat(freqs, freqs)): pair k
//          takes row 1 iff k = 1 mod 3 and k < 3 s_h, row 2 iff k = 2 mod 3 and k < 3 s_w, else row 0 — the
//          interleaved rule exactly (the two index sets are disjoint, so the order of the overwrites is moot).
//     ggml ggml-org/ggml@084bfe1a2112ae79f89ea69262da9743fe049e44 src/ggml-cpu/ops.cpp ggml_mrope_cache_init
//          (GGML_ROPE_TYPE_MROPE): sector = k % (s_t + s_h + s_w + s_e); t below s_t, h below s_t + s_h, w below
//          s_t + s_h + s_w, else the 4th position e: with s_e = 0 and the sum r/2, sector = k and the sections rule.
//          It keeps one float32 recurrence per axis (theta_t, theta_h, theta_w all *= theta_scale at every pair),
//          so the ggml angle of pair k is t_k of the recurrence started at RN32(pos[a(k)]): the oracle's.
//          MROPE always pairs channels as NEOX (halves; `is_neox || is_mrope`).
//          ggml-org/llama.cpp@0049e3cb202d8a8cebcfdbb137059e7e46627171 ggml/src/ggml-cpu/ops.cpp
//          ggml_mrope_cache_init (GGML_ROPE_TYPE_IMROPE, `is_imrope`): h if sector % 3 == 1 && sector < 3 s_h; w if
//          sector % 3 == 2 && sector < 3 s_w; t if sector % 3 == 0 && sector < 3 s_t; else the 4th position e.
//          DIFFERS from HF (and from the spec): a pair k = 1 mod 3 with k >= 3 s_h (or = 2 mod 3, k >= 3 s_w, or
//          = 0 mod 3, k >= 3 s_t) takes e, which llama.cpp sets to 0 for text tokens (src/llama-graph.cpp
//          llm_graph_input_pos::set_input, "4th dim is 0"), where HF takes t. Qwen3-VL's [24, 20, 20] (r = 128):
//          pairs 61 and 62 are not rotated by ggml, rotated by t in HF. The oracle follows HF (the spec).
//   The one-position methods on an M-RoPE spec are the text-token case t = h = w = p (1-D RoPE, bit for bit).
//
// xPos (spec.xpos query | key; CONVENTIONS.md §2.12, Sun et al. 2022). Pair k at position p has its cos and sin
// multiplied by the decay scale x_{p,k} = zeta_k^(+-(p - c) / sb), c = spec.xpos_center, sb = spec.xpos_scale_base,
// + for query, - for key, and (exact regime) zeta_k = (2k + 0.4 r) / (1.4 r) = (10k + 2r) / (7r), the rational.
// x_{c,k} = 1 exactly (then every value is bit for bit the one without xPos). Channels >= r pass through unscaled.
// The spec refuses xPos with yarn and longrope (no real model combines xPos with an attention factor); the code
// is written for both anyway, m then x: exact F = m x (one real product); hf RN32(RN32(RN32(cos a) M) X), so every
// formula below reads with m = 1, M = 1 for valid specs. score() pairs a query with a key: q
// takes the query scale and k the key scale whichever of query/key spec.xpos names, so pair k of <q', k'> carries
// m^2 zeta_k^((m - n) / sb) and the score depends on m - n only. M-RoPE: pair k takes its axis' position for the
// scale as for the angle.
//   exact:  x at W + 24 bits as MPFR pow(zeta_k at W + 24 bits, (p - c)/sb at W + 24 bits; p - c exact): |(p - c)/sb|
//           <= 553 and |ln zeta_k| <= ln 3.5 bound the exponent's error by 1246 2^-(W+24), so x carries a relative
//           error <= 2^(10.3-W-24); F = m x rounded to W (relative error <= 2^(1.02-W)). |p - c| <= 553 sb (the spec's
//           position range) keeps x in (2^-1000, 2^1000): finite in double, and MPFR never overflows here.
//           rope_xpos_scale: |returned - x| <= ulp_bits(x)/2 + x 2^-(bits+205).
//   hf (torchscale XPOS, microsoft/torchscale@776b070d68aef2aca447dc3e1adb64682fbec126
//           torchscale/component/xpos_relative_position.py; queries downscale=False, keys downscale=True as in
//           torchscale@0cb96955010a93818b3dafb99708f465bcbcc651 torchscale/component/multihead_attention.py), CPU:
//     zeta32_k = RN32(RN32(RN32(2k) + RN32(RN64(0.4 r))) / RN32(RN64(1.4 r)))   XPOS.__init__: `(torch.arange(0,
//                head_dim, 2) + 0.4 * head_dim) / (1.4 * head_dim)`: int64 arange + Python float -> float32 (default
//                dtype), the doubles 0.4 * head_dim, 1.4 * head_dim (Python float * int, RN64) rounded to float32 where
//                they meet the tensor, one rounded add (ufunc add: self + alpha * other, alpha = 1; vectorized
//                fmadd(other, 1, self): one rounding either way; pytorch@90f8c64e54f5d7286c99d46b3af8345ef0dd58a1
//                aten/src/ATen/native/ufunc/add.h), one rounded division (div_true_kernel, CPU). RN32(RN64(0.4 r)) =
//                RN32(0.4 r) and RN32(RN64(1.4 r)) = RN32(1.4 r) for every even r <= 2^16 (checked exhaustively).
//     e32      = RN32(RN32(p - c) / RN32(sb))        forward: `torch.arange(min_pos, max_pos, 1).to(self.scale)
//                .div(self.scale_base)` (int64 positions p - c, min_pos = -(L + offset) // 2 = -c, cast to float32)
//     X        = RN32(pow(zeta32_k, e32))            `self.scale ** (...)[:, None]` (float32 tensor ** tensor;
//                overflows to +inf, underflows to subnormals and 0: IEEE)
//     keys     X = RN32(1 / X)                       `scale = 1 / scale` (Tensor.__rtruediv__ = reciprocal() * 1;
//                1/0 = +inf, 1/inf = 0)
//     entries  RN32(RN32(c32 M) X), RN32(RN32(s32 M) X), c32 = RN32(cos a), s32 = RN32(sin a) the hf regime's
//                (apply_rotary_pos_emb: `duplicate_interleave(t * scale)` for sin and cos; fixed_pos_embedding's
//                angles RN32(RN32(p) inv_k), inv_k = RN32(1 / RN32(pow(10000, RN32(k / (r/2))))) are the hf
//                regime's for base 10000: k/(r/2) = 2k/r, both quotients of exact floats), then the hf rotation
//                (`(x * cos) + (rotate_every_two(x) * sin)`: interleaved pairs, RN32(RN32(x_i C) - RN32(x_j S))).
//                An infinite X gives +-inf entries, and 0 * inf = NaN (sin of the angle 0), as torch does.
//   torchscale itself is interleaved, full rotary (r = head_dim), base 10000; the spec's layout, rotary_dim and base
//   generalize it. Not modelled: CUDA's division by a scalar (a * RN32(1/b): e32 differs unless sb is a power of
//   two), a half-precision model (`.to(x)` rounds the angles, a .half() module rounds the `scale` buffer).
//
// Inverse (inverse == true, R(-p) = R(p)^T): the exact regime rotates by -p; the emulated regimes use the same
// c and negate s. By the symmetry of RN32 that is exactly what the implementation computes for position -p
// (RN32(-p) = -RN32(p), so the hf angle and every ggml t_k change sign, and RN32(sin(-a)) = -RN32(sin a)), and it
// is what ggml's rope_back does (sin_sign = -1). Every regime does it as: c unchanged, s negated (in the exact
// regime the same bits as rotating by -p). With xPos that is the transpose F_{p,k} R(p)^T: the scale of position p
// stays (xPos is not orthogonal; the transpose is what a backward pass applies).
//
// Every function calls posenc::validate(spec) first and throws posenc::Error (naming the parameter, the value
// and the accepted range) for a bad position (posenc::check_position; "m" and "n" in score), pair index ("k"),
// channel, vector length or value ("x"; "q", "k" in score), bits (kMinBits <= bits <= kMaxBits - 192), or a
// scaling-specific function called for another scaling ("scaling"), and for the two longrope specs it cannot
// evaluate (header: "original_context", "short_factor"/"long_factor").
// Results are Reals of exactly `bits` bits, except angle() in the exact regime (W + E bits, see there).
// Thread-safe: no function reads Boost's default precision; MPFR keeps its state (exponent range, constant
// caches) per thread (Debian's MPFR is built with TLS). RopeOracle's methods are const and share nothing mutable.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "posenc/reference/mp.hpp"
#include "posenc/rope_spec.hpp"

namespace posenc::reference {

// Extra bits of the working precision W = bits + kRopeWorkingMargin of the exact regime (see above).
inline constexpr unsigned kRopeWorkingMargin = 192;

// Channels of pair k, from the definition: (2k, 2k+1) interleaved, (k, k + r/2) halves. k < r/2.
struct RopePairChannels {
  std::size_t first;
  std::size_t second;
};
RopePairChannels rope_pair_channels(const RopeSpec&, std::size_t k);
// The pair a channel belongs to, or std::nullopt for a pass-through channel (rotary_dim <= channel < head_dim).
std::optional<std::size_t> rope_pair_of_channel(const RopeSpec&, std::size_t channel);

// The three positions of one token under M-RoPE, (t, h, w) = (temporal, height, width): HF's position_ids rows
// 0, 1, 2; ggml's pos[i], pos[i + n], pos[i + 2n].
using RopeMropePosition = std::array<std::int64_t, 3>;

// The axis a(k) whose position pair k < r/2 rotates by: 0 (t), 1 (h) or 2 (w), by the rule of spec.mrope (header).
// mrope none: 0 for every k — its tokens have one position (position_axes(spec) = 1), row 0 of a position list,
// which every pair takes (so a(k) < position_axes(spec) always). Error naming "k" for k >= r/2.
std::size_t rope_mrope_axis(const RopeSpec&, std::size_t k);

// theta'_k (exact mathematics whatever spec.regime; spec.scaling applied: theta_k itself for scaling none),
// rounded to `bits`. k < r/2. Unscaled, theta_0 = 1 exactly and the thetas decrease strictly (base > 1); every
// scaling keeps 0 < theta'_k <= theta_k.
Real rope_theta(const RopeSpec&, std::size_t k, unsigned bits = kDefaultBits);
// The attention factor m multiplying cos and sin in the exact regime (1 unless yarn or longrope), rounded to `bits`.
Real rope_attention_factor(const RopeSpec&, unsigned bits = kDefaultBits);

// YaRN's correction range (scaling yarn only; Error naming "scaling" otherwise): low and high as
// find_correction_range returns them (after floor/ceil when truncate, max(., 0) and min(., r-1)), and
// ramp_high, the upper end the ramp uses (high, or high + 0.001 when low == high).
//   rope_yarn_correction_range:    real arithmetic (header), each rounded to `bits` (integers exactly)
//   rope_hf_yarn_correction_range: HF's Python double arithmetic (Python ints and floats, as doubles)
struct RopeYarnRange {
  Real low, high, ramp_high;
};
struct RopeHfYarnRange {
  double low = 0, high = 0, ramp_high = 0;
};
RopeYarnRange rope_yarn_correction_range(const RopeSpec&, unsigned bits = kDefaultBits);
RopeHfYarnRange rope_hf_yarn_correction_range(const RopeSpec&);

// Llama 3.1's branch for pair k (scaling llama3 only; Error naming "scaling" otherwise): kept (wl_k < L0/hff),
// divided (wl_k > L0/lff) or smoothed (between, edges included). rope_llama3_band decides in real arithmetic,
// rope_hf_llama3_band with HF's float32 wavelength against the float32-rounded bounds.
enum class RopeLlama3Band { kept, smoothed, divided };
RopeLlama3Band rope_llama3_band(const RopeSpec&, std::size_t k);
RopeLlama3Band rope_hf_llama3_band(const RopeSpec&, std::size_t k);

// The float32 constants of the emulated regimes, exactly (as Reals of `bits` bits; any spec.regime):
//   rope_hf_inv_freq:       inv'_k, HF's float32 inv_freq with spec.scaling applied (header; dynamic: the
//                           module at length seq_len), k < r/2; scaling none: RN32(1 / RN32(pow(RN32(base),
//                           RN32(RN32(2k) / RN32(r)))))
//   rope_hf_dynamic_init_inv_freq: scaling dynamic only: the init function called with a Python int seq_len
//                           (spec.seq_len; 0 = None), i.e. the double formula with L = max(seq_len, max_context)
//                           (what HF's _compute_dynamic_ntk_parameters(config, device, seq_len) returns)
//   rope_ggml_theta_scale:  scale = RN32(pow(RN32(base), RN32(-2 / RN32(r)))), the per-step multiplier
//   rope_ggml_freq_scale:   fs = RN32(1 / RN32(s)) for scaling linear and yarn, 1 for none (Error naming "scaling"
//                           for the others: not modelled)
// rope_emulated_frequency(spec, k) is the one of spec.regime: hf -> inv'_k; roformer -> the float64 divisor w_k;
// ggml -> scale for every k (ggml has
// no per-pair frequency of its own: its angle t_k depends on p through the recurrence); exact -> Error naming
// "regime".
Real rope_hf_inv_freq(const RopeSpec&, std::size_t k, unsigned bits = kDefaultBits);
Real rope_hf_dynamic_init_inv_freq(const RopeSpec&, std::size_t k, unsigned bits = kDefaultBits);
Real rope_ggml_theta_scale(const RopeSpec&, unsigned bits = kDefaultBits);
Real rope_ggml_freq_scale(const RopeSpec&, unsigned bits = kDefaultBits);
// ggml's YaRN correction range (scaling yarn only, any regime; Error naming "scaling" otherwise), the float32 values
// of the header: low = corr_dims[0], high = corr_dims[1], width = MAX(0.001f, high - low) (the ramp's divisor).
struct RopeGgmlYarnRange {
  float low = 0, high = 0, width = 0;
};
RopeGgmlYarnRange rope_ggml_yarn_correction_range(const RopeSpec&);
// ggml's YaRN per-pair ramp mix_k (the extrapolation weight: 1 keeps t_k, 0 takes RN32(fs t_k)) and mscale M
// (header), float32 values (scaling yarn only, any regime; Error naming "scaling" otherwise). k < r/2.
float rope_ggml_yarn_mix(const RopeSpec&, std::size_t k);
float rope_ggml_yarn_mscale(const RopeSpec&);
Real rope_emulated_frequency(const RopeSpec&, std::size_t k, unsigned bits = kDefaultBits);
// HF's attention factor m_hf as the Python float HF returns (header); 1.0 for every scaling but yarn and longrope.
double rope_hf_attention_factor(const RopeSpec&);

// xPos (header), whatever spec.xpos and spec.regime are for zeta, k < r/2:
//   rope_xpos_zeta:     zeta_k = (2k + 0.4 r) / (1.4 r) (the rational), rounded once to bits
//   rope_xpos_scale:    x_{p,k} = zeta_k^(+-(p - c) / sb) (+ query, - key) rounded to bits; 1 for xpos none
//                       (Error naming "position" outside the spec's position range)
//   rope_hf_xpos_zeta:  torchscale's float32 zeta32_k
//   rope_hf_xpos_scale: torchscale's float32 scale X (keys: the float32 reciprocal), exactly; may be +inf or 0;
//                       1 for xpos none
Real rope_xpos_zeta(const RopeSpec&, std::size_t k, unsigned bits = kDefaultBits);
Real rope_xpos_scale(const RopeSpec&, std::int64_t p, std::size_t k, unsigned bits = kDefaultBits);
Real rope_hf_xpos_zeta(const RopeSpec&, std::size_t k, unsigned bits = kDefaultBits);
Real rope_hf_xpos_scale(const RopeSpec&, std::int64_t p, std::size_t k, unsigned bits = kDefaultBits);

class RopeOracle {
 public:
  // Validates the spec (posenc::Error naming the field) and the precision; precomputes theta'_k and m at W bits
  // (and the float32 constants of an emulated regime).
  explicit RopeOracle(const RopeSpec& spec, unsigned bits = kDefaultBits);
  const RopeSpec& spec() const noexcept { return spec_; }
  unsigned bits() const noexcept { return bits_; }

  // The multiplier of cos and sin in the spec's regime, rounded to bits: exact -> m; hf -> RN32(m_hf) (the
  // float32 attention_scaling of the cache); ggml -> the float32 mscale M of yarn (header), 1 otherwise.
  Real attention_factor() const;
  // The xPos scale of pair k at position p in the spec's regime (header; without m): exact -> x_{p,k} rounded to
  // bits; hf -> torchscale's float32 X (may be +inf or 0); 1 for xpos none.
  Real xpos_scale(std::int64_t p, std::size_t k) const;
  // The angle of pair k at position p in the spec's regime.
  //   exact: p * theta'_k as a Real of W + E bits (W = bits + 192; E = 0 unless longrope has factors < 1: header),
  //          absolute error <= 2^-(bits+145) (enough for cos/sin
  //          of it to be correct to `bits`); hf: RN32(RN32(p) inv'_k); ggml: t_k (linear: RN32(fs t_k); yarn:
  //          the blend of the header).
  //          Emulated angles are exact float32 numbers held in a Real of `bits` bits.
  Real angle(std::int64_t p, std::size_t k) const;
  // cos and sin of pair k at position p, times the attention factor and the xPos scale: exact regime -> m x cos a,
  // m x sin a rounded to bits (bounds above); hf/ggml -> the float32 RN32(RN32(RN32(cos a) M) X), likewise sin,
  // exactly (M = 1: no product; X only with xPos).
  Real cos(std::int64_t p, std::size_t k) const;
  Real sin(std::int64_t p, std::size_t k) const;
  // The exact regime's values (m x cos a, m x sin a) whatever spec.regime says (for error-vs-exact measurements of
  // emulated regimes).
  Real exact_cos(std::int64_t p, std::size_t k) const;
  Real exact_sin(std::int64_t p, std::size_t k) const;

  // R(p) x (inverse: R(-p) x) for one head vector x (x.size() == head_dim), in the spec's regime. x must be
  // finite; in the hf/ggml regimes every x_c must be a float32 number (Error naming "x" otherwise: round it
  // first, as the implementation would). Channels >= rotary_dim are returned unchanged (rounded to bits, i.e.
  // exactly x_c for bits >= 53, and always for float32 x). Emulated results are float32 numbers; a sum that
  // overflows binary32 gives +-inf as the float32 code would.
  std::vector<Real> rotate(std::int64_t p, std::span<const double> x, bool inverse = false) const;
  // Output channel `channel` (< head_dim) of rotate(p, x, inverse), computing only its pair.
  Real rotate_channel(std::int64_t p, std::span<const double> x, std::size_t channel, bool inverse = false) const;
  // rotate() in the exact regime whatever spec.regime says (x need not be float32).
  std::vector<Real> exact_rotate(std::int64_t p, std::span<const double> x, bool inverse = false) const;

  // Multimodal RoPE (header): the methods above with three positions pos = (t, h, w) per token, pair k taking
  // pos[a(k)], a = rope_mrope_axis(spec, k). For every k, angle_mrope(pos, k) == angle(pos[a(k)], k), and likewise
  // cos, sin, and pair k's channels of rotate_mrope / exact_rotate_mrope are those of rotate / exact_rotate at
  // pos[a(k)] (bit for bit, every regime; inverse: R(-pos)); score_mrope is <R(m) q, R(n) k> with those rotations.
  // The accuracy bounds above hold unchanged. Errors: "mrope" for a spec with mrope none (one position per token:
  // use the methods above), "position t", "position h", "position w" (score: "m t", ..., "n w") for a position with
  // |p| > 2^40 (all three are checked, used or not), and the errors of the one-position methods.
  Real angle_mrope(const RopeMropePosition& pos, std::size_t k) const;
  Real cos_mrope(const RopeMropePosition& pos, std::size_t k) const;
  Real sin_mrope(const RopeMropePosition& pos, std::size_t k) const;
  std::vector<Real> rotate_mrope(const RopeMropePosition& pos, std::span<const double> x, bool inverse = false) const;
  std::vector<Real> exact_rotate_mrope(const RopeMropePosition& pos, std::span<const double> x,
                                       bool inverse = false) const;
  Real score_mrope(const RopeMropePosition& m, std::span<const double> q, const RopeMropePosition& n,
                   std::span<const double> k) const;

  // <R(m) q, R(n) k>, exact mathematics whatever the regime (q, k finite doubles taken as exact numbers), with
  // theta'_k and the attention factor (rotated pairs scale by its square, passed channels do not), rounded to
  // bits: both vectors are rotated at W bits and the products summed by mpfr_sum (bound above). xPos: q takes the
  // query scale at m, k the key scale at n (header), so pair k carries zeta_k^((m - n) / sb).
  Real score(std::int64_t m, std::span<const double> q, std::int64_t n, std::span<const double> k) const;

 private:
  Real exact_angle_w(std::int64_t p, std::size_t k) const;
  Real emulated_angle(std::int64_t p, std::size_t k) const;
  Real ggml_angle(const Real& t, std::size_t k) const;  // ggml: pair k's angle from t_k (freq_scale, YaRN blend)
  void emulated_angles(std::int64_t p, std::vector<Real>& out) const;
  void emulated_angles(const RopeMropePosition& pos, std::vector<Real>& out) const;  // pair k at pos[axis_[k]]
  // The position pair k rotates by: pos[axis_[k]] (a one-position call passes (p, p, p)).
  std::int64_t pair_position(const RopeMropePosition& pos, std::size_t k) const { return pos[axis_[k]]; }
  void check_mrope_position(const RopeMropePosition& pos, const char* name) const;  // "mrope", "<name> t|h|w"
  // rotate / exact_rotate / score with per-pair positions (positions already checked).
  std::vector<Real> rotate_at(const RopeMropePosition& pos, std::span<const double> x, bool inverse) const;
  std::vector<Real> exact_rotate_at(const RopeMropePosition& pos, std::span<const double> x, bool inverse) const;
  Real score_at(const RopeMropePosition& m, std::span<const double> q, const RopeMropePosition& n,
                std::span<const double> k) const;
  void check_vector(std::span<const double> x, const char* name, bool float32) const;
  void rotate_pair_exact(std::int64_t p, std::span<const double> x, std::size_t k, bool inverse, Real& yi,
                         Real& yj) const;
  void rotate_pair_emulated(const Real& angle32, const std::optional<Real>& x32, std::span<const double> x,
                            std::size_t k, bool inverse, Real& yi, Real& yj) const;
  // The factor F = m x_{p,k} of cos and sin in the exact regime at W bits (x: the key scale if `key`, else the query
  // scale; 1 without xPos); std::nullopt when F is exactly 1.
  std::optional<Real> exact_factor_w(std::int64_t p, std::size_t k, bool key) const;
  Real exact_xpos_w24(std::int64_t p, std::size_t k, bool key) const;  // x_{p,k} at W + 24 bits (xPos only)
  // F cos, F sin at W bits (key: which xPos scale, as exact_factor_w)
  void exact_cos_sin_w(std::int64_t p, std::size_t k, bool key, Real& c, Real& s) const;
  Real exact_trig(std::int64_t p, std::size_t k, bool sine) const;  // exact_cos / exact_sin after the checks
  // hf with xPos: torchscale's float32 X of pair k at p; std::nullopt without xPos (or in another regime).
  std::optional<Real> emulated_xpos(std::int64_t p, std::size_t k) const;
  Real emulated_cos(const Real& angle32, const std::optional<Real>& x32) const;  // RN32(RN32(RN32(cos a) M) X)
  Real emulated_sin(const Real& angle32, const std::optional<Real>& x32) const;

  RopeSpec spec_;
  unsigned bits_;
  unsigned w_;                 // working precision of the exact regime, bits + kRopeWorkingMargin
  unsigned wa_;                // precision of theta_ and the exact angle: w_ + E (header; E = 0 but for longrope)
  std::vector<unsigned char> axis_;  // rope_mrope_axis(spec, k) for every pair (all 0 for mrope none)
  std::vector<Real> theta_;    // theta'_k at wa_ bits
  Real m_;                     // the exact attention factor at w_ bits
  bool m_is_one_ = true;       // m_ == 1 exactly (then cos/sin are formed without the product)
  std::vector<Real> inv32_;    // hf: inv'_k (float32 values, 64-bit Reals); empty otherwise
  std::vector<Real> w64_;      // roformer: the float64 divisors w_k (64-bit Reals); empty otherwise
  std::optional<Real> m32_;    // hf: RN32(m_hf), ggml yarn: mscale M, when it is not 1
  std::optional<Real> scale32_;  // ggml: the float32 multiplier
  std::optional<Real> fs32_;     // ggml linear, yarn: freq_scale
  std::vector<Real> mix32_;      // ggml yarn: mix_k (float32); empty otherwise
  std::vector<Real> unmix32_;    // ggml yarn: RN32(1 - mix_k); empty otherwise
  bool xpos_key_ = false;        // spec.xpos == key: cos/sin/rotate carry the key scale
  std::vector<Real> zeta_;       // xPos: zeta_k at W + 24 bits; empty otherwise
  std::vector<Real> zeta32_;     // hf xPos: torchscale's float32 zeta32_k; empty otherwise
  std::optional<Real> sb32_;     // hf xPos: RN32(scale_base)
};

}  // namespace posenc::reference
