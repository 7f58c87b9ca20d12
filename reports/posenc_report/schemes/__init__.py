"""The per-scheme report modules: one file `schemes/<name>/report.py` per scheme, in the scheme's own folder (it is
imported as `posenc_report.schemes.<name>`, so it reads the report's helpers as `from .. import md`).

A module defines
    SCHEME = "<name>"              the scheme it reports on; must equal the folder's name
    def figures(ctx, data) -> list [(image, caption)]: the scheme's own figures drawn from `data` (figure_data.
                                   FigureData: figures-<name>.json), each image made with ctx.renderer.image(plot,
                                   alt) (the Markdown of the SVG under <scheme>/svg/, or a one-line note where it
                                   could not be drawn: figure_data.figure does that for a figure the data lacks); it
                                   may append (label, Markdown) rows to ctx.figure_notes
and the folder's headline.json, which benchmarks make the scheme's "speed vs limit" headline (data, also read by
scripts/bench_set.py), becomes the module's HEADLINE_KERNELS:
    {"benchmarks": "what the scheme's benchmark names look like",
     "headline_kernels": [{"family": "table", "variant": "exact_f32", "baseline": "bandwidth",
                           "what": "exact f32 table at its largest size vs the streaming store"}]}
                                   family/variant are fnmatch patterns ("*" matches anything); baseline is one of
                                   bench.BASELINE_KINDS (bandwidth, rmw, plainloop, sgemm); "dtype" optional

A scheme without a module still gets all its pages (generic headline: every kernel against the memory limit;
its figures page says there is no module). `registered()` lists the modules, so a test can check that every
scheme of `posenc list` has one."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCHEMES = HERE.parents[2] / "schemes"  # the repository's scheme folders
BASELINES = ("bandwidth", "rmw", "plainloop", "sgemm")


def module_path(name: str) -> Path:
    return SCHEMES / name / "report.py"


def headline_kernels(folder: Path) -> list:
    """The "headline_kernels" of <folder>/headline.json; raises ValueError naming the file when it is not valid."""
    path = folder / "headline.json"
    try:
        heads = json.loads(path.read_text())["headline_kernels"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{path.name}: {type(e).__name__}: {e}") from None
    if not isinstance(heads, list) or not all(isinstance(h, dict) for h in heads):
        raise ValueError(f"{path.name}: headline_kernels must be a list of objects")
    for h in heads:
        if h.get("baseline") not in BASELINES:
            raise ValueError(f"{path.name}: entry {h!r}: 'baseline' must be one of {', '.join(BASELINES)}")
    return heads


def _check(name: str, mod) -> str | None:
    """Why `mod` is not a valid scheme module, or None."""
    if getattr(mod, "SCHEME", None) != name:
        return f"SCHEME is {getattr(mod, 'SCHEME', None)!r}, expected {name!r} (the name of its folder)"
    if not callable(getattr(mod, "figures", None)):
        return "no figures(ctx, data) function"
    return None


def discover(directory: Path | None = None) -> tuple:
    """({name: module}, [(file, problem)]) for the modules in `directory` (default: the scheme folders). A module
    that fails to import or lacks the required names is left out and reported, never raised."""
    directory = Path(directory) if directory is not None else SCHEMES
    modules, problems = {}, []
    for path in sorted(directory.glob("*/report.py")):
        name = path.parent.name
        where = f"schemes/{name}/report.py"
        try:
            qualified = f"{__name__}.{name}" if directory.resolve() == SCHEMES.resolve() else f"{__name__}._scan_{name}"
            spec = importlib.util.spec_from_file_location(qualified, path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[qualified] = mod            # one module per scheme, however often discover() runs
            spec.loader.exec_module(mod)
        except Exception as e:                      # a broken module must not take the report down
            sys.modules.pop(qualified, None)
            problems.append((where, f"cannot import: {type(e).__name__}: {e}"))
            continue
        try:
            mod.HEADLINE_KERNELS = tuple(headline_kernels(path.parent))
        except ValueError as e:
            problems.append((f"schemes/{name}/headline.json", str(e)))
            continue
        why = _check(name, mod)
        if why:
            problems.append((where, why))
        else:
            modules[name] = mod
    return modules, problems


def draw(module, ctx) -> list:
    """The figures of a scheme module, drawn from ctx.figure_data(), and the data's provenance row appended to
    ctx.figure_notes (after any rows of the module's own)."""
    data = ctx.figure_data()
    figures = list(module.figures(ctx, data))
    ctx.figure_notes.append(data.note())
    return figures


def registered() -> list:
    """Names of the valid scheme modules in this package, sorted."""
    return sorted(discover()[0])
