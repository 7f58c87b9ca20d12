#!/usr/bin/env python3
"""cli/tests/bad_inputs.py — every option of every `posenc <verb> <scheme>` command, given values it must refuse.

The commands and their options are not listed here: they come from `posenc list --format json` (schemes and
their verbs) and each command's `--help` (its options, their type and accepted range), so a scheme that lands
later is swept with no change to this file. For each option the values tried follow from its kind:

  integer    junk, a fraction, hex, trailing garbage, nan/inf, int64 overflow, non-ASCII digits, and the
             integers just outside the range its help states ("an integer in [a, b]");
  real       junk, nan, ±inf, overflow (1e999), a second decimal point, trailing garbage, and the reals just
             outside the stated range ("a real in (a, b]", "a finite real > a");
  choice     an unknown name, the empty string, two names at once;
  positions  malformed lists and ranges (reversed, zero or negative step, empty items, 2^41, overflow);
  spec list  (type [A,B,..]: a list field of a spec, e.g. rope's --short-factor) malformed lists, non-finite items,
             and lists the base's spec does not use;
  real list  (type LIST: one real per head, or one for all) the real junk, malformed lists (empty items, other
             separators, a bad item after a good one), the reals just outside the range its help states ("each a
             real in [a, b]"), and one value more than the base gives (when the base gives more than one);
  files      a missing file, a directory, a file of junk, an endless one (/dev/zero) (--in, --q, --k, --spec, rope's
             --config); --out into a missing directory and with an unknown extension;
  state_dict a FILE whose help says "state_dict" (FIRE's --weights JSON): also the base's file with one thing
             wrong (state_dict_junk: a missing key, NaN/Infinity, strings, ragged or mis-shaped tensors, values
             out of range, two modules in one file, not an object);
  flags      a value given to a flag that takes none.

Each must give exit status 1 or 2, nothing on stdout, exactly one stderr line `posenc: error: ...` that names
the option as the user typed it (and the value, when it is short and printable), and leave no output or
temporary file. Each command first runs once with valid arguments (its base), so a refusal is about the value.
Base commands: the command's own `Example:` line when it reads no file; for commands that read files, the
input files are made here from the scheme folder's cli_bases.json; a command with neither fails the test — add it
to schemes/<name>/cli_bases.json.

Usage: bad_inputs.py POSENC [--json FILE] [--sample K [--seed S]]
  --json    per-option counts and every failure, for the report
  --sample  K of each option's values (the same K for the same seed, default 0; every option still swept): the test
            command's bounded form (ctest cli.bad_inputs); without it every value (cli.bad_inputs.full, label
            "full": CI and the main job's --full run it)
Exit status 0 when every bad value was refused properly.
"""
import glob
import json
import os
import random
import re
import shlex
import struct
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

POSENC = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
JSON_OUT = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
SAMPLE = int(sys.argv[sys.argv.index("--sample") + 1]) if "--sample" in sys.argv else None
SEED = sys.argv[sys.argv.index("--seed") + 1] if "--seed" in sys.argv else "0"
OUT = "out.npy"


def write_npy(path, shape, seed=1):
    """A little-endian float32 .npy of the given shape with values in [-1, 1)."""
    n = 1
    for s in shape:
        n *= s
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else ""))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    x, vals = seed, []
    for _ in range(n):
        x = (x * 6364136223846793005 + 1442695040888963407) % 2**64
        vals.append((x >> 40) / 2**23 - 1.0)
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + struct.pack("<%df" % n, *vals))


# Commands that read files: their base arguments and how their inputs are made, from each scheme's folder
# (schemes/<name>/cli_bases.json: {"bases": {verb: {"args": [...], "inputs": {file: {"shape": [...]} | {"posenc":
# [...]} | {"fixture": path under cli/tests/}}}}}).
def load_bases() -> dict:
    bases = {}
    for path in sorted(glob.glob(os.path.join(HERE, "..", "..", "schemes", "*", "cli_bases.json"))):
        scheme = os.path.basename(os.path.dirname(path))
        with open(path) as f:
            for verb, b in json.load(f)["bases"].items():
                bases[(verb, scheme)] = (b["args"], b["inputs"])
    return bases


BASES = load_bases()


