"""The per-scheme report modules: one file `schemes/<name>/report.py` per scheme, in the scheme's own folder (it is
imported as `posenc_report.schemes.<name>`, so it reads the report's helpers as `from .. import md`).

A module defines
    SCHEME = "<name>"              the scheme it reports on; must equal the folder's name
    HEADLINE_KERNELS = (           which benchmarks make the scheme's "speed vs limit" headline
        {"family": "table", "variant": "exact_f32", "baseline": "bandwidth",
         "what": "exact f32 table at its largest size vs the streaming store"},
    )                              family/variant are fnmatch patterns ("*" matches anything); baseline is one of
                                   bench.BASELINE_KINDS (bandwidth, rmw, plainloop, sgemm); "dtype" optional
    def figures(ctx) -> list       [(image, caption)]: the scheme's own figures, each image made with
                                   ctx.renderer.image(plot, alt) (the Markdown of the SVG under <scheme>/svg/, or a
                                   one-line note where it could not be drawn); it may append (label, Markdown)
                                   rows to ctx.figure_notes to say where its data came from

A scheme without a module still gets all its pages (generic headline: every kernel against the memory limit;
its figures page says there is no module). `registered()` lists the modules, so a test can check that every
scheme of `posenc list` has one."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCHEMES = HERE.parents[2] / "schemes"  # the repository's scheme folders
BASELINES = ("bandwidth", "rmw", "plainloop", "sgemm")


def module_path(name: str) -> Path:
    return SCHEMES / name / "report.py"


def _check(name: str, mod) -> str | None:
    """Why `mod` is not a valid scheme module, or None."""
    if getattr(mod, "SCHEME", None) != name:
        return f"SCHEME is {getattr(mod, 'SCHEME', None)!r}, expected {name!r} (the name of its folder or file)"
    heads = getattr(mod, "HEADLINE_KERNELS", None)
    if not isinstance(heads, (list, tuple)) or not all(isinstance(h, dict) for h in heads):
        return "HEADLINE_KERNELS must be a tuple of dicts"
    for h in heads:
        if h.get("baseline") not in BASELINES:
            return f"HEADLINE_KERNELS entry {h!r}: 'baseline' must be one of {', '.join(BASELINES)}"
    if not callable(getattr(mod, "figures", None)):
        return "no figures(ctx) function"
    return None


def _module_files(directory: Path) -> list:
    """[(name, path)]: <directory>/<name>/report.py (the scheme folders) and <directory>/<name>.py (a flat directory,
    as the tests make)."""
    files = [(p.parent.name, p) for p in directory.glob("*/report.py")]
    files += [(p.stem, p) for p in directory.glob("*.py") if not p.stem.startswith("_")]
    return sorted(files)


def discover(directory: Path | None = None) -> tuple:
    """({name: module}, [(file, problem)]) for the modules in `directory` (default: the scheme folders). A module
    that fails to import or lacks the required names is left out and reported, never raised."""
    directory = Path(directory) if directory is not None else SCHEMES
    modules, problems = {}, []
    for name, path in _module_files(directory):
        where = f"schemes/{name}/report.py" if path.name == "report.py" else f"schemes/{path.name}"
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
        why = _check(name, mod)
        if why:
            problems.append((where, why))
        else:
            modules[name] = mod
    return modules, problems


def registered() -> list:
    """Names of the valid scheme modules in this package, sorted."""
    return sorted(discover()[0])
