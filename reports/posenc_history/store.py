"""Reading the history: runs in order, resolving what a user names (run id, commit prefix, latest, previous),
loading a run back as RunData, and the per-run series the change-point search and the page plot."""
from __future__ import annotations

import json
from collections import defaultdict

from .errors import HistoryError
from .model import BenchData, FileData, RatioData, RunData

ORDER = "ORDER BY started, id"
NEWEST_FIRST = "ORDER BY started DESC, id DESC"
ACCEPTED = "a run id (or a unique prefix of one), a commit prefix, latest, previous"


def _dicts(cur) -> list:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def list_runs(conn) -> list:
    """Every run, newest first, with its counts."""
    return _dicts(conn.execute(
        "SELECT r.*, (SELECT COUNT(*) FROM files f JOIN results x ON x.file = f.id WHERE f.run = r.id) AS benchmarks,"
        " (SELECT COUNT(*) FROM files f JOIN budget b ON b.file = f.id WHERE f.run = r.id) AS budget_rows,"
        " (SELECT COUNT(*) FROM files f JOIN claims c ON c.file = f.id WHERE f.run = r.id) AS claims "
        "FROM runs r ORDER BY r.started DESC, r.id DESC"))


def ordered(conn) -> list:
    """Run primary keys, oldest first."""
    return [r[0] for r in conn.execute(f"SELECT id FROM runs {ORDER}")]


def run_row(conn, pk: int) -> dict:
    return _dicts(conn.execute("SELECT * FROM runs WHERE id = ?", (pk,)))[0]


def previous(conn, pk: int) -> tuple:
    """(primary key, how chosen) of the run before `pk` with the same mode and selection, on the same machine
    fingerprint when there is one; (None, why) when there is none."""
    r = run_row(conn, pk)
    return previous_for(conn, r["run_id"], r["started"], r["mode"], r["selection"], r["fingerprint"], pk)


def previous_for(conn, run_id, started, mode, selection, fingerprint_id, before_pk=None) -> tuple:
    """previous() for a run that need not be in the history (the report generator's results directory)."""
    before = _dicts(conn.execute(
        f"SELECT id, fingerprint FROM runs WHERE (started < ? OR (started = ? AND id < ?)) AND mode = ? AND "
        f"selection = ? AND run_id != ? {NEWEST_FIRST}",
        (started, started, before_pk if before_pk is not None else -1, mode, selection, run_id)))
    same = [b for b in before if b["fingerprint"] == fingerprint_id]
    if same:
        return same[0]["id"], "the latest earlier run with the same mode, selection and machine fingerprint"
    if before:
        return before[0]["id"], ("the latest earlier run with the same mode and selection (none on this machine "
                                 "fingerprint, so absolute times are not compared)")
    return None, f"no run before {run_id} has mode {mode!r} and selection {selection!r}"


def resolve(conn, ref: str, relative_to: int | None = None) -> int:
    """The primary key of the run `ref` names; HistoryError (what was given, what is accepted) otherwise."""
    keys = ordered(conn)
    if not keys:
        raise HistoryError("the history holds no runs yet; import one first (history.py import DIR)")
    ref = (ref or "").strip()
    if ref == "latest":
        return keys[-1]
    if ref == "previous":
        pk, why = previous(conn, relative_to if relative_to is not None else keys[-1])
        if pk is None:
            raise HistoryError(f"'previous': {why}")
        return pk
    hit = conn.execute("SELECT id FROM runs WHERE run_id = ?", (ref,)).fetchone()
    if hit:
        return hit[0]
    return _by_prefix(conn, ref)


def _by_prefix(conn, ref: str) -> int:
    if ref:
        like = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        commits = conn.execute("SELECT DISTINCT commit_sha FROM runs WHERE commit_sha LIKE ? ESCAPE '\\'",
                               (like,)).fetchall()
        if len(commits) > 1:
            shown = ", ".join(sorted(c[0] for c in commits)[:5])
            raise HistoryError(f"commit prefix '{ref}' is ambiguous ({shown}); give more digits")
        if commits:
            return conn.execute(f"SELECT id FROM runs WHERE commit_sha = ? {NEWEST_FIRST} LIMIT 1",
                                (commits[0][0],)).fetchone()[0]
        ids = conn.execute("SELECT id FROM runs WHERE run_id LIKE ? ESCAPE '\\'", (like,)).fetchall()
        if len(ids) == 1:
            return ids[0][0]
        if len(ids) > 1:
            raise HistoryError(f"run id prefix '{ref}' matches {len(ids)} runs; give more of it")
    raise HistoryError(f"no run matches '{ref}' (accepted: {ACCEPTED}; `history.py list` shows the runs)")


