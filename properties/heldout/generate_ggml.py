#!/usr/bin/env python3
"""properties/heldout/generate_ggml.py — held-out RoPE vectors from ggml's own CPU code (llama.cpp's ggml-cpu).

Not run by the build or CI. Needs Python 3 (standard library only), gcc/g++ (12 was used) and two source files
of llama.cpp, which are not part of posenc:

  --ops     ggml-org/llama.cpp@1f08e2d662715ead7987c365eced4f273d90e431 ggml/src/ggml-cpu/ops.cpp
  --ggml-c  ggml-org/llama.cpp@1f08e2d662715ead7987c365eced4f273d90e431 ggml/src/ggml.c

(either the whole files or excerpts of them that hold the functions below; the manifest records each function's
line in the file given and a SHA-256 of its text, so a run from excerpts and a run from the whole files can be
compared).

Usage: python3 generate_ggml.py --ops PATH/ops.cpp --ggml-c PATH/ggml.c [--source-note TEXT] OUTDIR
(--source-note is copied into the manifest, e.g. to say the files given were excerpts.) It compiles three small
units with one job each and runs them for a few seconds.

What is ggml's code and what is glue. The generator reads these definitions out of the given files by text
(brace matching, comments and literals skipped) and compiles them unchanged:

  ops.cpp: rope_yarn_ramp, rope_yarn, ggml_rope_cache_init, ggml_mrope_cache_init, rotate_pairs<T>,
           ggml_compute_forward_rope_flt<T>
  ggml.c:  ggml_rope_yarn_corr_dim, ggml_rope_yarn_corr_dims

(ggml_compute_forward_rope, the op's F32/F16 dispatcher, too if present.) ggml.c's two functions go into a C
translation unit compiled as ggml's CMake compiles ggml-base (C, no architecture flags); every ops.cpp function
read goes, in its order there, into a C++ unit (ops_part.cpp) compiled as ggml-cpu is compiled (GGML_NATIVE=ON:
-march=native), whose entry point is ops.cpp's own ggml_compute_forward_rope; a third unit (harness.cpp, same
flags) holds the helper functions again and the glue main(). Everything that is not read from the files is glue
written here: the few macros and types the functions use (MIN/MAX, GGML_ASSERT/GGML_ABORT, GGML_ROPE_TYPE_* from
ggml.h, type_conversion_table as ggml-cpu/common.h defines it, ggml_fp16_t with F16C conversions for the F16
branch that is never taken, stand-ins for ggml_tensor and ggml_compute_params holding only the fields
ggml_compute_forward_rope_flt reads), main(), which reads a case from its command line and writes raw float32,
and a loop that replicates ggml_compute_forward_rope_flt around the helper functions (every step quotes the
statement of rope_flt it stands for).

What is stored. Rotations come with the per-token cos/sin ggml computed for them (*_{variant}_cache.npy,
[T][head_dim]). Caches: the cache array ggml_rope_cache_init / ggml_mrope_cache_init fill, from the glue loop;
checked against ggml's op, which rotates a unit vector (first n_dims/2 channels 1) into exactly its cache's
(cos, sin), bit for bit ("op_crosscheck_differing", 0 expected). Rotations: the output of ggml's op itself
(ggml_compute_forward_rope on stand-in tensors, op_params laid out as ggml_rope_impl in ggml.c lays them out, one
thread); the glue loop's output is compared with it ("op_crosscheck_differing") and stored as well
(*_glue_out.npy) where it differs. It can: GCC vectorizes the same rotate_pairs differently in the two places
(in ggml's op, NORMAL mode's pairs become vfmaddsub, fused even under -ffp-contract=off). "rotation_arithmetic"
counts, for each stored rotation, the outputs that equal plain float32 arithmetic, fma(x0, c, -(x1*s)) /
fma(x0, s, x1*c) ("fma_a") and fma(-x1, s, x0*c) / fma(x1, c, x0*s) ("fma_b"), computed exactly here.

Every case is produced twice: "native" (ggml's default flags, GCC contracting a*b+c into FMA as it does by
default in GNU mode) and "nofma" (the same plus -ffp-contract=off); the manifest counts the output values whose
bits differ between the two.

The parameters are llama.cpp's: linear scaling by s gives freq_scale = 1.0f/s (float division, as llama.cpp
computes rope_freq_scale_train), ext_factor 0, attn_factor 1; YaRN gives freq_scale = 1.0f/s, ext_factor 1,
attn_factor 1, beta_fast 32, beta_slow 1, n_ctx_orig the original context; no scaling gives freq_scale 1,
ext_factor 0, attn_factor 1 (n_ctx_orig 4096 and the beta defaults are still passed, as llama.cpp passes them;
they do nothing with ext_factor 0). Freq factors are not used (src2 = NULL).
"""
import argparse, hashlib, json, os, platform, random, re, shlex, shutil, struct, subprocess, sys, tempfile
from array import array
from fractions import Fraction

REPO = "ggml-org/llama.cpp"
COMMIT = "1f08e2d662715ead7987c365eced4f273d90e431"
OPS_PATH = "ggml/src/ggml-cpu/ops.cpp"
GGMLC_PATH = "ggml/src/ggml.c"
# (name, required)
OPS_FUNCS = [("rope_yarn_ramp", True), ("rope_yarn", True), ("ggml_rope_cache_init", True),
             ("ggml_mrope_cache_init", False), ("rotate_pairs", True), ("ggml_compute_forward_rope_flt", False),
             ("ggml_compute_forward_rope", False)]
HELPERS = ["rope_yarn_ramp", "rope_yarn", "ggml_rope_cache_init", "ggml_mrope_cache_init", "rotate_pairs"]
GGMLC_FUNCS = [("ggml_rope_yarn_corr_dim", True), ("ggml_rope_yarn_corr_dims", True)]

# ggml's CMake defaults on x86 Linux with GCC (llama.cpp's CMakeLists.txt and ggml/CMakeLists.txt: Release build,
# GGML_NATIVE ON, CMAKE_C_STANDARD 11, CMAKE_CXX_STANDARD 17, C/CXX extensions on; ggml/src/CMakeLists.txt:
# _XOPEN_SOURCE=600, _GNU_SOURCE; ggml/src/ggml-cpu/CMakeLists.txt: ARCH_FLAGS -march=native on the ggml-cpu
# target only, so ggml.c (ggml-base) gets none).
COMMON = ["-O3", "-DNDEBUG", "-D_XOPEN_SOURCE=600", "-D_GNU_SOURCE"]
C_FLAGS = ["-std=gnu11"] + COMMON
CXX_FLAGS = ["-std=gnu++17"] + COMMON + ["-march=native"]
VARIANTS = {"native": [], "nofma": ["-ffp-contract=off"]}

