"""posenc: positional encodings for transformers, proved against MPFR oracles — from Python.

Every command of the `posenc` program, run in this process over NumPy arrays (no files, no subprocess): the same
presets, specs, checks, envelopes, errors and numbers as the program, bit for bit (the module runs the program's
own driver, cli/run.hpp)::

    import posenc
    r = posenc.check("rope", cache, preset="hf-llama", regime="hf", form="hf")
    assert r.passed, r.summary()
    posenc.identify(cache)                          # which convention (any scheme with identify) is this?
    cos_sin = posenc.table("rope", positions=np.arange(131072), config="config.json")
    posenc.apply("rope", q, positions, preset="gpt-neox", inplace=True)

Keyword arguments are the command's flags with '_' for '-' (``head_dim=128`` is ``--head-dim 128``; ``posenc
<verb> <scheme> --help`` and :func:`options` list them). Values: numbers and strings as typed; True/False for
flags; position and id lists as a sequence, ``range`` or integer array (sent as runs, ``0:131072``); spec lists
(``short_factor``) as a sequence; a FILE flag takes a path, a dict (JSON: ``spec=``, ``config=``, FIRE's
``weights=``) or an array (``tokens_file=``, ``mask_file=``).

Arrays in: NumPy arrays, or anything with ``__array__`` / ``__dlpack__`` (CPU torch tensors), C-contiguous,
f16 / f32 / f64 (bf16 as its uint16 bit patterns with ``in_dtype="bf16"``; integers where ids and masks are read);
they are read in place: never copied, never converted to another type first. Arrays out: the command's result, a
NumPy array that owns the memory the command wrote (bf16 results as uint16 bit patterns). check and identify
return a :class:`Report`. Errors raise ValueError (a bad argument: the message names it, its value and what is
accepted), OSError (a file), MemoryError; never an abort of the interpreter. The GIL is released while a command
computes; ``threads=`` (where a command has it) follows the library's settings (OMP_NUM_THREADS by default).
"""
import json as _json
import os as _os
import re as _re
from keyword import iskeyword as _iskeyword

import numpy as _np

from . import _posenc

__all__ = ["table", "freqs", "index", "bias", "ids", "apply", "scores", "check", "identify", "shift", "command",
           "options", "schemes", "info", "Report", "CommandError"]

_REPORT_VERBS = ("check", "identify")


class CommandError(RuntimeError):
    """A failure of a command that is neither a bad argument nor a file (status and message of the program)."""


class Report:
    """What check / identify found: the fields of the program's ``--format json`` report (as attributes and
    items: ``verdict``, ``budget_row``, ``references``, ...), ``passed`` (the verdict, as the program's exit
    status 0) and :meth:`summary` (the program's Markdown report: the budget rows, the worst entries, the verdict).
    """

    def __init__(self, verb, scheme, fields, markdown, status):
        self.verb, self.scheme, self.fields, self._markdown, self.status = verb, scheme, fields, markdown, status

    @property
    def passed(self):
        return self.status == 0

    def __bool__(self):
        return self.passed

    def summary(self):
        return self._markdown

    def __getitem__(self, key):
        return self.fields[key]

    def __contains__(self, key):
        return key in self.fields

    def __getattr__(self, name):
        fields = self.__dict__.get("fields", {})
        if name in fields:
            return fields[name]
        raise AttributeError(f"{type(self).__name__} of {self.__dict__.get('verb')} has no field {name!r}; "
                             f"fields: {', '.join(fields)}")

    def to_dict(self):
        return dict(self.fields)

    def __repr__(self):
        what = self.fields.get("verdict", "")
        return f"<posenc.Report {self.verb} {self.scheme}: {what or ('pass' if self.passed else 'fail')}>"


# ---- the verbs ---------------------------------------------------------------------------------------------------

def table(scheme, **kwargs):
    """Rows per position: encoding tables and caches (``posenc table <scheme>``)."""
    return command("table", scheme, **kwargs)


