"""reliability.md: what the main job did to break posenc, and what happened.

Inputs (all optional; a missing one becomes a "not run" section), written by `scripts/main.sh --full` (its reliability
and fuzzing stages); a run without them reads those of the last --full run from <results>/earlier-reliability/ and
says so:
  sanitize.json        scripts/sanitize.sh: per sanitizer run the tests, failures, sanitizer reports, seconds
  coverage.json        gcovr --json-summary of the ASan+UBSan suite: line/branch/function coverage per file
  coverage-detail.json gcovr --json: per line execution counts (the lines of lib/ no test reaches)
  fuzz.json            scripts/fuzz.sh: per libFuzzer target the executions, seconds, corpus, findings
  faults.jsonl         cli/tests/fault_test.sh (POSENC_TEST_RECORD): one line per fault scenario and outcome
  bad_inputs.json      cli/tests/bad_inputs.py: per command option the bad values tried and how each ended
"""
from __future__ import annotations

import json
from pathlib import Path

from . import md

PAGE = "reliability.md"
FUZZ_TARGET = 10_000_000  # executions per target the main job aims for (issue "Reliability")


def _load(results: Path, name: str):
    p = Path(results) / name
    if not p.exists():
        return None, f"{name} not found"
    try:
        if name.endswith(".jsonl"):
            return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()], None
        return json.loads(p.read_text(encoding="utf-8")), None
    except (OSError, ValueError) as e:
        return None, f"{name}: {e}"


def _pct(covered, total) -> str:
    return "–" if not total else f"{100.0 * covered / total:.1f} % ({covered}/{total})"


def _sanitizers(results) -> tuple:
    data, err = _load(results, "sanitize.json")
    if data is None:
        return md.not_run("sanitizer suite", err), None
    rows, clean = [], True
    for r in data.get("runs", []):
        ok = r.get("exit_status") == 0 and r.get("sanitizer_reports") == 0 and r.get("failed") == 0
        clean &= ok
        rows.append([r.get("name"), md.icode(r.get("flags")), r.get("tests"), r.get("failed"),
                     r.get("sanitizer_reports"), r.get("seconds"), "✅" if ok else "❌"])
    text = (f"Compiler: {md.icode(data.get('compiler'))}. `scripts/sanitize.sh` builds everything but the "
            "benchmarks with AddressSanitizer + UndefinedBehaviorSanitizer (halt on the first report) and runs the "
            "whole ctest suite there except `cli.faults` (its LD_PRELOAD shim and `ulimit -v` cannot work under "
            "ASan; it runs in the Release suite and below); ThreadSanitizer runs the worker pool's tests "
            "(`posenc_api_tests`).\n\n"
            + md.table(["run", "flags", "tests", "failed", "sanitizer reports", "seconds", ""], rows))
    return text, clean


def _coverage(results) -> tuple:
    data, err = _load(results, "coverage.json")
    if data is None:
        return md.not_run("coverage", err), None
    head = (f"gcovr over the ASan+UBSan suite above (gcc `--coverage`, RelWithDebInfo; throw and unreachable "
            "branches excluded). Lines: **" + _pct(data.get("line_covered", 0), data.get("line_total", 0))
            + "**; branches: **" + _pct(data.get("branch_covered", 0), data.get("branch_total", 0))
            + "**; functions: " + _pct(data.get("function_covered", 0), data.get("function_total", 0)) + ".\n\n")
    parts = {}
    for f in data.get("files", []):
        name = f.get("filename", "")
        part = name.split("/")[0]
        agg = parts.setdefault(part, [0, 0, 0, 0])
        agg[0] += f.get("line_covered", 0); agg[1] += f.get("line_total", 0)
        agg[2] += f.get("branch_covered", 0); agg[3] += f.get("branch_total", 0)
    text = head + md.table(["part", "lines", "branches"],
                           [[p, _pct(a[0], a[1]), _pct(a[2], a[3])] for p, a in sorted(parts.items())])
    files = sorted(data.get("files", []), key=lambda f: f.get("filename", ""))
    text += "\n" + md.details("Per file", md.table(
        ["file", "lines", "branches"],
        [[md.icode(f.get("filename")), _pct(f.get("line_covered", 0), f.get("line_total", 0)),
          _pct(f.get("branch_covered", 0), f.get("branch_total", 0))] for f in files]))
    detail, _ = _load(results, "coverage-detail.json")
    if detail:
        rows = []
        for f in detail.get("files", []):
            name = f.get("file", "")
            if not name.startswith("lib/"):
                continue
            missed = [ln["line_number"] for ln in f.get("lines", []) if ln.get("count", 0) == 0
                      and not ln.get("gcovr/noncode", False)]
            if missed:
                rows.append([md.icode(name), len(missed), _ranges(missed)])
        text += "\n" + md.details(
            f"Lines of lib/ no test reaches ({sum(r[1] for r in rows)} lines in {len(rows)} files)",
            md.table(["file", "lines", "where"], rows) if rows else "None.\n")
    return text, data


