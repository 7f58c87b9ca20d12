#!/usr/bin/env bash
# cli/tests/cli_test.sh — end-to-end checks of the `posenc` command line.
# Usage: cli_test.sh /path/to/posenc [python3]
# Checks: --help of every command; the README .npy example (header, shape, size, values); JSON and CSV
# output (parse, fairseq row conventions, tokens -> rows); table vs explicit rows; freqs; shift
# (block = dense, T(k) PE(p) = PE(p + k)); list/info; and that each bad input gives exactly one
# "posenc: error: " line on stderr, nothing on stdout, exit status 2 (1 for I/O) and no output file.
set -u
POSENC=${1:?usage: cli_test.sh /path/to/posenc [python3]}
PY=${2:-python3}
command -v "$PY" >/dev/null 2>&1 || { echo "SKIP: python3 not found"; exit 77; }
POSENC=$(cd "$(dirname "$POSENC")" && pwd)/$(basename "$POSENC")
CLI_TEST_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=harness.sh
source "$CLI_TEST_DIR/harness.sh" cli

# ---- --help works for every command ----------------------------------------------------------------
for cmd in "" "list" "info" "budget" "table" "freqs" "shift" "check" "identify" "table sinusoidal" "freqs sinusoidal" "shift sinusoidal" \
           "check sinusoidal" "identify sinusoidal"; do
  # shellcheck disable=SC2086
  if out=$("$POSENC" $cmd --help 2>&1) && grep -q "Usage:" <<<"$out"; then pass; else fail "posenc $cmd --help"; fi
done

# ---- the README example: a valid .npy of shape (4, 64) ---------------------------------------------
if "$POSENC" table sinusoidal --preset fairseq --dim 64 --positions 0,1,1000,100000 --dtype f64 --out t.npy; then
  if "$PY" - t.npy <<'PYEOF'
import ast, math, os, struct, sys
path = sys.argv[1]
raw = open(path, "rb").read()
assert raw[:6] == b"\x93NUMPY", "magic"
assert raw[6:8] == b"\x01\x00", "version 1.0"
(hlen,) = struct.unpack("<H", raw[8:10])
header = raw[10:10 + hlen].decode("latin1")
assert (10 + hlen) % 64 == 0, "header not padded to 64 bytes"
assert header.endswith("\n"), "header must end with a newline"
d = ast.literal_eval(header.strip())
assert d == {"descr": "<f8", "fortran_order": False, "shape": (4, 64)}, d
data = raw[10 + hlen:]
assert len(data) == 4 * 64 * 8, len(data)
v = struct.unpack("<256d", data)
rows = [v[i * 64:(i + 1) * 64] for i in range(4)]
assert all(x == 0.0 for x in rows[0][:32]) and all(x == 1.0 for x in rows[0][32:]), "row 0 = PE(0)"
assert all(x == 0.0 for x in rows[1]), "row 1 is fairseq's padding row"
# fairseq frequencies: w_k = 10000^(-k/31), halves layout
for p, row in ((1000, rows[2]), (100000, rows[3])):
    for k in range(32):
        w = 10000.0 ** (-k / 31)
        assert abs(row[k] - math.sin(p * w)) < 1e-9 and abs(row[32 + k] - math.cos(p * w)) < 1e-9, (p, k)
PYEOF
  then pass; else fail "README example: t.npy is not the expected (4, 64) table"; fi
else
  fail "README example command failed"
fi

# ---- JSON: fairseq dim 8, position 0 = PE(0), position 1 = padding row -----------------------------
if "$POSENC" table sinusoidal --preset fairseq --dim 8 --positions 0:3 >fs.json &&
   "$PY" - fs.json <<'PYEOF'
import json, math, sys
doc = json.load(open(sys.argv[1]))
assert doc["dtype"] == "f32"
s = doc["spec"]
assert (s["dim"], s["layout"], s["rule"], s["padding_row"], s["first_position"]) == (8, "halves", "fairseq", 1, 2), s
for key in ("base", "min_timescale", "odd_dim", "signed_positions", "regime"):
    assert key in s, key
assert doc["positions"] == [0, 1, 2]
r = doc["rows"]
assert len(r) == 3 and all(len(x) == 8 for x in r)
assert r[0][:4] == [0, 0, 0, 0] and r[0][4:] == [1, 1, 1, 1], r[0]   # sin slots 0, cos slots 1
assert r[1] == [0] * 8, r[1]                                          # padding_idx row
w = [10000.0 ** (-k / 3) for k in range(4)]
for k in range(4):
    assert abs(r[2][k] - math.sin(2 * w[k])) < 1e-7 and abs(r[2][4 + k] - math.cos(2 * w[k])) < 1e-7
PYEOF
then pass; else fail "JSON fairseq dim 8 table"; fi

# --tokens: fairseq token 0 is row 2
if "$POSENC" table sinusoidal --preset fairseq --dim 8 --tokens 0:2 --format json >tok.json &&
   "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["positions"]==[2,3] and d["tokens"]==[0,1], d' tok.json
then pass; else fail "--tokens maps fairseq token 0 to row 2"; fi

# float output round-trips: JSON value == float32 of the f64 table within float rounding
if "$POSENC" table sinusoidal --dim 16 --positions 0:50 --dtype f64 --out a64.json &&
   "$POSENC" table sinusoidal --dim 16 --positions 0:50 --dtype f32 --out a32.json &&
   "$PY" - a64.json a32.json <<'PYEOF'
import json, math, struct, sys
a = json.load(open(sys.argv[1]))["rows"]
b = json.load(open(sys.argv[2]))["rows"]
f32 = lambda x: struct.unpack("<f", struct.pack("<f", x))[0]
for ra, rb in zip(a, b):
    for x, y in zip(ra, rb):
        # the f32 text reads back (through double) to a float32 within float rounding of the f64 entry
        assert abs(f32(x) - f32(y)) <= 2 ** -24, (x, y)
        assert abs(f32(y) - y) <= 2 ** -24 * max(abs(y), 2 ** -126), "f32 text is not a float32 value"
# vaswani interleaved: row p = [sin(p w0), cos(p w0), sin(p w1), ...], w_k = 10000^(-2k/16)
for p in (1, 49):
    for k in range(8):
        w = 10000.0 ** (-2 * k / 16)
        assert abs(a[p][2 * k] - math.sin(p * w)) < 1e-14 and abs(a[p][2 * k + 1] - math.cos(p * w)) < 1e-14
PYEOF
then pass; else fail "f32/f64 JSON tables disagree or are wrong"; fi

# ---- CSV ---------------------------------------------------------------------------------------------
if "$POSENC" table sinusoidal --dim 6 --positions 0:4,1000 --out t.csv &&
   "$PY" - t.csv <<'PYEOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert rows[0] == ["position", "c0", "c1", "c2", "c3", "c4", "c5"], rows[0]
assert [r[0] for r in rows[1:]] == ["0", "1", "2", "3", "1000"], rows
assert [float(x) for x in rows[1][1:]] == [0, 1, 0, 1, 0, 1]
PYEOF
then pass; else fail "CSV table"; fi

# explicit rows (non-contiguous list) == contiguous table rows
if "$POSENC" table sinusoidal --preset tensor2tensor --dim 11 --positions 7,3:6:2,100 --format json >rows.json &&
   "$POSENC" table sinusoidal --preset tensor2tensor --dim 11 --positions 0:101 --format json >tab.json &&
   "$PY" - rows.json tab.json <<'PYEOF'
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert a["positions"] == [7, 3, 5, 100], a["positions"]
for p, row in zip(a["positions"], a["rows"]):
    assert row == b["rows"][p], p
    assert row[10] == 0, "odd dim: zero-pad column"
PYEOF
then pass; else fail "sinusoidal_rows and sinusoidal_table disagree through the CLI"; fi

# ---- freqs -------------------------------------------------------------------------------------------
if "$POSENC" freqs sinusoidal --preset fairseq --dim 8 >f.json &&
   "$PY" - f.json <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
w = d["frequencies"]
assert len(w) == 4 and d["sin_slots"] == [0, 1, 2, 3] and d["cos_slots"] == [4, 5, 6, 7]
for k in range(4):
    assert abs(w[k] - 10000.0 ** (-k / 3)) <= 1e-15 * w[k], (k, w[k])
PYEOF
then pass; else fail "freqs sinusoidal"; fi
if "$POSENC" freqs sinusoidal --dim 8 --format csv | head -1 | grep -qx "pair,sin_slot,cos_slot,omega"; then pass; else fail "freqs CSV header"; fi

# ---- shift: dense == block, and T(k) PE(p) = PE(p + k) -----------------------------------------------
if "$POSENC" shift sinusoidal --preset marian --dim 8 --k 5 >sb.json &&
   "$POSENC" shift sinusoidal --preset marian --dim 8 --k 5 --dense >sd.json &&
   "$POSENC" table sinusoidal --preset marian --dim 8 --positions 3,8 --dtype f64 >pe.json &&
   "$PY" - sb.json sd.json pe.json <<'PYEOF'
import json, sys
b = json.load(open(sys.argv[1])); m = json.load(open(sys.argv[2]))["matrix"]; pe = json.load(open(sys.argv[3]))["rows"]
for i, (s, c) in enumerate(zip(b["sin_slots"], b["cos_slots"])):
    assert m[s][s] == b["cos"][i] and m[s][c] == b["sin"][i] and m[c][s] == -b["sin"][i] and m[c][c] == b["cos"][i]
shifted = [sum(m[r][c] * pe[0][c] for c in range(8)) for r in range(8)]
assert max(abs(x - y) for x, y in zip(shifted, pe[1])) < 1e-14, (shifted, pe[1])
PYEOF
then pass; else fail "shift sinusoidal: block/dense/T(k) PE(p) = PE(p+k)"; fi

# ---- list and info -----------------------------------------------------------------------------------
if "$POSENC" list --format json >l.json &&
   "$PY" -c '
import json,sys
d=json.load(open(sys.argv[1]))
s=[x for x in d["schemes"] if x["name"]=="sinusoidal"][0]
assert {p["name"] for p in s["presets"]} == {"vaswani","marian","tensor2tensor","fairseq","transformer-xl","xlnet"}
for p in s["presets"]:
    assert p["implementation"] and "@" in p["commit"] and p["spec"]["dim"] == 512, p
assert [p["name"] for p in s["parameters"]] == ["layout","rule","odd_dim","regime","paper_form","dim","base","min_timescale","signed_positions","first_position","padding_row"]
for p in s["parameters"]:
    assert p["flag"].startswith("--") and p["accepted"] and p["meaning"] and p["source"] and p["type"], p
assert {"table","freqs","shift","check","identify"} <= set(s["verbs"]), s["verbs"]
' l.json; then pass; else fail "list --format json"; fi
if "$POSENC" list | grep -q "fairseq"; then pass; else fail "list (text)"; fi
if "$POSENC" info --format json >i.json && "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["build"]["version"] and "core" in d["blas"]; t=d["simd"]["targets"]; assert t[-1] == "scalar" and d["simd"]["target"] == t[0], d["simd"]' i.json
then pass; else fail "info --format json"; fi
# POSENC_SIMD caps the vector kernels' target (posenc/simd.hpp); the values are the same on every target
if POSENC_SIMD=scalar "$POSENC" info --format json >i.json && "$PY" -c 'import json,sys; assert json.load(open(sys.argv[1]))["simd"]["target"] == "scalar"' i.json &&
   "$POSENC" table sinusoidal --preset vaswani --positions 0:300 --dim 72 --format npy --out s1.npy &&
   POSENC_SIMD=scalar "$POSENC" table sinusoidal --preset vaswani --positions 0:300 --dim 72 --format npy --out s2.npy &&
   cmp -s s1.npy s2.npy
then pass; else fail "POSENC_SIMD=scalar: info names it, and a table has the same bytes"; fi

# ---- budget: the rows of the budget table, one scheme's, one row with its analysis ------------------------------
if "$POSENC" budget --format json >b.json && "$POSENC" budget --scheme t5 --format json >bt.json &&
   "$POSENC" budget --row rope.check.envelope >br.txt && "$PY" - b.json bt.json br.txt "$POSENC" <<'PYEOF'
import json, subprocess, sys
doc, t5, row = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), open(sys.argv[3]).read()
rows = doc["rows"]
assert doc["count"] == len(rows) >= 180, doc["count"]
assert len({r["id"] for r in rows}) == len(rows), "row ids repeat"
for r in rows:
    assert r["id"].startswith(r["scheme"] + ".") and r["why"] and r["quantity"] and r["metric"]["text"], r["id"]
    assert r["metric"]["kind"] in ("kernel", "scaled", "absolute", "ratio", "bitwise", "value"), r
    assert r["bound"] >= 0, r
by_id = {r["id"]: r for r in rows}
assert by_id["rope.check.envelope"]["bound"] == 1 and by_id["t5.bucket.exact.bitwise"]["bound"] == 0
assert {r["scheme"] for r in t5["rows"]} == {"t5"} and t5["count"] == sum(r["scheme"] == "t5" for r in rows)
assert row.startswith("rope.check.envelope  <= 1  (") and "why: posenc's emulation" in row, row[:200]
text = subprocess.run([sys.argv[4], "budget"], capture_output=True, text=True, check=True).stdout
assert sum(line.startswith(tuple(by_id)) for line in text.splitlines()) == len(rows)
PYEOF
then pass; else fail "budget (json, --scheme, --row, text)"; fi

