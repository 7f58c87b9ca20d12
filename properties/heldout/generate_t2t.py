#!/usr/bin/env python3
"""properties/heldout/generate_t2t.py — held-out Shaw et al. relative-position vectors from tensor2tensor's own code.

Not run by the build or CI. tensor2tensor's relative attention (Shaw, Uszkoreit & Vaswani 2018) is TensorFlow 1.x
code, and TensorFlow is not installable on posenc's machines (not in Debian). So this generator runs tensor2tensor's
function bodies, unchanged, against a small stand-in for the `tf` module backed by NumPy: `TFStandIn` below, which
implements exactly and only the TF ops those bodies call, each with the TF 1.x semantics its docstring cites
(shapes; dtypes: no implicit promotion, Python numbers converted to the other operand's dtype, int32 indices,
float32 floats).

What is tensor2tensor's code (read from the source file(s) at run time, parsed with `ast`, executed as written; the
manifest records each function's repo@commit, file, line in the given file and the SHA-256 of its text, taken as
`ast.get_source_segment(..., padded=True)` like generate_torch.py):

  tensorflow/tensor2tensor@e1f0e3a746bb322f4bf3975fad2c8105b3a43a49
    tensor2tensor/layers/common_attention.py  _generate_relative_positions_matrix,
                                              _generate_relative_positions_embeddings,
                                              _relative_attention_inner, dot_product_attention_relative
    tensor2tensor/layers/common_layers.py     shape_list

  The files may be the whole files at that commit or excerpts holding those functions whole: the functions' SHA-256
  says which text ran (EXPECTED_SHA256 holds the hashes of the text at that commit, as the code index stores it; the
  manifest says whether each one matched).

What is shim and glue (this file's own code):
  * `TFStandIn` / `Tensor` / `TensorShape`: the TF ops. Integer outputs (the relative-position index matrices, the
    indices fed to tf.gather) are exactly what t2t's graph computes: TF's int32 ops are exact and the shim follows
    their semantics. Float outputs are t2t's composition of ops (which products, which transposes and reshapes,
    where the relation embeddings enter, where the softmax sits) evaluated with NumPy float32 arithmetic: matmuls
    through NumPy/OpenBLAS sgemm (float32 accumulation, BLAS's summation order), the softmax as TF's Eigen functor
    writes it (exp(x - max) * (1 / sum)) but with NumPy's exp and pairwise sum. They are NOT TF's Eigen kernels bit
    for bit (measured here: within 2.3e-7 of the largest magnitude of a float64 evaluation of the same formula;
    TF's kernels round differently by amounts of that order). The structure is t2t's own: the sign of the distance, the
    clipping, the alignment of queries to keys, the cached (single-query) form, and where the relation embeddings
    enter the logits and the output.
  * Stubs with no effect on any returned tensor: `common_layers.should_generate_summaries` (returns False: it only
    decides whether to emit a tf.summary image), `attention_image_summary` (no-op, recorded if called),
    `harden_attention_weights` (raises: only reached with hard_attention_k > 0, never used here).
    tf.nn.dropout is the identity at keep_prob 1.0 (dropout_rate 0.0) and refuses anything else.
  * tf.get_variable returns the float32 table this generator supplies for the full variable name t2t asks for
    ("<scope>/relative_positions_keys/embeddings", "<scope>/relative_positions_values/embeddings"); any other name,
    or a shape other than the one t2t requests, is an error. Tables are drawn like TF1's default get_variable
    initializer (glorot_uniform over [2k+1, depth]) from this generator's own seeded RNG.
  * The one piece of caller glue: t2t's multihead_attention scales the queries before it calls
    dot_product_attention_relative (`key_depth_per_head = total_key_depth // num_heads; if not vars_3d:
    q *= key_depth_per_head**-0.5`, common_attention.py at the same commit). dot_product_attention_relative itself
    does not scale. The "mha" cases store the unscaled queries (q_in) and the queries as multihead_attention passes
    them (q = q_in * float32(depth**-0.5): TF converts the Python float to a float32 constant; the float32 product is
    correctly rounded in both TF and NumPy, so q is exactly TF's). The "raw" case passes q unscaled.

The softmax stand-in records its input, so the stored logits are exactly what t2t's code feeds to tf.nn.softmax
(q·k + q·a^K, plus the bias when there is one; none here). The output is weights·v + Σ_j weights_ij a^V_ij.

Conventions the data pins down (read off t2t's code; the files show them):
  * index[i, j] = clip(j - i, -k, k) + k: key minus query, shifted into [0, 2k]; table row k is distance 0, rows
    above k are keys to the right of the query. Keys and values use the same index matrix, separate tables.
  * Lq < Lk: the queries are the LAST Lq positions (range(Lk)[-Lq:]): query i sits at Lk - Lq + i.
    dot_product_attention_relative accepts it only with allow_memory=True (memory keys precede the queries);
    otherwise its shape assertion raises (recorded in the manifest). Lq > Lk in the matrix function silently
    gives an [Lk, Lk] matrix.
  * Cached form (cache=True, one query): index row = clip(range(-Lk + 1, 1), -k, k) + k, i.e. the query is the
    last key position; it equals the last row of the uncached Lk x Lk matrix; length_q is ignored.
  * No 1/sqrt(depth) inside dot_product_attention_relative; multihead_attention scales q before the call, so the
    scale multiplies both q·k and q·a^K. The value relations enter the output as Σ_j w_ij a^V_ij, added to w·v.

Usage:
  /usr/bin/python3 properties/heldout/generate_t2t.py --common-attention PATH [--common-layers PATH] OUTDIR
e.g. with the files (or excerpts) fetched into /tmp/t2tsrc:
  /usr/bin/python3 properties/heldout/generate_t2t.py --common-attention /tmp/t2tsrc/common_attention.py \\
      --common-layers /tmp/t2tsrc/common_layers.py properties/heldout/data/t2t
Without --common-layers, shape_list is the shim's (recorded as such in the manifest). Runs in about a second, one
BLAS thread.
"""
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse, ast, contextlib, hashlib, inspect, json, platform, sys, types  # noqa: E402

