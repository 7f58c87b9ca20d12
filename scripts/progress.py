#!/usr/bin/env python3
"""scripts/progress.py — progress of a long stage, read from the logs its programs write.

    progress.py --label NAME --total N --pattern REGEX [--unit WORD] [--expect SECONDS] --watch PID LOG...

Counts the lines of the LOG files that match REGEX (each a finished item: a test, a benchmark, a scheme), until
process PID ends, and shows "NAME: 37/120 tests · 1m 12s · about 2m 30s left". On a terminal (stderr is a TTY) the
line is redrawn in place once a second; otherwise (a log file, CI) one plain line is printed at each tenth of the
way and at most once a minute, so logs get no carriage returns and stay short. The estimate assumes the items
left take as long as the items done on average; with --expect (how long the stage took last time) it is that
time less the time spent, for stages whose items finish all at the end (interleaved benchmark repetitions).
Python 3 standard library only.
"""
import argparse
import os
import re
import sys
import time


def fmt(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 60}m {s % 60:02d}s" if s >= 60 else f"{s}s"


def count(paths, pattern, offsets, counts):
    for p in paths:
        try:
            with open(p, "rb") as f:
                f.seek(offsets.get(p, 0))
                data = f.read()
        except OSError:
            continue
        cut = data.rfind(b"\n") + 1  # only whole lines; the rest is read next time
        offsets[p] = offsets.get(p, 0) + cut
        counts[p] = counts.get(p, 0) + sum(1 for line in data[:cut].decode("utf-8", "replace").splitlines()
                                           if pattern.search(line))
    return sum(counts.values())


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def line(label, done, total, unit, elapsed, expect=None):
    text = f"{label}: {done}/{total} {unit} · {fmt(elapsed)}"
    if expect:
        text += f" · about {fmt(max(expect - elapsed, 0))} left (the last run took {fmt(expect)})"
    elif 0 < done < total:
        text += f" · about {fmt(elapsed / done * (total - done))} left"
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--label", required=True)
    ap.add_argument("--total", type=int, required=True)
    ap.add_argument("--pattern", required=True)
    ap.add_argument("--unit", default="done")
    ap.add_argument("--expect", type=float, default=None, help="seconds the stage took last time")
    ap.add_argument("--watch", type=int, required=True, help="the stage's process id")
    ap.add_argument("logs", nargs="+")
    a = ap.parse_args(argv)
    pattern, offsets, counts = re.compile(a.pattern), {}, {}
    tty, start, last_print, last_tenth = sys.stderr.isatty(), time.monotonic(), 0.0, 0
    total = max(a.total, 1)
    while True:
        running = alive(a.watch)
        done = min(count(a.logs, pattern, offsets, counts), total)
        now = time.monotonic()
        text = line(a.label, done, total, a.unit, now - start, a.expect)
        if tty:
            sys.stderr.write("\r\033[K  " + text)
            sys.stderr.flush()
        elif not running or (done * 10 // total > last_tenth and now - last_print >= 60):
            print("  " + text, file=sys.stderr, flush=True)
            last_print, last_tenth = now, done * 10 // total
        if not running:
            break
        time.sleep(1.0)
    if tty:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