# ---- bad inputs: one line on stderr, nothing on stdout, non-zero status, no file ---------------------
expect_error() {  # expect_error STATUS ARGS...
  local want=$1; shift
  rm -f out.* ./*.tmp-*
  "$POSENC" "$@" >stdout.txt 2>stderr.txt
  local rc=$?
  local lines; lines=$(wc -l <stderr.txt)
  if [[ $rc -ne $want ]]; then fail "posenc $* exited $rc, expected $want"; return; fi
  if [[ $lines -ne 1 ]] || ! grep -q '^posenc: error: ' stderr.txt; then
    fail "posenc $*: stderr is not one 'posenc: error:' line:"; cat stderr.txt; return
  fi
  if [[ -s stdout.txt ]]; then fail "posenc $*: wrote to stdout on error"; return; fi
  if compgen -G "out.*" >/dev/null || compgen -G "*.tmp-*" >/dev/null; then fail "posenc $*: left an output file"; return; fi
  pass
}
expect_error 2 budget --scheme nope
if grep -q "accepted: alibi | deberta" stderr.txt; then pass; else fail "budget --scheme nope: names the schemes"; fi
POSENC_SIMD=avx9 expect_error 2 info
if grep -q "posenc: error: posenc: POSENC_SIMD = 'avx9' is not a target here; accepted: auto, " stderr.txt
then pass; else fail "POSENC_SIMD=avx9: names the variable, the value and the targets"; cat stderr.txt; fi
expect_error 2 budget --row nope
T="table sinusoidal"
# shellcheck disable=SC2086
{
expect_error 2 $T --dim 0 --out out.npy
expect_error 2 $T --dim 7 --preset vaswani --out out.npy
expect_error 2 $T --base -1 --out out.json
expect_error 2 $T --base nan --out out.json
expect_error 2 $T --positions -1 --out out.npy
expect_error 2 $T --positions 5:2 --out out.npy
expect_error 2 $T --positions abc --out out.npy
expect_error 2 $T --positions 0,,2 --out out.npy
expect_error 2 $T --positions 0:4:0 --out out.npy
expect_error 2 $T --min-timescale 10 --max-timescale 5 --out out.npy
expect_error 2 $T --preset tensor2tensor --min-timescale 10 --max-timescale 5 --out out.npy
expect_error 2 $T --preset nosuch --out out.npy
expect_error 2 $T --dtype f16 --out out.npy
expect_error 2 $T --dim abc
expect_error 2 $T --regime fast
expect_error 2 $T --preset fairseq --dim 2
expect_error 2 $T --positions 1099511627777
expect_error 2 $T --tokens -1
expect_error 2 $T --positions 0:2 --tokens 0:2
expect_error 2 $T --out out.txt
expect_error 2 $T --format xml
expect_error 2 $T --no-such-flag
expect_error 2 table nosuchscheme
expect_error 2 table
expect_error 2
expect_error 2 table sinusoidal extra
expect_error 2 freqs sinusoidal --dim 0
expect_error 2 shift sinusoidal --dim 8
expect_error 2 shift sinusoidal --dim 8 --k x
expect_error 2 shift sinusoidal --preset fairseq --dim 8 --regime emulated --k 1
expect_error 1 $T --dim 8 --out "$WORK/no/such/dir/out.npy"
}
expect_error 1 table sinusoidal --dim 1048576 --positions 0:1000000000 --out out.npy
# A position list is not a range: with --min-timescale 1e6 every position must be <= 17592186, and this list
# of 17592188 positions obeys that (a check of the list as a range from 0 refused it).
if "$POSENC" table sinusoidal --dim 2 --min-timescale 1e6 --positions 0:17592187,0 --format npy --out /dev/null
then pass; else fail "a position list is checked as a list, not as a range from 0"; fi
"$POSENC" table sinusoidal --positions 'a,1' 2>&1 | grep -q "'a'" && pass || fail "position parse error names the token"
"$POSENC" table sinusoidal --positions '5:2' 2>&1 | grep -q "a:b" && pass || fail "position parse error names the syntax"

# the error names the flag the user typed, generated from the spec description
"$POSENC" table sinusoidal --dim 7 2>&1 | grep -q -- "--dim = 7 is out of range; accepted: an integer in \[2, 1048576\], even" && pass ||
  fail "error names --dim with the generated accepted range"
"$POSENC" bias sinusoidal 2>&1 | grep -q "not a scheme with the verb bias" && pass || fail "unknown scheme for a verb"

# ---- --spec replays the spec of a result file --------------------------------------------------------
if "$POSENC" table sinusoidal --preset fairseq --dim 10 --regime emulated --positions 0:5 --format json >r1.json &&
   "$POSENC" table sinusoidal --spec r1.json --positions 0:5 --format json >r2.json && cmp -s r1.json r2.json
then pass; else fail "--spec FILE replays a result file's spec"; fi

# ---- check and identify on tables made as real implementations make them (convention_tables.py) -----
if "$PY" "$CLI_TEST_DIR/convention_tables.py" ct >/dev/null 2>ct.err; then
  "$PY" - "$POSENC" ct <<'PYEOF' && pass || fail "check/identify on convention tables (see above)"
import json, os, subprocess, sys
posenc, d = sys.argv[1], sys.argv[2]
bad = 0
for e in json.load(open(os.path.join(d, "manifest.json"))):
    f = os.path.join(d, e["file"])
    ex = e["expect"]
    r = subprocess.run([posenc, "check", "sinusoidal", "--in", f, *e["check_args"], "--format", "json"], capture_output=True, text=True)
    want = ex["check"]["verdict"]
    try:
        j = json.loads(r.stdout)
    except Exception:
        print("check", e["file"], "no JSON:", r.stderr.strip()); bad += 1; continue
    status_ok = r.returncode == (0 if want == "pass" else 1)
    if j["verdict"] != want or not status_ok:
        print("check", e["file"], "verdict", j["verdict"], "exit", r.returncode, "expected", want); bad += 1
    if j["verdict"] == "pass" and j["budget_row"] != ("sinusoidal.check.envelope" if ex["check"]["regime"] == "emulated"
                                                      else "sinusoidal.check.exact." + e["dtype"]):
        print("check", e["file"], "held to", j["budget_row"]); bad += 1
    if ex.get("within_envelope_only"):
        emu = [x for x in j["references"] if x["reference"].startswith("emulated")][0]
        if not (0 < emu["overall"]["max_metric"] <= 1 and emu["bit_identical"] < emu["entries"]):
            print("check", e["file"], "should pass within the envelope, not bit-identically", emu["overall"]); bad += 1
    # the Markdown report says the same
    m = subprocess.run([posenc, "check", "sinusoidal", "--in", f, *e["check_args"]], capture_output=True, text=True)
    if ("**" + want.upper() + "**") not in m.stdout:
        print("check md", e["file"], m.stdout[:200]); bad += 1
    r = subprocess.run([posenc, "identify", "sinusoidal", "--in", f, *e.get("identify_args", []), "--format", "json"],
                       capture_output=True, text=True)
    j = json.loads(r.stdout)
    if ex["identify"] is not None:
        if not j["matched"] or j["preset"] != ex["identify"] or j["differs"] or (ex.get("regime") and j["regime"] != ex["regime"]):
            print("identify", e["file"], j.get("verdict"), j.get("differs"), "expected", ex["identify"], ex.get("regime")); bad += 1
    elif j["matched"] and not j["differs"]:
        print("identify", e["file"], "matched a preset exactly:", j["verdict"]); bad += 1
sys.exit(1 if bad else 0)
PYEOF
else
  fail "convention_tables.py failed: $(cat ct.err)"
fi
# .npy input errors are one line naming the file
printf 'not an npy' >junk.npy
expect_error 1 check sinusoidal --in junk.npy --preset vaswani
expect_error 1 identify sinusoidal --in nosuch.npy
"$POSENC" table sinusoidal --dim 8 --positions 0:4 --out t8.npy
expect_error 2 check sinusoidal --in t8.npy --dim 16
expect_error 2 check sinusoidal --in t8.npy --positions 0:5
expect_error 2 check sinusoidal --in t8.npy --in-dtype f99

# a failed command leaves an existing output file untouched
echo keep >keep.npy
"$POSENC" table sinusoidal --dim 0 --out keep.npy 2>/dev/null
[[ "$(cat keep.npy)" == keep ]] && pass || fail "failed command clobbered an existing file"

# ======================================================================================================
# ---- RoPE (rotary position embedding): table, freqs, apply, check ------------------------------------
# ======================================================================================================
# npyio.py: read and write .npy files of any shape (f2/f4/f8, C order) with the standard library alone.
cat >npyio.py <<'PYEOF'
import ast, struct
CODES = {"<f2": ("e", 2), "<f4": ("f", 4), "<f8": ("d", 8), "<u2": ("H", 2), "<i8": ("q", 8)}
def read(path):
    raw = open(path, "rb").read()
    assert raw[:6] == b"\x93NUMPY" and raw[6:8] == b"\x01\x00", "magic/version"
    (hlen,) = struct.unpack("<H", raw[8:10])
    assert (10 + hlen) % 64 == 0, "header not padded to 64 bytes"
    d = ast.literal_eval(raw[10:10 + hlen].decode("latin1").strip())
    assert d["fortran_order"] is False
    code, size = CODES[d["descr"]]
    n = 1
    for s in d["shape"]:
        n *= s
    data = raw[10 + hlen:]
    assert len(data) == n * size, (len(data), n, size)
    return d["descr"], tuple(d["shape"]), list(struct.unpack("<%d%s" % (n, code), data)), data
def write(path, descr, shape, values):
    code, _ = CODES[descr]
    dic = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, "".join("%d, " % s for s in shape).rstrip(" ") if len(shape) == 1 else ", ".join(str(s) for s in shape))
    pad = (64 - (10 + len(dic) + 1) % 64) % 64
    hdr = (dic + " " * pad + "\n").encode("latin1")
    open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr + struct.pack("<%d%s" % (len(values), code), *values))
PYEOF
export PYTHONPATH="$WORK${PYTHONPATH:+:$PYTHONPATH}"

# --help of every rope command
for cmd in "table rope" "freqs rope" "apply rope" "check rope" "apply"; do
  # shellcheck disable=SC2086
  if out=$("$POSENC" $cmd --help 2>&1) && grep -q "Usage:" <<<"$out"; then pass; else fail "posenc $cmd --help"; fi
done

# list: rope with its presets, verbs and parameters
if "$POSENC" list --format json >rl.json &&
   "$PY" -c '
import json,sys
d=json.load(open(sys.argv[1]))
s=[x for x in d["schemes"] if x["name"]=="rope"][0]
assert {p["name"] for p in s["presets"]} == {"hf-llama","gpt-neox","gpt-j","roformer","meta-llama","ggml-normal","ggml-neox"}, s["presets"]
assert {"table","freqs","apply","check"} <= set(s["verbs"]), s["verbs"]
assert [p["flag"] for p in s["parameters"]] == ["--layout","--regime","--head-dim","--rotary-dim","--base","--scaling",
    "--factor","--original-context","--max-context","--seq-len","--beta-fast","--beta-slow","--mscale","--mscale-all-dim",
    "--attention-factor","--truncate","--low-freq-factor","--high-freq-factor","--short-factor","--long-factor",
    "--mrope","--mrope-section","--xpos","--xpos-scale-base","--xpos-center"], s["parameters"]
' rl.json; then pass; else fail "list --format json: rope scheme, presets and verbs"; fi
if "$POSENC" list | grep -q "ggml-neox"; then pass; else fail "list (text) shows rope presets"; fi

# table, pairs form: cos 1 / sin 0 at position 0, cos(1) / sin(1) for pair 0 at position 1 (theta_0 = 1)
if "$POSENC" table rope --preset hf-llama --head-dim 8 --positions 0:3 --form pairs --out rp.npy &&
   "$PY" - rp.npy <<'PYEOF'
import math, sys, npyio
descr, shape, v, _ = npyio.read(sys.argv[1])
assert descr == "<f4" and shape == (3, 8), (descr, shape)
row = lambda p: v[p * 8:(p + 1) * 8]
assert row(0) == [1, 1, 1, 1, 0, 0, 0, 0], row(0)
assert abs(row(1)[0] - math.cos(1)) < 1e-7 and abs(row(1)[4] - math.sin(1)) < 1e-7, row(1)
for p in range(3):
    for k in range(4):
        a = p * 10000.0 ** (-2 * k / 8)
        assert abs(row(p)[k] - math.cos(a)) < 1e-6 and abs(row(p)[4 + k] - math.sin(a)) < 1e-6, (p, k)
PYEOF
then pass; else fail "table rope --form pairs: values"; fi

# M-RoPE: --positions holds the rows t, h, w; pair k takes its section's row (sections [1,2,1] of 4 pairs: t h h w)
if "$POSENC" table rope --preset hf-llama --head-dim 8 --mrope sections --mrope-section 1,2,1 --positions 5,7,9 --form pairs --dtype f64 --out mr.npy &&
   "$POSENC" table rope --preset hf-llama --head-dim 8 --positions 5,7,9 --form pairs --dtype f64 --out m1.npy &&
   "$POSENC" table rope --preset hf-llama --head-dim 8 --mrope interleaved --mrope-section 2,1,1 --form pairs --dtype f64 --out mi.npy &&
   "$POSENC" table rope --preset hf-llama --head-dim 8 --form pairs --dtype f64 --out m0.npy &&
   "$PY" - mr.npy m1.npy mi.npy m0.npy <<'PYEOF'
import sys, npyio
_, shape, m, _ = npyio.read(sys.argv[1])
_, _, one, _ = npyio.read(sys.argv[2])
assert shape == (1, 8), shape
row = lambda p: one[p * 8:(p + 1) * 8]  # 1-D rows of positions 5, 7, 9
axis = [0, 1, 1, 2]
for k in range(4):
    assert m[k] == row(axis[k])[k] and m[4 + k] == row(axis[k])[4 + k], (k, m, one)
_, shape, mi, _ = npyio.read(sys.argv[3])
_, _, m0, _ = npyio.read(sys.argv[4])
assert shape == (16, 8) and mi == m0, (shape, mi, m0)  # not given: t = h = w = 0 .. 15
PYEOF
then pass; else fail "table rope --mrope: pairs take their section's row; default t = h = w is 1-D RoPE"; fi
expect_error 2 table rope --preset hf-llama --head-dim 8 --mrope sections --mrope-section 1,2,1 --positions 0:4 --out out.npy
expect_error 2 table rope --preset hf-llama --head-dim 8 --mrope sections --mrope-section 1,2,2 --out out.npy

# xPos: queries carry zeta_k^((p - c)/scale_base), keys its inverse, zeta_k = (2k + 0.4 r)/(1.4 r)
if "$POSENC" table rope --head-dim 8 --layout interleaved --xpos query --xpos-scale-base 512 --xpos-center 2 --positions 0:5 --form pairs --dtype f64 --out xq.npy &&
   "$POSENC" table rope --head-dim 8 --layout interleaved --xpos key --xpos-scale-base 512 --xpos-center 2 --positions 0:5 --form pairs --dtype f64 --out xk.npy &&
   "$PY" - xq.npy xk.npy <<'PYEOF'
import math, sys, npyio
_, shape, q, _ = npyio.read(sys.argv[1])
_, _, k, _ = npyio.read(sys.argv[2])
assert shape == (5, 8), shape
for p in range(5):
    for j in range(4):
        z = (2 * j + 3.2) / 11.2
        a = p * 10000.0 ** (-2 * j / 8)
        for v, sign in ((q, 1), (k, -1)):
            x = z ** (sign * (p - 2) / 512)
            assert abs(v[p * 8 + j] - x * math.cos(a)) < 1e-15 and abs(v[p * 8 + 4 + j] - x * math.sin(a)) < 1e-15, (p, j, sign)
PYEOF
then pass; else fail "table rope --xpos query / key: zeta_k^(+-(p - c)/scale_base) times cos and sin"; fi
expect_error 2 table rope --head-dim 8 --xpos query --xpos-scale-base 64 --positions 35393 --out out.npy
expect_error 2 table rope --head-dim 8 --xpos-scale-base 64 --out out.npy
# check rope holds xPos caches: the query cache passes as a query cache, fails as a key cache (exit 1); a
# position beyond 55 scale_base of the centre is refused naming --positions
xp=(--head-dim 8 --layout interleaved --xpos-scale-base 512 --xpos-center 2 --positions 0:5 --in xq.npy)
if "$POSENC" check rope --xpos query "${xp[@]}" | grep -q '\*\*PASS\*\*'; then
  "$POSENC" check rope --xpos key "${xp[@]}" >/dev/null; rc=$?
  [[ $rc -eq 1 ]] && pass || fail "check rope --xpos key: a query cache must fail with exit 1 (got $rc)"
else fail "check rope --xpos query passes table rope's query cache"; fi
"$POSENC" check rope --head-dim 8 --layout interleaved --xpos query --xpos-scale-base 1 --xpos-center 2 --positions 0:4,100 --in xq.npy 2>&1 |
  grep -q -- "--positions.*55 xpos_scale_base" && pass || fail "check rope --xpos: |p - c| > 55 scale_base refused naming the positions"
# ... and M-RoPE caches (three position rows): mr.npy passes with its rows, fails read as a 1-D cache of the t row
if "$POSENC" check rope --preset hf-llama --head-dim 8 --mrope sections --mrope-section 1,2,1 --positions 5,7,9 --in mr.npy | grep -q '\*\*PASS\*\*'; then
  "$POSENC" check rope --preset hf-llama --head-dim 8 --positions 5 --in mr.npy >/dev/null; rc=$?
  [[ $rc -eq 1 ]] && pass || fail "check rope: an M-RoPE cache read as 1-D RoPE of its t row must fail with exit 1 (got $rc)"
else fail "check rope --mrope passes table rope's M-RoPE cache"; fi

# the four forms hold the same numbers: hf (2, P, r) with duplicated halves, gptj sin first, ggml interleaved
if "$POSENC" table rope --preset hf-llama --head-dim 8 --positions 0:5,1000 --form pairs --dtype f64 --out fp.npy &&
   "$POSENC" table rope --preset hf-llama --head-dim 8 --positions 0:5,1000 --form hf --dtype f64 --out fh.npy &&
   "$POSENC" table rope --preset hf-llama --head-dim 8 --positions 0:5,1000 --form gptj --dtype f64 --out fg.npy &&
   "$POSENC" table rope --preset hf-llama --head-dim 8 --positions 0:5,1000 --form ggml --dtype f64 --out fl.npy &&
   "$PY" - <<'PYEOF'
import npyio
_, sp, p, _ = npyio.read("fp.npy"); _, sh, hf, _ = npyio.read("fh.npy")
_, sg, g, _ = npyio.read("fg.npy"); dl, sl, l, _ = npyio.read("fl.npy")
P, h, r = 6, 4, 8
assert dl == "<f8" and sp == sg == sl == (P, 2 * h) and sh == (2, P, r), (sp, sh, sg, sl)
for i in range(P):
    cos = p[i * 8:i * 8 + h]; sin = p[i * 8 + h:i * 8 + 2 * h]
    assert hf[i * r:(i + 1) * r] == cos + cos, i                  # cos block [c | c]
    assert hf[P * r + i * r:P * r + (i + 1) * r] == sin + sin, i  # sin block [s | s]
    assert g[i * 8:(i + 1) * 8] == sin + cos, i                   # gptj: [sin | cos]
    assert l[i * 8:(i + 1) * 8] == [x for k in range(h) for x in (cos[k], sin[k])], i  # ggml: cos_0, sin_0, ...
PYEOF
then pass; else fail "table rope: pairs / hf / gptj / ggml forms disagree"; fi
if "$POSENC" table rope --preset hf-llama --head-dim 4 --positions 0:2 --form hf --format csv | head -1 | grep -qx "block,position,c0,c1,c2,c3" &&
   "$POSENC" table rope --preset gpt-j --head-dim 16 --positions 1 --form gptj --format csv | head -1 | grep -qx "position,sin0,sin1,cos0,cos1"
then pass; else fail "table rope CSV headers"; fi

# freqs: theta_k with the channels of each pair (halves: (k, k + h); interleaved: (2k, 2k + 1)); --spec replays
if "$POSENC" freqs rope --head-dim 8 >rf.json &&
   "$POSENC" freqs rope --preset ggml-normal --head-dim 8 --format csv >rf.csv &&
   "$PY" - rf.json rf.csv <<'PYEOF'
import csv, json, sys
d = json.load(open(sys.argv[1]))
assert d["spec"]["regime"] == "exact" and d["pairs"] == 4
assert d["first_channels"] == [0, 1, 2, 3] and d["second_channels"] == [4, 5, 6, 7], d
for k, w in enumerate(d["frequencies"]):
    assert abs(w - 10000.0 ** (-2 * k / 8)) <= 1e-15 * w, (k, w)
rows = list(csv.reader(open(sys.argv[2])))
assert rows[0] == ["pair", "first_channel", "second_channel", "theta", "theta_unscaled", "interpolation_weight"], rows[0]
assert [r[1:3] for r in rows[1:]] == [["0", "1"], ["2", "3"], ["4", "5"], ["6", "7"]], rows
PYEOF
then pass; else fail "freqs rope"; fi
if "$POSENC" table rope --preset gpt-neox --head-dim 32 --positions 0:3 --format json >s1.json &&
   "$POSENC" table rope --spec s1.json --positions 0:3 --format json >s2.json && cmp -s s1.json s2.json &&
   "$PY" -c 'import json,sys; s=json.load(open(sys.argv[1]))["spec"]; assert (s["head_dim"], s["rotary_dim"]) == (32, 8), s' s1.json
then pass; else fail "rope: preset rotary fraction follows --head-dim; --spec replays"; fi

# dynamic NTK's state (--dynamic-calls): grow at 3000, keep at 2500 (the 3000 frequencies), grow at 4000, reset at
# 100, keep the original at 2048; each call's frequencies are freqs rope --seq-len of the length they were made for
dyn=(--preset hf-llama --head-dim 8 --scaling dynamic --factor 2 --max-context 2048)
if "$POSENC" freqs rope "${dyn[@]}" --dynamic-calls 100,3000,2500,4000,100,2048 --format json >dc.json &&
   "$POSENC" freqs rope "${dyn[@]}" --seq-len 3000 --format json >d3.json &&
   "$POSENC" freqs rope "${dyn[@]}" --format json >d0.json &&
   "$PY" - dc.json d3.json d0.json <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
f3, f0 = json.load(open(sys.argv[2]))["frequencies"], json.load(open(sys.argv[3]))["frequencies"]
acts = [(c["action"], c["cached_length"], c["seq_len_used"]) for c in d["calls"]]
assert acts == [("keep", 2048, 0), ("grow", 3000, 3000), ("keep", 3000, 3000), ("grow", 4000, 4000),
                ("reset", 2048, 0), ("keep", 2048, 0)], acts
fr = d["frequencies"]
assert fr[0] == f0 and fr[1] == f3 and fr[2] == f3 and fr[4] == f0 and fr[5] == f0 and fr[3] != f3, fr
PYEOF
then pass; else fail "freqs rope --dynamic-calls: HF's stateful dynamic NTK replayed"; fi
expect_error 2 freqs rope --preset hf-llama --head-dim 8 --dynamic-calls 100,3000
expect_error 2 freqs rope "${dyn[@]}" --dynamic-calls 100,0
expect_error 2 freqs rope "${dyn[@]}" --dynamic-calls 100,3000 --seq-len 5000

# scaling (issue 8): Llama 3.1 (head_dim 128, theta 5e5, L0 8192, factor 8): 29 pairs kept, 6 smoothed, 29 divided
# (CONVENTIONS.md §2.11); kept pairs are the unscaled theta_k, divided ones theta_k / 8; YaRN's attention factor
# 0.1 ln 4 + 1 multiplies the cache; linear at s p equals unscaled at p
if "$POSENC" freqs rope --head-dim 128 --base 500000 --scaling llama3 --factor 8 --original-context 8192 >l3.json &&
   "$POSENC" table rope --head-dim 8 --scaling yarn --factor 4 --original-context 4096 --positions 0,5 --form pairs --dtype f64 --format json >yt.json &&
   "$POSENC" table rope --head-dim 8 --scaling linear --factor 4 --positions 40 --form pairs --dtype f64 --format json >lt.json &&
   "$POSENC" table rope --head-dim 8 --positions 10 --form pairs --dtype f64 --format json >ut.json &&
   "$PY" - l3.json yt.json lt.json ut.json <<'PYEOF'
import json, math, sys
d = json.load(open(sys.argv[1]))
assert (d["pairs_kept"], d["pairs_blended"], d["pairs_interpolated"]) == (29, 6, 29), d
f, f0, w = d["frequencies"], d["unscaled_frequencies"], d["interpolation_weight"]
assert f[:29] == f0[:29] and w[:29] == [0.0] * 29, (f[:29], f0[:29])
assert all(abs(a - b / 8) <= 1e-16 * a for a, b in zip(f[35:], f0[35:])) and w[35:] == [1.0] * 29
assert d["attention_factor"] == 1.0
y = json.load(open(sys.argv[2]))
m = 0.1 * math.log(4) + 1
assert abs(y["attention_factor"] - m) <= 1e-15 and abs(y["rows"][0][0] - m) <= 1e-15, y
lin, uns = json.load(open(sys.argv[3]))["rows"][0], json.load(open(sys.argv[4]))["rows"][0]
assert all(abs(a - b) <= 1e-15 for a, b in zip(lin, uns)), (lin, uns)
PYEOF
then pass; else fail "rope scaling: llama3 bands, yarn attention factor, linear = positions / factor"; fi
expect_error 2 freqs rope --factor 4
expect_error 2 freqs rope --scaling yarn --factor 4
expect_error 2 freqs rope --scaling ntk --factor 2 --head-dim 2
# ggml: llama.cpp's YaRN (mscale 1 + 0.1 logf(4) in float32), always truncated, no mscale / attention_factor
if "$POSENC" freqs rope --regime ggml --scaling yarn --factor 4 --original-context 4096 --head-dim 64 >gy.json &&
   "$PY" -c 'import json,sys,math; j=json.load(open(sys.argv[1])); m=j["attention_factor"]; assert abs(m - (1 + 0.1 * math.log(4))) < 1e-6, m; f=j["frequencies"]; assert f[0] == 1.0 and abs(f[-1] / j["unscaled_frequencies"][-1] - 0.25) < 1e-6, f' gy.json
then pass; else fail "freqs rope --regime ggml --scaling yarn: mscale and the interpolated low frequencies"; fi
expect_error 2 freqs rope --regime ggml --scaling yarn --factor 4 --original-context 4096 --truncate=false
expect_error 2 freqs rope --regime ggml --scaling yarn --factor 4 --original-context 4096 --mscale 1
expect_error 2 freqs rope --scaling llama3 --factor 8 --original-context 8192 --low-freq-factor 4 --high-freq-factor 2
if "$POSENC" freqs rope --scaling yarn --factor 4 >/dev/null 2>ye.txt; [[ $? -eq 2 ]] && grep -q -- "--original-context" ye.txt
then pass; else fail "--scaling yarn without --original-context names original_context: $(cat ye.txt)"; fi

# --config FILE: a Hugging Face config.json as the starting spec (posenc/rope_config.hpp), one case per fixture in
# cli/tests/data/configs (README there: which values are published); field flags override it; --hf-version picks
# the transformers version whose YaRN reading to reproduce
CONFIGS="$CLI_TEST_DIR/data/configs"
for case in "llama-3.1-8b.json halves 128 128 500000 llama3 8 8192" \
            "llama-3.1-8b-v5.json halves 128 128 500000 llama3 8 8192" \
            "qwen2.5-7b-instruct-yarn.json halves 128 128 1000000 yarn 4 32768" \
            "phi-3.5-mini-instruct.json halves 96 96 10000 longrope 32 4096" \
            "codellama-7b.json halves 128 128 1000000 none 1 0" \
            "tinyllama-1.1b-chat-v1.0.json halves 64 64 10000 none 1 0" \
            "deepseek-v2-lite.json interleaved 64 64 10000 yarn 40 4096"; do
  read -r file layout head rot base scaling factor l0 <<<"$case"
  scenario "freqs rope --config $file"
  if "$POSENC" freqs rope --config "$CONFIGS/$file" --format json >cfg.json &&
     "$PY" - cfg.json "$layout" "$head" "$rot" "$base" "$scaling" "$factor" "$l0" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1])); s = d["spec"]
layout, head, rot, base, scaling, factor, l0 = sys.argv[2:]
got = (s["layout"], s["head_dim"], s["rotary_dim"], s["base"], s["scaling"], s["factor"], s["original_context"], s["regime"])
want = (layout, int(head), int(rot), float(base), scaling, float(factor), int(l0), "exact")
assert got == want, (got, want)
assert d["pairs"] == int(rot) // 2 and len(d["frequencies"]) == int(rot) // 2, d["pairs"]
if scaling == "longrope":
    assert len(s["short_factor"]) == 48 and s["long_factor"][-1] == 64.83999633789062, s
if layout == "interleaved":
    assert d["first_channels"][:2] == [0, 2] and d["second_channels"][:2] == [1, 3], d
PYEOF
  then pass; else fail "freqs rope --config $file"; fi
done
scenario "rope --config: field flags override the config; --hf-version"
if "$POSENC" freqs rope --config "$CONFIGS/phi-3.5-mini-instruct.json" --regime hf --seq-len 5000 >cfg1.json &&
   "$POSENC" freqs rope --config "$CONFIGS/qwen2.5-7b-instruct-yarn.json" --hf-version 4.51-4.55 >cfg2.json &&
   "$POSENC" freqs rope --config "$CONFIGS/deepseek-v2-lite.json" --hf-version 4.43-4.50 >cfg3.json &&
   "$POSENC" table rope --config "$CONFIGS/tinyllama-1.1b-chat-v1.0.json" --positions 0:9,4095 --dtype f64 --out cfg_t.npy &&
   "$POSENC" table rope --head-dim 64 --positions 0:9,4095 --dtype f64 --out plain_t.npy && cmp -s cfg_t.npy plain_t.npy &&
   "$PY" - cfg1.json cfg2.json cfg3.json <<'PYEOF'
import json, sys
a, b, c = (json.load(open(p)) for p in sys.argv[1:])
assert (a["spec"]["regime"], a["spec"]["seq_len"], a["spec"]["scaling"]) == ("hf", 5000, "longrope"), a["spec"]
assert b["spec"]["factor"] == 1.0 and b["attention_factor"] == 1.0, b["spec"]    # 32768 / 32768 (HF issue #38224)
assert c["spec"]["original_context"] == 163840 and c["spec"]["mscale"] == 0.0, c["spec"]
PYEOF
then pass; else fail "rope --config: overrides (--regime hf --seq-len 5000), --hf-version, table = the default spec"; fi
printf '{"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "rope_scaling": {"rope_type": "linear", "facter": 2}}' >typo.json
expect_error 2 freqs rope --config typo.json
"$POSENC" freqs rope --config typo.json 2>&1 | grep -q "rope_scaling.facter" && pass || fail "--config: an unknown rope_scaling key is named"
if "$POSENC" freqs rope --config "$CONFIGS/qwen2-vl-7b-instruct.json" >vl.json &&
   "$PY" -c 'import json,sys; s=json.load(open(sys.argv[1]))["spec"]; assert (s["mrope"], s["mrope_section"], s["head_dim"]) == ("sections", [16, 24, 24], 128), s' vl.json
then pass; else fail "--config Qwen2-VL: M-RoPE sections [16,24,24] on head_dim 128"; fi
printf '{"model_type": "qwen2_vl", "hidden_size": 256, "num_attention_heads": 4, "rope_scaling": {"type": "mrope"}}' >mrope.json
"$POSENC" freqs rope --config mrope.json 2>&1 | grep -q "rope_scaling.mrope_section" &&
  pass || fail "--config: rope_scaling type mrope without mrope_section names rope_scaling.mrope_section"
expect_error 2 table rope --config "$CONFIGS/llama-3.1-8b.json" --preset hf-llama --out out.npy
expect_error 1 table rope --config nosuch.json --out out.npy
expect_error 2 freqs rope --config "$CONFIGS/llama-3.1-8b.json" --hf-version 4.46
expect_error 2 table rope --hf-version v5 --out out.npy

# --partial-rotary-factor: int(head_dim * F) (80 * 0.3 = 24.000000000000004 -> 24), after --head-dim in any order
if "$POSENC" freqs rope --partial-rotary-factor 0.3 --head-dim 80 >pr.json &&
   "$PY" -c 'import json,sys; s=json.load(open(sys.argv[1]))["spec"]; assert (s["head_dim"], s["rotary_dim"]) == (80, 24), s' pr.json
then pass; else fail "--partial-rotary-factor 0.3 --head-dim 80 -> rotary_dim 24"; fi
"$POSENC" table rope --head-dim 80 --partial-rotary-factor 0.3125 --out out.npy >/dev/null 2>prf.txt
rc=$?
if [[ $rc -eq 2 ]] && [[ $(wc -l <prf.txt) -eq 1 ]] && grep -q -- "--partial-rotary-factor = 0.3125" prf.txt && grep -q "int(25) = 25" prf.txt && [[ ! -e out.npy ]]
then pass; else fail "--partial-rotary-factor 0.3125 with head_dim 80 (odd rotary_dim 25): $(cat prf.txt)"; fi

# apply: R(p) of a [tokens, heads, head_dim] f32 tensor matches the definition; --inverse undoes it; channels beyond
# rotary_dim pass through bit-identically; --heads-first reads [heads, tokens, head_dim]
"$PY" - <<'PYEOF'
import math, random, npyio
random.seed(7)
T, H, D = 5, 3, 12
x = [random.uniform(-2, 2) for _ in range(T * H * D)]
npyio.write("x.npy", "<f4", (T, H, D), x)
npyio.write("x64.npy", "<f8", (T, D), x[:T * D])
xt = [x[(t * H + h) * D + c] for h in range(H) for t in range(T) for c in range(D)]   # [heads, tokens, head_dim]
npyio.write("xt.npy", "<f4", (H, T, D), xt)
npyio.write("x16.npy", "<f2", (T, D), x[:T * D])
PYEOF
if "$POSENC" apply rope --preset hf-llama --head-dim 12 --rotary-dim 8 --in x.npy --positions 3,7,0,100,-5 --out y.npy &&
   "$POSENC" apply rope --preset hf-llama --head-dim 12 --rotary-dim 8 --in y.npy --positions 3,7,0,100,-5 --inverse --out z.npy &&
   "$PY" - <<'PYEOF'
import math, npyio
T, H, D, r = 5, 3, 12, 8
pos = [3, 7, 0, 100, -5]
_, sx, x, bx = npyio.read("x.npy"); dy, sy, y, by = npyio.read("y.npy"); _, sz, z, _ = npyio.read("z.npy")
assert dy == "<f4" and sx == sy == sz == (T, H, D), (dy, sy, sz)
assert max(abs(a - b) for a, b in zip(x, z)) <= 1e-6, "apply then apply --inverse is not the identity"
h = r // 2
for t in range(T):
    for hd in range(H):
        o = (t * H + hd) * D
        for k in range(h):
            a = pos[t] * 10000.0 ** (-2 * k / r)
            i, j = o + k, o + k + h   # halves layout
            assert abs(y[i] - (x[i] * math.cos(a) - x[j] * math.sin(a))) < 1e-4, (t, hd, k)
            assert abs(y[j] - (x[j] * math.cos(a) + x[i] * math.sin(a))) < 1e-4, (t, hd, k)
        # channels r..D-1 pass through: the same bytes
        assert by[4 * (o + r):4 * (o + D)] == bx[4 * (o + r):4 * (o + D)], ("pass-through", t, hd)
PYEOF
then pass; else fail "apply rope: values / --inverse / pass-through channels"; fi
if "$POSENC" apply rope --preset hf-llama --head-dim 12 --rotary-dim 8 --in xt.npy --heads-first --positions 3,7,0,100,-5 --out yt.npy &&
   "$PY" - <<'PYEOF'
import npyio
T, H, D = 5, 3, 12
_, _, y, _ = npyio.read("y.npy"); _, st, yt, _ = npyio.read("yt.npy")
assert st == (H, T, D), st
assert all(yt[(h * T + t) * D + c] == y[(t * H + h) * D + c] for t in range(T) for h in range(H) for c in range(D))
PYEOF
then pass; else fail "apply rope --heads-first differs from the [tokens, heads, head_dim] result"; fi
# f64 in -> f64 out, head_dim from the input, default positions 0..T-1; f16 in -> f32 out with a note
if "$POSENC" apply rope --in x64.npy --out y64.npy && "$POSENC" apply rope --in x16.npy --out y16.npy &&
   "$POSENC" apply rope --in x16.npy --dtype f32 --out y16f.npy &&
   "$PY" - <<'PYEOF'
import math, struct, npyio
T, D = 5, 12
_, _, x, _ = npyio.read("x64.npy"); d, s, y, _ = npyio.read("y64.npy"); d16, s16, y16, _ = npyio.read("y16.npy")
df, sf, yf, _ = npyio.read("y16f.npy")
assert d == "<f8" and s == (T, D) and d16 == "<f2" and s16 == (T, D) and df == "<f4", (d, s, d16, s16, df)
# 16-bit output: the rotation rounded once to f16 (the f32 output of the same input, rounded to f16, except where
# that f32 value sits on an f16 rounding boundary)
f16 = lambda v: struct.unpack("<e", struct.pack("<e", v))[0]
assert sum(1 for a, b in zip(y16, yf) if a != f16(b)) <= 1, [(a, b) for a, b in zip(y16, yf) if a != f16(b)]
for t in range(T):
    for k in range(6):
        a = t * 10000.0 ** (-2 * k / 12)
        i, j = t * D + k, t * D + k + 6
        assert abs(y[i] - (x[i] * math.cos(a) - x[j] * math.sin(a))) < 1e-14, (t, k)
PYEOF
then pass; else fail "apply rope: f64 input, default positions, f16 output for f16 input (f32 with --dtype f32)"; fi
# bf16 in and out (bit patterns as uint16): the rotation passes check --x with --in-dtype bf16
"$PY" - <<'PYEOF'
import struct, npyio
_, shape, x, _ = npyio.read("x64.npy")
bits = [struct.unpack("<I", struct.pack("<f", v))[0] >> 16 for v in x]           # truncated to bf16
npyio.write("xb.npy", "<u2", shape, bits)
npyio.write("xbf.npy", "<f4", shape, [struct.unpack("<f", struct.pack("<I", b << 16))[0] for b in bits])
PYEOF
if "$POSENC" apply rope --preset hf-llama --head-dim 12 --in xb.npy --in-dtype bf16 --positions 0:5 --out yb.npy &&
   "$PY" -c 'import npyio; d, s, _, _ = npyio.read("yb.npy"); assert d == "<u2" and s == (5, 12), (d, s)' &&
   "$POSENC" check rope --preset hf-llama --head-dim 12 --x xbf.npy --in yb.npy --in-dtype bf16 --positions 0:5 >/dev/null
then pass; else fail "apply rope: bf16 in and out, passing check --x"; fi

# check: a cache made by `table rope` passes (every form); one perturbed entry fails (exit 1)
if "$POSENC" table rope --preset hf-llama --head-dim 16 --positions 0:64,5000 --form hf --out ch.npy &&
   "$POSENC" check rope --preset hf-llama --head-dim 16 --in ch.npy --form hf --positions 0:64,5000 --format json >ck.json &&
   "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["verdict"]=="pass", d["verdict"]' ck.json
then pass; else fail "check rope passes a cache from table rope (hf form)"; fi
ok=1
for form in pairs gptj ggml; do
  "$POSENC" table rope --preset ggml-normal --head-dim 8 --positions 0:32 --form $form --out c_$form.npy &&
    "$POSENC" check rope --preset ggml-normal --in c_$form.npy --form $form --positions 0:32 >/dev/null || { ok=0; echo "form $form"; }
done
"$POSENC" table rope --head-dim 8 --positions 0:16 --dtype f64 --out ce.npy &&
  "$POSENC" check rope --in ce.npy --positions 0:16 | grep -q '\*\*PASS\*\*' || { ok=0; echo "exact f64"; }
[[ $ok -eq 1 ]] && pass || fail "check rope passes caches from table rope (pairs, gptj, ggml; exact f64)"
"$PY" - <<'PYEOF'
import npyio
descr, shape, v, _ = npyio.read("ch.npy")
v[2 * 65 * 16 // 2 + 3 * 16 + 5] += 1e-3   # the sin block, position 3, column 5
npyio.write("chbad.npy", descr, shape, v)
PYEOF
"$POSENC" check rope --preset hf-llama --head-dim 16 --in chbad.npy --form hf --positions 0:64,5000 --format json >ckbad.json
rc=$?
if [[ $rc -eq 1 ]] && "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["verdict"]=="fail", d["verdict"]' ckbad.json
then pass; else fail "check rope: a perturbed cache must fail with exit 1 (got $rc)"; fi

# check --x: a rotation made by `apply rope` passes (forward and --inverse); the same tensor at other positions fails
if "$POSENC" check rope --preset hf-llama --head-dim 12 --rotary-dim 8 --x x.npy --in y.npy --positions 3,7,0,100,-5 \
     --format json >cx.json &&
   "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["verdict"]=="pass", d["verdict"]' cx.json &&
   "$POSENC" check rope --preset hf-llama --head-dim 12 --rotary-dim 8 --x y.npy --in z.npy --inverse \
     --positions 3,7,0,100,-5 >/dev/null
then pass; else fail "check rope --x passes rotations made by apply rope"; fi
"$POSENC" check rope --preset hf-llama --head-dim 12 --rotary-dim 8 --x x.npy --in y.npy --positions 4,7,0,100,-5 >/dev/null
rc=$?
[[ $rc -eq 1 ]] && pass || fail "check rope --x: a tensor rotated at other positions must fail with exit 1 (got $rc)"

# bad inputs: one 'posenc: error:' line, nothing on stdout, exit 2 (1 for I/O), no output file
# shellcheck disable=SC2086
{
expect_error 2 apply rope --in x.npy --dtype f16 --out out.npy
expect_error 2 check rope --x x.npy --in x64.npy
expect_error 2 check rope --x x.npy --in y.npy --form hf
expect_error 2 check rope --in ch.npy --form hf --inverse
expect_error 2 check rope --x x64.npy --in x64.npy --regime hf --head-dim 12
expect_error 1 check rope --x nosuch.npy --in x.npy
expect_error 2 table rope --positions 2199023255552 --out out.npy
expect_error 2 table rope --positions 0,-2199023255552 --out out.npy
expect_error 2 table rope --positions abc --out out.npy
expect_error 2 table rope --form nosuch --out out.npy
expect_error 2 table rope --head-dim 8 --rotary-dim 10 --out out.npy
expect_error 2 table rope --head-dim 7 --out out.npy
expect_error 2 table rope --rotary-dim 4 --partial-rotary-factor 0.5 --out out.npy
expect_error 2 table rope --partial-rotary-factor 1.5 --out out.npy
expect_error 2 table rope --partial-rotary-factor x --out out.npy
expect_error 2 table rope --preset gpt-neox --head-dim 12 --out out.npy
expect_error 2 table rope --preset nosuch --out out.npy
expect_error 2 table rope --base 0.5 --out out.npy
expect_error 2 table rope --dtype f16 --out out.npy
expect_error 2 freqs rope --head-dim 0
expect_error 2 apply rope --in x.npy --positions 0:4 --out out.npy
expect_error 2 apply rope --in x.npy --positions 0:4,2199023255552 --out out.npy
expect_error 2 apply rope --in x.npy --head-dim 16 --out out.npy
expect_error 2 apply rope --in x64.npy --heads-first --out out.npy
expect_error 2 apply rope --in x.npy --format csv --out out.csv
expect_error 1 apply rope --in nosuch.npy --out out.npy
expect_error 2 check rope --in ch.npy --form hf --positions 0:3
expect_error 2 check rope --in ch.npy --form hf --rotary-dim 8 --head-dim 16 --positions 0:64,5000
printf 'not an npy' >rjunk.npy
expect_error 1 check rope --in rjunk.npy
expect_error 1 table rope --head-dim 65536 --positions 0:1000000000000 --out out.npy
}
"$POSENC" table rope --positions 2199023255552 2>&1 | grep -q -- "--positions" && pass || fail "bad position: the error names --positions"
"$POSENC" apply rope --in x.npy --positions 0:4 2>&1 | grep -q -- "--positions: '0:4' has 4 positions" && pass || fail "wrong token count: the error names --positions"
"$POSENC" table rope --head-dim 7 2>&1 | grep -q -- "--head-dim = 7 is odd" && pass || fail "odd head_dim: the error names --head-dim, not the rotary_dim it implied"

# scores rope: <R(m) q_i, R(n) k_j> equals the dot product of the vectors rotated by `apply rope`, and depends only
# on n - m (both positions shifted by 1000)
"$PY" - <<'PYEOF'
import npyio, math
q = [math.sin(0.3 * i + 0.1) for i in range(3 * 8)]
k = [math.cos(0.7 * i + 0.2) for i in range(4 * 8)]
npyio.write("sq.npy", "<f8", (3, 8), q)
npyio.write("sk.npy", "<f8", (4, 8), k)
PYEOF
if "$POSENC" scores rope --preset hf-llama --head-dim 8 --regime exact --q sq.npy --k sk.npy --q-positions 5,6,7 --k-positions 0:4 --out s1.npy &&
   "$POSENC" scores rope --preset hf-llama --head-dim 8 --regime exact --q sq.npy --k sk.npy --q-positions 1005,1006,1007 --k-positions 1000:1004 --out s2.npy &&
   "$POSENC" apply rope --preset hf-llama --head-dim 8 --regime exact --in sq.npy --positions 5,6,7 --out rq.npy &&
   "$POSENC" apply rope --preset hf-llama --head-dim 8 --regime exact --in sk.npy --positions 0:4 --out rk.npy &&
   "$PY" - <<'PYEOF'
import npyio
_, sh, s1, _ = npyio.read("s1.npy"); _, _, s2, _ = npyio.read("s2.npy")
_, _, rq, _ = npyio.read("rq.npy"); _, _, rk, _ = npyio.read("rk.npy")
assert sh == (3, 4), sh
for i in range(3):
    for j in range(4):
        dot = sum(rq[i * 8 + c] * rk[j * 8 + c] for c in range(8))
        assert abs(s1[i * 4 + j] - dot) < 1e-12, (i, j, s1[i * 4 + j], dot)
        assert abs(s1[i * 4 + j] - s2[i * 4 + j]) < 1e-12, (i, j, s1[i * 4 + j], s2[i * 4 + j])
PYEOF
then pass; else fail "scores rope: rotated dot products, shift invariance"; fi
expect_error 2 scores rope --q sq.npy --k sk.npy --q-positions 0:2 --out out.npy
expect_error 2 scores rope --q sq.npy --k x.npy --out out.npy

# ======================================================================================================
# ---- T5 (relative attention bias buckets): index, bias, scores, check --------------------------------
# ======================================================================================================
# (32, 128) encoder: the bucket of j - i for a query at position 3 of 6 keys; decoder: later keys share bucket 0;
# bias entries are table[bucket][head]; scores = q.k + bias (no 1/sqrt(d)); check passes the bias, fails it
# transposed (i - j: DeBERTa's sign) with exit 1
"$PY" - <<'PYEOF'
import npyio
npyio.write("t5t.npy", "<f4", (32, 2), [b + h / 4 for b in range(32) for h in range(2)])
npyio.write("t5q.npy", "<f4", (2, 2, 4), [0.5, -1, 0.25, 2] * 4)
npyio.write("t5k.npy", "<f4", (2, 3, 4), [1, 0.5, -2, 0.25] * 6)
PYEOF
if "$POSENC" index t5 --preset t5-encoder --query-length 1 --key-length 140 --format csv >t5i.csv &&
   "$POSENC" index t5 --preset t5-decoder --query-length 3 --key-length 3 --format json >t5d.json &&
   "$POSENC" bias t5 --preset t5-encoder --heads 2 --table t5t.npy --query-length 3 --key-length 3 --dtype f64 --format json >t5b.json &&
   "$POSENC" scores t5 --preset t5-encoder --heads 2 --table t5t.npy --q t5q.npy --k t5k.npy --format json >t5s.json &&
   "$PY" - <<'PYEOF'
import csv, json
row = [int(v) for v in list(csv.reader(open("t5i.csv")))[1][1:]]
a = lambda d: row[139 - d]  # key 139 - d is d before the query (r = -d)
assert [a(d) for d in (0, 1, 7, 8, 12, 16, 32, 64, 91, 128, 139)] == [0, 1, 7, 8, 9, 10, 12, 14, 15, 15, 15], row
d = json.load(open("t5d.json"))
assert d["buckets"] == [[0, 0, 0], [1, 0, 0], [2, 1, 0]], d["buckets"]
b = json.load(open("t5b.json"))["bias"]  # rows (head, query row)
# head 1, query row 0 (position 0): keys 0, 1, 2 are r = 0, +1, +2: buckets 0, 17, 18
assert b[3] == [0.25, 17.25, 18.25], b
s = json.load(open("t5s.json"))
q, k = [0.5, -1, 0.25, 2], [1, 0.5, -2, 0.25]
dot = sum(x * y for x, y in zip(q, k))
# head 0, query row 1 (position 2 of 3 keys): key 0 is r = -2 (bucket 2), key 2 is r = 0 (bucket 0)
sc = s["scores"]  # rows (head, query row)
assert abs(sc[1][0] - (dot + 2)) < 1e-6 and abs(sc[1][2] - dot) < 1e-6, sc
PYEOF
then pass; else fail "t5: index, bias, scores (buckets of j - i, table entries, no 1/sqrt(d))"; fi
if "$POSENC" bias t5 --preset t5-encoder --heads 2 --table t5t.npy --key-length 40 --out t5bias.npy &&
   "$POSENC" check t5 --preset t5-encoder --heads 2 --table t5t.npy --in t5bias.npy | grep -q '\*\*PASS\*\*' &&
   "$PY" - <<'PYEOF'
import npyio
_, sh, v, _ = npyio.read("t5bias.npy")
H, L = sh[0], sh[1]
npyio.write("t5bias_T.npy", "<f4", sh, [v[(h * L + j) * L + i] for h in range(H) for i in range(L) for j in range(L)])
PYEOF
then
  "$POSENC" check t5 --preset t5-encoder --heads 2 --table t5t.npy --in t5bias_T.npy >/dev/null; rc=$?
  [[ $rc -eq 1 ]] && pass || fail "check t5: the transposed bias (i - j) must fail with exit 1 (got $rc)"
else fail "check t5 passes bias t5's output"; fi
expect_error 2 bias t5 --preset t5-encoder --heads 3 --table t5t.npy --key-length 4 --out out.npy
expect_error 2 index t5 --preset t5-encoder --key-length 4 --mask causal --out out.npy
expect_error 2 index t5 --num-buckets 8 --max-distance 2 --key-length 4 --out out.npy

# Shaw / t2t (j - i clipped to [-k, k], + k) and BERT relative_key (i - j + k, no clamp); scores add q.a^K before the
# 1/sqrt(d) scale; --v gives the attention output; check passes the index matrix and fails it transposed (exit 1)
"$PY" - <<'PYEOF'
import npyio
# k = 2, head_dim 2: 5 table rows; a^K[r] = (r, 0), a^V[r] = (0, 10 r)
npyio.write("shk.npy", "<f4", (5, 2), [x for r in range(5) for x in (r, 0)])
npyio.write("shv.npy", "<f4", (5, 2), [x for r in range(5) for x in (0, 10 * r)])
npyio.write("shq.npy", "<f4", (1, 4, 2), [1, 0] * 4)
npyio.write("shkk.npy", "<f4", (1, 4, 2), [0, 1] * 4)
npyio.write("shvv.npy", "<f4", (1, 4, 2), [1, 0] * 4)
PYEOF
if "$POSENC" index shaw --preset t2t --max-relative-position 2 --query-length 2 --key-length 6 --format json >shi.json &&
   "$POSENC" index shaw --preset bert-relative-key --max-relative-position 3 --key-length 4 --format json >shb.json &&
   "$POSENC" scores shaw --preset t2t --max-relative-position 2 --head-dim 2 --key-table shk.npy --value-table shv.npy --q shq.npy --k shkk.npy --mask none --format json >shs.json &&
   "$POSENC" scores shaw --preset t2t --max-relative-position 2 --head-dim 2 --key-table shk.npy --value-table shv.npy --q shq.npy --k shkk.npy --v shvv.npy --mask none --format json >sho.json &&
   "$PY" - <<'PYEOF'
import json, math
i = json.load(open("shi.json"))["indices"]
assert i == [[0, 0, 0, 1, 2, 3], [0, 0, 0, 0, 1, 2]], i  # queries at keys 4, 5
b = json.load(open("shb.json"))["indices"]
assert b == [[3, 2, 1, 0], [4, 3, 2, 1], [5, 4, 3, 2], [6, 5, 4, 3]], b
s = json.load(open("shs.json"))["scores"]
# q.k = 0; q.a^K[idx] = idx; scale 1/sqrt(2): row 0 (query 0) keys 0..3: idx 2, 3, 4, 4
assert all(abs(s[0][j] - v / math.sqrt(2)) < 1e-6 for j, v in enumerate([2, 3, 4, 4])), s
o = json.load(open("sho.json"))["output"]
e = [math.exp(v / math.sqrt(2)) for v in (2, 3, 4, 4)]
z1 = sum(w * 10 * r for w, r in zip(e, (2, 3, 4, 4))) / sum(e)
assert abs(o[0][0] - 1) < 1e-6 and abs(o[0][1] - z1) < 1e-4, (o, z1)
PYEOF
then pass; else fail "shaw: index (t2t, bert sign), scores (q.a^K / sqrt(d)), attention output with the value table"; fi
if "$POSENC" index shaw --preset t2t --key-length 50 --out shidx.npy &&
   "$POSENC" check shaw --preset t2t --in shidx.npy | grep -q '\*\*PASS\*\*' &&
   "$PY" - <<'PYEOF'
import npyio
_, sh, v, _ = npyio.read("shidx.npy")
L = sh[0]
npyio.write("shidx_T.npy", "<i8", sh, [v[j * L + i] for i in range(L) for j in range(L)])
PYEOF
then
  "$POSENC" check shaw --preset t2t --in shidx_T.npy >/dev/null; rc=$?
  [[ $rc -eq 1 ]] && pass || fail "check shaw: the transposed index matrix (BERT's sign) must fail with exit 1 (got $rc)"
else fail "check shaw passes index shaw's output"; fi
expect_error 2 index shaw --preset bert-relative-key --key-length 513 --out out.npy
expect_error 2 index shaw --preset t2t --key-length 4 --mask causal --out out.npy
expect_error 2 scores shaw --preset t2t --max-relative-position 2 --head-dim 2 --key-table shk.npy --q shq.npy --k shkk.npy --out out.npy

# NEZHA (r = clip(j - i, -K, K) + K into a fixed table whose row r is the paper sinusoid of r, not of r - K); scores
# add q.T[r] before the 1/sqrt(d) scale; --v adds T[r] to the values; check passes table nezha's output (its own
# regime) and fails HF's table held to the exact regime (exit 1)
"$PY" - <<'PYEOF'
import npyio
npyio.write("nzq.npy", "<f8", (1, 3, 2), [1, 0] * 3)
npyio.write("nzk.npy", "<f8", (1, 3, 2), [0, 0] * 3)
npyio.write("nzv.npy", "<f8", (1, 3, 2), [0, 0] * 3)
PYEOF
if "$POSENC" table nezha --max-relative-position 2 --depth 2 --regime exact --dtype f64 --format json >nzt.json &&
   "$POSENC" index nezha --max-relative-position 2 --depth 2 --query-length 2 --key-length 6 --format json >nzi.json &&
   "$POSENC" scores nezha --max-relative-position 2 --depth 2 --regime exact --q nzq.npy --k nzk.npy --mask none --format json >nzs.json &&
   "$POSENC" scores nezha --max-relative-position 2 --depth 2 --regime exact --q nzq.npy --k nzk.npy --v nzv.npy --mask none --format json >nzo.json &&
   "$PY" - <<'PYEOF'
import json, math
t = json.load(open("nzt.json"))["table"]
assert len(t) == 5 and all(abs(t[r][0] - math.sin(r)) < 1e-15 and abs(t[r][1] - math.cos(r)) < 1e-15 for r in range(5)), t
i = json.load(open("nzi.json"))["indices"]
assert i == [[0, 0, 0, 1, 2, 3], [0, 0, 0, 0, 1, 2]], i  # queries at keys 4, 5
s = json.load(open("nzs.json"))["scores"]
# q = (1, 0), k = 0: score(i, j) = T[r][0] / sqrt(2) = sin(r) / sqrt(2), r = clip(j - i, -2, 2) + 2
for a in range(3):
    for b in range(3):
        r = max(-2, min(2, b - a)) + 2
        assert abs(s[a][b] - math.sin(r) / math.sqrt(2)) < 1e-12, (a, b, s)
o = json.load(open("nzo.json"))["output"]
e = [math.exp(math.sin(max(-2, min(2, b)) + 2) / math.sqrt(2)) for b in range(3)]
z = [sum(w * t[max(-2, min(2, b)) + 2][c] for b, w in enumerate(e)) / sum(e) for c in range(2)]
assert all(abs(o[0][c] - z[c]) < 1e-12 for c in range(2)), (o, z)
PYEOF
then pass; else fail "nezha: table (sin/cos of the shifted index), index, scores (q.T[r] / sqrt(d)), output (v + T[r])"; fi
if "$POSENC" table nezha --preset nezha-cn-base --out nzhf.npy &&
   "$POSENC" check nezha --preset nezha-cn-base --in nzhf.npy | grep -q '\*\*PASS\*\*'
then
  "$POSENC" check nezha --preset nezha-cn-base --regime exact --in nzhf.npy >/dev/null; rc=$?
  [[ $rc -eq 1 ]] && pass || fail "check nezha: HF's float32 table held to the exact regime must fail with exit 1 (got $rc)"
else fail "check nezha passes table nezha's output"; fi
expect_error 2 table nezha --depth 7 --out out.npy
expect_error 2 index nezha --preset nezha-cn-base --key-length 4 --mask causal --out out.npy
expect_error 2 scores nezha --preset nezha-cn-base --q nzq.npy --k nzk.npy --out out.npy
expect_error 2 check nezha --preset nezha-cn-base --in nzq.npy

# Transformer-XL (row c of R = the distance min(klen - 1 - c, clamp_len), [sin | cos]; entry (i, j) reads row klen - 1 -
# (q_i - j), undefined for j > q_i: index -1, scores -inf); XLNet (pos_seq klen .. -qlen + 1, row qlen - i + j, the
# segment term); TENER (rows t = -L .. L - 1, the query term at j - i, the key term at i - j, unscaled). With d = 2
# (one frequency, w = 1), q = (1, 0), k = 0 and zero biases the score is the sin column of the row read, and
# W = identity keeps it: scale sin(distance) for TXL and XLNet, sin(j - i) + 0 for TENER.
"$PY" - <<'PYEOF'
import npyio
npyio.write("rq.npy", "<f8", (1, 2, 2), [1, 0] * 2)
npyio.write("rk.npy", "<f8", (1, 5, 2), [0, 0] * 5)
npyio.write("rw.npy", "<f8", (2, 2), [1, 0, 0, 1])
npyio.write("rtq.npy", "<f8", (1, 3, 4), [1, 0, 0, 0] * 3)
npyio.write("rtk.npy", "<f8", (1, 3, 4), [0, 0, 0, 0] * 3)
PYEOF
if "$POSENC" table transformer_xl --d-model 2 --key-length 5 --regime exact --dtype f64 --format json >txt.json &&
   "$POSENC" index transformer_xl --d-model 2 --query-length 2 --key-length 5 --format json >txi.json &&
   "$POSENC" scores transformer_xl --d-model 2 --q rq.npy --k rk.npy --r-net rw.npy --scale 1 --format json >txs.json &&
   "$POSENC" scores transformer_xl --d-model 2 --q rq.npy --k rk.npy --r-net rw.npy --scale 1 --form direct --format json >txd.json &&
   "$POSENC" table xlnet --d-model 2 --query-length 2 --key-length 5 --regime exact --dtype f64 --format json >xlt.json &&
   "$POSENC" index xlnet --attn-type uni --query-length 2 --key-length 5 --format json >xli.json &&
   "$POSENC" scores xlnet --d-model 2 --q rq.npy --k rk.npy --r rw.npy --scale 1 --format json >xls.json &&
   "$POSENC" table tener --d-head 4 --length 3 --regime exact --dtype f64 --format json >tnt.json &&
   "$POSENC" scores tener --q rtq.npy --k rtk.npy --format json >tns.json &&
   "$PY" - <<'PYEOF'
import json, math
t = json.load(open("txt.json"))
assert t["position"] == [4, 3, 2, 1, 0], t["position"]
assert all(abs(r[0] - math.sin(p)) < 1e-15 and abs(r[1] - math.cos(p)) < 1e-15 for r, p in zip(t["table"], t["position"]))
assert json.load(open("txi.json"))["indices"] == [[1, 2, 3, 4, -1], [0, 1, 2, 3, 4]]
for f in ("txs.json", "txd.json"):
    s = json.load(open(f))["scores"]
    for i in range(2):
        for j in range(5):
            d = 3 + i - j
            want = math.sin(d) if d >= 0 else None
            assert (s[i][j] is None or s[i][j] == "-inf" or s[i][j] == float("-inf")) if want is None else abs(s[i][j] - want) < 1e-12, (f, i, j, s)
x = json.load(open("xlt.json"))
assert x["position"] == [5, 4, 3, 2, 1, 0, -1], x["position"]
assert json.load(open("xli.json"))["indices"] == [[2, 3, 4, 5, -1], [1, 2, 3, 4, 5]]
s = json.load(open("xls.json"))["scores"]
for i in range(2):
    for j in range(5):
        assert abs(s[i][j] - math.sin(3 + i - j)) < 1e-12, ("xlnet", i, j, s)
tn = json.load(open("tnt.json"))
assert tn["t"] == [-3, -2, -1, 0, 1, 2], tn["t"]
assert tn["table"][3] == [0, 0, 1, 1], tn["table"][3]
s = json.load(open("tns.json"))["scores"]
for i in range(3):
    for j in range(3):
        assert abs(s[i][j] - math.sin(j - i)) < 1e-12, ("tener", i, j, s)
PYEOF
then pass; else fail "transformer_xl / xlnet / tener: tables, indices (junk marked -1), scores (both forms) from the definition"; fi
if "$POSENC" table transformer_xl --preset txl-wt103-base --d-model 16 --key-length 704 --out txp.npy &&
   "$POSENC" check transformer_xl --preset txl-wt103-base --d-model 16 --in txp.npy | grep -q '\*\*PASS\*\*' &&
   "$POSENC" table tener --preset tener-ontonotes --d-head 8 --length 700 --out tnp.npy &&
   "$POSENC" check tener --preset tener-ontonotes --d-head 8 --in tnp.npy | grep -q '\*\*PASS\*\*'
then
  "$POSENC" check transformer_xl --preset txl-wt103-base --d-model 16 --regime exact --in txp.npy >/dev/null; rc=$?
  [[ $rc -eq 1 ]] && pass || fail "check transformer_xl: the float32 table held to the exact regime must fail with exit 1 (got $rc)"
else fail "check transformer_xl / tener pass their tables"; fi
expect_error 2 table transformer_xl --d-model 7 --out out.npy
expect_error 2 index transformer_xl --key-length 4 --key-mask 0111 --out out.npy
expect_error 2 scores transformer_xl --d-model 2 --q rq.npy --k rk.npy --out out.npy
expect_error 2 scores tener --q rq.npy --k rk.npy --out out.npy
expect_error 2 scores xlnet --d-model 2 --q rq.npy --k rk.npy --r rw.npy --token-types 0,1,1 --out out.npy
expect_error 2 check xlnet --in rq.npy

# DeBERTa (rel = i - j, query i at position i, log buckets with ceil; c2p index clamp(b + span, 0, 2 span - 1)); scores
# add q.K_r[c] + k.Q_r[c] before the 1/sqrt(3 d) scale; check passes the matrix and fails it negated (exit 1)
"$PY" - <<'PYEOF'
import npyio
# buckets 4 (span 4: 8 table rows), head_dim 2: K_r[r] = (r, 0), Q_r[r] = (0, 10 r)
npyio.write("dbk.npy", "<f4", (8, 2), [x for r in range(8) for x in (r, 0)])
npyio.write("dbq.npy", "<f4", (8, 2), [x for r in range(8) for x in (0, 10 * r)])
npyio.write("dbqq.npy", "<f4", (1, 3, 2), [1, 0] * 3)
npyio.write("dbkk.npy", "<f4", (1, 3, 2), [0, 1] * 3)
npyio.write("dbkk2.npy", "<f4", (1, 2, 2), [0, 1] * 2)
PYEOF
if "$POSENC" index deberta --position-buckets 4 --max-relative-positions 8 --query-length 9 --key-length 4 --format json >dbr.json &&
   "$POSENC" index deberta --position-buckets 4 --max-relative-positions 8 --query-length 9 --key-length 4 --what c2p --format json >dbc.json &&
   "$POSENC" scores deberta --position-buckets 4 --max-relative-positions 8 --heads 1 --head-dim 2 --pos-key dbk.npy --pos-query dbq.npy --q dbqq.npy --k dbkk.npy --format json >dbs.json &&
   "$POSENC" scores deberta --position-buckets 4 --max-relative-positions 8 --heads 1 --head-dim 2 --pos-key dbk.npy --pos-query dbq.npy --q dbqq.npy --k dbkk2.npy --format json >dbs2.json &&
   "$PY" - <<'PYEOF'
import json, math
r = json.load(open("dbr.json"))["relative_positions"]
# HF build_relative_position(9, 4, bucket_size=4, max_position=8) (properties/heldout/data/hf/deberta_buckets.json)
assert r == [[0, -1, -2, -3], [1, 0, -1, -2], [2, 1, 0, -1], [3, 2, 1, 0], [3, 3, 2, 1], [3, 3, 3, 2], [3, 3, 3, 3],
             [3, 3, 3, 3], [4, 3, 3, 3]], r
c = json.load(open("dbc.json"))["indices"]
assert c == [[min(max(b + 4, 0), 7) for b in row] for row in r], c
s = json.load(open("dbs.json"))["scores"]
# q.k = 0; q.K_r[c] = c, k.Q_r[c] = 10 c; c = i - j + 4; scale 1/sqrt(2 * 3)
assert all(abs(s[i][j] - 11 * (i - j + 4) / math.sqrt(6)) < 1e-5 for i in range(3) for j in range(3)), s
# 3 queries, 2 keys (Lq > Lk: DeBERTa's queries are positions 0 .. Lq - 1, not the last keys)
s2 = json.load(open("dbs2.json"))["scores"]
assert len(s2) == 3 and all(len(row) == 2 for row in s2), s2
assert all(abs(s2[i][j] - 11 * (i - j + 4) / math.sqrt(6)) < 1e-5 for i in range(3) for j in range(2)), s2
PYEOF
then pass; else fail "deberta: index (HF's 9 x 4 buckets), c2p index, scores (c2p + p2c over sqrt(3 d); Lq > Lk too)"; fi
if "$POSENC" index deberta --preset deberta-v3-base --key-length 700 --out dbidx.npy &&
   "$POSENC" check deberta --preset deberta-v3-base --in dbidx.npy | grep -q '\*\*PASS\*\*' &&
   "$PY" - <<'PYEOF'
import npyio
_, sh, v, _ = npyio.read("dbidx.npy")
npyio.write("dbidx_neg.npy", "<i8", sh, [-x for x in v])
PYEOF
then
  "$POSENC" check deberta --preset deberta-v3-base --in dbidx_neg.npy >/dev/null; rc=$?
  [[ $rc -eq 1 ]] && pass || fail "check deberta: the key-minus-query matrix (T5's sign) must fail with exit 1 (got $rc)"
else fail "check deberta passes index deberta's output"; fi
expect_error 2 index deberta --position-buckets 1 --key-length 4 --out out.npy
expect_error 2 index deberta --preset deberta-v3-base --key-length 4 --what both --out out.npy
expect_error 2 scores deberta --position-buckets 4 --max-relative-positions 8 --heads 1 --head-dim 2 --pos-key dbk.npy --q dbqq.npy --k dbkk.npy --out out.npy
expect_error 2 scores deberta --position-buckets 4 --max-relative-positions 8 --heads 1 --head-dim 2 --pos-key dbk.npy --pos-query dbq.npy --q dbqq.npy --k dbkk.npy --mask causal --out out.npy

# ---- intermediates a user porting a model compares against (issue 42) -------------------------------------------
# Each expected value below is computed here from the reference code's definition (CONVENTIONS.md), not from another
# posenc output.
# T5: HF T5Attention.compute_bias's relative_position = memory_position - context_position before bucketing, with
# context_position = cache_position (arange(past, past + seq)); the cached decoder step (query_length 1 at cache
# position 6 of a 10-key static cache); buckets at a cache position (HF _relative_position_bucket, float32 steps).
if "$POSENC" index t5 --preset t5-encoder --what relative --query-length 3 --key-length 5 --format json >t5r.json &&
   "$POSENC" index t5 --preset t5-decoder --what relative --query-length 1 --query-offset 6 --key-length 10 --out t5r1.npy &&
   "$POSENC" index t5 --preset t5-decoder --query-length 2 --query-offset 40 --key-length 48 --format json >t5o.json &&
   "$POSENC" index t5 --preset t5-encoder --query-length 2 --query-offset 40 --key-length 48 --format json >t5oe.json &&
   "$PY" - <<'PYEOF'
import json, math, struct, npyio
f32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]
def relative(cache_position, key_length):  # memory_position - context_position
    return [[m - c for m in range(key_length)] for c in cache_position]
def bucket(rp, bidirectional, nb=32, md=128):  # _relative_position_bucket, torch float32 steps
    ret = 0
    if bidirectional:
        nb //= 2
        ret += nb if rp > 0 else 0
        rp = abs(rp)
    else:
        rp = -min(rp, 0)
    me = nb // 2
    if rp < me:
        return ret + rp
    large = me + int(f32(f32(f32(math.log(f32(rp / me))) / f32(math.log(md / me))) * (nb - me)))
    return ret + min(large, nb - 1)
d = json.load(open("t5r.json"))
assert d["what"] == "relative" and d["relative_positions"] == relative(range(2, 5), 5), d["relative_positions"]
descr, sh, v, _ = npyio.read("t5r1.npy")
assert descr == "<i8" and sh == (1, 10) and v == relative([6], 10)[0], (descr, sh, v)
for name, bi in (("t5o.json", False), ("t5oe.json", True)):
    b = json.load(open(name))
    want = [[bucket(r, bi) for r in row] for row in relative([40, 41], 48)]
    assert b["query_offset"] == 40 and b["buckets"] == want, (name, b["buckets"], want)
PYEOF
then pass; else fail "t5: index --what relative (j - cache_position, the cached decoder step) and --query-offset buckets"; fi
expect_error 2 index t5 --preset t5-decoder --what distances --key-length 4 --out out.npy
expect_error 2 index t5 --preset t5-decoder --query-offset -1 --key-length 4 --out out.npy

# DeBERTa: HF's p2c_pos = clamp(-r_pos + att_span, 0, 2 att_span - 1), r_pos = build_relative_position(key, key) when
# query and key lengths differ (build_rpos), with make_log_bucket_position in torch's float32 steps.
if "$POSENC" index deberta --position-buckets 4 --max-relative-positions 8 --query-length 3 --key-length 9 --what p2c --format json >dbp.json &&
   "$POSENC" index deberta --preset deberta-v3-base --query-length 5 --key-length 600 --what p2c --out dbp.npy &&
   "$PY" - <<'PYEOF'
import json, math, struct, npyio
f32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]
def log_bucket(rel, bucket_size, max_position):  # make_log_bucket_position, float32 torch
    sign = (rel > 0) - (rel < 0)
    mid = bucket_size // 2
    abs_pos = mid - 1 if -mid < rel < mid else abs(rel)
    if abs_pos <= mid:
        return rel
    x = f32(math.log(f32(abs_pos / mid))) / f32(math.log(f32((max_position - 1) / mid)))
    log_pos = f32(math.ceil(f32(f32(x) * (mid - 1))) + mid)
    return int(log_pos * sign)
def p2c_pos(lk, bucket_size, max_position):
    span = bucket_size
    b = {r: log_bucket(r, bucket_size, max_position) for r in range(-(lk - 1), lk)}
    r_pos = [[b[a - c] for c in range(lk)] for a in range(lk)]  # build_relative_position(key, key)
    return [[min(max(-x + span, 0), 2 * span - 1) for x in row] for row in r_pos]
d = json.load(open("dbp.json"))
assert d["what"] == "p2c" and d["p2c_pos"] == p2c_pos(9, 4, 8), d["p2c_pos"]
descr, sh, v, _ = npyio.read("dbp.npy")
want = p2c_pos(600, 256, 512)
assert descr == "<i8" and sh == (600, 600), (descr, sh)
bad = [(a, c) for a in range(600) for c in range(600) if v[a * 600 + c] != want[a][c]]
assert not bad, bad[:10]
PYEOF
then pass; else fail "deberta: index --what p2c (HF p2c_pos over the keys, key-major)"; fi

# Transformer-XL: mem_transformer.py's _rel_shift (zero column in front, view [klen + 1, qlen], drop a row, view back)
# written here on flat lists, junk included, and with zero_triu (x * tril(ones, klen - qlen): -0.0 for negative junk)
"$PY" - <<'PYEOF'
import npyio
q, k = 3, 5
npyio.write("txlx.npy", "<f4", (q, k), [-(10 * i + j + 1) - 0.25 for i in range(q) for j in range(k)])
npyio.write("txlx4.npy", "<f8", (q, k, 2, 3), [(-1) ** t * (100 * e + t + 0.5) for e in range(q * k) for t in range(6)])
PYEOF
if "$POSENC" index transformer_xl --what shifted --in txlx.npy --out txls.npy &&
   "$POSENC" index transformer_xl --what shifted --in txlx.npy --zero-triu --out txlz.npy &&
   "$POSENC" index transformer_xl --what shifted --in txlx.npy --format json >txls.json &&
   "$POSENC" index transformer_xl --what shifted --in txlx4.npy --zero-triu --out txl4.npy &&
   "$POSENC" index transformer_xl --what junk --query-length 3 --key-length 5 --out txlj.npy &&
   "$PY" - <<'PYEOF'
import json, struct, npyio
def rel_shift(x, q, k, inner, zero_triu):
    out = [0.0] * (q * k * inner)
    for t in range(inner):
        padded = []
        for i in range(q):
            padded += [0.0] + [x[(i * k + j) * inner + t] for j in range(k)]   # [q, k + 1]
        flat = padded[q:]                                                       # view [k + 1, q], drop row 0
        for e in range(q * k):
            i, j = divmod(e, k)
            out[e * inner + t] = flat[e] * (1.0 if j <= i + k - q else 0.0) if zero_triu else flat[e]
    return out
bits = lambda vals, c: [struct.pack("<" + c, v) for v in vals]
_, _, x, _ = npyio.read("txlx.npy")
for name, zt in (("txls.npy", False), ("txlz.npy", True)):
    descr, sh, v, _ = npyio.read(name)
    assert descr == "<f4" and sh == (3, 5), (descr, sh)
    assert bits(v, "f") == bits(rel_shift(x, 3, 5, 1, zt), "f"), (name, v)
junk = [[1 if j > i + 2 else 0 for j in range(5)] for i in range(3)]
d = json.load(open("txls.json"))
assert d["junk"] == junk and d["shifted"] == [rel_shift(x, 3, 5, 1, False)[i * 5:(i + 1) * 5] for i in range(3)], d
assert d["shifted"][0][3] == 0 and d["shifted"][0][4] == x[5], d["shifted"]   # the pad zero, then row 1's first entry
_, _, x4, _ = npyio.read("txlx4.npy")
descr, sh, v, _ = npyio.read("txl4.npy")
assert descr == "<f8" and sh == (3, 5, 2, 3) and bits(v, "d") == bits(rel_shift(x4, 3, 5, 6, True), "d"), v
descr, sh, v, _ = npyio.read("txlj.npy")
assert descr == "<i8" and sh == (3, 5) and v == [b for row in junk for b in row], v
PYEOF
then pass; else fail "transformer_xl: index --what shifted (_rel_shift bit for bit, junk and zero_triu) and --what junk"; fi
expect_error 2 index transformer_xl --what shifted --out out.npy
expect_error 2 index transformer_xl --what shifted --in txlx.npy --key-length 5 --out out.npy
expect_error 2 index transformer_xl --zero-triu --key-length 5 --out out.npy

# XLNet: HF XLNetModel.forward's seg_mat = one_hot(token_type_ids[:, None] != cat_ids[None, :], 2) as float32,
# cat_ids = [0] * mlen + token_type_ids; [qlen, klen, bsz = 1, 2]
if "$POSENC" index xlnet --what seg_mat --token-types 0011 --key-length 7 --out xsm.npy &&
   "$POSENC" index xlnet --what seg_mat --token-types 1,0,2 --format json >xsm.json &&
   "$PY" - <<'PYEOF'
import json, npyio
def seg_mat(types, mlen):
    cat = [0] * mlen + types
    return [float(c == int(types[i] != cat[j])) for i in range(len(types)) for j in range(len(cat)) for c in (0, 1)]
descr, sh, v, _ = npyio.read("xsm.npy")
assert descr == "<f4" and sh == (4, 7, 1, 2) and v == seg_mat([0, 0, 1, 1], 3), (descr, sh, v)
d = json.load(open("xsm.json"))
assert d["shape"] == [3, 3, 1, 2] and [x for r in d["seg_mat"] for x in r] == seg_mat([1, 0, 2], 0), d
PYEOF
then pass; else fail "xlnet: index --what seg_mat (HF's one-hot segment matrix, with and without memory)"; fi
expect_error 2 index xlnet --what seg_mat --key-length 4 --out out.npy
expect_error 2 index xlnet --what seg_mat --token-types 0011 --key-length 3 --out out.npy

# XLNet: HF rel_attn_core's segment term alone, ef = einsum("ijbs,ibns->bnij", seg_mat, einsum("ibnd,snd->ibns",
# q_head + r_s_bias, seg_embed)) of one sequence (bsz 1 squeezed), unscaled, memory keys type 0. The oracle here is the
# formula in float32 with NumPy's np.float32 scalar arithmetic (the add, then each product and partial sum rounded, e = 0
# first: posenc's stated order); without NumPy every step is rounded to float32 through struct instead (RN32(RN64(a op
# b)) = RN32(a op b) for float32 a, b), the same numbers. f64 inputs: the same sum in Python's doubles.
NPPY=$PY
if ! "$NPPY" -c 'import numpy' 2>/dev/null && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then NPPY=/usr/bin/python3; fi
"$NPPY" - <<'PYEOF'
import npyio
H, Lq, Lk, d = 2, 3, 5, 5
val = lambda n, s: [((7 * t + s) % 23) / 11.0 - 1.0 + 0.013 * s for t in range(n)]
npyio.write("xefq.npy", "<f4", (H, Lq, d), val(H * Lq * d, 1))
npyio.write("xefq64.npy", "<f8", (H, Lq, d), val(H * Lq * d, 1))
npyio.write("xefk.npy", "<f4", (H, Lk, d), val(H * Lk * d, 2))
npyio.write("xefsb.npy", "<f4", (H, d), val(H * d, 3))
npyio.write("xefse.npy", "<f4", (2, H, d), val(2 * H * d, 4))
PYEOF
cat >xef_oracle.py <<'PYEOF'
import struct, npyio
try:
    import numpy as np
    f32 = np.float32
except ImportError:
    np = None
    f32 = lambda x: struct.unpack("<f", struct.pack("<f", x))[0]
def ef(qfile, types, double=False):
    _, (H, Lq, d), q, _ = npyio.read(qfile)
    _, _, sb, _ = npyio.read("xefsb.npy")
    _, _, se, _ = npyio.read("xefse.npy")
    Lk = 5
    M = Lk - Lq
    cast = float if double else f32
    out = []
    for h in range(H):
        for i in range(Lq):
            x = [cast(cast(q[(h * Lq + i) * d + e]) + cast(sb[h * d + e])) for e in range(d)]
            val = []
            for s in (0, 1):
                acc = cast(0.0)
                for e in range(d):
                    acc = cast(acc + cast(x[e] * cast(se[(s * H + h) * d + e])))
                val.append(acc)
            for j in range(Lk):
                tj = 0 if j < M else types[j - M]
                out.append(float(val[int(types[i] != tj)]))
    return out
PYEOF
if "$POSENC" scores xlnet --what ef --q xefq.npy --k xefk.npy --r-s-bias xefsb.npy --seg-embed xefse.npy --token-types 021 --out xef.npy &&
   "$POSENC" scores xlnet --what ef --q xefq.npy --k xefk.npy --r-s-bias xefsb.npy --seg-embed xefse.npy --token-types 0,2,1 --mask none --format json >xef.json &&
   "$POSENC" scores xlnet --what ef --q xefq64.npy --k xefk.npy --r-s-bias xefsb.npy --seg-embed xefse.npy --token-types 021 --out xef64.npy &&
   "$NPPY" - <<'PYEOF'
import json, struct, npyio, xef_oracle
bits = lambda vals, c: [struct.pack("<" + c, v) for v in vals]
want = xef_oracle.ef("xefq.npy", [0, 2, 1])
descr, sh, v, _ = npyio.read("xef.npy")
assert descr == "<f4" and sh == (2, 3, 5), (descr, sh)
assert bits(v, "f") == bits(want, "f"), (v, want)
d = json.load(open("xef.json"))
assert d["what"] == "ef" and d["shape"] == [2, 3, 5] and d["token_types"] == [0, 2, 1] and "bsz 1" in d["note"], d
assert bits([x for r in d["ef"] for x in r], "f") == bits(v, "f"), d["ef"]
descr, sh, v64, _ = npyio.read("xef64.npy")
assert descr == "<f8" and sh == (2, 3, 5) and bits(v64, "d") == bits(xef_oracle.ef("xefq64.npy", [0, 2, 1], True), "d"), v64
# memory keys (j < 2) have type 0: query 0 (type 0) sees its same-segment value there and at key 2 (type 0), query 1
# (type 2) its different-segment value there, at key 2 and at key 4 (type 1)
assert v[0] == v[1] == v[2] != v[3] and v[5] == v[6] == v[7] != v[8], v[:15]
PYEOF
then pass; else fail "xlnet: scores --what ef equals the float32 (and float64) formula, npy and json"; fi

# check --what ef: posenc's own ef and the reverse-order float32 sum ([1, heads, qlen, klen], HF's shape) pass; same /
# other swapped and a -inf entry fail with exit 1
"$NPPY" - <<'PYEOF'
import npyio, xef_oracle
_, sh, v, _ = npyio.read("xef.npy")
want = xef_oracle.ef("xefq.npy", [0, 2, 1])
npyio.write("xef4.npy", "<f4", (1,) + sh, want)
swapped = xef_oracle.ef("xefq.npy", [1, 0, 2])   # every query's type changed: same and other exchanged at the memory keys
npyio.write("xefbad.npy", "<f4", sh, swapped)
inf = list(v)
inf[4] = float("-inf")                           # head 0, query 0, the last key: after the query
npyio.write("xefinf.npy", "<f4", sh, inf)
PYEOF
CKEF=(check xlnet --what ef --q xefq.npy --r-s-bias xefsb.npy --seg-embed xefse.npy --token-types 021)
if "$POSENC" "${CKEF[@]}" --in xef.npy --format json >xefck.json && "$POSENC" "${CKEF[@]}" --in xef4.npy >/dev/null &&
   "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["verdict"]=="pass", d["verdict"]; assert "float32 steps in any order" in json.dumps(d), d' xefck.json
then pass; else fail "check xlnet --what ef passes posenc's own ef and HF's [1, heads, qlen, klen] shape"; fi
for bad in xefbad.npy xefinf.npy; do
  "$POSENC" "${CKEF[@]}" --in "$bad" --format json >xefckbad.json 2>/dev/null; rc=$?
  if [[ $rc -eq 1 ]] && "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["verdict"]=="fail", d["verdict"]' xefckbad.json
  then pass; else fail "check xlnet --what ef: $bad must fail with exit 1 (got $rc)"; fi
done
EF=(scores xlnet --what ef --q xefq.npy --k xefk.npy --r-s-bias xefsb.npy --seg-embed xefse.npy)
expect_error 2 "${EF[@]}" --out out.npy
expect_error 2 "${EF[@]}" --token-types 021 --r-w-bias xefsb.npy --out out.npy
expect_error 2 "${EF[@]}" --token-types 021 --r-r-bias xefsb.npy --out out.npy
expect_error 2 "${EF[@]}" --token-types 021 --r xefsb.npy --out out.npy
expect_error 2 "${EF[@]}" --token-types 021 --scale 1 --out out.npy
expect_error 2 "${EF[@]}" --token-types 021 --key-mask 11111 --out out.npy
expect_error 2 "${EF[@]}" --token-types 021 --mask causal --out out.npy
expect_error 2 "${EF[@]}" --token-types 021 --form direct --out out.npy
expect_error 2 "${EF[@]}" --token-types 02 --out out.npy
expect_error 2 scores xlnet --what bd --q xefq.npy --k xefk.npy --r xefsb.npy --out out.npy
expect_error 2 check xlnet --what ef --in xef.npy --token-types 021
expect_error 2 check xlnet --what ef --in xef.npy --q xefq.npy
expect_error 2 check xlnet --what ef --in xef.npy --q xefq.npy --token-types 021 --query-length 3
expect_error 2 check xlnet --what ef --in xefk.npy --q xefq.npy --token-types 021
expect_error 2 check xlnet --in xef.npy --q xefq.npy
expect_error 2 check xlnet --what pe --in xef.npy
for flag in "--r-w-bias" "--r-r-bias" "--scale" "--key-mask" "--mask"; do
  "$POSENC" "${EF[@]}" --token-types 021 "$flag" x >/dev/null 2>xeferr.txt
  if grep -q -- "$flag" xeferr.txt; then pass; else fail "scores xlnet --what ef: the refusal of $flag names it: $(cat xeferr.txt)"; fi
done

# TENER: RelativeSinusoidalPositionalEmbedding.get_embedding(init_size + 1, d, padding_idx=0): positions
# arange(-N//2, N//2) (Python floor division), [sin | cos] with w_k = exp(-k ln(10000) / (h - 1)), a zero column for
# odd d, row 0 zeroed; computed here in float64 against posenc's exact float64 table
if "$POSENC" table tener --d-head 5 --init-size 12 --regime exact --what weights --dtype f64 --out tw.npy &&
   "$POSENC" table tener --d-head 4 --init-size 12 --regime exact --what weights --num-embeddings 8 --dtype f64 --format json >tw.json &&
   "$POSENC" table tener --preset tener-conll2003 --what weights --out twc.npy &&
   "$PY" - <<'PYEOF'
import json, math, npyio
def get_embedding(n, d):
    half = d // 2
    emb = [math.exp(k * -(math.log(10000) / (half - 1))) for k in range(half)]
    rows = []
    for p in range(-n // 2, n // 2):
        rows.append([math.sin(p * w) for w in emb] + [math.cos(p * w) for w in emb] + ([0.0] if d % 2 else []))
    rows[0] = [0.0] * d
    return rows
descr, sh, v, _ = npyio.read("tw.npy")
want = get_embedding(13, 5)
assert descr == "<f8" and sh == (13, 5), (descr, sh)
assert all(abs(v[r * 5 + c] - want[r][c]) < 1e-14 for r in range(13) for c in range(5)), v
assert v[:5] == [0.0] * 5 and all(v[r * 5 + 4] == 0.0 for r in range(13))
d = json.load(open("tw.json"))
assert d["t"] == list(range(-4, 4)) and d["table"][0] == [0, 0, 0, 0], d
assert all(abs(a - b) < 1e-14 for ra, rb in zip(d["table"], get_embedding(8, 4)) for a, b in zip(ra, rb)), d["table"]
descr, sh, v, _ = npyio.read("twc.npy")
want = get_embedding(1201, 128)
assert descr == "<f4" and sh == (1201, 128) and v[:128] == [0.0] * 128, (descr, sh)
assert all(abs(v[r * 128 + c] - want[r][c]) < 1e-4 for r in (1, 600, 601, 1200) for c in range(128))
PYEOF
then pass; else fail "tener: table --what weights (get_embedding's whole buffer, padding row 0 zeroed)"; fi
expect_error 2 table tener --d-head 4 --what weights --num-embeddings 0 --out out.npy
expect_error 2 table tener --d-head 4 --what weights --length 4 --out out.npy

# ggml: ggml_rope_yarn_corr_dim(n_dims, n_ctx_orig, beta, base) = n_dims * logf(n_ctx_orig / (beta * 2 * (float)M_PI))
# / (2 * logf(base)) for beta_fast and beta_slow, every step in float32 (here: each double result rounded to float,
# math.log's double log rounded to float as a correctly rounded logf), then ggml_rope_yarn_corr_dims' floor / ceil /
# clamps
if "$POSENC" freqs rope --preset ggml-neox --head-dim 128 --regime ggml --scaling yarn --factor 4 --original-context 4096 --what corr-dims --out ycd.npy &&
   "$POSENC" freqs rope --preset ggml-neox --head-dim 64 --rotary-dim 32 --base 1000000 --regime ggml --scaling yarn --factor 8 --original-context 8192 --beta-fast 24 --beta-slow 2 --what corr-dims --format json >ycd.json &&
   "$PY" - <<'PYEOF'
import json, math, struct, npyio
f32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]
def corr_dim(n_dims, n_ctx_orig, beta, base):
    den = f32(f32(f32(beta) * 2.0) * f32(math.pi))
    num = f32(n_dims * f32(math.log(f32(n_ctx_orig / den))))
    return f32(num / f32(2.0 * f32(math.log(f32(base)))))
descr, sh, v, _ = npyio.read("ycd.npy")
want = [corr_dim(128, 4096, 32, 10000.0), corr_dim(128, 4096, 1, 10000.0)]
assert descr == "<f4" and sh == (2,) and v == want, (v, want)
d = json.load(open("ycd.json"))
want = [corr_dim(32, 8192, 24, 1e6), corr_dim(32, 8192, 2, 1e6)]
assert [f32(x) for x in d["corr_dims"]] == want, (d["corr_dims"], want)  # JSON: the shortest digits of a float32
assert d["dims"] == [max(0.0, math.floor(want[0])), min(31.0, math.ceil(want[1]))], d["dims"]
PYEOF
then pass; else fail "rope: freqs --what corr-dims (ggml_rope_yarn_corr_dims before floor / ceil, float32)"; fi
expect_error 2 freqs rope --preset hf-llama --head-dim 64 --what corr-dims --out out.npy

# ALiBi: ofirpress's get_slopes(n) itself, in Python floats, for powers of two and the interleaved others
if "$PY" - "$POSENC" <<'PYEOF'
import json, math, subprocess, sys, npyio
def get_slopes(n):  # ofirpress/attention_with_linear_biases fairseq/models/transformer.py
    def get_slopes_power_of_2(n):
        start = (2 ** (-2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio ** i for i in range(n)]
    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return get_slopes_power_of_2(closest_power_of_2) + get_slopes(2 * closest_power_of_2)[0::2][:n - closest_power_of_2]
for n in (1, 3, 8, 12, 16, 20, 32, 40, 64, 96, 112, 128):
    out = subprocess.run([sys.argv[1], "freqs", "alibi", "--heads", str(n), "--regime", "bloom", "--what", "get_slopes",
                          "--format", "json"], capture_output=True, text=True, check=True).stdout
    got = json.loads(out)["slopes"]
    assert got == get_slopes(n), (n, got, get_slopes(n))
subprocess.run([sys.argv[1], "freqs", "alibi", "--heads", "12", "--what", "get_slopes", "--out", "gs.npy"], check=True)
descr, sh, v, _ = npyio.read("gs.npy")
assert descr == "<f8" and sh == (12,) and v == get_slopes(12), v
PYEOF
then pass; else fail "alibi: freqs --what get_slopes (the float64 list of ofirpress's get_slopes)"; fi
expect_error 2 freqs alibi --heads 12 --what get_slopes --bias-max 6 --out out.npy

# ---- hostile and careless inputs (issue 42) ------------------------------------------------------------------
# Each case: the exit status, one short 'posenc: error:' line naming the option the user typed (and matching a
# pattern), no control byte on the terminal, nothing on stdout, no output file; endless inputs under a timeout and
# a 4 GiB address-space limit (before the fix they were read until memory ran out). Under AddressSanitizer
# (scripts/sanitize.sh sets ASAN_OPTIONS) the limit is left out: ASan reserves terabytes of shadow address space at
# start and aborts under any such limit; the timeout still bounds an endless input, and ASan reports any overrun.
refused() {  # refused STATUS FLAG PATTERN ARGS...
  local want=$1 flag=$2 pattern=$3; shift 3
  local limit=4194304
  [[ -n ${ASAN_OPTIONS:-} ]] && limit=unlimited
  scenario "posenc $* is refused naming $flag"
  rm -f out.* ./*.tmp-*
  (ulimit -v "$limit"; exec timeout 60 "$POSENC" "$@") >stdout.txt 2>stderr.txt
  local rc=$?
  if [[ $rc -ne $want ]]; then fail "posenc $*: exit status $rc, expected $want: $(head -c 300 stderr.txt)"; return; fi
  if [[ $(wc -l <stderr.txt) -ne 1 ]] || ! grep -q '^posenc: error: ' stderr.txt; then
    fail "posenc $*: stderr is not one 'posenc: error:' line: $(head -c 300 stderr.txt)"; return; fi
  if [[ $(wc -c <stderr.txt) -gt 1200 ]]; then fail "posenc $*: error line of $(wc -c <stderr.txt) bytes"; return; fi
  if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' stderr.txt; then fail "posenc $*: control bytes on stderr"; return; fi
  if ! grep -qF -- "$flag" stderr.txt; then fail "posenc $*: the message does not name $flag: $(cat stderr.txt)"; return; fi
  if ! grep -qE -- "$pattern" stderr.txt; then fail "posenc $*: the message does not say /$pattern/: $(cat stderr.txt)"; return; fi
  if [[ -s stdout.txt ]]; then fail "posenc $*: wrote to stdout"; return; fi
  if compgen -G "out.*" >/dev/null || compgen -G "*.tmp-*" >/dev/null; then fail "posenc $*: left an output file"; return; fi
  pass "$(cat stderr.txt)"
}
"$PY" - <<'PYEOF'
n = 300000
open("deep-spec.json", "w").write('{"dim": ' + "[" * n + "]" * n + "}")
open("deep-config.json", "w").write('{"model_type": "llama", "rope_scaling": ' + '{"a": ' * n + "1" + "}" * n + "}")
open("deep-weights.json", "w").write("[" * n + "]" * n)
open("nested-128.json", "w").write('{"dim": ' + "[" * 127 + "]" * 127 + "}")
open("long-spec.json", "w").write('{"dim": "\\u001b[31m' + "x" * 3000000 + '"}')
open("esc-key.json", "w").write('{"\\u001b[2J": 1}')
open("esc-config.json", "w").write('{"model_type": "llama", "rope_scaling": {"rope_type": "linear", "factor": 2, '
                                   '"\\u001b[31mfactr": 1}}')
open("heads.json", "w").write('{"heads": -1}')
import npyio
npyio.write("empty.npy", "<f4", (0, 128), [])
PYEOF
# 1. nesting: refused before anything recurses (300,000 levels was SIGSEGV), at any input; 128 levels are parsed.
refused 1 --spec "more than 128 deep" table sinusoidal --spec deep-spec.json --out out.npy
refused 1 --spec "more than 128 deep" bias alibi --spec deep-spec.json --key-length 4 --out out.npy
refused 1 --config "more than 128 deep" freqs rope --config deep-config.json --out out.json
refused 1 --weights "more than 128 deep" bias fire --preset fire --weights deep-weights.json --key-length 8 --out out.npy
refused 2 --spec "\"dim\" = .* wrong JSON type" table sinusoidal --spec nested-128.json --out out.npy
# values and keys of a user's file: short excerpts, control bytes escaped
refused 2 --spec 'chars\)' table sinusoidal --spec long-spec.json --out out.npy
refused 2 'x1b' "not a field" table sinusoidal --spec esc-key.json --out out.npy
refused 2 'rope_scaling' "x1b" freqs rope --config esc-config.json --out out.json
# 3. --out '' (an unset shell variable) is not stdout
refused 2 --out "empty path" table sinusoidal --dim 8 --positions 0:2 --out ''
refused 2 --out "empty path" check sinusoidal --preset vaswani --dim 8 --in empty.npy --out ''
# 6. --out onto an input (the same file by another path or a hard link too): refused, the input untouched
"$POSENC" table sinusoidal --preset fairseq --dim 8 --positions 2:10 --out own.npy && cp own.npy own-copy.npy && ln own.npy own-link.npy
mkdir -p sub
refused 2 --out "is the file --in reads" check sinusoidal --preset fairseq --dim 8 --positions 2:10 --in own.npy --out own.npy
refused 2 --out "is the file --in reads" check sinusoidal --preset fairseq --dim 8 --positions 2:10 --in own.npy --out sub/../own.npy
refused 2 --out "is the file --in reads" identify sinusoidal --in own.npy --out own-link.npy
scenario "--out onto an input: the input is untouched"
cmp -s own.npy own-copy.npy && pass || fail "--out onto --in changed the input"
"$POSENC" table sinusoidal --dim 8 --positions 0:2 --format json --out spec-src.json
refused 2 --out "is the file --spec reads" table sinusoidal --spec spec-src.json --out spec-src.json
# 4. endless inputs: refused after a bounded read, naming the option
refused 1 --spec "larger than 64 MiB" table sinusoidal --spec /dev/zero --out out.npy
refused 1 --spec "larger than 64 MiB" table sinusoidal --spec /dev/urandom --out out.npy
refused 1 --config "larger than 64 MiB" freqs rope --config /dev/zero --out out.json
refused 1 --weights "larger than 64 MiB" bias fire --preset fire --weights /dev/urandom --key-length 8 --out out.npy
refused 1 --in "not a .npy file" check sinusoidal --preset vaswani --dim 8 --in /dev/zero --out out.json
refused 1 --in "not a .npy file" identify sinusoidal --in /dev/urandom --out out.json
refused 1 --tokens-file "not a .npy file" ids learned --preset roberta --tokens-file /dev/zero --out out.json
# an .npy header followed by an endless stream: its data is read, then the extra bytes refused
{ printf '\x93NUMPY\x01\x00\x76\x00'; printf "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 8), }%*s\n" 58 ''; } >hdr.bin
scenario "setup: hdr.bin is a 128-byte .npy preamble and header"
[[ $(wc -c <hdr.bin) -eq 128 ]] && pass || fail "hdr.bin has $(wc -c <hdr.bin) bytes"
refused 1 --in "trailing bytes" check sinusoidal --preset vaswani --dim 8 --in <(cat hdr.bin /dev/zero) --out out.json
# 5. out of range, named, and one rule for numbers
refused 2 --spec "\"heads\" = -1 is out of range; accepted: an integer in \[1, " bias alibi --spec heads.json --key-length 4 --out out.npy
refused 2 --base "decimal" table sinusoidal --base=0x1p3 --out out.npy
refused 2 --dim "decimal" table sinusoidal --dim=0x10 --out out.npy
refused 2 --threads "decimal" table sinusoidal --threads=0x2 --out out.npy
refused 2 --in "no values" identify sinusoidal --in empty.npy
refused 2 --in "no values" check nezha --preset nezha-cn-base --in empty.npy
"$POSENC" ids learned --preset opt --mask 00110 --out ids5b.npy
refused 2 --in "position ids per sequence, but --mask gives 7" check learned --preset opt --in ids5b.npy --mask 0011011
# 7. help states the range an option has where it applies, and when it applies
scenario "check rope --help: context-dependent ranges as where they apply"
"$POSENC" check rope --help >help.txt
if grep -qF 'a real in [1, 1]' help.txt || grep -qF 'an integer in [0, 0]' help.txt || grep -qF '[32, 32]' help.txt; then
  fail "check rope --help states a range of one value: $(grep -E '\[1, 1\]|\[0, 0\]|\[32, 32\]' help.txt | head -3)"
elif ! grep -q 'only with --scaling yarn' help.txt; then fail "check rope --help does not say when --beta-fast applies"
else pass; fi
scenario "index t5 --help: a range that depends on a switch is stated for both settings; the decoder accepts 2 buckets"
"$POSENC" index t5 --help >help.txt
if ! grep -qF 'with --bidirectional false: an integer in [2, 65536]' help.txt; then
  fail "index t5 --help does not state the decoder's --num-buckets range: $(grep -F -- '--num-buckets' help.txt)"
elif ! "$POSENC" index t5 --preset t5-decoder --num-buckets 2 --max-distance 4 --key-length 4 --format csv >/dev/null; then
  fail "index t5 --preset t5-decoder --num-buckets 2 refused"
else pass; fi
refused 2 --num-buckets "= 3 is out of range" index t5 --preset t5-encoder --num-buckets 3
# 8. a bad value inside a --spec file is named as the file's field, not as a flag the user never typed
printf '{"heads": 0}' >spec0.json
refused 2 --spec '"heads" = 0 is out of range' bias alibi --spec spec0.json --query-length 2 --key-length 2
refused 2 --heads "= 0 is out of range" bias alibi --spec spec0.json --heads 0 --query-length 2 --key-length 2

finish
