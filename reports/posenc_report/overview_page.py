"""<out>/index.md, the overview: the methods block (once per run: run.json and every program's meta), one row
per scheme, and the project-wide totals, failed stages, inputs read and generator problems."""
from __future__ import annotations

from . import md, methods, runs, summary


def _seconds(value) -> str:
    if not md.is_number(value):
        return md.cell(value)
    s = int(round(value))
    return f"{s:,} s" + (f" ({s // 60} min {s % 60} s)" if s >= 60 else "")


def _memory(value) -> str:
    parts = str(value).split()
    if len(parts) == 2 and parts[0].isdigit() and parts[1].lower() == "kb":
        return f"{int(parts[0]) / 2 ** 20:.1f} GiB ({md.cell(value)})"
    return md.cell(value)


def _run_table(inp) -> str:
    f = inp.run_file
    if f is None:
        return ("*No `run.json` in the results directory: the run's id, mode, machine and stage times were not "
                "recorded (scripts/main.sh writes it).*\n")
    if f.error:
        return f"*`run.json` is unreadable ({md.cell(f.error)}): the run's own facts are missing.*\n"
    run = inp.run
    machine = run.get("machine") if isinstance(run.get("machine"), dict) else {}

    def val(v, fmt=md.cell):
        return "*not recorded*" if v is None or v == "" else fmt(v)

    reps, min_time = run.get("bench_repetitions"), run.get("bench_min_time_s")
    coretype = machine.get("inherited_OPENBLAS_CORETYPE")
    rows = [
        ("run id", val(run.get("run_id"), md.code)),
        ("commit", val(run.get("commit"), md.code)),
        ("started", val(run.get("started"))),
        ("duration", val(run.get("seconds"), _seconds)),
        ("mode", val(run.get("mode"))),
        ("parts run", _parts(run)),
        ("property cases", val(run.get("property_cases"), lambda v: f"{md.num(v)} per property (RapidCheck "
                                                                     "max_success)")),
        ("benchmark repetitions", val(reps, md.num) + (f", min time {md.num(min_time)} s each"
                                                      if md.is_number(min_time) else "")),
        ("CPU", val(machine.get("cpu"))),
        ("logical CPUs", val(machine.get("logical_cpus"), md.num)),
        ("memory", val(machine.get("memory"), _memory)),
        ("OS", val(machine.get("os"))),
        ("kernel", val(machine.get("kernel"))),
        ("OpenBLAS package", val(machine.get("openblas_package"), md.code)),
        ("inherited OPENBLAS_CORETYPE",
         f"{md.code(coretype)} — dropped: every program ran with posenc's own BLAS selection (the fallback "
         "benchmark sets its own)" if coretype else "none"),
    ]
    return md.table(["", "value"], [(f"**{k}**", v) for k, v in rows])


ALL_PARTS = ("proofs", "held-out", "long-context", "sweep", "benchmarks", "reliability", "fuzzing")


def _parts(run: dict) -> str:
    """Which parts of the main job this run did, and which it left out (scripts/main.sh --full adds the last two)."""
    parts = run.get("parts")
    if not isinstance(parts, list):
        return "*not recorded*"
    done = [str(p) for p in parts]
    names = {p.split(":")[0] for p in done}
    missing = [p for p in ALL_PARTS if p not in names]
    text = ", ".join(md.cell(p.replace(":", " (set ") + ")" if ":" in p else p) for p in done) or "none"
    return text + (f"; not run: {', '.join(missing)}" if missing else "")


def _stages(inp) -> str:
    run = inp.run
    if not run:
        return "*Not recorded (no readable `run.json`).*\n"
    stages = [s for s in run.get("stages") or [] if isinstance(s, dict)]
    text = md.table(["stage", "time"], [(md.cell(s.get("name")), _seconds(s.get("seconds"))) for s in stages],
                    ["l", "r"]) if stages else "*No stage times recorded.*\n"
    return text + "\n" + _failed_line(inp) + "\n"


def _failed_line(inp) -> str:
    run = inp.run
    if not run:
        return "Failed stages: *not recorded (no readable `run.json`)*."
    failed = run.get("failed")
    if not isinstance(failed, list):
        return "Failed stages: *not recorded*."
    return ("❌ **Failed stages:** " + ", ".join(md.icode(x) for x in failed) + "." if failed
            else "✅ No stage failed.")


def _methods(octx) -> str:
    inp = octx.inputs
    metas = (inp.proofs.metas + inp.accuracy.metas
             + [(f.path.stem, methods.from_bench_context(f.data.get("context"))) for f in inp.bench if f.data])
    intro = ("Recorded once for the whole report; every scheme page links here. The run (from `run.json`), then "
             "what built and ran each program whose results were read (a field that differs between programs "
             "is printed per program, the run included).\n\n")
    return ("## Methods\n\n" + intro + "### Run\n\n" + _run_table(inp) + "\n"
            + methods.block(metas, heading="### Programs") + "\n### Stages\n\n" + _stages(inp) + "\n")