MODE = {"normal": 0, "neox": 2, "mrope": 8}   # GGML_ROPE_TYPE_* (ggml/include/ggml.h)


# ---------------------------------------------------------------------------------------------------------------
# extraction of ggml's definitions, by text

def _skip(text, i):
    """If a comment or a string/char literal starts at i, return the index after it, else None."""
    if text.startswith("//", i):
        j = text.find("\n", i)
        return len(text) if j < 0 else j
    if text.startswith("/*", i):
        j = text.find("*/", i + 2)
        if j < 0:
            raise ValueError("unterminated comment")
        return j + 2
    if text[i] in "\"'":
        q, j = text[i], i + 1
        while j < len(text) and text[j] != q:
            j += 2 if text[j] == "\\" else 1
        return j + 1
    return None


def _match(text, i, open_, close):
    """text[i] is open_; return the index just past its matching close."""
    depth = 0
    while i < len(text):
        s = _skip(text, i)
        if s is not None:
            i = s
            continue
        c = text[i]
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced %s%s" % (open_, close))


def _skip_ws(text, i):
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        s = _skip(text, i)
        if s is None:
            return i
        i = s
    return i


def extract(text, name):
    """The definitions of function `name` in text: a line starting at column 0 with a declarator prefix
    (static/void/float/... and the name), its parameter list, then '{' ... matching '}'. A template<...> line
    right above belongs to it. Returns a list of (start, end) character spans."""
    found = []
    for m in re.finditer(r"\b%s\s*\(" % re.escape(name), text):
        ls = text.rfind("\n", 0, m.start()) + 1
        prefix = text[ls:m.start()]
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_ \t\*]*[ \t\*]", prefix):
            continue
        close = _match(text, m.end() - 1, "(", ")")
        body = _skip_ws(text, close)
        if body >= len(text) or text[body] != "{":
            continue                      # a declaration or something else
        end = _match(text, body, "{", "}")
        start = ls
        prev = text.rfind("\n", 0, max(ls - 1, 0)) + 1
        if ls > 0 and re.fullmatch(r"template\s*<[^>]*>[ \t]*(//[^\n]*)?", text[prev:ls - 1]):
            start = prev
        found.append((start, end))
    return found


def load_functions(path, funcs, key, manifest):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    got = []
    for name, required in funcs:
        spans = extract(text, name)
        if len(spans) > 1:
            raise SystemExit("%s: %d definitions of %s" % (path, len(spans), name))
        if not spans:
            if required:
                raise SystemExit("%s: no definition of %s (this generator needs it)" % (path, name))
            manifest["sources"]["%s:%s" % (key[0], name)] = {"absent": True}
            continue
        s, e = spans[0]
        src = text[s:e]
        got.append((s, name, src))
        manifest["sources"]["%s:%s" % (key[0], name)] = {
            "repo": "%s@%s" % (REPO, COMMIT), "file": key[1], "given_path": os.path.abspath(path),
            "function": name, "line": text.count("\n", 0, s) + 1,
            "sha256": hashlib.sha256(src.encode("utf-8")).hexdigest()}
    got.sort()                               # keep the source order (callees come first there)
    return {name: src for _, name, src in got}, [name for _, name, _ in got]


# ---------------------------------------------------------------------------------------------------------------
# the harness: glue (written here) around ggml's functions (read from the files)

C_PRELUDE = r"""/* glue (generate_ggml.py): what ggml.c's two functions need from ggml's headers */
#include <math.h>
#define MIN(a, b) ((a) < (b) ? (a) : (b))   /* ggml/src/ggml-impl.h */
#define MAX(a, b) ((a) > (b) ? (a) : (b))   /* ggml/src/ggml-impl.h */
void ggml_rope_yarn_corr_dims(int n_dims, int n_ctx_orig, float freq_base, float beta_fast, float beta_slow,
                              float dims[2]);  /* ggml/include/ggml.h */
/* ---- ggml's code (ggml/src/ggml.c), unchanged ---- */
"""

CXX_PRELUDE = r"""// glue (generate_ggml.py): what the ops.cpp functions need from ggml's headers
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define MIN(a, b) ((a) < (b) ? (a) : (b))   // ggml/src/ggml-impl.h
#define MAX(a, b) ((a) > (b) ? (a) : (b))   // ggml/src/ggml-impl.h
#define GGML_ASSERT(x) do { if (!(x)) { fprintf(stderr, "GGML_ASSERT(%s) failed\n", #x); abort(); } } while (0)
#define GGML_ABORT(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } while (0)
#define GGML_UNUSED(x) (void)(x)
// ggml/include/ggml.h
#define GGML_ROPE_TYPE_NORMAL 0
#define GGML_ROPE_TYPE_NEOX   2
#define GGML_ROPE_TYPE_MROPE  8
#define GGML_ROPE_TYPE_VISION 24
#define GGML_ROPE_TYPE_IMROPE 40

// ggml/src/ggml-cpu/common.h; the f16 conversions as ggml-cpu's simd-mappings.h has them with F16C
// (GGML_CPU_FP16_TO_FP32 = _cvtsh_ss, GGML_CPU_FP32_TO_FP16 = _cvtss_sh(x, 0)): only ggml_compute_forward_rope's
// F16 branch, which these cases never take, uses them
#include <immintrin.h>
typedef uint16_t ggml_fp16_t;
static inline float f32_to_f32(float x) { return x; }
static inline float f16_to_f32(ggml_fp16_t x) { return _cvtsh_ss(x); }
static inline ggml_fp16_t f32_to_f16(float x) { return _cvtss_sh(x, 0); }
template <class T> struct type_conversion_table;
template <> struct type_conversion_table<ggml_fp16_t> {
    static constexpr float (*to_f32)(ggml_fp16_t) = f16_to_f32;
    static constexpr ggml_fp16_t (*from_f32)(float) = f32_to_f16;
};
template <> struct type_conversion_table<float> {
    static constexpr float (*to_f32)(float) = f32_to_f32;
    static constexpr float (*from_f32)(float) = f32_to_f32;
};

// ggml.c (ggml-base), compiled separately as C
extern "C" void ggml_rope_yarn_corr_dims(int n_dims, int n_ctx_orig, float freq_base, float beta_fast,
                                         float beta_slow, float dims[2]);

// stand-ins holding only what ggml_compute_forward_rope_flt reads (ggml/include/ggml.h, ggml-cpu)
enum ggml_type { GGML_TYPE_F32 = 0, GGML_TYPE_F16 = 1, GGML_TYPE_I32 = 26 };
struct ggml_tensor {
    enum ggml_type type; int64_t ne[4]; size_t nb[4]; int32_t op_params[16]; ggml_tensor * src[3]; void * data;
};
struct ggml_compute_params { int ith, nth; size_t wsize; void * wdata; };
static int64_t ggml_nrows(const ggml_tensor * t) { return t->ne[1]*t->ne[2]*t->ne[3]; }
static const size_t CACHE_LINE_SIZE_F32 = 64/sizeof(float);   // ggml-cpu: CACHE_LINE_SIZE 64
#define GGML_TENSOR_LOCALS_1(type, prefix, pointer, array) \
    const type prefix##0 = (pointer)->array[0]; GGML_UNUSED(prefix##0); \
    const type prefix##1 = (pointer)->array[1]; GGML_UNUSED(prefix##1); \
    const type prefix##2 = (pointer)->array[2]; GGML_UNUSED(prefix##2); \
    const type prefix##3 = (pointer)->array[3]; GGML_UNUSED(prefix##3);
#define GGML_TENSOR_UNARY_OP_LOCALS \
    GGML_TENSOR_LOCALS_1(int64_t, ne0, src0, ne) \
    GGML_TENSOR_LOCALS_1(size_t,  nb0, src0, nb) \
    GGML_TENSOR_LOCALS_1(int64_t, ne,  dst,  ne) \
    GGML_TENSOR_LOCALS_1(size_t,  nb,  dst,  nb)

// ggml-cpu's rope op: ops.cpp's ggml_compute_forward_rope, compiled in its own translation unit (ops_part.cpp)
void ggml_compute_forward_rope(const ggml_compute_params * params, ggml_tensor * dst);

// ---- ggml's code (ggml/src/ggml-cpu/ops.cpp), unchanged ----
"""