def freqs(scheme, **kwargs):
    """The frequency vector (``posenc freqs <scheme>``)."""
    return command("freqs", scheme, **kwargs)


def index(scheme, **kwargs):
    """Integer relative index or bucket matrices (``posenc index <scheme>``)."""
    return command("index", scheme, **kwargs)


def bias(scheme, **kwargs):
    """Per-head additive attention biases (``posenc bias <scheme>``)."""
    return command("bias", scheme, **kwargs)


def ids(scheme="learned", **kwargs):
    """Position ids of tokens under an id map (``posenc ids learned``)."""
    return command("ids", scheme, **kwargs)


def shift(scheme="sinusoidal", **kwargs):
    """The shift verb of the sinusoidal scheme (``posenc shift sinusoidal``)."""
    return command("shift", scheme, **kwargs)


def apply(scheme, x, positions=None, *, inplace=False, **kwargs):
    """Transform tensor ``x`` (``posenc apply <scheme> --in x``): the result, a new array; with ``inplace=True``
    written back into ``x`` (which must be writable and of the result's type) and ``x`` returned."""
    if inplace:
        x = _host_array("x", x)
        if not x.flags.writeable:
            raise ValueError("x: inplace=True needs a writable array; accepted: a writable C-contiguous array")
    out = command("apply", scheme, in_=x, positions=positions, _names={"--in": "x"}, **kwargs)
    if not inplace:
        return out
    if out.dtype != x.dtype or out.shape != x.shape:
        raise ValueError(f"x: inplace=True but the result is {out.dtype}{list(out.shape)} and x is "
                         f"{x.dtype}{list(x.shape)}; accepted: leave dtype= as the input's (the default)")
    x[...] = out
    return x


def scores(scheme, q, k, **kwargs):
    """Pre-softmax attention scores from queries q and keys k (``posenc scores <scheme> --q --k``)."""
    return command("scores", scheme, q=q, k=k, **kwargs)


def check(scheme, array, **kwargs):
    """Verify your own numbers against the MPFR oracle, per budget row and emulation envelope
    (``posenc check <scheme> --in``): a :class:`Report`."""
    return command("check", scheme, in_=array, _names={"--in": "array"}, **kwargs)


def identify(array, scheme=None, **kwargs):
    """Say which convention an array follows, or the nearest one and where it differs (``posenc identify``): a
    :class:`Report` (``passed``: one convention matched within its budget). Without ``scheme``, every scheme that
    has identify is asked (those whose shapes the array cannot have are skipped): the first match, else the
    nearest candidate over all of them (the smallest ``max_scaled_ulp_fast``)."""
    if scheme is not None:
        return command("identify", scheme, in_=array, _names={"--in": "array"}, **kwargs)
    array = _host_array("array", array)
    reports, errors = [], []
    for s in schemes():
        if "identify" not in s["verbs"]:
            continue
        try:
            r = command("identify", s["name"], in_=array, _names={"--in": "array"}, **kwargs)
        except ValueError as e:  # a shape this scheme's numbers never have
            errors.append(f"{s['name']}: {e}")
            continue
        if r.passed:
            return r
        reports.append(r)
    if not reports:
        raise ValueError("array: no scheme's identify takes it: " + "; ".join(errors))

    def nearest(r):
        c = r.fields.get("candidates") or [{}]
        d = c[0].get("max_scaled_ulp_fast")
        return float("inf") if d is None else d

    return min(reports, key=nearest)


# ---- the generic driver ------------------------------------------------------------------------------------------

