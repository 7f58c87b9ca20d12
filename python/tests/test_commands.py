"""Every verb x scheme: the module's result is the program's, bit for bit.

The commands come from `posenc list` (every scheme, every verb it has); their arguments from each command's
`Example:` lines in --help (those that read no file) and from the scheme folder's cli_bases.json (the commands that
read files, with how their inputs are made) — so a scheme that lands later is covered with no change here. For each,
the program writes .npy (arrays) or JSON (check, identify) and the module is called with the same flags as keyword
arguments, its input files given as arrays (.npy) or dicts (.json): results must have the same dtype, shape and
bytes; reports the same fields (the input's name aside) and the same verdict.
"""
import glob
import json
import os
import shlex
import shutil
import subprocess

import numpy as np
import pytest

import posenc

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def load_bases():
    bases = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "schemes", "*", "cli_bases.json"))):
        scheme = os.path.basename(os.path.dirname(path))
        with open(path) as f:
            for verb, b in json.load(f)["bases"].items():
                bases[(verb, scheme)] = (b["args"], b["inputs"])
    return bases


def help_examples(verb, scheme):
    text = posenc._posenc.run([verb, scheme, "--help"], {}, {})["out"]
    return [shlex.split(line.split("Example:", 1)[1])[3:] for line in text.splitlines()
            if line.startswith("Example: posenc ")]


def strip_output_flags(args):
    out = list(args)
    for flag in ("--format", "--out"):
        while flag in out:
            i = out.index(flag)
            del out[i:i + 2]
    return out


def cases():
    bases = load_bases()
    found = []
    for s in posenc.schemes():
        for verb in s["verbs"]:
            scheme = s["name"]
            file_flags = {flag for flag, typ, _, _ in posenc.options(verb, scheme).values()
                          if typ == "FILE" and flag != "--out"}
            n = 0
            for i, example in enumerate(help_examples(verb, scheme)):
                if not any(a.split("=")[0] in file_flags for a in example):
                    found.append(pytest.param(verb, scheme, strip_output_flags(example), {}, id=f"{verb}-{scheme}-ex{i}"))
                    n += 1
            if (verb, scheme) in bases:
                args, inputs = bases[(verb, scheme)]
                found.append(pytest.param(verb, scheme, strip_output_flags(args), inputs, id=f"{verb}-{scheme}-base"))
                n += 1
            if n == 0:
                found.append(pytest.param(verb, scheme, None, None, id=f"{verb}-{scheme}-none"))
    return found


def make_inputs(cli, cwd, inputs):
    rng = np.random.default_rng(1)
    for name, how in inputs.items():
        if "fixture" in how:
            shutil.copy(os.path.join(ROOT, "cli", "tests", how["fixture"]), os.path.join(cwd, name))
        elif "shape" in how:
            np.save(os.path.join(cwd, name), rng.uniform(-1, 1, how["shape"]).astype(np.float32))
        else:
            subprocess.run([cli] + how["posenc"] + ["--out", name], cwd=cwd, check=True, capture_output=True)


def as_keywords(verb, scheme, args, cwd):
    """The command line's flags as keyword arguments; files in cwd as the arrays / dicts they hold."""
    by_flag = {flag: (name, typ, takes) for name, (flag, typ, _, takes) in posenc.options(verb, scheme).items()}
    kwargs, i = {}, 0
    while i < len(args):
        flag, _, value = args[i].partition("=")
        name, typ, takes = by_flag[flag]
        if takes and not value:
            value, i = args[i + 1], i + 1
        elif not takes:
            value = value != "false" if value else True
        path = os.path.join(cwd, value) if isinstance(value, str) else ""
        if typ == "FILE" and os.path.isfile(path):
            value = np.load(path) if path.endswith(".npy") else json.load(open(path))
        kwargs[name] = value
        i += 1
    return kwargs


def without_file_names(doc, files):
    """A report's fields with the names of its inputs as one placeholder (a file for the program, the argument's
    name for the module)."""
    if isinstance(doc, dict):
        return {k: without_file_names(v, files) for k, v in doc.items()}
    if isinstance(doc, list):
        return [without_file_names(v, files) for v in doc]
    if isinstance(doc, str) and (doc in files or (doc.startswith("<") and doc.endswith(">"))):
        return "<input>"
    return doc


@pytest.mark.parametrize("verb,scheme,args,inputs", cases())
def test_module_equals_program(verb, scheme, args, inputs, tmp_path, posenc_cli):
    assert args is not None, f"{verb} {scheme}: no --help Example: without files and no cli_bases.json entry"
    cwd = str(tmp_path)
    make_inputs(posenc_cli, cwd, inputs)
    report = verb in ("check", "identify")
    out = "out.json" if report else "out.npy"
    fmt = "json" if report else "npy"
    p = subprocess.run([posenc_cli, verb, scheme] + args + ["--format", fmt, "--out", out], cwd=cwd,
                       capture_output=True, text=True)
    assert p.returncode in ((0, 1) if report else (0,)), f"posenc {verb} {scheme} {shlex.join(args)}: {p.stderr}"
    kwargs = as_keywords(verb, scheme, args, cwd)
    got = posenc.command(verb, scheme, **kwargs)
    if report:
        expected = json.load(open(os.path.join(cwd, out)))
        assert without_file_names(got.fields, inputs) == without_file_names(expected, inputs)
        assert got.passed == (p.returncode == 0)
        assert got.summary().startswith(f"# posenc {verb} {scheme}")
    else:
        expected = np.load(os.path.join(cwd, out))
        assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
        assert got.tobytes() == expected.tobytes(), f"{verb} {scheme}: values differ from the program's"