OPS_WRAPPER = r"""
// glue (generate_ggml.py): the given ops.cpp has no ggml_compute_forward_rope; its F32 branch
void ggml_compute_forward_rope(const ggml_compute_params * params, ggml_tensor * dst) {
    ggml_compute_forward_rope_flt<float>(params, dst, true);
}
"""

CXX_MAIN = r"""
// ---- glue (generate_ggml.py): a case from the command line, raw float32 out ----
struct Args {
    std::string kind, pos, x, out;
    int mode = 0, n_dims = 0, ne0 = 0, heads = 1, n_ctx_orig = 4096, npos = 0;
    float freq_base = 10000.0f, factor = 1.0f, ext_factor = 0.0f, attn_factor = 1.0f, beta_fast = 32.0f, beta_slow = 1.0f;
    int sections[4] = {0, 0, 0, 0};
};

static std::vector<char> slurp(const std::string & path) {
    FILE * f = fopen(path.c_str(), "rb");
    if (!f) { perror(path.c_str()); exit(2); }
    std::vector<char> b; char buf[65536]; size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) b.insert(b.end(), buf, buf + n);
    fclose(f);
    return b;
}

static void spit(const std::string & path, const std::vector<float> & v) {
    FILE * f = fopen(path.c_str(), "wb");
    if (!f || fwrite(v.data(), sizeof(float), v.size(), f) != v.size()) { perror(path.c_str()); exit(2); }
    fclose(f);
}

static uint32_t bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

#ifdef HAVE_ROPE_FLT
// ggml's own op on stand-in tensors: src0 x [ne0, ne1 = heads, ne2 = tokens], src1 positions (I32),
// op_params as ggml_rope_impl (ggml/src/ggml.c) lays them out.
static std::vector<float> run_op(const Args & a, float freq_scale, const std::vector<float> & x, int64_t T,
                                 const std::vector<int32_t> & pos) {
    std::vector<float> y(x.size(), 0.0f);
    ggml_tensor src0 = {}, src1 = {}, dst = {};
    src0.type = GGML_TYPE_F32;
    src0.ne[0] = a.ne0; src0.ne[1] = a.heads; src0.ne[2] = T; src0.ne[3] = 1;
    src0.nb[0] = sizeof(float); src0.nb[1] = src0.nb[0]*a.ne0; src0.nb[2] = src0.nb[1]*a.heads; src0.nb[3] = src0.nb[2]*T;
    src0.data = (void *) x.data();
    src1.type = GGML_TYPE_I32; src1.ne[0] = (int64_t) pos.size(); src1.ne[1] = src1.ne[2] = src1.ne[3] = 1;
    src1.data = (void *) pos.data();
    dst = src0; dst.data = y.data();
    dst.src[0] = &src0; dst.src[1] = &src1; dst.src[2] = NULL;
    int32_t params[15] = { /*n_past*/ 0, a.n_dims, a.mode, /*n_ctx*/ 0, a.n_ctx_orig };
    memcpy(params +  5, &a.freq_base,   sizeof(float));
    memcpy(params +  6, &freq_scale,    sizeof(float));
    memcpy(params +  7, &a.ext_factor,  sizeof(float));
    memcpy(params +  8, &a.attn_factor, sizeof(float));
    memcpy(params +  9, &a.beta_fast,   sizeof(float));
    memcpy(params + 10, &a.beta_slow,   sizeof(float));
    memcpy(params + 11, a.sections,     sizeof(int32_t)*4);
    memcpy(dst.op_params, params, sizeof(params));
    std::vector<float> wdata(a.ne0 + CACHE_LINE_SIZE_F32);
    ggml_compute_params cp = { 0, 1, wdata.size()*sizeof(float), wdata.data() };
    ggml_compute_forward_rope(&cp, &dst);   // one thread: ith 0, nth 1
    return y;
}
#endif

int main(int argc, char ** argv) {
    Args a;
    for (int i = 1; i < argc; i++) {
        std::string s = argv[i];
        size_t eq = s.find('=');
        std::string k = s.substr(0, eq), v = s.substr(eq + 1);
        if (k == "kind") a.kind = v; else if (k == "pos") a.pos = v; else if (k == "x") a.x = v;
        else if (k == "out") a.out = v; else if (k == "mode") a.mode = atoi(v.c_str());
        else if (k == "n_dims") a.n_dims = atoi(v.c_str()); else if (k == "ne0") a.ne0 = atoi(v.c_str());
        else if (k == "heads") a.heads = atoi(v.c_str()); else if (k == "n_ctx_orig") a.n_ctx_orig = atoi(v.c_str());
        else if (k == "npos") a.npos = atoi(v.c_str());
        else if (k == "freq_base") a.freq_base = strtof(v.c_str(), NULL);
        else if (k == "factor") a.factor = strtof(v.c_str(), NULL);
        else if (k == "ext_factor") a.ext_factor = strtof(v.c_str(), NULL);
        else if (k == "attn_factor") a.attn_factor = strtof(v.c_str(), NULL);
        else if (k == "beta_fast") a.beta_fast = strtof(v.c_str(), NULL);
        else if (k == "beta_slow") a.beta_slow = strtof(v.c_str(), NULL);
        else if (k == "sections") sscanf(v.c_str(), "%d,%d,%d,%d", &a.sections[0], &a.sections[1], &a.sections[2], &a.sections[3]);
        else { fprintf(stderr, "unknown argument %s\n", argv[i]); return 2; }
    }
    // llama.cpp: rope_freq_scale_train = 1.0f/ropescale (float division); 1 when unscaled
    const float freq_scale = 1.0f/a.factor;
    const int n_dims = a.n_dims;
    const int64_t ne0 = a.ne0;
    const float freq_base = a.freq_base;

    std::vector<char> pb = slurp(a.pos);
    std::vector<int32_t> pos(pb.size()/4);
    memcpy(pos.data(), pb.data(), pos.size()*4);
    const bool mrope = a.kind == "mrope_cache";
    const int64_t T = mrope ? (int64_t) pos.size()/4 : (int64_t) pos.size();   // ne2

    // rope_flt: "const float theta_scale = powf(freq_base, -2.0f/n_dims);"
    const float theta_scale = powf(freq_base, -2.0f/n_dims);
    // rope_flt: "float corr_dims[2];
    //            ggml_rope_yarn_corr_dims(n_dims, n_ctx_orig, freq_base, beta_fast, beta_slow, corr_dims);"
    float corr_dims[2];
    ggml_rope_yarn_corr_dims(n_dims, a.n_ctx_orig, freq_base, a.beta_fast, a.beta_slow, corr_dims);
    // rope_flt: "const float sin_sign = forward ? 1.0f : -1.0f;" (forward) and freq_factors = NULL (no src2)
    const float sin_sign = 1.0f;
    const float * freq_factors = NULL;
    // rope_flt: "float * cache = (float *) params->wdata + ...": ne0 floats, filled per token (i2)
    std::vector<float> cache(ne0 + CACHE_LINE_SIZE_F32);

    std::vector<float> out;
    long long op_diff = -1;
    if (a.kind == "cache" || mrope) {
        out.assign((size_t) T*ne0, 0.0f);
        for (int64_t i2 = 0; i2 < T; i2++) {
            if (!mrope) {
                // rope_flt: "const int64_t p = pos[i2];
                //            ggml_rope_cache_init(p, freq_scale, freq_factors, corr_dims, ne0, ext_factor, attn_factor, cache, sin_sign, theta_scale);"
                const int64_t p = pos[i2];
                ggml_rope_cache_init(p, freq_scale, freq_factors, corr_dims, ne0, a.ext_factor, a.attn_factor, cache.data(), sin_sign, theta_scale);
            } else {
#ifdef HAVE_MROPE
                // rope_flt: "const int64_t p_t = pos[i2]; p_h = pos[i2 + ne2]; p_w = pos[i2 + ne2 * 2]; p_e = pos[i2 + ne2 * 3];
                //            ggml_mrope_cache_init(p_t, p_h, p_w, p_e, sections, is_imrope, is_vision, freq_scale, ...)"
                // with mode GGML_ROPE_TYPE_MROPE: is_imrope = false, is_vision = false
                const int64_t p_t = pos[i2];
                const int64_t p_h = pos[i2 + T];
                const int64_t p_w = pos[i2 + T * 2];
                const int64_t p_e = pos[i2 + T * 3];
                ggml_mrope_cache_init(
                    p_t, p_h, p_w, p_e, a.sections, false, false,
                    freq_scale, freq_factors, corr_dims, ne0, a.ext_factor, a.attn_factor, cache.data(), sin_sign, theta_scale);
#else
                fprintf(stderr, "ggml_mrope_cache_init is not in the given ops.cpp\n"); return 3;
#endif
            }
            memcpy(&out[(size_t) i2*ne0], cache.data(), ne0*sizeof(float));
        }
#ifdef HAVE_ROPE_FLT
        // the op on one head whose first n_dims/2 channels are 1 and the rest 0 (NEOX pairing; MROPE pairs the
        // same way): its output channel k is cos_k, channel k + n_dims/2 is sin_k, exactly
        std::vector<float> x((size_t) T*ne0, 0.0f);
        for (int64_t t = 0; t < T; t++) for (int k = 0; k < n_dims/2; k++) x[(size_t) t*ne0 + k] = 1.0f;
        Args b = a; b.heads = 1; b.mode = mrope ? GGML_ROPE_TYPE_MROPE : GGML_ROPE_TYPE_NEOX;
        std::vector<float> y = run_op(b, freq_scale, x, T, pos);
        op_diff = 0;
        for (int64_t t = 0; t < T; t++) for (int k = 0; k < n_dims/2; k++) {
            op_diff += bits(y[(size_t) t*ne0 + k]) != bits(out[(size_t) t*ne0 + 2*k]);
            op_diff += bits(y[(size_t) t*ne0 + k + n_dims/2]) != bits(out[(size_t) t*ne0 + 2*k + 1]);
        }
#endif
    } else if (a.kind == "apply") {
        std::vector<char> xb = slurp(a.x);
        std::vector<float> x(xb.size()/4);
        memcpy(x.data(), xb.data(), x.size()*4);
        const int64_t ne1 = a.heads;
        if ((int64_t) x.size() != T*ne1*ne0) { fprintf(stderr, "x has %zu values\n", x.size()); return 2; }
        out.assign(x.size(), 0.0f);
        std::vector<float> caches((size_t) T*ne0);                  // kept for the report on the arithmetic
        for (int64_t i2 = 0; i2 < T; i2++) {                       // rope_flt: "for (int64_t i2 ...) { // seq-len"
            const int64_t p = pos[i2];
            ggml_rope_cache_init(p, freq_scale, freq_factors, corr_dims, ne0, a.ext_factor, a.attn_factor, cache.data(), sin_sign, theta_scale);
            memcpy(&caches[(size_t) i2*ne0], cache.data(), ne0*sizeof(float));
            for (int64_t i1 = 0; i1 < ne1; i1++) {                 // rope_flt: "for (int64_t i1 ...) { // attn-heads"
                const float * src = &x[(size_t) (i2*ne1 + i1)*ne0];
                float * dst_data = &out[(size_t) (i2*ne1 + i1)*ne0];
                switch (a.mode) {
                    case GGML_ROPE_TYPE_NORMAL:
                        // rope_flt: "rotate_pairs<T>(n_dims, 1, cache, src, dst_data, 1);"
                        rotate_pairs<float>(n_dims, 1, cache.data(), src, dst_data, 1);
                        break;
                    case GGML_ROPE_TYPE_NEOX:
                        // rope_flt: "rotate_pairs<T>(n_dims, n_dims/2, cache, src, dst_data);"
                        rotate_pairs<float>(n_dims, n_dims/2, cache.data(), src, dst_data);
                        break;
                    default:
                        fprintf(stderr, "mode %d not in this harness\n", a.mode); return 2;
                }
                // rope_flt: "// fill the remain channels with data from src tensor
                //            for (int64_t i0 = n_dims; i0 < ne0; i0 += 2) { dst_data[0] = src[0]; dst_data[1] = src[1]; }"
                for (int64_t i0 = n_dims; i0 < ne0; i0 += 2) {
                    dst_data[i0 + 0] = src[i0 + 0];
                    dst_data[i0 + 1] = src[i0 + 1];
                }
            }
        }
#ifdef HAVE_ROPE_FLT
        std::vector<float> y = run_op(a, freq_scale, x, T, pos);
        op_diff = 0;
        for (size_t i = 0; i < y.size(); i++) op_diff += bits(y[i]) != bits(out[i]);
        spit(a.out + ".op", y);
#endif
        spit(a.out + ".cache", caches);
    } else {
        fprintf(stderr, "unknown kind %s\n", a.kind.c_str()); return 2;
    }
    spit(a.out, out);
    printf("freq_scale=%a theta_scale=%a corr_dims=%a,%a op_crosscheck_differing=%lld values=%zu\n",
           (double) freq_scale, (double) theta_scale, (double) corr_dims[0], (double) corr_dims[1], op_diff, out.size());
    return 0;
}
"""


