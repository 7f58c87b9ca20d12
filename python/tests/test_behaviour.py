"""The module's own behaviour: lifetimes and references, the GIL, bad arguments, in-place apply, argument forms,
posenc.testing. (test_commands.py holds every verb x scheme to the program's output.)"""
import gc
import os
import sys
import threading
import time
import weakref

import numpy as np
import pytest

import posenc
from posenc.testing import PosencMismatch, assert_matches_posenc

ROPE = dict(preset="hf-llama", head_dim=16, form="hf")


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# ---- lifetimes and references ------------------------------------------------------------------------------------

def test_no_leak_over_many_calls():
    """10^5 calls (POSENC_PY_CALLS) of a small table and of a small apply: resident memory grows by less than
    8 MiB, and the input array's reference count is unchanged (a leaked result buffer of the table alone would be
    10^5 x 192 bytes of data plus its header = 24 MiB; a leaked reference keeps every input alive)."""
    calls = int(os.environ.get("POSENC_PY_CALLS", "100000"))
    x = np.ones((2, 1, 16), np.float32)
    for _ in range(1000):
        posenc.table("sinusoidal", preset="vaswani", dim=8, positions="0:4")
    gc.collect()
    before, refs = rss_bytes(), sys.getrefcount(x)
    for i in range(calls):
        if i % 2:
            posenc.table("sinusoidal", preset="vaswani", dim=8, positions="0:6")
        else:
            posenc.apply("rope", x, [0, 1], **{k: v for k, v in ROPE.items() if k != "form"})
    gc.collect()
    assert sys.getrefcount(x) == refs
    assert rss_bytes() - before < 8 << 20, f"resident memory grew by {(rss_bytes() - before) >> 10} KiB"


def test_result_owns_its_memory():
    """A result is a view of the bytes the command wrote and keeps them alive: nothing dangles after the call's
    inputs and every other reference are gone."""
    x = np.arange(3 * 2 * 16, dtype=np.float32).reshape(3, 2, 16)
    out = posenc.apply("rope", x, range(3), preset="hf-llama", head_dim=16)
    expected = out.copy()
    base = out.base
    assert base is not None and not np.shares_memory(out, x)
    probe = weakref.ref(x)
    del x
    gc.collect()
    assert probe() is None, "the module kept a reference to its input"
    for _ in range(50):  # reuse the freed memory
        posenc.table("rope", positions="0:64", **ROPE)
    assert out.tobytes() == expected.tobytes()
    del base
    gc.collect()
    assert out.sum() == expected.sum()


# ---- the GIL -----------------------------------------------------------------------------------------------------

def test_gil_released_while_computing():
    """While one thread is inside a command another runs Python. The other thread stamps the time in a loop. A
    command that held the GIL would let it run only around the call (where the interpreter may switch threads, at
    most a switch interval of 1 ms at a time), never in the middle of a check of ~0.3 s; a released GIL lets it
    stamp all along."""
    cache = posenc.table("rope", positions="0:4096", **ROPE)
    stamps, stop = [], threading.Event()

    def stamp():
        while not stop.is_set():
            stamps.append(time.perf_counter())

    old = sys.getswitchinterval()
    sys.setswitchinterval(0.001)
    try:
        t = threading.Thread(target=stamp)
        t.start()
        t0 = time.perf_counter()
        r = posenc.check("rope", cache, positions="0:4096", threads=1, **ROPE)
        t1 = time.perf_counter()
        stop.set()
        t.join()
    finally:
        sys.setswitchinterval(old)
    assert r.passed
    middle = (t0 + (t1 - t0) / 4, t1 - (t1 - t0) / 4)
    inside = sum(1 for s in stamps if middle[0] < s < middle[1])
    assert inside > 0, (f"no stamp of the other thread in the middle half of a {t1 - t0:.3f} s check "
                        f"({len(stamps)} stamps in all): the GIL was held")


def test_two_threads_at_once_give_the_same_results():
    """Commands run on several threads at once (each its own command line state): each thread's results are those
    of a lone call, bit for bit."""
    expected_table = posenc.table("rope", positions="0:512", **ROPE)
    expected_check = posenc.check("rope", expected_table, positions="0:512", **ROPE).fields
    errors = []

    def work():
        try:
            for _ in range(5):
                assert posenc.table("rope", positions="0:512", **ROPE).tobytes() == expected_table.tobytes()
                assert posenc.check("rope", expected_table, positions="0:512", **ROPE).fields == expected_check
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