def _ranges(lines: list) -> str:
    out, start, prev = [], None, None
    for n in sorted(lines):
        if start is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            out.append(f"{start}" if start == prev else f"{start}–{prev}")
            start = prev = n
    if start is not None:
        out.append(f"{start}" if start == prev else f"{start}–{prev}")
    return md.cell(", ".join(out))


def _fuzz(results) -> tuple:
    data, err = _load(results, "fuzz.json")
    if data is None:
        return md.not_run("fuzzing", err), None
    rows, ok = [], True
    for t in data.get("targets", []):
        good = t.get("exit_status") == 0 and t.get("findings") == 0
        reached = (t.get("executions") or 0) >= FUZZ_TARGET
        ok &= good
        rows.append([md.icode(t.get("target")), f"{t.get('executions', 0):,}", "✅" if reached else "below 10^7",
                     t.get("seconds"), t.get("corpus_inputs"), t.get("findings"), "✅" if good else "❌"])
    text = (f"libFuzzer (`scripts/fuzz.sh`, {md.icode(data.get('compiler'))}, ASan + UBSan, the targets side by "
            "side) from the committed corpus in `fuzz/corpus/`: `positions_fuzz` drives the position-list and "
            "numeric-flag parsers, `npy_fuzz` the .npy reader that `check`, `apply` and `scores` use, "
            "`spec_json_fuzz` the JSON spec reader of `--spec` (every scheme's spec), `hf_config_fuzz` the "
            "Hugging Face config.json reader of `--config` (RoPE). A finding is a crash, a "
            "sanitizer report, a broken invariant, a timeout or running out of memory.\n\n"
            + md.table(["target", "executions", "10^7 reached", "seconds", "corpus inputs", "findings", ""], rows))
    return text, ok


def _faults(results) -> tuple:
    data, err = _load(results, "faults.jsonl")
    if data is None:
        return md.not_run("fault scenarios", err), None
    rows = [[md.cell(r.get("scenario")), "✅" if r.get("ok") else "❌", md.cell(r.get("detail"))] for r in data]
    ok = all(r.get("ok") for r in data)
    text = ("`cli/tests/fault_test.sh` against the Release `posenc`: each scenario asserts a clear outcome (one "
            "`posenc: error:` line and a non-zero status, or the same bytes as an undisturbed run), never a crash, "
            "abort or hang, no temporary file left and an existing target untouched.\n\n"
            + md.table(["scenario", "", "outcome"], rows))
    return text, ok