def command(verb, scheme, *, _names=None, **kwargs):
    """``posenc <verb> <scheme>`` with keyword arguments as flags (``in_=`` for ``--in``). Array verbs return the
    result as an array (or, with ``format="json"`` / ``"csv"``, the program's document: a dict / the text);
    check and identify a :class:`Report`; with ``out=PATH`` the program writes the file and this returns None."""
    names = dict(_names or {})
    args, arrays, texts = [verb, scheme], {}, {}
    user_out = kwargs.get("out") is not None
    fmt = kwargs.pop("format", None)
    for key, value in kwargs.items():
        if value is None:
            continue
        args += _flag_args(verb, scheme, key, value, arrays, texts, names)
    report = verb in _REPORT_VERBS
    if not user_out:
        args += ["--format", fmt or ("json" if report else "npy"), "--out", "<out>"]
    elif fmt:
        args += ["--format", fmt]
    result = _posenc.run(args, arrays, texts)
    if result["failure"] != "none":
        _raise(result, names)
    if report:
        text = result["outputs"].get("<out>")
        fields = _json.loads(bytes(text)) if text is not None and (fmt or "json") == "json" else {}
        return Report(verb, scheme, fields, result["markdown"], result["status"])
    if user_out:
        return None
    data = result["outputs"]["<out>"]
    if fmt == "json":
        return _json.loads(bytes(data))
    if fmt == "csv":
        return bytes(data).decode()
    return _npy_view(data)


def options(verb, scheme):
    """The keyword arguments of ``posenc <verb> <scheme>``: {name: (flag, type, default, takes_value)}."""
    return {_keyword(flag): (flag, typ, default, takes) for flag, typ, default, takes in _options(verb, scheme)}


def schemes():
    """Every scheme, its presets, parameters and verbs (``posenc list --format json``)."""
    return _document(["list", "--format", "json"])["schemes"]


def info():
    """The build, SIMD target, BLAS core and threads (``posenc info --format json``)."""
    return _document(["info", "--format", "json"])


def _document(args):
    result = _posenc.run(args, {}, {})
    if result["failure"] != "none":
        _raise(result, {})
    return _json.loads(bytes(result["outputs"]["-"]))


# ---- keyword arguments to flags ----------------------------------------------------------------------------------

_OPTIONS = {}


def _options(verb, scheme):
    key = (verb, scheme)
    if key not in _OPTIONS:
        _OPTIONS[key] = _posenc.options(verb, scheme)
    return _OPTIONS[key]


def _keyword(flag):
    name = flag[2:].replace("-", "_")
    return name + "_" if _iskeyword(name) else name  # in_ for --in


def _flag_args(verb, scheme, key, value, arrays, texts, names):
    flag = "--" + key.rstrip("_").replace("_", "-")
    known = {f: (t, d, v) for f, t, d, v in _options(verb, scheme)}
    if flag not in known:
        accepted = ", ".join(sorted(_keyword(f) for f in known))
        raise TypeError(f"{verb}({scheme!r}): unexpected keyword argument {key!r} (no {flag}); accepted: {accepted}")
    typ, default, takes_value = known[flag]
    name = names.setdefault(flag, key.rstrip("_"))
    if not takes_value:
        if not isinstance(value, (bool, _np.bool_)):
            raise ValueError(f"{name}: {value!r} is not a flag value; accepted: True or False")
        if value:
            return [flag]
        return [flag + "=false"] if default == "true" else []
    return [flag, _value_text(flag, typ, name, value, arrays, texts)]