# ---- bad arguments -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("call,exc,words", [
    (lambda: posenc.table("rope", preset="hf-llama", head_dim=7), ValueError, ["head_dim (--head-dim)", "7", "accepted"]),
    (lambda: posenc.table("rope", preset="nosuch"), ValueError, ["preset (--preset)", "nosuch", "hf-llama"]),
    (lambda: posenc.table("rope", hed_dim=8), TypeError, ["hed_dim", "accepted", "head_dim"]),
    (lambda: posenc.table("nosuch"), ValueError, ["nosuch", "rope"]),
    (lambda: posenc.command("frobnicate", "rope"), ValueError, ["frobnicate"]),
    (lambda: posenc.table("rope", positions="0:4:0", **ROPE), ValueError, ["positions (--positions)", "0:4:0"]),
    (lambda: posenc.table("rope", positions=[], **ROPE), ValueError, ["positions", "empty"]),
    (lambda: posenc.table("rope", positions=[2**41], **ROPE), ValueError, ["positions (--positions)"]),
    (lambda: posenc.table("rope", threads=-1, **ROPE), ValueError, ["threads (--threads)", "-1"]),
    (lambda: posenc.table("rope", base=float("nan"), **ROPE), ValueError, ["base", "nan"]),
    (lambda: posenc.apply("rope", np.zeros((2, 16), np.complex64), preset="hf-llama", head_dim=16), ValueError,
     ["x (--in)", "accepted"]),
    (lambda: posenc.apply("rope", np.zeros((2, 16), np.float32), preset="hf-llama", head_dim=8), ValueError,
     ["16", "8"]),
    (lambda: posenc.check("rope", np.zeros((2, 4, 32), np.float32)[:, :, ::2], **ROPE), ValueError,
     ["array", "non-contiguous", "ascontiguousarray"]),
    (lambda: posenc.check("rope", np.zeros((0, 16), np.float32), **ROPE), ValueError, ["array (--in)", "no values"]),
    (lambda: posenc.check("rope", "/nonexistent/cache.npy", **ROPE), OSError, ["/nonexistent/cache.npy"]),
    (lambda: posenc.check("rope", object(), **ROPE), ValueError, ["array", "object", "accepted"]),
    (lambda: posenc.table("rope", positions="0:1099511627776", **ROPE), MemoryError, ["positions", "memory"]),
    (lambda: posenc.table("rope", positions="0:4", out="/nonexistent/dir/t.npy", **ROPE), OSError,
     ["out (--out)", "/nonexistent/dir/t.npy"]),
    (lambda: posenc.table("rope", config={"rope_theta": "x"}, head_dim=16), ValueError, ["config"]),
    (lambda: posenc.apply("rope", np.zeros((1, 16), np.float32), preset="hf-llama", head_dim=16, inverse="yes"),
     ValueError, ["inverse", "True or False"]),
    (lambda: posenc.apply("rope", np.asfortranarray(np.zeros((3, 16), np.float32)), preset="hf-llama", head_dim=16),
     ValueError, ["x: a non-contiguous array", "strides (4, 12)"]),
])
def test_bad_arguments_raise_clear_errors(call, exc, words):
    with pytest.raises(exc) as e:
        call()
    for w in words:
        assert w in str(e.value), f"{w!r} not in {str(e.value)!r}"


def test_failures_leave_the_module_usable():
    for _ in range(3):
        with pytest.raises(ValueError):
            posenc.table("rope", preset="hf-llama", head_dim=7)
    assert posenc.table("rope", positions="0:2", **ROPE).shape == (2, 2, 16)


# ---- apply in place, argument forms ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_apply_inplace_equals_apply(dtype):
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, (5, 2, 16)).astype(dtype)
    expected = posenc.apply("rope", x, np.arange(3, 8), preset="gpt-neox", head_dim=16)
    y = x.copy()
    assert posenc.apply("rope", y, np.arange(3, 8), preset="gpt-neox", head_dim=16, inplace=True) is y
    assert y.dtype == dtype and y.tobytes() == expected.tobytes()
    assert not np.array_equal(y, x)


def test_apply_inplace_refuses_a_result_of_another_type():
    x = np.zeros((2, 16), np.float16)
    with pytest.raises(ValueError, match="inplace=True"):
        posenc.apply("rope", x, preset="hf-llama", head_dim=16, dtype="f32", inplace=True)


def test_position_arrays_equal_position_text():
    """An integer array of positions is sent as runs (0:131072, single items) that mean the same positions."""
    ref = posenc.table("rope", positions="0:40,7,100:40:-3,5,5,9", **ROPE)
    arr = np.concatenate([np.arange(40), [7], np.arange(100, 40, -3), [5, 5, 9]])
    assert posenc.table("rope", positions=arr, **ROPE).tobytes() == ref.tobytes()
    assert posenc._runs_text("p", np.arange(131072)) == "0:131072"
    assert posenc.table("rope", positions=range(0, 12, 3), **ROPE).tobytes() == \
        posenc.table("rope", positions="0:12:3", **ROPE).tobytes()


