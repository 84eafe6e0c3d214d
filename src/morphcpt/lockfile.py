"""An exclusive claim on a piece of work that holds across login nodes sharing a file system: a lock file created
with O_CREAT|O_EXCL, which names its holder (host, pid, start) and is touched while the work goes on.

    with claim(Path("logs/pipeline/submit_pbs.lock"), "submitting the chain"):
        ...                        # heartbeat() now and then during long work

What it relies on: creating a file with O_EXCL is atomic on local file systems, on NFSv3 and later (the server
checks), and on Lustre and GPFS; `flock` is not enough there (Lustre's `localflock` mounts and some NFS set-ups
lock per node only, so two login nodes would both get it). A second claimant fails at once with `Claimed`, saying
who holds the claim, since when, and what to do.

Stale claims (the holder was killed, its node rebooted): a claim is stale when its holder ran on this host and
its pid no longer exists, or, for a holder on another host (whose pid cannot be looked up from here), when its
file has not been touched for `stale_after` seconds (holders touch it as they work: `heartbeat`). A stale claim is taken over with a note. Taking over renames the stale file away first
(atomic, so of two processes taking over the same stale claim only one succeeds; one that finds it renamed
another's fresh claim instead, by its inode, puts it back) and then claims afresh.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from morphcpt.errors import UserError

STALE_AFTER_S = 15 * 60  # far longer than one qsub or sbatch call takes, even on a slow scheduler


class Claimed(UserError, RuntimeError):
    """Another process holds the claim; the message says who and what to do."""


@dataclass
class Holder:
    host: str
    pid: int
    since: str
    what: str

    @classmethod
    def read(cls, path: Path) -> Holder | None:
        try:
            fields = dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)
            return cls(fields["host"], int(fields["pid"]), fields.get("since", "?"), fields.get("what", ""))
        except (OSError, KeyError, ValueError):
            return None

    def text(self) -> str:
        return f"host={self.host}\npid={self.pid}\nsince={self.since}\nwhat={self.what}\n"

    def alive(self) -> bool | None:
        """Whether the holder's process exists (None: it runs on another host, so this one cannot tell)."""
        if self.host != socket.gethostname():
            return None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # another user's live process
            return True
        return True


def _stale(path: Path, holder: Holder | None, stale_after: float) -> str | None:
    """Why the claim at `path` is stale, or None when its holder may still be working."""
    try:
        idle = time.time() - path.stat().st_mtime
    except FileNotFoundError:
        return "gone"
    alive = holder.alive() if holder is not None else None
    if alive is False:
        return f"its holder, pid {holder.pid} on {holder.host}, is no longer running"
    if alive is None and idle > stale_after:  # on another host: only its heartbeat tells
        return f"untouched for {idle / 60:.0f} minutes"
    if holder is None and idle > 60:  # unreadable and not being written: a crash between create and write
        return "it names no holder"
    return None


def _create(path: Path, holder: Holder) -> bool:
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as handle:
        handle.write(holder.text())
    return True


@contextlib.contextmanager
def claim(path: str | Path, what: str, stale_after: float = STALE_AFTER_S, echo=print) -> Iterator[Path]:
    """Hold the claim at `path` for the `with` block, or raise `Claimed` naming its holder."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    me = Holder(socket.gethostname(), os.getpid(), datetime.now(UTC).isoformat(timespec="seconds"), what)
    for _ in range(3):
        if _create(path, me):
            break
        try:
            inode = path.stat().st_ino
        except FileNotFoundError:
            continue
        holder = Holder.read(path)
        why = _stale(path, holder, stale_after)
        if why is None:
            who = f"pid {holder.pid} on {holder.host} since {holder.since}" if holder else "another process"
            raise Claimed(
                f"{who} is {holder.what if holder and holder.what else 'working'} (lock {path}); wait for it to "
                f"finish and rerun (what it did is not done again), or, if it was stopped, delete {path}"
            )
        aside = path.with_name(f"{path.name}.stale-{os.getpid()}")
        try:
            os.rename(path, aside)  # of several takers only one renames this file
        except FileNotFoundError:
            continue
        if aside.stat().st_ino != inode:  # another taker was quicker and this is its fresh claim: put it back
            os.rename(aside, path)
            continue
        echo(f"note: took over {path}: the earlier claim is stale ({why})")
        aside.unlink(missing_ok=True)
    else:
        raise Claimed(f"could not claim {path}: other processes keep claiming it; rerun")
    try:
        yield path
    finally:
        if Holder.read(path) == me:
            path.unlink(missing_ok=True)


def heartbeat(path: str | Path) -> None:
    """Show that the holder is still working (a claim untouched for `stale_after` counts as abandoned)."""
    with contextlib.suppress(OSError):
        os.utime(path)