def _bad_inputs(results) -> tuple:
    data, err = _load(results, "bad_inputs.json")
    if data is None:
        return md.not_run("bad-input sweep", err), None
    opts = data.get("options", [])
    rows = [[md.icode(o["command"]), md.icode(o["flag"]), o.get("kind"), o.get("tried"), o.get("refused"),
             o.get("failures")] for o in opts]
    fails = data.get("failures", [])
    text = (f"`cli/tests/bad_inputs.py`: every option of every command (taken from `posenc list` and each "
            f"command's `--help`, so a new scheme is swept unchanged) given values it must refuse — junk, "
            "overflow, nan/inf, the values just outside the range its help states, malformed position lists, "
            "missing or non-.npy files, unwritable outputs. Each must end with status 1 or 2 and one "
            "`posenc: error:` line naming the option as typed and the value, and leave no file. **"
            f"{data.get('refused')} of {data.get('tried')}** bad values over {len(opts)} options of "
            f"{data.get('commands')} commands were refused so.\n\n"
            + md.details("Per option", md.table(["command", "option", "kind", "tried", "refused properly",
                                                 "failures"], rows)))
    if fails:
        text += "\n### Failures\n\n" + md.table(["command", "option", "value", "problem"],
                                                [[f["command"], md.icode(f["flag"]), md.icode(f["value"]),
                                                  md.cell(f["problem"])] for f in fails])
    return text, not fails


FILES = ("sanitize.json", "coverage.json", "fuzz.json", "faults.jsonl", "bad_inputs.json")
EARLIER = "earlier-reliability"  # scripts/main.sh copies the last --full run's results here (reports/latest/data/)


def _source(results: Path) -> tuple:
    """(directory to read, the earlier run's run.json or None): this run's files when it ran the suite, else those
    of the last --full run that main.sh put beside them."""
    results = Path(results)
    if any((results / n).exists() for n in FILES) or not (results / EARLIER).is_dir():
        return results, None
    run, _ = _load(results / EARLIER, "run.json")
    return results / EARLIER, run if isinstance(run, dict) else {}


def _earlier_note(run: dict) -> str:
    return ("**This run did not run the reliability suite** (`scripts/main.sh --full` runs it). The figures below "
            f"are those of run {md.icode(run.get('run_id') or 'not recorded')} (commit "
            f"{md.icode(run.get('commit') or 'not recorded')}, mode {run.get('mode') or 'not recorded'}, started "
            f"{run.get('started') or 'not recorded'}), kept in `reports/latest/data/reliability/`: they describe that "
            "commit's code, not this run's.\n\n")


def _none_note(results: Path) -> str:
    if any((Path(results) / n).exists() for n in FILES):
        return ""
    return ("**This run did not run the reliability suite** (`scripts/main.sh --full` runs it), and no earlier "
            "--full run's results were kept (`reports/latest/data/reliability/`).\n\n")


def build(octx) -> tuple:
    """(text of reliability.md, one summary line for the overview)."""
    results, earlier = _source(octx.inputs.results_dir)
    san, san_ok = _sanitizers(results)
    cov, cov_data = _coverage(results)
    fz, fz_ok = _fuzz(results)
    ft, ft_ok = _faults(results)
    bi, bi_ok = _bad_inputs(results)
    text = (f"# posenc report: reliability\n\n{md.generated_note(octx.readme_link)}\n\n[Overview](index.md)\n\n"
            + (f"Run {md.icode(octx.main_run)}. " if octx.main_run else "")
            + (_earlier_note(earlier) if earlier is not None else _none_note(results))
            + "What the main job did to make posenc crash, hang, read out of bounds, lose a file or print an "
            "unclear error, and what happened. Contents: [Sanitizers](#sanitizers) · [Coverage](#coverage) · "
            "[Fuzzing](#fuzzing) · [Fault scenarios](#fault-scenarios) · [Bad inputs](#bad-inputs)\n\n"
            + md.section("Sanitizers", san) + md.section("Coverage", cov) + md.section("Fuzzing", fz)
            + md.section("Fault scenarios", ft) + md.section("Bad inputs", bi))

    def mark(v):
        return "not run" if v is None else ("✅" if v else "❌")
    cov_text = ("not run" if cov_data is None else
                _pct(cov_data.get("line_covered", 0), cov_data.get("line_total", 0)).split(" (")[0] + " of lines")
    source = "" if earlier is None else f" (from run {md.icode(earlier.get('run_id') or 'not recorded')}, not this run)"
    line = (f"[Reliability]({PAGE}){source}: sanitizers {mark(san_ok)} · fuzzing {mark(fz_ok)} · fault scenarios "
            f"{mark(ft_ok)} · bad inputs {mark(bi_ok)} · coverage {cov_text}")
    return text, line