def state_dict_junk(fixture):
    """{file name: text} of FIRE state_dicts (the JSON of a --weights FILE whose help says "state_dict") that must
    be refused, each the fixture with one thing wrong: a missing key, non-finite values as Python's json.dump writes
    them, a string, ragged or mis-shaped tensors, out-of-range values, two modules in one file, not an object."""
    base = json.loads(fixture)

    def edit(fn):
        d = json.loads(fixture)
        fn(d)
        return json.dumps(d)

    w = len(base["mlp.0.bias"])
    return {
        "w-missing-c.json": edit(lambda d: d.pop("c")),
        "w-nan.json": edit(lambda d: d["mlp.0.bias"].__setitem__(1, float("nan"))),
        "w-inf.json": edit(lambda d: d.__setitem__("c", float("inf"))),
        "w-overflow.json": json.dumps(base).replace('"c": ', '"c": 1e999, "x": ', 1),
        "w-string.json": edit(lambda d: d["mlp.2.bias"].__setitem__(0, "0.1")),
        "w-bool.json": edit(lambda d: d.__setitem__("L_multiplier", True)),
        "w-null.json": edit(lambda d: d.__setitem__("init_L", None)),
        "w-two-values.json": edit(lambda d: d.__setitem__("c", [0.1, 0.2])),
        "w-ragged.json": edit(lambda d: d["mlp.2.weight"][1].pop()),
        "w-w1-cols.json": edit(lambda d: d.__setitem__("mlp.0.weight", [[0.5, 0.5]] * w)),
        "w-b1-short.json": edit(lambda d: d["mlp.0.bias"].pop()),
        "w-b2-long.json": edit(lambda d: d["mlp.2.bias"].append(0.0)),
        "w-w2-wide.json": edit(lambda d: [r.append(0.0) for r in d["mlp.2.weight"]]),
        "w-deep.json": edit(lambda d: d.__setitem__("mlp.0.bias", [[[0.1]]] * w)),
        "w-no-heads.json": edit(lambda d: (d.__setitem__("mlp.2.weight", []), d.__setitem__("mlp.2.bias", []))),
        "w-big.json": edit(lambda d: d["mlp.2.weight"][0].__setitem__(0, 1e7)),
        "w-init-l.json": edit(lambda d: d.__setitem__("init_L", 1e8)),
        "w-two-sets.json": json.dumps({**{"a." + k: v for k, v in base.items()},
                                       **{"b." + k: v for k, v in base.items()}}),
        "w-list.json": json.dumps([base]),
        "w-empty.json": "{}",
    }

INT_JUNK = ["", "abc", "1.5", "0x10", "12abc", "nan", "inf", "9223372036854775808", "-9223372036854775809",
            "1" + "0" * 30, "\u0661\u0662"]
REAL_JUNK = ["", "abc", "nan", "inf", "-inf", "1e999", "-1e999", "1.0.0", "5x", "0x"]
POSITION_JUNK = ["", "abc", "5:2", "0:4:0", "0:4:-1", "0,,2", "1:", ":", "-", "0:2199023255552", "2199023255552",
                 "0:99999999999999999999", "0:1e3", "1,2,x"]
CHOICE_JUNK = ["", "nosuch"]
LIST_JUNK = ["1,,2", ",", "1,", ",1", "1;2", "1 2", "1,abc", "1,2x", "1,nan", "1,-inf", "1,1e999"]


def parse_help(verb, scheme):
    """[(flag, type token, description)] of one command, from its --help."""
    text = subprocess.run([POSENC, verb, scheme, "--help"], capture_output=True, text=True).stdout
    opts, example = [], None
    for line in text.splitlines():
        if line.startswith("Example:"):
            example = shlex.split(line[len("Example:"):])[3:]  # drop "posenc verb scheme"
        m = re.match(r"^  (--[a-z0-9-]+)(\{[a-z]+\})?(?: ([^ ].*?))?(?:\s{2,}(.*))?$", line)
        if m and m.group(1) != "--help":
            typ = (m.group(3) or "").strip()
            excludes = re.findall(r"--[a-z0-9-]+", typ.split("Excludes:")[1]) if "Excludes:" in typ else []
            typ = typ.split(" Excludes:")[0].replace(" REQUIRED", "").strip()
            opts.append([m.group(1), typ, m.group(4) or "", excludes])
        elif opts and line.startswith(" " * 10) and not opts[-1][2]:
            opts[-1][2] = line.strip()  # a description on the line after a long option name
        elif opts and "Excludes:" in line:
            opts[-1][3] += re.findall(r"--[a-z0-9-]+", line.split("Excludes:")[1])
    return opts, example


def range_values(desc, integer):
    """Values just outside the range the help states, or [] when it states none that can be read (or states the
    range that applies only with another setting, "(only with --scaling yarn)": the base may not use the option,
    and then only its default is accepted)."""
    out = []
    if "(only with" in desc:
        return out
    if integer:
        m = re.search(r"an integer in \[(-?\d+), (-?\d+)\]", desc)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            out += [str(lo - 1), str(hi + 1)]
        return out
    m = re.search(r"a real in ([\[(])([-+0-9.e]+), ([-+0-9.e]+)([\])])", desc)
    if m:
        lo, hi = float(m.group(2)), float(m.group(3))
        out.append(repr(lo) if m.group(1) == "(" else repr(lo - max(abs(lo) * 1e-9, 1e-300)))
        out.append(repr(hi) if m.group(4) == ")" else repr(hi + max(abs(hi) * 1e-9, 1e-300)))  # hi = 0: still above
    m = re.search(r"a finite real > ([-+0-9.e]+)", desc)
    if m:
        out += [m.group(1), repr(float(m.group(1)) - 0.5)]
    m = re.search(r"FLOAT in \[([-+0-9.e]+) - ([-+0-9.e]+)\]", desc)  # CLI11's Range validator
    if m:
        out += [repr(float(m.group(1)) - 1), repr(float(m.group(2)) * 10)]
    return out