def build(workdir, ops_src, ops_order, c_src, c_order, variant, log):
    d = os.path.join(workdir, variant)
    os.makedirs(d, exist_ok=True)
    c_path, cxx_path = os.path.join(d, "ggml_c_part.c"), os.path.join(d, "harness.cpp")
    ops_path = os.path.join(d, "ops_part.cpp")
    with open(c_path, "w") as f:
        f.write(C_PRELUDE + "\n\n".join(c_src[n] for n in c_order) + "\n")
    have_op = "ggml_compute_forward_rope_flt" in ops_src
    defs = ""
    if "ggml_mrope_cache_init" in ops_src:
        defs += "#define HAVE_MROPE 1\n"
    if have_op:
        defs += "#define HAVE_ROPE_FLT 1\n"
    # the harness: the helper functions (static, as in ops.cpp) and the glue main()
    with open(cxx_path, "w") as f:
        f.write(defs + CXX_PRELUDE + "\n\n".join(ops_src[n] for n in ops_order if n in HELPERS) + "\n" + CXX_MAIN)
    objs = [os.path.join(d, "harness.o"), os.path.join(d, "ggml_c_part.o")]
    extra = VARIANTS[variant]
    cmds = [["gcc"] + C_FLAGS + extra + ["-c", c_path, "-o", objs[1]],
            ["g++"] + CXX_FLAGS + extra + ["-c", cxx_path, "-o", objs[0]]]
    if have_op:
        # ggml's op: every ops.cpp function read, in their order, with ggml_compute_forward_rope as the entry
        with open(ops_path, "w") as f:
            f.write(CXX_PRELUDE + "\n\n".join(ops_src[n] for n in ops_order) + "\n"
                    + ("" if "ggml_compute_forward_rope" in ops_src else OPS_WRAPPER))
        objs.append(os.path.join(d, "ops_part.o"))
        cmds.append(["g++"] + CXX_FLAGS + extra + ["-c", ops_path, "-o", objs[2]])
    cmds.append(["g++"] + objs + ["-lm", "-o", os.path.join(d, "harness")])
    for c in cmds:
        c = [os.path.relpath(w, d) if w.startswith(d + os.sep) else w for w in c]
        log.append(" ".join(c))
        subprocess.run(c, check=True, cwd=d)
    return os.path.join(d, "harness")