def _value_text(flag, typ, name, value, arrays, texts):
    if typ == "FILE":
        if isinstance(value, (str, _os.PathLike)):
            return _os.fspath(value)
        handle = f"<{name}>"
        if isinstance(value, dict):
            texts[handle] = _json.dumps(value)
        else:
            arrays[handle] = _host_array(name, value)
        return handle
    if isinstance(value, (bool, _np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (str, int, float, _np.integer, _np.floating)):
        return _number_text(value)
    if typ.startswith("["):  # a spec's list field: [a,b,...]
        return "[" + ",".join(_number_text(v) for v in _np.asarray(value).ravel().tolist()) + "]"
    items = _np.asarray(value)
    if typ == "BITS":
        return "".join(str(int(b)) for b in items.ravel())
    if items.dtype.kind in "iu":
        return _runs_text(name, items)
    return ",".join(_number_text(v) for v in items.ravel().tolist())


def _number_text(v):
    if isinstance(v, (float, _np.floating)):
        return repr(float(v))  # the shortest text that reads back to the same double
    return str(v)


def _runs_text(name, values):
    """An integer list as the command line's position syntax: maximal arithmetic runs a:b:step, single items p."""
    v = values.ravel().astype(_np.int64)
    if v.size == 0:
        raise ValueError(f"{name}: an empty list; accepted: at least one integer")
    items, i, n = [], 0, v.size
    d = _np.diff(v)
    while i < n:
        if i + 1 < n and d[i] != 0:
            step = d[i]
            breaks = _np.flatnonzero(d[i:] != step)
            j = i + 1 + (int(breaks[0]) if breaks.size else n - 1 - i)  # one past the run's last item
            if j - i >= 3:
                items.append(f"{v[i]}:{v[j - 1] + step}" + ("" if step == 1 else f":{step}"))
                i = j
                continue
        items.append(str(v[i]))
        i += 1
    return ",".join(items)


def _host_array(name, value):
    """The caller's array as NumPy sees it, never copied: an ndarray, ``__array__`` or ``__dlpack__``."""
    if isinstance(value, _np.ndarray):
        a = value
    elif str(getattr(value, "dtype", "")) == "torch.bfloat16":  # NumPy has no bfloat16: its bit patterns, in place
        import torch
        a = _np.asarray(value.view(torch.int16)).view(_np.uint16)
    elif hasattr(value, "__array__"):
        a = _np.asarray(value)
    elif hasattr(value, "__dlpack__"):
        a = _np.from_dlpack(value)
    elif isinstance(value, (list, tuple)):
        a = _np.asarray(value)
    else:
        raise ValueError(f"{name}: {type(value).__name__} is not an array; accepted: a NumPy array, an object with "
                         f"__array__ or __dlpack__, a nested list, or a path")
    if not a.flags.c_contiguous:
        raise ValueError(f"{name}: a non-contiguous array (shape {a.shape}, strides {a.strides} bytes); accepted: a "
                         f"C-contiguous array (numpy.ascontiguousarray({name}) makes one; posenc does not copy it "
                         f"silently)")
    return a


def _npy_view(data):
    """The array in .npy bytes the command wrote, as a view of those bytes (the array owns them)."""
    header_length = int(data[8]) | int(data[9]) << 8
    header = bytes(data[10:10 + header_length]).decode("latin1")
    descr = _re.search(r"'descr': '([^']+)'", header).group(1)
    shape = tuple(int(x) for x in _re.search(r"'shape': \(([^)]*)\)", header).group(1).replace(",", " ").split())
    return data[10 + header_length:].view(_np.dtype(descr)).reshape(shape)


# ---- errors ------------------------------------------------------------------------------------------------------

def _raise(result, names):
    """The command's one-line error as a Python exception; the first flag it names that came from a keyword
    argument is shown as that argument (``head_dim (--head-dim) = 7 is odd; ...``)."""
    message = result["error"]
    for m in _re.finditer(r"--[a-z0-9-]+", message):
        if m.group(0) in names:
            message = f"{message[:m.start()]}{names[m.group(0)]} ({m.group(0)}){message[m.end():]}"
            break
    for name in set(names.values()):  # an array or JSON value given as an argument is named as that argument
        message = message.replace(f" <{name}>:", "").replace(f"'<{name}>'", f"the {name} given")
    kind = result["failure"]
    if kind == "usage":
        raise ValueError(message)
    if kind == "memory" or (kind == "io" and "more than this machine's memory" in message):
        raise MemoryError(message)
    if kind == "io":
        if "'<" in message:  # about one of the caller's arrays or JSON values, not a file
            raise ValueError(message)
        raise OSError(message)
    raise CommandError(message)