def bad_values(flag, typ, desc, format_from_extension):
    """(kind, [values]) for one option; kind None: not swept (documented in the JSON)."""
    both = typ + " " + desc
    if flag == "--out":
        return "output file", ["no/such/dir/x.npy"] + (["x.unknown-extension"] if format_from_extension else [])
    if typ == "FILE":
        return "input file", ["no-such-file.npy", ".", "junk.bin", "/dev/zero"]
    if flag.endswith("positions") or flag in ("--tokens", "--dynamic-calls"):
        return "positions", POSITION_JUNK
    if typ == "BITS":  # a 0/1 mask per key
        return "bits", ["", "abc", "0120", "2", ",,"]
    if typ == "LIST":  # reals, one per head or one for every head (main() adds a count the base's heads refuse)
        m = re.search(r"each (a real in [\[(][-+0-9.e]+, [-+0-9.e]+[\])])", desc)
        return "real list", REAL_JUNK + LIST_JUNK + (range_values(m.group(1), False) if m else [])
    if typ == "[A,B,..]":  # a spec list field (rope's --short-factor): malformed lists, non-finite or extra items
        # ("" and "[]" are the empty list, the default; a non-empty list is refused while the base's spec uses none)
        return "spec list", LIST_JUNK + ["abc", "[1,2", "1,2]", "[1,nan]", "[0]", "[1e999]", "1,2"]
    if "|" in typ or typ in ("NAME", "FORM", "FMT", "T"):
        return "choice", CHOICE_JUNK + (["exact,hf"] if "|" in typ else [])
    if typ == "" :
        return "flag", ["x"]
    if "integer" in both or typ in ("N", "K", "D") or "N|none" in typ:
        return "integer", INT_JUNK + range_values(desc, True) + (["nonee"] if "none" in typ else [])
    if "real" in both or "FLOAT" in both or typ in ("X", "F", "Y"):
        return "real", REAL_JUNK + range_values(desc, False)
    return None, []


def run(cwd, args):
    for f in os.listdir(cwd):
        if f.startswith(OUT) or ".tmp-" in f:
            os.unlink(os.path.join(cwd, f))
    try:
        p = subprocess.run([POSENC] + args, cwd=cwd, capture_output=True, timeout=120)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def judge(cwd, args, flag, value):
    """None when the bad value was refused properly, else what was wrong."""
    rc, out, err = run(cwd, args)
    lines = err.splitlines()
    left = [f for f in os.listdir(cwd) if (f.startswith(OUT) or ".tmp-" in f)]
    if rc == "timeout":
        return "no answer within 120 s"
    if rc == 0:
        return "accepted (exit status 0)"
    if rc not in (1, 2):
        return f"exit status {rc}" + (f" (signal {rc - 128})" if rc > 128 else "") + f": {err[-300:]!r}"
    if out:
        return f"wrote to stdout: {out[:100]!r}"
    if len(lines) != 1 or not lines[0].startswith("posenc: error: "):
        return f"stderr is not one 'posenc: error:' line: {err[:400]!r}"
    if flag not in lines[0]:
        return f"message does not name {flag}: {lines[0]!r}"
    if value and len(value) <= 40 and value.isprintable() and value.strip() == value and value not in lines[0]:
        return f"message does not show the value {value!r}: {lines[0]!r}"
    if left:
        return f"left files behind: {left}"
    return None