import numpy as np  # noqa: E402

REPO = "tensorflow/tensor2tensor"
COMMIT = "e1f0e3a746bb322f4bf3975fad2c8105b3a43a49"
CA_FILE = "tensor2tensor/layers/common_attention.py"
CL_FILE = "tensor2tensor/layers/common_layers.py"
CA_FUNCS = ["_generate_relative_positions_matrix", "_generate_relative_positions_embeddings",
            "_relative_attention_inner", "dot_product_attention_relative"]
CL_FUNCS = ["shape_list"]
# SHA-256 of each function's text at COMMIT (as the public code index stores that version).
EXPECTED_SHA256 = {
    "_generate_relative_positions_matrix": "68bc91ce61b66546e2cebefb02f56adb02272ace9e859f7c13b56948c3bac661",
    "_generate_relative_positions_embeddings": "14e495fb77fb71306fb3bdb446efec7b9523befc38b9ca3b44562fceef86e4ca",
    "_relative_attention_inner": "47aaa5bd02a95153ac683b50c9324a7f2708f50a2e3ab00cd8044e78f5cc0e29",
    "dot_product_attention_relative": "ab4a501d3f0fc6a69b735c43edc4429d8e50385d5f760a7f24cb75dfa41121c6",
    "shape_list": "533a9d228cb8e7b6f93dde79117593ed1f650d29de155ee09cbb4c1f8a7ac8fd",
}
SEED = 20261127
SOFTMAX_CITE = ("tensorflow/tensorflow@12b1fb47f72fd26e02193f2724fe052c479ff488 "
                "tensorflow/core/kernels/softmax_op_functor.h SoftmaxEigenImpl::Compute")


# ----------------------------------------------------------------------------------------------------------------
# The TF 1.x stand-in.
# ----------------------------------------------------------------------------------------------------------------

class TensorShape:
    """tf.TensorShape for a fully defined static shape: .dims, .as_list(), indexing, len(), and
    assert_is_compatible_with (TF: same rank and every pair of dimensions equal or unknown, else ValueError)."""

    def __init__(self, dims):
        self._dims = None if dims is None else [None if d is None else int(d) for d in dims]

    @property
    def dims(self):
        return None if self._dims is None else list(self._dims)

    @property
    def ndims(self):
        return None if self._dims is None else len(self._dims)

    def as_list(self):
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def __len__(self):
        return len(self._dims)

    def __getitem__(self, i):
        r = self._dims[i]
        return TensorShape(r) if isinstance(i, slice) else r

    def __iter__(self):
        return iter(self._dims)

    def __repr__(self):
        return "TensorShape(%s)" % self._dims

    def is_compatible_with(self, other):
        other = other if isinstance(other, TensorShape) else TensorShape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError("Shapes %s and %s are incompatible" % (self, other))