def _totals(rows: list) -> str:
    good = [r for _, r in rows if isinstance(r, summary.SchemeRow)]
    claims = {k: sum(r.claims[k] for r in good) for k in ("claims", "passed", "failed", "not_run", "cases")}
    budget = {k: sum(r.budget_stats.get(k, 0) for r in good) for k in ("rows", "met", "exceeded", "not_measured")}
    lines = [f"- **Schemes:** {len(rows)}.",
             f"- **Claims:** {claims['claims']:,} — {claims['passed']:,} passed, "
             + (f"❌ **{claims['failed']:,} failed**" if claims["failed"] else "0 failed")
             + f", {claims['not_run']:,} not run; {claims['cases']:,} generated cases.",
             f"- **Accuracy budget rows:** {budget['met']:,} of {budget['rows']:,} met"
             + (f", ❌ **{budget['exceeded']:,} exceeded**" if budget["exceeded"] else "")
             + (f", {budget['not_measured']:,} not measured" if budget["not_measured"] else "") + "."]
    missing = [r.scheme for r in good if not r.has_module]
    if missing:
        lines.append("- **Schemes without a report module** (generic pages, no figures of their own): "
                     + ", ".join(md.icode(s) for s in missing) + ".")
    return "\n".join(lines) + "\n"


def _inputs(octx) -> str:
    inp = octx.inputs
    kinds = [("run", [inp.run_file] if inp.run_file else []), ("schemes", [inp.schemes_file] if inp.schemes_file
                                                              else []),
             ("proofs", inp.proofs.files), ("accuracy", inp.accuracy.files), ("benchmarks", inp.bench)]
    rows = []
    for kind, files in kinds:
        for f in files:
            run = (f.run or (inp.run.get("run_id") if kind == "run" else None))
            rows.append((md.code(f.path.name), kind, md.code(run) if run else "—",
                         f"⚠ unreadable: {md.cell(f.error)}" if f.error else "read"))
    for kind, pattern in (("run", "run.json"), ("schemes", "schemes.json"), ("proofs", "proofs-*.json"),
                          ("accuracy", "accuracy*.json"), ("benchmarks", "bench-*.json")):
        if not dict(kinds)[kind]:
            rows.append((md.code(pattern), kind, "—", "*not found*"))
    figs = sorted(inp.results_dir.glob("figures-*.json")) if inp.results_dir else []
    rows.append((md.code("figures-*.json"), "figures", "—", f"{len(figs)} files" if figs else "*not found*"))
    text = md.table(["file", "kind", "run", "status"], rows)
    main = octx.main_run
    others = sorted({f.run for f in inp.data_files() if f.data is not None and f.run and f.run != main})
    if main and others:
        text += (f"\n⚠ Inputs from other runs than {md.icode(main)}: {runs.names(others)} — the tables that use "
                 "them name their run.\n")
    elif not main and len(inp.runs()) > 1:
        text += f"\n⚠ The inputs come from {len(inp.runs())} runs and no `run.json` names the main one.\n"
    return text


def build(octx, rows: list, dirs: dict) -> str:
    """`rows`: [(scheme, SchemeRow or error text)]; `dirs`: scheme -> its directory name under <out>."""
    main = octx.main_run
    text = (f"# posenc report\n\n{md.generated_note(octx.readme_link)}\n\n"
            + (f"Run {md.icode(main)}. " if main else "")
            + "Contents: [Methods](#methods) · [Schemes](#schemes) · [Project-wide](#project-wide)\n\n")
    text += _methods(octx)
    body = ("One row per scheme; its name links to its pages (claims, accuracy, performance, figures). Worst "
            "accuracy: the budget row with the largest measured ÷ bound (❌ above 1). Speed: the scheme's headline "
            "kernels at their largest size, as a multiple of an in-run baseline (memory limit: 1.0 = at the "
            "limit).\n\n" if rows else "")
    text += md.section("Schemes", body + (summary.table(rows, main, lambda s: f"{dirs[s]}/index.md") if rows else
                                          "*No scheme found: no `schemes.json` and no results.*\n"))
    problems = octx.problems
    reliability = octx.shared.get("reliability_line")
    project = (_totals(rows) + "- " + _failed_line(octx.inputs) + "\n"
               + (f"- {reliability}\n" if reliability else "") + "\n### Inputs read\n\n" + _inputs(octx)
               + "\n### Generator problems\n\n"
               + ("\n".join(f"- {md.icode(w)}: {md.cell(e)}" for w, e in problems) + "\n" if problems
                  else "None.\n"))
    text += md.section("Project-wide", project)
    return text
