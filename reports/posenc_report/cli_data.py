"""The posenc CLI as a source of figure data: `posenc <verb> <scheme> ... --format json` run once per argument
tuple (cached), its JSON object returned; after the first failure `error` says why and every later call returns
None, so a figure that cannot get its numbers says so instead of failing. Scheme modules subclass CliData with
their own commands (schemes/alibi.py AlibiCli, schemes/kerple.py KerpleCli, schemes/fire.py FireCli: `posenc bias
fire` of state_dicts it writes as JSON --weights files into the directory its constructor takes)."""
from __future__ import annotations

import json
import subprocess

NEG_INF = float("-inf")


class CliData:
    """`error`: None, or why the CLI gave no data (then every call returns None); `calls`: CLI runs made."""

    def __init__(self, cli: str | None, timeout: float = 60):
        self.cli = cli
        self.error = None if cli else "no --cli given"
        self.calls = 0
        self.timeout = timeout
        self._cache: dict = {}

    def run(self, args: tuple) -> dict | None:
        """The JSON object `posenc *args --format json` printed, or None (and `error` set)."""
        args = tuple(args)
        if args in self._cache:
            return self._cache[args]
        if self.error:
            return None
        proc = self.execute((*args, "--format", "json"), args)
        if proc is None:
            return None
        try:
            data = json.loads(proc.stdout)
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
        except ValueError as e:
            self.error = f"`posenc {' '.join(args)}` printed no JSON object: {e}"
            return None
        self._cache[args] = data
        return data

    def execute(self, cmd_args: tuple, shown: tuple | None = None):
        """Runs `posenc *cmd_args` once (counted in `calls`); the finished process, or None (and `error` set, naming
        `shown`, by default cmd_args) when it could not run or exited non-zero."""
        shown = cmd_args if shown is None else shown
        self.calls += 1
        try:
            proc = subprocess.run([self.cli, *cmd_args], capture_output=True, text=True, timeout=self.timeout)
        except (OSError, subprocess.TimeoutExpired) as e:
            self.error = f"could not run {self.cli}: {e}"
            return None
        if proc.returncode != 0:
            msg = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
            self.error = f"`posenc {' '.join(shown)}` exited {proc.returncode}: {msg}"
            return None
        return proc

    def fail(self, args: tuple, why: str) -> None:
        """Marks the source failed: the output of `posenc *args` was not what the caller expected."""
        self.error = f"unexpected output of `posenc {' '.join(args)}`: {why}"

    def bias_tensor(self, args: tuple, data: dict | None, heads: int, query_length: int,
                    key_length: int) -> list | None:
        """The "bias" member of a `posenc bias <scheme>` JSON as [h][i][j] floats (-inf where the JSON has null:
        a masked entry), checked against the expected shape; None (and `error` set) otherwise."""
        if data is None:
            return None
        rows = data.get("bias")
        if data.get("shape") != [heads, query_length, key_length] or not isinstance(rows, list) \
                or len(rows) != heads * query_length \
                or not all(isinstance(r, list) and len(r) == key_length for r in rows):
            self.fail(args, f"expected \"bias\" of shape [{heads}, {query_length}, {key_length}]")
            return None
        try:
            flat = [[NEG_INF if v is None else float(v) for v in r] for r in rows]
        except (TypeError, ValueError) as e:
            self.fail(args, f"{type(e).__name__}: {e}")
            return None
        return [flat[h * query_length:(h + 1) * query_length] for h in range(heads)]
