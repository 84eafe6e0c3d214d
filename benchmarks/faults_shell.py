"""The subprocess helpers of the fault campaigns of issue #30 (`faults_eeve.py`, `faults_chain.py`,
`faults_commands.py`, and `faults.py`): run a command as a user would, judge a refusal, cut a file short."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path


def refused_or_why(call: Callable, message: str, kind: type[BaseException] = Exception) -> str:
    """Call `call`: "refused" when it raises `kind` with `message` in its text, what it said when that is unclear,
    "accepted" when it raises nothing."""
    try:
        call()
    except kind as error:
        return "refused" if message in str(error) else f"unclear: {str(error)[:60]}"
    return "accepted"


def shell(env: dict):
    """(cli, clean, cut) for scenarios that run commands with `env`."""

    def cli(*args: str, timeout: float = 600, extra_env: dict | None = None, cwd=None):
        done = subprocess.run(
            [sys.executable, *args],
            env={**env, **(extra_env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd,
        )
        return done.returncode, done.stdout + done.stderr

    def clean(code: int, out: str, *needles: str, status: int = 1) -> tuple[str, bool]:
        """A refusal: the exit status, no traceback, and each needle in the message (shown shortened)."""
        found = [n for n in needles if n in out]
        tb = "Traceback" in out
        said = next((x for x in out.splitlines() if "error:" in x), "")
        said = re.sub(r"/tmp/fault-[^/ ]+/", "", said.split("error: ", 1)[-1]).strip()
        ok = code == status and not tb and len(found) == len(needles)
        shown = f"exit {code}, {'a traceback' if tb else 'no traceback'}, {len(found)}/{len(needles)} named"
        return f"{shown}: «{said[:90]}{'…' if len(said) > 90 else ''}»", ok

    def cut(path: Path, keep: float = 0.5) -> None:
        data = path.read_bytes()
        path.write_bytes(data[: int(len(data) * keep)])

    return cli, clean, cut