def test_config_as_dict_or_path(tmp_path):
    config = {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "rope_theta": 500000.0, "max_position_embeddings": 4096,
              "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                               "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}
    path = tmp_path / "config.json"
    path.write_text(__import__("json").dumps(config))
    a = posenc.table("rope", positions=np.arange(64), config=config)
    b = posenc.table("rope", positions=np.arange(64), config=str(path))
    assert a.shape == b.shape and a.tobytes() == b.tobytes()
    assert not np.array_equal(a, posenc.table("rope", positions=np.arange(64), preset="hf-llama", head_dim=64))


def test_spec_dict_replays_a_report():
    table = posenc.table("sinusoidal", preset="tensor2tensor", dim=16, positions="0:10")
    spec = posenc.identify(table).fields["spec"]
    assert posenc.table("sinusoidal", spec=spec, positions="0:10").tobytes() == table.tobytes()


def test_json_format_returns_the_programs_document():
    doc = posenc.freqs("rope", format="json", **{k: v for k, v in ROPE.items() if k != "form"})
    assert doc["scheme"] == "rope" and "spec" in doc


def test_out_writes_the_file(tmp_path):
    path = tmp_path / "t.npy"
    assert posenc.table("rope", positions="0:4", out=str(path), **ROPE) is None
    assert np.load(path).tobytes() == posenc.table("rope", positions="0:4", **ROPE).tobytes()


# ---- reports and posenc.testing ----------------------------------------------------------------------------------

def test_report_fields_and_summary():
    cache = posenc.table("rope", positions="0:32", regime="hf", **ROPE)
    r = posenc.check("rope", cache, positions="0:32", regime="hf", **ROPE)
    assert r.passed and bool(r) and r.verdict == "pass" and r["budget_row"] == r.budget_row
    assert "rope.check.envelope" in r.summary() and "PASS" in r.summary()
    with pytest.raises(AttributeError, match="verdict"):
        r.no_such_field


def test_assert_matches_posenc_passes_and_fails_with_the_worst_entries():
    cache = posenc.table("rope", positions="0:32", regime="hf", **ROPE)
    assert assert_matches_posenc(cache, "rope", positions="0:32", regime="hf", **ROPE).passed
    wrong = cache.copy()
    wrong[0, 31, 3] = np.nextafter(wrong[0, 31, 3], np.float32(2), dtype=np.float32) * np.float32(1.001)
    with pytest.raises(PosencMismatch) as e:
        assert_matches_posenc(wrong, "rope", positions="0:32", regime="hf", **ROPE)
    text = str(e.value)
    assert isinstance(e.value, AssertionError) and "rope.check.envelope" in text and "FAIL" in text
    assert "| 31 | 3 |" in text, "the worst entry (position 31, column 3) is not shown"
    assert e.value.report.passed is False


# ---- identify across schemes -------------------------------------------------------------------------------------

def test_identify_without_a_scheme_names_the_scheme_and_convention():
    """posenc.identify(array) asks every scheme with identify: a RoPE cache (scaled, base changed) is named as RoPE
    with exactly those differences, a sinusoidal table as its preset, and a random array is no match."""
    cache = posenc.table("rope", preset="hf-llama", head_dim=128, base=500000, scaling="llama3", factor=8,
                         original_context=8192, form="hf", positions=np.arange(256))
    r = posenc.identify(cache)
    assert r.passed and r.scheme == "rope" and r.form == "hf" and r.preset == "hf-llama"
    assert r.differs == ["base: 10000 -> 5e+05", "scaling: none -> llama3", "factor: 1 -> 8",
                         "original_context: 0 -> 8192"]
    t = posenc.table("sinusoidal", preset="fairseq", dim=64, positions=range(100))
    s = posenc.identify(t)
    assert s.passed and s.scheme == "sinusoidal" and s.preset == "fairseq" and s.differs == []
    noise = np.random.default_rng(3).uniform(-1, 1, (16, 64)).astype(np.float32)
    assert not posenc.identify(noise).passed


def test_identify_alibi_slopes_and_bias():
    slopes = posenc.freqs("alibi", preset="bloom", heads=12)
    r = posenc.identify(slopes, "alibi")
    assert r.passed and r.regime == "bloom" and r.differs == []
    bias = posenc.bias("alibi", preset="mpt", heads=8, key_length=32, query_length=16, mask="causal")
    assert posenc.identify(bias).scheme == "alibi" and posenc.identify(bias).passed
    assert not posenc.identify(slopes[::-1].copy(), "alibi").passed


def test_identify_shaw_index():
    idx = posenc.index("shaw", preset="t2t", query_length=6, key_length=40, max_relative_position=7)
    r = posenc.identify(idx, "shaw")
    assert r.passed and r.preset == "t2t" and r.differs == ["max_relative_position: 20 -> 7"]


def test_identify_deberta_index():
    rel = posenc.index("deberta", preset="deberta-v3-base", query_length=200, key_length=200, position_buckets=128,
                       max_relative_positions=256)
    r = posenc.identify(rel, "deberta")
    assert r.passed and r.index == "relative"
    assert r.differs == ["position_buckets: 256 -> 128", "max_relative_positions: 512 -> 256"]