# --- a run back as RunData --------------------------------------------------------------------------------------

def _loads(text, default):
    return json.loads(text) if text else default


def _files(conn, pk) -> tuple:
    files, names = [], {}
    for f in _dicts(conn.execute("SELECT f.*, m.fields FROM files f LEFT JOIN machines m ON m.fingerprint = "
                                 "f.fingerprint WHERE f.run = ? ORDER BY f.name", (pk,))):
        names[f["id"]] = f["name"]
        files.append(FileData(f["name"], f["kind"], f["fingerprint"], _loads(f["fields"], {}),
                              _loads(f["meta"], {}), f["program_run"]))
    return files, names


def _benches(conn, pk, names) -> list:
    samples = defaultdict(list)
    for s in _dicts(conn.execute("SELECT s.* FROM samples s JOIN files f ON f.id = s.file WHERE f.run = ? "
                                 "ORDER BY s.repetition", (pk,))):
        samples[s["file"], s["benchmark"]].append(
            {k: s[k] for k in ("repetition", "real_time_s", "cpu_time_s", "iterations", "bytes_per_second",
                               "items_per_second")})
    out = []
    for r in _dicts(conn.execute("SELECT x.*, b.* FROM results x JOIN benchmarks b ON b.id = x.benchmark "
                                 "JOIN files f ON f.id = x.file WHERE f.run = ? ORDER BY f.name, b.name", (pk,))):
        args = dict(a.split(":", 1) for a in r["args"].split("/") if ":" in a)
        out.append(BenchData(names[r["file"]], r["name"], r["scheme"], r["family"], r["variant"], r["dtype"],
                             r["threads"], args, r["baseline_kind"], r["seconds"], r["bytes_per_second"],
                             r["items_per_second"], r["statistic"], samples[r["file"], r["benchmark"]]))
    return out


def _ratios(conn, pk, names) -> list:
    samples = defaultdict(dict)
    for s in conn.execute("SELECT rs.ratio, rs.repetition, rs.value FROM ratio_samples rs JOIN ratios r ON "
                          "r.id = rs.ratio JOIN files f ON f.id = r.file WHERE f.run = ?", (pk,)):
        samples[s[0]][s[1]] = s[2]
    rows = _dicts(conn.execute("SELECT r.*, k.name AS kname, b.name AS bname FROM ratios r JOIN benchmarks k ON "
                               "k.id = r.kernel JOIN benchmarks b ON b.id = r.baseline JOIN files f ON f.id = r.file "
                               "WHERE f.run = ? ORDER BY f.name, k.name, r.kind", (pk,)))
    return [RatioData(names[r["file"]], r["kname"], r["bname"], r["kind"], r["value"], r["how"], samples[r["id"]])
            for r in rows]


def _accuracy(conn, pk, names) -> tuple:
    budget = _dicts(conn.execute("SELECT b.* FROM budget b JOIN files f ON f.id = b.file WHERE f.run = ? "
                                 "ORDER BY b.row_id", (pk,)))
    claims = _dicts(conn.execute("SELECT c.* FROM claims c JOIN files f ON f.id = c.file WHERE f.run = ? "
                                 "ORDER BY c.claim_id", (pk,)))
    for row in budget + claims:
        row["file"] = names.get(row["file"])
    return budget, claims