class Tensor(np.ndarray):
    """A NumPy array standing for a tf.Tensor whose static shape is fully known (what shape_list and
    get_shape().as_list() see in TF when the inputs have static shapes, as here).

    Element-wise operators follow TF 1.x's binary-op rules (tensorflow/python/ops/math_ops.py, binary_op_wrapper:
    the other operand goes through ops.convert_to_tensor(y, dtype=x.dtype.base_dtype)): both tensors must have the
    same dtype (TF does no implicit promotion; a mismatch is an error), and a Python number is converted to the
    tensor's dtype (an int into a float tensor is fine, a non-integral float into an int tensor is an error). The
    result keeps that dtype. Indexing/slicing is TF's strided_slice, which for the basic forms used here
    (x[a:b], x[None, :], x[:, None], x[i]) is NumPy's."""

    def __new__(cls, value, dtype=None):
        return np.asarray(value, dtype=dtype).view(cls)

    def get_shape(self):
        return TensorShape(self.shape)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        arrays = [x for x in inputs if isinstance(x, np.ndarray)]
        dtypes = {x.dtype for x in arrays}
        if len(dtypes) != 1:
            raise TypeError("TF: %s with operand dtypes %s (TF 1.x does no implicit promotion)"
                            % (ufunc.__name__, sorted(str(d) for d in dtypes)))
        dt = dtypes.pop()
        args = []
        for x in inputs:
            if isinstance(x, np.ndarray):
                args.append(x.view(np.ndarray))
            elif isinstance(x, np.generic):
                if x.dtype != dt:
                    raise TypeError("TF: %s mixes %s with a %s scalar" % (ufunc.__name__, dt, x.dtype))
                args.append(x)
            elif isinstance(x, (bool, int, float)):
                if dt.kind in "iu" and isinstance(x, float) and not float(x).is_integer():
                    raise TypeError("TF: cannot convert %r to a %s tensor" % (x, dt))
                args.append(np.asarray(x, dtype=dt))
            else:
                return NotImplemented
        if "out" in kwargs:
            kwargs["out"] = tuple(o.view(np.ndarray) if isinstance(o, Tensor) else o for o in kwargs["out"])
        res = getattr(ufunc, method)(*args, **kwargs)
        if isinstance(res, np.ndarray):
            if res.dtype != dt and res.dtype != np.bool_:
                raise TypeError("TF: %s changed dtype %s -> %s" % (ufunc.__name__, dt, res.dtype))
            return res.view(Tensor)
        return res