# ---------------------------------------------------------------------------------------------------------------
# .npy (v1.0) writing, standard library only

def npy_write(path, descr, shape, payload):
    shape_s = "(%s,)" % shape[0] if len(shape) == 1 else "(%s)" % ", ".join(str(s) for s in shape)
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_s)
    pad = (64 - (10 + len(header) + 1) % 64) % 64
    header += " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + payload)


def le_bytes(arr):
    a = array(arr.typecode, arr)
    if sys.byteorder != "little":
        a.byteswap()
    return a.tobytes()


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


# ---------------------------------------------------------------------------------------------------------------
# which arithmetic the rotation used: for each rotated pair, with c, s the cache's cos and sin,
#   plain: out0 = x0*c - x1*s,           out1 = x0*s + x1*c            (every product and sum rounded)
#   fma_a: out0 = fma(x0, c, -(x1*s)),   out1 = fma(x0, s, x1*c)       (x1's product rounded, then one fused op)
#   fma_b: out0 = fma(-x1, s, x0*c),     out1 = fma(x1, c, x0*s)       (x0's product rounded, then one fused op)

def _bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def _from_bits(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def _round32(q):
    """The float32 nearest the exact rational q (ties to even)."""
    if q == 0:
        return 0.0
    b = _bits(f32(float(q)))                 # within one ulp of the answer
    cands = [_from_bits(b + k) for k in (-1, 0, 1) if 0 <= b + k < 2 ** 32]
    return min(cands, key=lambda v: (abs(Fraction(v) - q), _bits(v) & 1))


def rotation_forms(x, caches, out, T, H, hd, n_dims, mode):
    counts = {"values": 0, "plain": 0, "fma_a": 0, "fma_b": 0, "none": 0}
    for t in range(T):
        for h in range(H):
            base = (t * H + h) * hd
            for k in range(n_dims // 2):
                c, s = caches[t * hd + 2 * k], caches[t * hd + 2 * k + 1]
                i0, i1 = (2 * k, 2 * k + 1) if mode == "normal" else (k, k + n_dims // 2)
                x0, x1 = x[base + i0], x[base + i1]
                p0c, p1s, p0s, p1c = (f32(x0 * c), f32(x1 * s), f32(x0 * s), f32(x1 * c))   # exact in double
                F0c, F1s, F0s, F1c = (Fraction(x0) * Fraction(c), Fraction(x1) * Fraction(s),
                                      Fraction(x0) * Fraction(s), Fraction(x1) * Fraction(c))
                forms = {
                    "plain": (_round32(Fraction(p0c) - Fraction(p1s)), _round32(Fraction(p0s) + Fraction(p1c))),
                    "fma_a": (_round32(F0c - Fraction(p1s)), _round32(F0s + Fraction(p1c))),
                    "fma_b": (_round32(Fraction(p0c) - F1s), _round32(Fraction(p0s) + F1c)),
                }
                for o, j in ((out[base + i0], 0), (out[base + i1], 1)):
                    counts["values"] += 1
                    hit = False
                    for name, v in forms.items():
                        if _bits(v[j]) == _bits(o):
                            counts[name] += 1
                            hit = True
                    counts["none"] += not hit
    return counts


# ---------------------------------------------------------------------------------------------------------------
# the cases

CACHE_POSITIONS = list(range(256)) + [4095, 65535, 100000, 524287, 1048575]
APPLY_POSITIONS = list(range(32)) + [0, 1, 2] + [4095, 65535, 100000, 1048575]

NONE = {"type": "none", "factor": 1.0, "original_context": None}


def linear(s):
    return {"type": "linear", "factor": s, "original_context": None}


def yarn(s, ctx):
    return {"type": "yarn", "factor": s, "original_context": ctx}


CACHES = [  # name, n_dims, head_dim (cache width ne0), base, scaling
    ("ggml_cache_d128_base1e4", 128, 128, "10000", NONE),
    ("ggml_cache_d64_base5e5", 64, 64, "500000", NONE),
    ("ggml_cache_d128_base1e6_linear4", 128, 128, "1000000", linear(4)),
    ("ggml_cache_d128_base1e4_linear3", 128, 128, "10000", linear(3)),
    ("ggml_cache_d128_base1e4_yarn4_ctx4096", 128, 128, "10000", yarn(4, 4096)),
    ("ggml_cache_d128_base1e6_yarn8_ctx8192", 128, 128, "1000000", yarn(8, 8192)),
    ("ggml_cache_nd32_hd64_base1e4", 32, 64, "10000", NONE),
]
APPLIES = [  # name, mode, head_dim, n_dims, base, scaling, heads
    ("ggml_normal_d128_base1e4_apply", "normal", 128, 128, "10000", NONE, 4),
    ("ggml_neox_d128_base5e5_apply", "neox", 128, 128, "500000", NONE, 4),
    ("ggml_neox_hd64_nd32_base1e4_apply", "neox", 64, 32, "10000", NONE, 2),
    ("ggml_neox_d128_base1e4_yarn4_ctx4096_apply", "neox", 128, 128, "10000", yarn(4, 4096), 2),
    ("ggml_normal_d64_base1e4_linear2_apply", "normal", 64, 64, "10000", linear(2), 2),
]
MROPE = ("ggml_mrope_d128_base1e6_s16_24_24_0", 128, 128, "1000000", [16, 24, 24, 0])


def llama_params(scaling):
    """What llama.cpp hands ggml_rope_ext for this scaling (see the docstring)."""
    t = scaling["type"]
    return {"factor": scaling["factor"] if t != "none" else 1.0,
            "ext_factor": 1.0 if t == "yarn" else 0.0, "attn_factor": 1.0, "beta_fast": 32.0, "beta_slow": 1.0,
            "n_ctx_orig": scaling["original_context"] if t == "yarn" else 4096}


def mrope_positions():
    """t, h, w, e rows: 64 text tokens (t = h = w), an 8x8 image grid at t = 64 (h = 64 + row, w = 64 + col), 128
    text tokens from 72, the large positions as text, and two image-like tokens far out; e (ggml's fourth row) 0."""
    t, h, w = [], [], []
    for i in range(64):
        t.append(i); h.append(i); w.append(i)
    for r in range(8):
        for c in range(8):
            t.append(64); h.append(64 + r); w.append(64 + c)
    for k in range(128):
        t.append(72 + k); h.append(72 + k); w.append(72 + k)
    for p in [4095, 65535, 100000, 524287, 1048575]:
        t.append(p); h.append(p); w.append(p)
    t += [100000, 1048575]; h += [100003, 1048000]; w += [99990, 1048575 - 7]
    return t, h, w, [0] * len(t)


def make_x(rng, T, H, D):
    """Normal values, a few large magnitudes (about 1 in 61 scaled by 1e3 to 1e6)."""
    v = []
    for i in range(T * H * D):
        g = rng.gauss(0.0, 1.0)
        if i % 61 == 7:
            g *= 10.0 ** rng.choice([3, 4, 5, 6])
        v.append(f32(g))
    return array("f", v)


def run_case(harnesses, tmp, args):
    res = {}
    for variant, exe in harnesses.items():
        out = os.path.join(tmp, "out_%s.bin" % variant)
        r = subprocess.run([exe] + ["%s=%s" % kv for kv in args.items()] + ["out=" + out],
                           check=True, capture_output=True, text=True)
        info = dict(kv.split("=", 1) for kv in r.stdout.split())
        got = []
        for path in (out, out + ".op", out + ".cache"):
            if not os.path.exists(path):
                got.append(None)
                continue
            vals = array("f")
            with open(path, "rb") as f:
                vals.frombytes(f.read())
            if sys.byteorder != "little":
                vals.byteswap()
            got.append(vals)
            os.remove(path)
        # glue's values, the harness's report, the op's values (apply), the per-token caches (apply)
        res[variant] = (got[0], info, got[1], got[2])
    return res


def differing(a, b):
    """How many values differ in bits."""
    ua, ub = array("I", a.tobytes()), array("I", b.tobytes())
    return sum(1 for x, y in zip(ua, ub) if x != y)


def ggml_info(info):
    return {"freq_scale": float.fromhex(info["freq_scale"]), "freq_scale_hex": info["freq_scale"],
            "theta_scale": float.fromhex(info["theta_scale"]), "theta_scale_hex": info["theta_scale"],
            "corr_dims": [float.fromhex(c) for c in info["corr_dims"].split(",")]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ops", required=True, help="llama.cpp ggml/src/ggml-cpu/ops.cpp (or an excerpt)")
    ap.add_argument("--ggml-c", required=True, help="llama.cpp ggml/src/ggml.c (or an excerpt)")
    ap.add_argument("--seed", type=int, default=20250611)
    ap.add_argument("--source-note", default=None, help="recorded in the manifest (e.g. the files are excerpts)")
    ap.add_argument("out")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)

    def tool_version(cmd):
        return subprocess.run(cmd, capture_output=True, text=True).stdout.splitlines()[0]

    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model = next((l.split(":", 1)[1].strip() for l in lscpu.splitlines() if l.startswith("Model name")), "unknown")
    march = subprocess.run(["gcc", "-march=native", "-Q", "--help=target"], capture_output=True, text=True).stdout
    march = next((l.split()[-1] for l in march.splitlines() if l.strip().startswith("-march=")), "unknown")
    macros = subprocess.run(["gcc", "-march=native", "-dM", "-E", "-"], input="", capture_output=True, text=True).stdout
    manifest = {
        "generator": "properties/heldout/generate_ggml.py",
        "command": " ".join(shlex.quote(w) for w in ["python3"] + sys.argv),
        "python": platform.python_version(),
        "compiler": {"c": tool_version(["gcc", "--version"]), "cxx": tool_version(["g++", "--version"])},
        "libc": " ".join(platform.libc_ver()),
        "cpu": {"lscpu_model_name": model, "gcc_march_native": march,
                "fma": "__FMA__" in macros, "avx2": "__AVX2__" in macros, "avx512f": "__AVX512F__" in macros},
        "source_note": a.source_note,
        "sources": {},
        "legend": {
            "native_vs_nofma_differing": "stored output values whose bits differ between the two builds",
            "glue_native_vs_nofma_differing": "the same for the glue loop's rotation (apply cases)",
            "op_crosscheck_differing": "per build: values whose bits differ between ggml's op "
                                       "(ggml_compute_forward_rope) and the glue loop (caches: the op's rotation "
                                       "of a unit vector against the glue's cos/sin)",
            "rotation_arithmetic": "per build: how many rotated outputs equal plain float32 arithmetic, "
                                   "fma_a = fma(x0,c,-(x1*s)) / fma(x0,s,x1*c), fma_b = fma(-x1,s,x0*c) / "
                                   "fma(x1,c,x0*s) (a value may equal several); none = equal to no form",
            "rotation_arithmetic_glue": "the same for the stored *_glue_out.npy",
            "line": "line of the function's first line in the file given (see source_note)",
        },
        "variants": {},
        "notes": [],
        "cases": [],
    }
    ops_src, ops_order = load_functions(a.ops, OPS_FUNCS, ("ops", OPS_PATH), manifest)
    c_src, c_order = load_functions(a.ggml_c, GGMLC_FUNCS, ("ggml.c", GGMLC_PATH), manifest)

    work = tempfile.mkdtemp(prefix="posenc_ggml_")
    try:
        harnesses = {}
        for variant in VARIANTS:
            log = []
            harnesses[variant] = build(work, ops_src, ops_order, c_src, c_order, variant, log)
            manifest["variants"][variant] = {
                "ggml.c functions (as ggml-base, C)": " ".join(["gcc"] + C_FLAGS + VARIANTS[variant]),
                "ops.cpp functions + glue (as ggml-cpu, C++)": " ".join(["g++"] + CXX_FLAGS + VARIANTS[variant]),
                "commands": log}
        rng = random.Random(a.seed)

        # ---- caches
        pos_name = "ggml_cache_positions.npy"
        pos_arr = array("i", CACHE_POSITIONS)
        npy_write(os.path.join(a.out, pos_name), "<i4", [len(pos_arr)], le_bytes(pos_arr))
        pos_bin = os.path.join(work, "cache_pos.bin")
        with open(pos_bin, "wb") as f:
            f.write(le_bytes(pos_arr))
        for name, n_dims, hd, base, scaling in CACHES:
            p = llama_params(scaling)
            res = run_case(harnesses, work, dict(kind="cache", n_dims=n_dims, ne0=hd, freq_base=base, pos=pos_bin,
                                                 **{k: v for k, v in p.items()}))
            files = {}
            for variant, (vals, info, _, _) in res.items():
                files[variant] = "%s_%s.npy" % (name, variant)
                npy_write(os.path.join(a.out, files[variant]), "<f4", [len(CACHE_POSITIONS), hd], le_bytes(vals))
            manifest["cases"].append({
                "name": name, "kind": "ggml-cache", "files": files, "positions_file": pos_name,
                "variants": list(res), "mode": None, "head_dim": hd, "n_dims": n_dims, "base": float(base),
                "scaling": scaling, "heads": None, "positions": CACHE_POSITIONS,
                "shape": [len(CACHE_POSITIONS), hd],
                "layout": "row p: [cos_0, sin_0, cos_1, sin_1, ...], the cache ggml_rope_cache_init fills (width ne0 = "
                          "head_dim, as rope_flt calls it; only the first n_dims are used by the rotation)",
                "ggml_params": dict(p, **ggml_info(res["native"][1])),
                "native_vs_nofma_differing": differing(res["native"][0], res["nofma"][0]),
                "values": len(res["native"][0]),
                "op_crosscheck_differing": {v: int(r[1]["op_crosscheck_differing"]) for v, r in res.items()},
            })

        # ---- rotations
        apos = array("i", APPLY_POSITIONS)
        apos_bin = os.path.join(work, "apply_pos.bin")
        with open(apos_bin, "wb") as f:
            f.write(le_bytes(apos))
        for name, mode, hd, n_dims, base, scaling, H in APPLIES:
            T = len(APPLY_POSITIONS)
            x = make_x(rng, T, H, hd)
            in_name, pn = name + "_in.npy", name + "_positions.npy"
            npy_write(os.path.join(a.out, in_name), "<f4", [T, H, hd], le_bytes(x))
            npy_write(os.path.join(a.out, pn), "<i4", [T], le_bytes(apos))
            x_bin = os.path.join(work, name + "_x.bin")
            with open(x_bin, "wb") as f:
                f.write(le_bytes(x))
            p = llama_params(scaling)
            res = run_case(harnesses, work, dict(kind="apply", mode=MODE[mode], n_dims=n_dims, ne0=hd, heads=H,
                                                 freq_base=base, pos=apos_bin, x=x_bin, **p))
            files = {"input": in_name, "positions": pn}
            primary = {}
            for variant, (glue, info, op, cache) in res.items():
                # stored: ggml's own op (ggml_compute_forward_rope) where it ran; the glue's values as well where
                # they differ from it
                primary[variant] = op if op is not None else glue
                files[variant] = "%s_%s_out.npy" % (name, variant)
                npy_write(os.path.join(a.out, files[variant]), "<f4", [T, H, hd], le_bytes(primary[variant]))
                # the per-token cos/sin ggml computed for this rotation ([T][head_dim]: cos_0, sin_0, ...), so a
                # comparison can tell the cache's part of a difference from the rotation's
                files[variant + "_cache"] = "%s_%s_cache.npy" % (name, variant)
                assert len(cache) == T * hd, (len(cache), T, hd)
                npy_write(os.path.join(a.out, files[variant + "_cache"]), "<f4", [T, hd], le_bytes(cache))
                if op is not None and differing(op, glue):
                    files[variant + "_glue"] = "%s_%s_glue_out.npy" % (name, variant)
                    npy_write(os.path.join(a.out, files[variant + "_glue"]), "<f4", [T, H, hd], le_bytes(glue))
            manifest["cases"].append({
                "name": name, "kind": "ggml-apply", "files": files, "variants": list(res), "mode": mode,
                "head_dim": hd, "n_dims": n_dims, "base": float(base), "scaling": scaling, "heads": H,
                "positions": APPLY_POSITIONS, "shape": [T, H, hd],
                "layout": "x[token][head][channel] (ggml ne0 = head_dim, ne1 = heads, ne2 = tokens); "
                          + ("pairs (2k, 2k+1)" if mode == "normal" else "pairs (k, k + n_dims/2)")
                          + "; channels n_dims..head_dim-1 copied",
                "x_seed": a.seed,
                "stored": "ggml_compute_forward_rope (ggml's op) output" if res["native"][2] is not None
                          else "glue output",
                "ggml_params": dict(p, **ggml_info(res["native"][1])),
                "native_vs_nofma_differing": differing(primary["native"], primary["nofma"]),
                "glue_native_vs_nofma_differing": differing(res["native"][0], res["nofma"][0]),
                "values": len(res["native"][0]),
                "op_crosscheck_differing": {v: int(r[1]["op_crosscheck_differing"]) for v, r in res.items()},
                "rotation_arithmetic": {v: rotation_forms(x, res[v][3], primary[v], T, H, hd, n_dims, mode)
                                        for v in res},
                "rotation_arithmetic_glue": {v: rotation_forms(x, res[v][3], res[v][0], T, H, hd, n_dims, mode)
                                             for v in res if v + "_glue" in files},
            })

        # ---- M-RoPE cache
        if "ggml_mrope_cache_init" in ops_src:
            name, n_dims, hd, base, sections = MROPE
            t, h, w, e = mrope_positions()
            P = len(t)
            mp = array("i", t + h + w + e)
            pn = name + "_positions.npy"
            npy_write(os.path.join(a.out, pn), "<i4", [4, P], le_bytes(mp))
            mp_bin = os.path.join(work, "mrope_pos.bin")
            with open(mp_bin, "wb") as f:
                f.write(le_bytes(mp))
            p = llama_params(NONE)
            res = run_case(harnesses, work, dict(kind="mrope_cache", mode=MODE["mrope"], n_dims=n_dims, ne0=hd,
                                                 freq_base=base, pos=mp_bin,
                                                 sections=",".join(str(s) for s in sections), **p))
            files = {"positions": pn}
            for variant, (vals, info, _, _) in res.items():
                files[variant] = "%s_cache_%s.npy" % (name, variant)
                npy_write(os.path.join(a.out, files[variant]), "<f4", [P, hd], le_bytes(vals))
            manifest["cases"].append({
                "name": name, "kind": "ggml-mrope-cache", "files": files, "variants": list(res), "mode": "mrope",
                "head_dim": hd, "n_dims": n_dims, "base": float(base), "scaling": NONE, "heads": None,
                "sections": sections, "positions": {"t": t, "h": h, "w": w, "e": e}, "shape": [P, hd],
                "layout": "row p: [cos_0, sin_0, ...] as ggml_mrope_cache_init fills it (GGML_ROPE_TYPE_MROPE: "
                          "is_imrope false, indep_sects false); positions file rows t, h, w, e as ggml's "
                          "positions tensor holds them (pos[i], pos[i + n], pos[i + 2n], pos[i + 3n])",
                "ggml_params": dict(p, **ggml_info(res["native"][1])),
                "native_vs_nofma_differing": differing(res["native"][0], res["nofma"][0]),
                "values": len(res["native"][0]),
                "op_crosscheck_differing": {v: int(r[1]["op_crosscheck_differing"]) for v, r in res.items()},
            })
    finally:
        shutil.rmtree(work, ignore_errors=True)

    manifest["notes"] = [
        "Apply cases store ggml's op (ggml_compute_forward_rope compiled from the given ops.cpp text with "
        "ggml-cpu's flags in its own translation unit), not the glue loop; *_glue_out.npy holds the glue loop's "
        "output where it differs. With GCC 12 -O3 -march=native, NORMAL mode's rotation in the op is vectorized "
        "into vfmaddsub (x0*c -/+ x1*s as fma(x0, c, -/+ rounded x1*s)) in both builds: -ffp-contract=off does not "
        "stop the vectorizer's fused add-sub, while the glue loop's copy of the same code is not fused there.",
        "rope_flt calls ggml_rope_cache_init with ne0 (the row width, head_dim), not n_dims: the cache has head_dim "
        "entries and theta keeps multiplying by theta_scale = freq_base^(-2/n_dims) past n_dims; the rotation reads "
        "only the first n_dims. The partial-rotary cache (nd32_hd64) is stored at its full width 64.",
        "theta is built by repeated multiplication (theta *= theta_scale per pair, starting from the position as "
        "float), not as p * freq_base^(-2i/n_dims).",
        "YaRN: rope_yarn scales cos and sin by mscale = attn_factor * (1 + 0.1 * logf(1/freq_scale)) whenever "
        "ext_factor != 0, so YaRN cache rows are not unit vectors; the ramp uses corr_dims from "
        "ggml_rope_yarn_corr_dims (floor/ceil, clamped to [0, n_dims-1]) and compares i0/2 (integer division).",
        "Unscaled and linear cases: corr_dims are computed (n_ctx_orig 4096, beta 32/1) but unused (ext_factor 0).",
    ]
    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    for c in manifest["cases"]:
        print("%-46s native/nofma differing %6d of %6d; op cross-check %s" % (
            c["name"], c["native_vs_nofma_differing"], c["values"], c["op_crosscheck_differing"]))


if __name__ == "__main__":
    main()