def load_run(conn, pk: int) -> RunData:
    r = run_row(conn, pk)
    files, names = _files(conn, pk)
    machine = conn.execute("SELECT fields FROM machines WHERE fingerprint = ?", (r["fingerprint"],)).fetchone()
    budget, claims = _accuracy(conn, pk, names)
    return RunData(run_id=r["run_id"], commit=r["commit_sha"], dirty=bool(r["dirty"]), started=r["started"],
                   mode=r["mode"], selection=r["selection"], fingerprint=r["fingerprint"],
                   machine=_loads(machine[0] if machine else None, {}), source=r["source"], digest=r["digest"],
                   kernel=r["kernel"], os=r["os"], cpu_flags=r["cpu_flags"], compiler=r["compiler"],
                   compile_flags=r["compile_flags"], build_type=r["build_type"],
                   environment=_loads(r["environment"], {}), run_json=_loads(r["run_json"], None), files=files,
                   benches=_benches(conn, pk, names), ratios=_ratios(conn, pk, names), budget=budget,
                   claims=claims, pk=pk)


# --- series over runs (oldest first) ------------------------------------------------------------------------------

def ratio_series(conn, file: str, kernel: str, kind: str) -> list:
    """[(run row, RatioData-like dict with value and samples)] of one kernel's ratio to one baseline kind."""
    rows = _dicts(conn.execute(
        "SELECT r.id AS ratio_id, r.value, ru.id AS run, ru.run_id, ru.commit_sha, ru.dirty, ru.started, "
        "ru.fingerprint FROM ratios r JOIN files f ON f.id = r.file JOIN runs ru ON ru.id = f.run "
        "JOIN benchmarks k ON k.id = r.kernel WHERE f.name = ? AND k.name = ? AND r.kind = ? "
        "ORDER BY ru.started, ru.id", (file, kernel, kind)))
    for row in rows:
        row["samples"] = [v for (v,) in conn.execute(
            "SELECT value FROM ratio_samples WHERE ratio = ? ORDER BY repetition", (row["ratio_id"],))]
    return rows


def time_series(conn, file: str, name: str, fingerprint_id: str | None = None) -> list:
    """[(run row with seconds and samples)] of one benchmark's absolute time, on one fingerprint if given."""
    sql = ("SELECT x.seconds AS value, x.file AS file_id, x.benchmark, ru.id AS run, ru.run_id, ru.commit_sha, "
           "ru.dirty, ru.started, f.fingerprint FROM results x JOIN files f ON f.id = x.file JOIN runs ru ON "
           "ru.id = f.run JOIN benchmarks b ON b.id = x.benchmark WHERE f.name = ? AND b.name = ?")
    params = [file, name]
    if fingerprint_id is not None:
        sql += " AND f.fingerprint = ?"
        params.append(fingerprint_id)
    rows = _dicts(conn.execute(sql + " ORDER BY ru.started, ru.id", params))
    for row in rows:
        row["samples"] = [v for (v,) in conn.execute(
            "SELECT real_time_s FROM samples WHERE file = ? AND benchmark = ? ORDER BY repetition",
            (row["file_id"], row["benchmark"])) if v]
    return rows


def budget_series(conn, row_id: str) -> list:
    return _dicts(conn.execute(
        "SELECT b.measured, b.bound, ru.id AS run, ru.run_id, ru.commit_sha, ru.dirty, ru.started, ru.fingerprint "
        "FROM budget b JOIN files f ON f.id = b.file JOIN runs ru ON ru.id = f.run WHERE b.row_id = ? "
        "ORDER BY ru.started, ru.id", (row_id,)))


def ratio_keys(conn) -> list:
    """[(file, kernel name, kind)] of every ratio in the history, sorted."""
    return [tuple(r) for r in conn.execute(
        "SELECT DISTINCT f.name, k.name, r.kind FROM ratios r JOIN files f ON f.id = r.file JOIN benchmarks k ON "
        "k.id = r.kernel ORDER BY f.name, k.name, r.kind")]


def time_keys(conn) -> list:
    """[(file, benchmark name, machine fingerprint)] of every absolute-time series, sorted."""
    return [tuple(r) for r in conn.execute(
        "SELECT DISTINCT f.name, b.name, f.fingerprint FROM results x JOIN files f ON f.id = x.file JOIN benchmarks b "
        "ON b.id = x.benchmark WHERE f.fingerprint IS NOT NULL ORDER BY f.name, b.name, f.fingerprint")]


def budget_keys(conn) -> list:
    return [r[0] for r in conn.execute("SELECT DISTINCT row_id FROM budget ORDER BY row_id")]