def _t(x):
    """ops.convert_to_tensor: a Tensor stays; a Python int (list) becomes int32, a Python float float32; a NumPy
    array keeps its dtype."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.ndarray) or isinstance(x, np.generic):
        return Tensor(x)
    a = np.asarray(x)
    if a.dtype.kind in "iu":
        return Tensor(a, np.int32)
    if a.dtype.kind == "f":
        return Tensor(a, np.float32)
    return Tensor(a)


def _int(v):
    """A shape entry: a Python int or an int32/int64 scalar tensor."""
    a = np.asarray(v)
    if a.shape != () or a.dtype.kind not in "iu":
        raise TypeError("shape entry %r is not an integer scalar" % (v,))
    return int(a)


class _VariableScope:
    def __init__(self, name, reuse=False):
        self.name = name
        self.reuse = reuse
        self.original_name_scope = name + "/" if name else ""


class TFStandIn(types.ModuleType):
    """The `tf` that t2t's code sees. Only the ops its relative-attention functions call; each docstring cites the
    TF 1.x API semantics it follows. Holds the variable store for one "graph" (reset() between cases), the record
    of softmax inputs and gather indices, and the variables t2t asked for."""

    int32 = np.int32
    float32 = np.float32

    def __init__(self):
        super().__init__("tf_numpy_standin")
        self.nn = types.SimpleNamespace(softmax=self._softmax, dropout=self._dropout)
        self.reset({})

    # -- bookkeeping ---------------------------------------------------------------------------------------------
    def reset(self, variables):
        """A fresh graph: no scopes used yet, this case's variables, empty records."""
        self._variables = dict(variables)
        self._scope_stack = [_VariableScope("")]
        self._used_scope_names = {}
        self.requested = []        # (full variable name, requested shape)
        self.softmax_inputs = []   # what entered tf.nn.softmax, in call order
        self.gather_indices = []   # the indices given to tf.gather, in call order
        self.summaries = 0

    # -- tensors and shapes --------------------------------------------------------------------------------------
    def convert_to_tensor(self, value, dtype=None, name=None):
        """tf.convert_to_tensor: Tensors pass through; Python ints -> int32, floats -> float32."""
        t = _t(value)
        if dtype is not None and t.dtype != np.dtype(dtype):
            raise TypeError("convert_to_tensor: %s is not %s" % (t.dtype, np.dtype(dtype)))
        return t

    def shape(self, input, name=None, out_type=np.int32):  # noqa: A002 (TF's argument name)
        """tf.shape: the dynamic shape as a 1-D int32 tensor (out_type defaults to tf.int32)."""
        return Tensor(np.array(_t(input).shape, dtype=out_type))

    def range(self, start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A003
        """tf.range(start, limit, delta): [start, limit) by delta; tf.range(n) is [0, n). With integer arguments
        and no dtype the result is int32 (math_ops.range infers the dtype from the arguments: Python ints -> int32)."""
        if limit is None:
            start, limit = 0, start
        vals = [_int(start), _int(limit), _int(delta)] if dtype is None or np.dtype(dtype).kind in "iu" else None
        if vals is None:
            raise NotImplementedError("tf.range with a float dtype is not needed here")
        return Tensor(np.arange(*vals, dtype=np.int32 if dtype is None else dtype))

    def expand_dims(self, input, axis=None, name=None, dim=None):  # noqa: A002
        """tf.expand_dims(input, axis): inserts a dimension of size 1 at `axis` (negative counts from the end,
        -1 appends)."""
        axis = dim if axis is None else axis
        return np.expand_dims(_t(input), _int(axis)).view(Tensor)

    def clip_by_value(self, t, clip_value_min, clip_value_max, name=None):
        """tf.clip_by_value (clip_ops.py): t_min = minimum(t, clip_value_max); result = maximum(t_min,
        clip_value_min); the bounds are converted to t's dtype; the result has t's dtype and shape."""
        t = _t(t)
        hi = np.asarray(clip_value_max, dtype=t.dtype)
        lo = np.asarray(clip_value_min, dtype=t.dtype)
        return np.maximum(np.minimum(t.view(np.ndarray), hi), lo).view(Tensor)

    def reshape(self, tensor, shape, name=None):
        """tf.reshape: same elements in row-major order, new shape; at most one entry -1, inferred. Entries may be
        Python ints or int32 scalars (tf.shape(x)[i])."""
        dims = [_int(s) for s in shape]
        if dims.count(-1) > 1:
            raise ValueError("reshape: more than one -1 in %s" % dims)
        return np.reshape(_t(tensor), dims).view(Tensor)

    def transpose(self, a, perm=None, name="transpose", conjugate=False):
        """tf.transpose(a, perm): output dimension i is input dimension perm[i]; perm None reverses."""
        return np.transpose(_t(a), None if perm is None else [_int(p) for p in perm]).view(Tensor)

    def matmul(self, a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
               a_is_sparse=False, b_is_sparse=False, name=None):
        """tf.matmul (BatchMatMul for rank > 2): the product of the inner-most 2-D matrices, after transposing
        a's / b's last two dimensions where transpose_a / transpose_b; leading (batch) dimensions must agree;
        operands of one float dtype, result of that dtype."""
        a, b = _t(a), _t(b)
        if a.dtype != b.dtype or a.dtype != np.float32:
            raise TypeError("matmul: dtypes %s, %s (float32 expected)" % (a.dtype, b.dtype))
        if a.ndim < 2 or a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2]:
            raise ValueError("matmul: batch dimensions of %s and %s differ" % (a.shape, b.shape))
        if adjoint_a or adjoint_b:
            raise NotImplementedError("adjoint")
        x = np.swapaxes(a, -1, -2) if transpose_a else a
        y = np.swapaxes(b, -1, -2) if transpose_b else b
        x, y = np.ascontiguousarray(x.view(np.ndarray)), np.ascontiguousarray(y.view(np.ndarray))
        if x.shape[-1] != y.shape[-2]:
            raise ValueError("matmul: inner dimensions %s, %s" % (x.shape, y.shape))
        out = np.matmul(x, y)
        assert out.dtype == np.float32
        return out.view(Tensor)

    def gather(self, params, indices, validate_indices=None, name=None, axis=0):
        """tf.gather(params, indices) with axis 0: output[i..., :] = params[indices[i...], :]; output shape
        indices.shape + params.shape[1:]; indices int32/int64; on CPU an index outside [0, params.shape[0]) is an
        InvalidArgumentError (no wrap-around, unlike NumPy's negative indices)."""
        params, indices = _t(params), _t(indices)
        if _int(axis) != 0:
            raise NotImplementedError("gather axis != 0")
        if indices.dtype not in (np.int32, np.int64):
            raise TypeError("gather: indices dtype %s" % indices.dtype)
        ind = indices.view(np.ndarray)
        if ind.size and (ind.min() < 0 or ind.max() >= params.shape[0]):
            raise IndexError("gather: indices outside [0, %d)" % params.shape[0])
        self.gather_indices.append(ind.copy())
        return np.take(params.view(np.ndarray), ind, axis=0).view(Tensor)

    # -- variables and scopes ------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def variable_scope(self, name_or_scope, default_name=None, values=None, reuse=None, **kwargs):
        """tf.variable_scope: pushes a scope; variables created inside are named "<outer>/<scope>/<var>". With
        name_or_scope None, default_name is made unique within the graph (first use "name", then "name_1", ...),
        as TF 1.x does."""
        parent = self._scope_stack[-1].name
        if name_or_scope is None:
            if default_name is None:
                raise TypeError("variable_scope: neither name_or_scope nor default_name")
            base = (parent + "/" if parent else "") + default_name
            n = self._used_scope_names.get(base, 0)
            self._used_scope_names[base] = n + 1
            full = base if n == 0 else "%s_%d" % (base, n)
        else:
            full = (parent + "/" if parent else "") + str(name_or_scope)
        scope = _VariableScope(full, reuse=bool(reuse) or self._scope_stack[-1].reuse)
        self._scope_stack.append(scope)
        try:
            yield scope
        finally:
            self._scope_stack.pop()

    def get_variable_scope(self):
        """tf.get_variable_scope: the current scope (.name, .reuse False outside a reusing scope)."""
        return self._scope_stack[-1]

    def get_variable(self, name, shape=None, dtype=None, initializer=None, **kwargs):
        """tf.get_variable(name, shape): the variable "<current scope>/<name>". Here its value is the table the
        generator supplies under that full name (the value a trained checkpoint would hold); default dtype
        float32; the supplied table must have the requested shape."""
        scope = self._scope_stack[-1].name
        full = (scope + "/" if scope else "") + name
        self.requested.append((full, None if shape is None else [_int(s) for s in shape]))
        if full not in self._variables:
            raise KeyError("t2t asked for variable %r; supplied: %s" % (full, sorted(self._variables)))
        val = _t(self._variables[full])
        if val.dtype != np.dtype(dtype or np.float32):
            raise TypeError("variable %s: %s" % (full, val.dtype))
        if shape is not None and list(val.shape) != [_int(s) for s in shape]:
            raise ValueError("variable %s: supplied %s, t2t asks for %s" % (full, val.shape, list(shape)))
        return val

    # -- tf.nn ---------------------------------------------------------------------------------------------------
    def _softmax(self, logits, axis=None, name=None, dim=None):
        """tf.nn.softmax(logits): over the last axis (axis/dim None -> -1), in the logits' dtype (float32). The
        form is TF's Eigen functor (%s): e = exp(logits - max(logits)); softmax = e * (1 / sum(e)); evaluated with
        NumPy float32 exp and sum. Records its input (the pre-softmax logits)."""
        logits = _t(logits)
        ax = -1 if axis is None and dim is None else _int(axis if axis is not None else dim)
        if ax not in (-1, logits.ndim - 1):
            raise NotImplementedError("softmax over a non-last axis")
        if logits.dtype != np.float32:
            raise TypeError("softmax: %s" % logits.dtype)
        self.softmax_inputs.append(np.array(logits.view(np.ndarray), copy=True))
        x = logits.view(np.ndarray)
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        inv = np.float32(1) / e.sum(axis=-1, keepdims=True, dtype=np.float32)
        out = e * inv
        assert out.dtype == np.float32
        return out.view(Tensor)
    _softmax.__doc__ = _softmax.__doc__ % SOFTMAX_CITE

    def _dropout(self, x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
        """tf.nn.dropout(x, keep_prob) (TF 1.x argument order): with keep_prob 1.0 (rate 0) it returns x unchanged
        (nn_ops.dropout's fast path); any other rate is refused here (the cases use dropout_rate 0.0)."""
        if rate is None:
            rate = 1.0 - keep_prob
        if float(rate) != 0.0:
            raise NotImplementedError("dropout with rate %r" % rate)
        return _t(x)


def shim_shape_list(x):
    """Used only when no common_layers.py is given: TF's static shape as a list (every dimension known here)."""
    return list(_t(x).shape)


# ----------------------------------------------------------------------------------------------------------------
# Loading t2t's functions from their source text.
# ----------------------------------------------------------------------------------------------------------------

def load_functions(path, names, ns, manifest, rel):
    text = open(path, encoding="utf-8").read()
    tree = ast.parse(text)
    nodes = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    missing = [n for n in names if n not in nodes]
    if missing:
        sys.exit("%s: not found: %s" % (path, missing))
    for name in names:
        node = nodes[name]
        src = ast.get_source_segment(text, node, padded=True)
        sha = hashlib.sha256(src.encode()).hexdigest()
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        manifest["sources"][name] = {
            "repo": "%s@%s" % (REPO, COMMIT), "file": rel, "given_file": os.path.basename(path),
            "given_file_sha256": hashlib.sha256(text.encode()).hexdigest(),
            "line": first, "end_line": node.end_lineno, "sha256": sha,
            "matches_text_at_commit": EXPECTED_SHA256.get(name) == sha if name in EXPECTED_SHA256 else None,
            "signature": None}
        # Compile the function's own text with its own line numbers (tracebacks point into the given file).
        mod = ast.parse(src)
        ast.increment_lineno(mod, first - 1)
        exec(compile(mod, path, "exec"), ns)
        manifest["sources"][name]["signature"] = str(inspect.signature(ns[name]))
    return tree


def find_query_scaling(tree):
    """Where the given common_attention.py's multihead_attention scales q (only when the whole file is given):
    the statement's text and line, for the manifest. Not executed."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "multihead_attention":
            for sub in ast.walk(node):
                if (isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name) and sub.target.id == "q"
                        and isinstance(sub.op, ast.Mult)):
                    return {"statement": ast.unparse(sub), "line": sub.lineno}
            return {"statement": None, "line": None}
    return None


# ----------------------------------------------------------------------------------------------------------------
# Cases.
# ----------------------------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--common-attention", required=True, help="%s at %s (or an excerpt)" % (CA_FILE, COMMIT[:8]))
    ap.add_argument("--common-layers", help="%s at %s (or an excerpt holding shape_list)" % (CL_FILE, COMMIT[:8]))
    ap.add_argument("out")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)

    blas = None
    for p in ("/etc/alternatives/libblas.so.3-x86_64-linux-gnu", "/etc/alternatives/libblas.so.3"):
        if os.path.exists(p):
            blas = os.path.realpath(p)
            break
    manifest = {
        "generator": "properties/heldout/generate_t2t.py", "python": platform.python_version(),
        "numpy": np.__version__, "blas": blas, "cpu": platform.machine(), "blas_threads": 1,
        "seed": SEED,
        "arithmetic": ("tensor2tensor's function bodies run unchanged on a NumPy stand-in for TF 1.x (TFStandIn). "
                       "Integer outputs are exactly t2t's. Float outputs are t2t's composition of ops evaluated "
                       "in NumPy float32 (OpenBLAS sgemm, NumPy exp/sum), not TF's Eigen kernels bit for bit. "
                       "Softmax form: " + SOFTMAX_CITE + "."),
        "sources": {}, "stubs": {
            "common_layers.should_generate_summaries": "returns False (only gates a tf.summary image)",
            "attention_image_summary": "no-op (summary side effect only); not reached (make_image_summary=False)",
            "harden_attention_weights": "raises; only reached with hard_attention_k > 0 (never here)",
            "tf.nn.dropout": "identity at keep_prob 1.0; anything else refused"},
        "glue": {"mha_scale": ("multihead_attention (common_attention.py at %s): key_depth_per_head = "
                               "total_key_depth // num_heads; if not vars_3d: q *= key_depth_per_head**-0.5, "
                               "before calling dot_product_attention_relative(q, k, v, bias, "
                               "max_relative_position, dropout_rate, image_shapes, ..., cache=cache is not None, "
                               "allow_memory=recurrent_memory is not None). Applied here as q_in * "
                               "float32(depth**-0.5) in the cases marked scale=mha." % COMMIT[:8])},
        "cases": [], "observations": []}

    tf = TFStandIn()
    cl = types.ModuleType("common_layers_standin")
    cl.should_generate_summaries = lambda: False
    summaries = []
    ns = {"tf": tf, "common_layers": cl, "np": np, "__name__": "t2t_common_attention",
          "attention_image_summary": lambda attn, image_shapes=None: summaries.append(1)}

    def harden_attention_weights(*args, **kwargs):
        raise NotImplementedError("hard attention is not part of these cases")
    ns["harden_attention_weights"] = harden_attention_weights

    if a.common_layers:
        cl_ns = {"tf": tf, "np": np, "__name__": "t2t_common_layers"}
        load_functions(a.common_layers, CL_FUNCS, cl_ns, manifest, CL_FILE)
        cl.shape_list = cl_ns["shape_list"]
    else:
        cl.shape_list = shim_shape_list
        manifest["stubs"]["common_layers.shape_list"] = "shim (no common_layers.py given): the static shape"
    ca_tree = load_functions(a.common_attention, CA_FUNCS, ns, manifest, CA_FILE)
    found = find_query_scaling(ca_tree)
    manifest["glue"]["mha_scale_in_given_file"] = (
        found if found is not None else "multihead_attention not in the given file (an excerpt)")

    rel_matrix = ns["_generate_relative_positions_matrix"]
    rel_emb = ns["_generate_relative_positions_embeddings"]
    attn = ns["dot_product_attention_relative"]
    params = inspect.signature(rel_matrix).parameters
    if not ("length_q" in params and "length_k" in params and "cache" in params):
        # Older t2t (e.g. 2017/early 2018) has _generate_relative_positions_matrix(length, max_relative_position):
        # one length, no cached form. These cases are written for the later form.
        sys.exit("%s: _generate_relative_positions_matrix%s lacks length_q/length_k/cache; use %s@%s"
                 % (a.common_attention, inspect.signature(rel_matrix), REPO, COMMIT))
    for need in ("cache", "allow_memory"):
        if need not in inspect.signature(attn).parameters:
            sys.exit("%s: dot_product_attention_relative has no %r argument; use %s@%s"
                     % (a.common_attention, need, REPO, COMMIT))

    rng = np.random.default_rng(SEED)

    def save(name, arr, dtype, **info):
        arr = np.ascontiguousarray(np.asarray(arr).view(np.ndarray))
        if arr.dtype != dtype:
            raise TypeError("%s: %s, expected %s" % (name, arr.dtype, np.dtype(dtype)))
        np.save(os.path.join(a.out, name + ".npy"), arr)
        return {"file": name + ".npy", "dtype": str(arr.dtype), "shape": list(arr.shape), **info}

    def table(k, depth):
        """A [2k+1, depth] float32 table drawn like TF1's default get_variable initializer (glorot_uniform)."""
        lim = np.sqrt(6.0 / (2 * k + 1 + depth))
        return rng.uniform(-lim, lim, size=(2 * k + 1, depth)).astype(np.float32)

    def normal(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    # 1. _generate_relative_positions_matrix --------------------------------------------------------------------
    for (lq, lk, k) in [(8, 8, 2), (5, 13, 3), (13, 13, 16), (1, 1, 4), (64, 64, 8), (13, 5, 3)]:
        tf.reset({})
        m = np.asarray(rel_matrix(lq, lk, k))
        note = None
        if lq > lk:
            note = ("Lq > Lk: t2t slices range(Lk)[-Lq:], which is all Lk positions, so the matrix is [Lk, Lk] "
                    "(%s), not [Lq, Lk]; no error is raised" % list(m.shape))
            manifest["observations"].append("_generate_relative_positions_matrix(13, 5, 3): " + note)
        manifest["cases"].append(save(
            "t2t_relpos_matrix_lq%d_lk%d_k%d" % (lq, lk, k), m, np.int32,
            function="_generate_relative_positions_matrix", length_q=lq, length_k=lk, max_relative_position=k,
            cache=False, **({"note": note} if note else {})))
    for (lq, lk, k) in [(1, 9, 3), (1, 40, 16)]:
        tf.reset({})
        m = np.asarray(rel_matrix(lq, lk, k, cache=True))
        # dot_product_attention_relative passes length_q = length_k in the cached form; t2t ignores length_q.
        tf.reset({})
        m2 = np.asarray(rel_matrix(lk, lk, k, cache=True))
        tf.reset({})
        full = np.asarray(rel_matrix(lk, lk, k, cache=False))
        manifest["cases"].append(save(
            "t2t_relpos_matrix_cache_lk%d_k%d" % (lk, k), m, np.int32,
            function="_generate_relative_positions_matrix", length_q=lq, length_k=lk,
            max_relative_position=k, cache=True,
            same_with_length_q_equal_length_k=bool(np.array_equal(m, m2)),
            equals_last_row_of_uncached_lk_by_lk=bool(np.array_equal(m[0], full[-1]))))

    # 2. _generate_relative_positions_embeddings ----------------------------------------------------------------
    emb_cases = [(8, 8, 4, 2, False), (5, 13, 6, 3, False), (1, 9, 4, 3, True)]
    for (lq, lk, depth, k, cache) in emb_cases:
        tab = table(k, depth)
        tf.reset({"relative_positions_keys/embeddings": tab})
        e = rel_emb(lq, lk, depth, k, "relative_positions_keys", cache=cache)
        stem = "t2t_relpos_emb_%slq%d_lk%d_d%d_k%d" % ("cache_" if cache else "", lq, lk, depth, k)
        manifest["cases"].append({
            "function": "_generate_relative_positions_embeddings",
            "args": {"length_q": lq, "length_k": lk, "depth": depth, "max_relative_position": k,
                     "name": "relative_positions_keys", "cache": cache},
            "variables_requested": tf.requested,
            "files": [save(stem + "_table", tab, np.float32, role="embeddings table supplied for "
                           "relative_positions_keys/embeddings, [2k+1, depth]"),
                      save(stem + "_index", tf.gather_indices[0], np.int32, role="indices t2t gathered"),
                      save(stem + "_emb", e, np.float32, role="returned embeddings [Lq or 1, Lk, depth]")]})

    # 3. dot_product_attention_relative -------------------------------------------------------------------------
    scope = "dot_product_attention_relative"

    def run_attention(stem, lq, lk, depth, k, scale, cache=False, allow_memory=False, heads=2):
        q_in, kk, vv = normal(1, heads, lq, depth), normal(1, heads, lk, depth), normal(1, heads, lk, depth)
        tk, tv = table(k, depth), table(k, depth)
        q = q_in * np.float32(depth ** -0.5) if scale == "mha" else q_in
        tf.reset({scope + "/relative_positions_keys/embeddings": tk,
                  scope + "/relative_positions_values/embeddings": tv})
        kwargs = dict(dropout_rate=0.0, image_shapes=None, save_weights_to=None, name=None,
                      make_image_summary=False, cache=cache, allow_memory=allow_memory)
        out = attn(Tensor(q), Tensor(kk), Tensor(vv), None, k, **kwargs)
        assert len(tf.softmax_inputs) == 1 and len(tf.gather_indices) == 2
        files = []
        if scale == "mha":
            files.append(save(stem + "_q_in", q_in, np.float32, role="queries before multihead_attention's scaling"))
        files += [
            save(stem + "_q", q, np.float32, role="q as passed to dot_product_attention_relative [b, h, Lq, d]"),
            save(stem + "_k", kk, np.float32, role="k [b, h, Lk, d]"),
            save(stem + "_v", vv, np.float32, role="v [b, h, Lk, d]"),
            save(stem + "_keys_table", tk, np.float32, role=scope + "/relative_positions_keys/embeddings"),
            save(stem + "_values_table", tv, np.float32, role=scope + "/relative_positions_values/embeddings"),
            save(stem + "_index", tf.gather_indices[0], np.int32,
                 role="relative-position index matrix t2t gathered both tables with (keys and values alike)"),
            save(stem + "_logits", tf.softmax_inputs[0], np.float32, role="input of tf.nn.softmax [b, h, Lq, Lk]"),
            save(stem + "_output", out, np.float32, role="returned output [b, h, Lq, d]")]
        assert np.array_equal(tf.gather_indices[0], tf.gather_indices[1])
        manifest["cases"].append({
            "function": "dot_product_attention_relative", "scale": scale,
            "geometry": {"batch": 1, "heads": heads, "length_q": lq, "length_k": lk, "depth": depth,
                         "max_relative_position": k},
            "args": {"bias": None, "max_relative_position": k, **kwargs},
            "variables_requested": tf.requested, "files": files})

    run_attention("t2t_attn_l16_d8_k3_raw", 16, 16, 8, 3, "raw")
    run_attention("t2t_attn_l16_d8_k3_mha", 16, 16, 8, 3, "mha")
    run_attention("t2t_attn_l40_d16_k8_mha", 40, 40, 16, 8, "mha")
    run_attention("t2t_attn_memory_lq5_lk12_d8_k4_mha", 5, 12, 8, 4, "mha", allow_memory=True)
    run_attention("t2t_attn_cache_lk9_d8_k3_mha", 1, 9, 8, 3, "mha", cache=True)

    # Lq < Lk without allow_memory / cache: what t2t does (the shape assertion).
    try:
        tf.reset({scope + "/relative_positions_keys/embeddings": table(4, 8),
                  scope + "/relative_positions_values/embeddings": table(4, 8)})
        attn(Tensor(normal(1, 2, 5, 8)), Tensor(normal(1, 2, 12, 8)), Tensor(normal(1, 2, 12, 8)), None, 4,
             make_image_summary=False)
        manifest["observations"].append("Lq 5 < Lk 12 without allow_memory ran without error")
    except ValueError as e:
        manifest["observations"].append(
            "dot_product_attention_relative with q of length 5 against k, v of length 12, cache=False, "
            "allow_memory=False raises ValueError(%r) from q.get_shape().assert_is_compatible_with(k.get_shape()): "
            "unequal lengths are supported only with allow_memory=True (recurrent memory; the extra keys precede "
            "the queries) or cache=True (one query, the last position)" % str(e))
    manifest["image_summaries_made"] = len(summaries)

    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print("wrote %d cases to %s" % (len(manifest["cases"]), a.out))


if __name__ == "__main__":
    main()