def main():
    listing = json.loads(subprocess.run([POSENC, "list", "--format", "json"], capture_output=True, text=True,
                                        check=True).stdout)
    commands = [(v, s["name"]) for s in listing["schemes"] for v in s["verbs"]]
    rows, failures, tasks = [], [], []
    root = tempfile.mkdtemp(prefix="posenc-bad-inputs.")
    for verb, scheme in commands:
        opts, example = parse_help(verb, scheme)
        file_flags = {o[0] for o in opts if o[1] == "FILE" and o[0] != "--out"}
        cwd = os.path.join(root, f"{verb}-{scheme}")
        os.makedirs(cwd)
        with open(os.path.join(cwd, "junk.bin"), "wb") as f:
            f.write(b"not an npy file\n" * 4)
        if (verb, scheme) in BASES:
            base, inputs = BASES[(verb, scheme)]
            for name, how in inputs.items():
                if "fixture" in how:
                    with open(os.path.join(HERE, how["fixture"]), "rb") as src, open(os.path.join(cwd, name), "wb") as dst:
                        dst.write(src.read())
                elif "shape" in how:
                    write_npy(os.path.join(cwd, name), tuple(how["shape"]))
                else:
                    subprocess.run([POSENC] + how["posenc"] + ["--out", name], cwd=cwd, check=True)
        elif example is not None and not any(a in file_flags for a in example):
            base = [a for a in example]
            if "--out" in base:  # the base writes out.npy, so a refused command can be checked for leftovers
                i = base.index("--out")
                del base[i:i + 2]
        else:
            failures.append({"command": f"{verb} {scheme}", "flag": "-", "value": "-",
                             "problem": "no base command: its --help has no Example: without input files, and "
                                        "its scheme's cli_bases.json has no entry"})
            continue
        if "--format" in base:
            i = base.index("--format")
            del base[i:i + 2]
        has_out = any(o[0] == "--out" for o in opts)
        base_args = [verb, scheme] + base + (["--out", OUT] if has_out else [])
        rc, _, err = run(cwd, base_args)
        if rc != 0:
            failures.append({"command": f"{verb} {scheme}", "flag": "-", "value": "-",
                             "problem": f"the base command fails ({rc}): posenc {shlex.join(base_args)}: {err.strip()}"})
            continue
        from_ext = any(o[0] == "--format" and "from the --out extension" in o[2] for o in opts)
        for flag, typ, desc, excludes in opts:
            kind, values = bad_values(flag, typ, desc, from_ext)
            if typ == "FILE" and "state_dict" in desc and flag in base:  # FIRE's --weights: bad contents too
                with open(os.path.join(cwd, base[base.index(flag) + 1])) as f:
                    junk = state_dict_junk(f.read())
                for name, text in junk.items():
                    with open(os.path.join(cwd, name), "w") as f:
                        f.write(text)
                kind, values = "input file (state_dict)", values + list(junk)
            if kind == "real list" and flag in base:  # one value more than the base's list (its head count)
                given = base[base.index(flag) + 1].split(",")
                if len(given) > 1:
                    values = values + [",".join(["1"] * (len(given) + 1))]
            if SAMPLE is not None and len(values) > SAMPLE:
                values = random.Random(f"{SEED}:{verb}:{scheme}:{flag}").sample(values, SAMPLE)
            row = {"command": f"{verb} {scheme}", "flag": flag, "kind": kind or "not swept", "tried": len(values),
                   "refused": 0, "failures": 0}
            rows.append(row)
            for value in values:
                args = [a for a in base_args]
                if flag == "--out":
                    args = [verb, scheme] + base + ["--out", value]
                for drop in [flag] + excludes:  # the base gives this option (or one it excludes): drop it
                    if drop in args:
                        i = args.index(drop)
                        args = args[:i] + args[i + 2:]
                if flag in file_flags or flag == "--out":
                    args = args + [flag, value]
                else:
                    args = args + [f"{flag}={value}"]
                tasks.append((row, cwd, args, flag, value))
    # Commands run two at a time; each command has its own directory, so the two in flight never share one.
    by_dir = {}
    for t in tasks:
        by_dir.setdefault(t[1], []).append(t)

    def sweep(group):
        res = []
        for row, cwd, args, flag, value in group:
            res.append((row, args, flag, value, judge(cwd, args, flag, value)))
        return res

    with ThreadPoolExecutor(max_workers=2) as pool:
        for results in pool.map(sweep, by_dir.values()):
            for row, args, flag, value, problem in results:
                if problem is None:
                    row["refused"] += 1
                else:
                    row["failures"] += 1
                    failures.append({"command": row["command"], "flag": flag, "value": value,
                                     "problem": f"posenc {shlex.join(args)}: {problem}"})
    tried = sum(r["tried"] for r in rows)
    refused = sum(r["refused"] for r in rows)
    for f in failures:
        print(f"FAIL: {f['command']} {f['flag']}={f['value']!r}: {f['problem']}")
    unswept = [f"{r['command']} {r['flag']}" for r in rows if r["kind"] == "not swept"]
    print(f"{refused}/{tried} bad values refused properly over {len(rows)} options of {len(commands)} commands"
          + (f"; not swept (kind unknown): {', '.join(unswept)}" if unswept else ""))
    if JSON_OUT:
        with open(JSON_OUT, "w") as f:
            json.dump({"schema": "posenc-bad-inputs-1", "commands": len(commands), "tried": tried, "refused": refused,
                       "options": rows, "failures": failures}, f, indent=1)
    subprocess.run(["rm", "-rf", root])
    return 0 if not failures and not unswept else 1


if __name__ == "__main__":
    sys.exit(main())
