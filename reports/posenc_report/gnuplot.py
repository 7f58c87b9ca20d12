"""The one place that draws plots: a Plot is data + axes, render() turns it into an SVG via gnuplot.

Every figure in the report goes through Renderer.render(), so styling, missing-gnuplot handling and
determinism (data written with repr(), no timestamps) live here only.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import weakref
from dataclasses import dataclass, field
from pathlib import Path

SVG_SUBDIR = "svg"

# Colour-blind-safe qualitative palette (Okabe-Ito), cycled over series.
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")

# Diverging palette for values in [-1, 1] (ColorBrewer RdBu).
DIVERGING_PALETTE = 'set palette defined (-1 "#2166ac", -0.5 "#92c5de", 0 "#f7f7f7", 0.5 "#f4a582", 1 "#b2182b")'


@dataclass
class Series:
    """One thing plotted. `rows` are tuples of numbers (columns 1..n), or a matrix when `matrix` is set."""
    title: str
    rows: list
    style: str = "linespoints"          # gnuplot 'with' clause, e.g. "lines", "points pt 7 ps 0.5"
    using: str | None = None            # gnuplot 'using' clause, default 1:2
    matrix: bool = False                # rows is a 2-D list written as a gnuplot 'matrix'
    dashed: bool = False                # baselines and reference lines
    colour: str | None = None           # default: next palette colour


@dataclass
class Plot:
    name: str                           # file stem of the SVG (unique within a report)
    title: str
    xlabel: str
    ylabel: str
    series: list = field(default_factory=list)
    logx: int | None = None             # log base of the x axis, None = linear
    logy: int | None = None
    xtics: list | None = None           # [(label, value)] replaces automatic tics
    xrange: tuple | None = None
    yrange: tuple | None = None
    extra: list = field(default_factory=list)   # raw gnuplot commands (palette, key placement, ...)
    size: tuple = (800, 480)
    key: str = "below left horizontal"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _num(x) -> str:
    return repr(float(x)) if isinstance(x, float) else str(x)


def _write_data(path: Path, series: Series) -> None:
    lines = [" ".join(_num(v) for v in row) for row in series.rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _range(r) -> str:
    lo, hi = r
    return "[{}:{}]".format("" if lo is None else _num(lo), "" if hi is None else _num(hi))


def script(plot: Plot, out_path: Path, data_paths: list, terminal: str = "svg") -> str:
    """The gnuplot script for `plot` (separated from running it so it can be inspected and tested)."""
    w, h = plot.size
    if terminal == "svg":
        term = f'set terminal svg size {w},{h} dynamic enhanced font "sans,11" background "white"'
    else:
        term = f'set terminal pngcairo size {w},{h} enhanced font "sans,10" background "white"'
    cmds = [term, f"set output {_quote(str(out_path))}", "set encoding utf8",
            f"set title {_quote(plot.title)} noenhanced",
            f"set xlabel {_quote(plot.xlabel)} noenhanced", f"set ylabel {_quote(plot.ylabel)} noenhanced",
            "set grid back lc rgb '#dddddd'", f"set key {plot.key} noenhanced"]
    if plot.logx:
        cmds.append(f"set logscale x {plot.logx}")
        if plot.logx == 2 and plot.xtics is None:
            cmds.append("set format x '2^{%L}'")
    if plot.logy:
        cmds.append(f"set logscale y {plot.logy}")
        cmds.append("set format y '%.1e'" if plot.logy == 10 else "set format y '%g'")
    if plot.xtics is not None:
        cmds.append("set xtics (" + ", ".join(f"{_quote(l)} {_num(v)}" for l, v in plot.xtics) + ")")
    if plot.xrange:
        cmds.append(f"set xrange {_range(plot.xrange)}")
    if plot.yrange:
        cmds.append(f"set yrange {_range(plot.yrange)}")
    cmds.extend(plot.extra)
    clauses = []
    colour_index = 0
    for s, path in zip(plot.series, data_paths):
        parts = [_quote(str(path))]
        if s.matrix:
            parts.append("matrix")
        parts.append("using " + (s.using or "1:2") if not s.matrix or s.using else "")
        style = s.style
        if not s.matrix:
            colour = s.colour or COLOURS[colour_index % len(COLOURS)]
            colour_index += 1
            style += f" lc rgb {_quote(colour)}" + (" dt 2" if s.dashed else "")
        parts.append("with " + style)
        parts.append(f"title {_quote(s.title)}" if s.title else "notitle")
        clauses.append(" ".join(p for p in parts if p))
    cmds.append("plot " + ", \\\n     ".join(clauses))
    return "\n".join(cmds) + "\n"


class _Session:
    """One gnuplot process for every plot of a Renderer: starting one per plot (~40 ms) was most of a report's
    time. Each plot's script is sent on stdin and followed by `unset output` (the file is complete), `reset` and a
    marker printed to stdout; what gnuplot wrote to stderr meanwhile says whether the plot failed."""

    ERROR = re.compile(r"line \d+: (?!warning)", re.IGNORECASE)

    def __init__(self, exe: str):
        self._tmp = tempfile.TemporaryDirectory(prefix="posenc-report-")
        self.dir = Path(self._tmp.name)
        self._err = open(self.dir / "stderr.txt", "w+b")
        self._proc = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err,
                                      text=True, cwd=self.dir)
        self._count, self._read = 0, 0
        self._send('set print "-"\n')
        weakref.finalize(self, _Session._close, self._proc, self._err, self._tmp)

    def _send(self, text: str) -> None:
        self._proc.stdin.write(text)
        self._proc.stdin.flush()

    def run(self, text: str) -> str | None:
        """Runs one plot's script; None, or why it failed (gnuplot's last error line)."""
        self._count += 1
        marker = f"posenc-plot-done-{self._count}"
        try:
            self._send(text + f"unset output\nreset\nprint {_quote(marker)}\n")
            for line in self._proc.stdout:
                if line.strip() == marker:
                    break
            else:
                return "gnuplot exited"
        except (BrokenPipeError, OSError) as e:
            return f"gnuplot exited ({e})"
        self._err.seek(self._read)
        err = self._err.read().decode("utf-8", "replace")
        self._read = self._err.tell()
        errors = [line.strip() for line in err.splitlines() if self.ERROR.search(line)]
        return errors[-1] if errors else None

    def data_path(self, name: str) -> Path:
        return self.dir / f"p{self._count + 1}_{name}"

    @staticmethod
    def _close(proc, err, tmp) -> None:
        try:
            proc.stdin.close()
            proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
        err.close()
        tmp.cleanup()


class Renderer:
    """Renders Plots into <out>/svg/<name>.svg; remembers what could not be drawn and why."""

    def __init__(self, out_dir: Path, png: bool = False, gnuplot: str | None = None):
        self.out_dir = Path(out_dir)
        self.svg_dir = self.out_dir / SVG_SUBDIR
        self.png = png
        self.gnuplot = gnuplot or shutil.which("gnuplot")
        self.failures: dict = {}
        self._session = None

    def render(self, plot: Plot) -> str | None:
        """Draw `plot`; return the Markdown-relative path of the SVG, or None (reason in failures)."""
        if not self.gnuplot:
            self.failures[plot.name] = "gnuplot not found on PATH"
            return None
        if not any(s.rows for s in plot.series):
            self.failures[plot.name] = "no data points"
            return None
        self.svg_dir.mkdir(parents=True, exist_ok=True)
        series = [s for s in plot.series if s.rows]
        plot = Plot(**{**plot.__dict__, "series": series})
        if self._session is None:
            self._session = _Session(self.gnuplot)
        data_paths = []
        for i, s in enumerate(series):
            path = self._session.data_path(f"s{i}.dat")
            _write_data(path, s)
            data_paths.append(path.name)
        targets = [("svg", self.svg_dir / f"{plot.name}.svg")]
        if self.png:
            targets.append(("png", self.svg_dir / f"{plot.name}.png"))
        for terminal, target in targets:
            target.unlink(missing_ok=True)
            why = self._session.run(script(plot, target.resolve(), data_paths, terminal))
            if why is not None or not target.exists():
                self.failures[plot.name] = "gnuplot failed: " + (why or "no output written")
                return None
        return f"{SVG_SUBDIR}/{plot.name}.svg"

    def image(self, plot: Plot, alt: str) -> str:
        """Markdown for the rendered plot, or a one-line note saying why there is no picture."""
        rel = self.render(plot)
        if rel is None:
            return f"*(plot `{plot.name}` not drawn: {self.failures.get(plot.name, 'unknown reason')})*"
        return f"![{alt}]({rel})"
