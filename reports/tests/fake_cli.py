"""Fake CLIs run in this process: the report tests stand in for posenc with small Python scripts (write_fake, and
samples.FakeCliTest), and the report modules run their CLI with subprocess.run. Started as processes, those scripts
were most of the tests' time (~40 of ~45 s: an interpreter start per call). install() wraps subprocess.run so that a
call whose program is such a script (its first line `#!<this interpreter>`) runs the script here instead: sys.argv
set, stdout and stderr captured, SystemExit taken as the exit status and an uncaught exception as status 1 with its
traceback on stderr, as the interpreter would. Every other call (the real posenc, gnuplot, ...) goes to the real
subprocess.run unchanged."""
from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import traceback

_real_run = subprocess.run
_compiled: dict = {}


def write_fake(directory: str, name: str, text: str) -> str:
    """An executable Python script `directory/name` with the body `text`; its path."""
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(f"#!{sys.executable}\n" + text)
    os.chmod(path, 0o755)
    return path


def _script(program) -> object | None:
    """The compiled code of `program` when it is a fake CLI script, else None."""
    try:
        st = os.stat(program)
    except (OSError, TypeError, ValueError):
        return None
    key = (str(program), st.st_mtime_ns, st.st_size)
    if key not in _compiled:
        code = None
        if st.st_size < (1 << 20) and os.access(program, os.X_OK):
            with open(program, "rb") as f:
                head = f.readline()
            if head == f"#!{sys.executable}\n".encode():
                with open(program, encoding="utf-8") as f:
                    code = compile(f.read(), str(program), "exec")
        _compiled[key] = code
    return _compiled[key]


def _exit_status(e: SystemExit, err: io.StringIO) -> int:
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code
    err.write(f"{e.code}\n")
    return 1


def _run(args, *popenargs, **kwargs):
    in_process = (isinstance(args, (list, tuple)) and args and not popenargs and kwargs.get("text")
                  and kwargs.get("capture_output") and set(kwargs) <= {"text", "capture_output", "timeout"})
    code = _script(args[0]) if in_process else None
    if code is None:
        return _real_run(args, *popenargs, **kwargs)
    out, err = io.StringIO(), io.StringIO()
    argv, sys.argv = sys.argv, [str(a) for a in args]
    status = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            exec(code, {"__name__": "__main__", "__file__": str(args[0])})
    except SystemExit as e:
        status = _exit_status(e, err)
    except Exception:  # what the interpreter would print before exiting with status 1
        err.write(traceback.format_exc())
        status = 1
    finally:
        sys.argv = argv
    return subprocess.CompletedProcess(list(args), status, out.getvalue(), err.getvalue())


def install() -> None:
    subprocess.run = _run
