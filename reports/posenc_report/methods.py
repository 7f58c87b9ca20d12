"""The methods block: what built and ran the code that produced the numbers.

It is written once per run, on the overview (<out>/index.md#methods: run.json's facts, then every program's
meta). A scheme page opens with one line naming its run and linking there — unless its inputs come from
another run than the overview's, or from several: then it prints its own block, naming each run."""
from __future__ import annotations

from . import md, runs

OVERVIEW_METHODS = "../index.md#methods"      # from a scheme page

# (key in the normalised meta, label on the page)
FIELDS = (
    ("_run", "run"),
    ("program", "program"),
    ("commit", "commit"),
    ("compiler", "compiler"),
    ("flags", "flags"),
    ("build_type", "build type"),
    ("blas", "BLAS library + core"),
    ("simd", "SIMD target (kernels; memory baselines)"),
    ("blas_threads", "BLAS threads"),
    ("omp_threads", "OpenMP threads"),
    ("rc_params", "RapidCheck params / seeds"),
    ("date", "date"),
)


def truthy(value) -> bool | None:
    """JSON producers write flags as true/"true"/1/"1"; None when absent or unreadable."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value != 0
    if isinstance(value, str):
        v = value.strip().lower()
        if v in ("true", "yes", "1", "on"):
            return True
        if v in ("false", "no", "0", "off", ""):
            return False
    return None


def blas_text(meta: dict) -> str | None:
    """'OpenBLAS 0.3.21, core Prescott (FALLBACK; forced by OPENBLAS_CORETYPE; best for this CPU: SkylakeX)'
    from the meta's BLAS keys."""
    lib, core, best = meta.get("blas_library"), meta.get("blas_core"), meta.get("blas_core_best")
    fallback, forced = truthy(meta.get("blas_fallback")), truthy(meta.get("blas_forced"))
    if not (lib or core):
        return None
    text = f"{lib}, core {core}" if lib and core else (f"core {core}" if core else str(lib))
    notes = []
    if fallback:
        notes.append("**FALLBACK core**")
    elif fallback is False:
        notes.append("not a fallback")
    if forced:
        notes.append("forced by OPENBLAS_CORETYPE")
    elif forced is False:
        notes.append("selected by posenc")
    if best and best != core:
        notes.append(f"best for this CPU: {best}")
    return text + (f" ({'; '.join(notes)})" if notes else "")


def simd_text(meta: dict) -> str | None:
    """'avx512 (of avx512, avx2, scalar); baselines AVX3' from the bench context's
    simd_target, simd_targets and store_isa: which vector target the kernels ran on, which the CPU offered."""
    target, avail, base = meta.get("simd_target"), meta.get("simd_targets"), meta.get("store_isa")
    if not (target or base):
        return None
    text = str(target) if target else "*not recorded*"
    if avail:
        text += f" (of {', '.join(str(avail).split(','))})"
    return text + (f"; baselines {base}" if base else "")


def from_bench_context(context: dict) -> dict:
    """Google Benchmark's context (with posenc's AddCustomContext keys) in the meta vocabulary."""
    c = context if isinstance(context, dict) else {}
    return {
        "_run": runs.of_bench(c),
        "run_id": c.get("posenc_run_id"),
        "program": c.get("executable"),
        "commit": c.get("posenc_commit") or c.get("commit"),
        "compiler": c.get("compiler") or c.get("posenc_compiler"),
        "flags": c.get("posenc_flags") or c.get("flags"),
        "build_type": c.get("posenc_build_type") or c.get("build_type"),
        "blas_library": c.get("blas_library"),
        "blas_core": c.get("blas_core"),
        "blas_core_best": c.get("blas_core_best"),
        "blas_fallback": c.get("blas_fallback"),
        "blas_forced": c.get("blas_forced"),
        "simd_target": c.get("simd_target"),
        "simd_targets": c.get("simd_targets"),
        "store_isa": c.get("store_isa"),
        "blas_threads": c.get("blas_threads"),
        "omp_threads": c.get("omp_threads"),
        "rc_params": None,
        "date": c.get("date"),
    }


def _value(meta: dict, key: str):
    value = blas_text(meta) if key == "blas" else simd_text(meta) if key == "simd" else meta.get(key)
    return None if value is None or value == "" else str(value)


def block(sources: list, extra: list | None = None, heading: str = "## Methods") -> str:
    """Methods table for [(label, meta)]; a field with one value across sources is printed once, one that
    differs (the run included) per source.

    `extra` adds page-specific rows [(label, markdown text)]."""
    rows = []
    for key, label in FIELDS:
        values = [(src, _value(meta, key)) for src, meta in sources
                  if key != "simd" or "simd_target" in meta]       # the SIMD row: benchmark programs only
        distinct = sorted({v for _, v in values if v is not None})
        if not distinct:
            if key == "rc_params" and not any("rc_params" in m for _, m in sources):
                continue                                    # not a property run: nothing to say
            if key == "simd":
                continue                                    # no benchmark among the sources: no target to name
            text = "*not recorded*"
        elif key == "program":
            text = ", ".join(md.code(v) for v in distinct)
        elif len(distinct) == 1 and all(v is not None for _, v in values):
            text = md.code(distinct[0]) if key in ("_run", "commit", "flags", "rc_params") else md.cell(distinct[0])
        else:
            text = "<br>".join(f"{md.code(src)}: {md.cell(v) if v else '*not recorded*'}" for src, v in values)
        rows.append((label, text))
    rows += extra or []
    if not sources:
        rows.insert(0, ("results", "*no result file with a meta block was found for this page*"))
    return f"{heading}\n\n" + md.table(["", "value"], [(f"**{l}**", t) for l, t in rows])


def page_runs(sources: list) -> list:
    return sorted({m.get("_run") for _, m in sources if isinstance(m, dict) and m.get("_run")})


def run_note(ctx, sources: list, extra: list | None = None) -> str:
    """What a scheme page says about methods: one line naming its run and linking to the overview's block,
    or — inputs from another run than the overview's, or from several — its own block naming each run.
    `extra` rows (page-specific data notes) are printed either way."""
    found, main = page_runs(sources), ctx.main_run
    if runs.needs_column(found, main):
        where = (f"{len(found)} runs ({runs.names(found)})" if len(found) > 1 else f"run {runs.names(found)}")
        note = (f"⚠ This page's inputs come from {where}"
                + (f", not only the overview's run `{main}`" if main and len(found) > 1 and main in found else
                   f", not the overview's run `{main}`" if main and main not in found else "")
                + f"; their methods follow (the overview's: [{OVERVIEW_METHODS}]({OVERVIEW_METHODS})).\n\n")
        return note + block(sources, extra)
    run = found[0] if found else main
    line = (f"Run {md.code(run, table=False) if run else '*not recorded*'} — methods: "
            f"[{OVERVIEW_METHODS}]({OVERVIEW_METHODS})\n")
    if extra:
        line += "\n" + md.table(["", "value"], [(f"**{l}**", t) for l, t in extra])
    return line


def header(ctx, title: str, sources: list, extra: list | None = None) -> str:
    """Title, generated-file note, navigation, and the run line (scheme pages) or methods block: how every
    page opens."""
    head = f"# {title}\n\n{md.generated_note(ctx.readme_link)}\n\n{ctx.nav}\n\n"
    if getattr(ctx, "scheme", None) is None:
        return head + block(sources, extra) + "\n"
    return head + run_note(ctx, sources, extra) + "\n"
