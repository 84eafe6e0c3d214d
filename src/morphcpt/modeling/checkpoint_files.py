"""The hf engine's checkpoints as files on disk, for whoever reads them: the folder names, the manifest each
checkpoint carries, its verification, the newest intact one of a run, and its metadata. Training resumes from
`latest_checkpoint`; export and evaluation read the same folders (`morphcpt.export`, `morphcpt.evaluate.resolve`).
Writing them is the engine's (`train/hf/checkpoints.py`, which documents the layout; `checkpoint_layout.py` says
what each sharding layout writes).

    path = latest_checkpoint(run_dir / "checkpoints")   # None: no checkpoint yet; CheckpointError: none intact
    verify(path)                                         # None, or what is wrong with it
    read_meta(path)["step"]
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from morphcpt.errors import UserError
from morphcpt.indexed import file_digest
from morphcpt.jsonio import read_json

log = logging.getLogger(__name__)

LATEST = "latest"  # the file naming the newest complete checkpoint
FILES = "files.json"  # every file's size and sha256, written last
SHARDED_DIR = "sharded"  # fsdp runs: the optimiser state, one shard per rank
ADAPTER_DIR = "adapter"  # LoRA runs: the adapter on its own


class CheckpointError(UserError, RuntimeError):
    """A checkpoint is incomplete, corrupt or unloadable; the message names it."""


def step_dir(root: Path, step: int) -> Path:
    return root / f"step_{step:08d}"


def manifest(folder: Path) -> dict[str, dict]:
    """{relative path: {"bytes", "sha256"}} of every file under `folder` but the manifest itself."""
    return {
        str(path.relative_to(folder)): file_digest(path)
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != FILES
    }


def verify(path: Path, checksums: bool = True) -> str | None:
    """None when checkpoint `path` is complete and intact, else what is wrong with it.

    With a `files.json`, every file must be there with its recorded size and sha256 (`checksums=False`: its size
    only, for the check right after the manifest was computed from the same files). A checkpoint written before
    `files.json` existed is checked for its parts only."""
    try:
        meta = read_json(path / "meta.json", expect=None)
        if not isinstance(meta, dict) or "step" not in meta:
            return "meta.json holds no step"
        manifest_file = path / FILES
        if not manifest_file.exists():
            missing = [n for n in ("trainer.pt", "model/config.json") if not (path / n).exists()]
            return f"{', '.join(missing)} missing" if missing else None
        recorded = read_json(manifest_file)
        for name, want in recorded.items():
            file = path / name
            if not file.is_file():
                return f"{name} is missing"
            if file.stat().st_size != want["bytes"]:
                return f"{name} has {file.stat().st_size} bytes, {want['bytes']} were written"
            if checksums and file_digest(file)["sha256"] != want["sha256"]:
                return f"{name} does not match the checksum written with it"
    except FileNotFoundError as error:
        return f"{Path(error.filename).name} is missing"
    except (
        OSError,
        ValueError,
        KeyError,
        TypeError,
    ) as error:  # unreadable, or JSON that is not what we wrote
        return f"unreadable: {error}"
    return None


def _step_dirs(root: Path) -> list[Path]:
    """Complete-looking checkpoint folders (renamed from .tmp), newest first."""
    found = [p for p in root.glob("step_*") if p.is_dir() and re.fullmatch(r"step_\d+", p.name)]
    return sorted(found, key=lambda p: int(p.name.removeprefix("step_")), reverse=True)


def intact_checkpoints(root: Path) -> list[Path]:
    """Every checkpoint under `root` that passes `verify`, oldest first (the last k, for checkpoint averaging)."""
    return [path for path in reversed(_step_dirs(root)) if verify(path) is None]


def latest_checkpoint(root: Path) -> Path | None:
    """The newest intact checkpoint under `root`, or None when there is none at all.

    The newest one normally is the one `latest` names; a checkpoint that fails `verify` is skipped with a
    warning (and so is a `latest` naming a missing folder), falling back to the previous intact one. When
    checkpoints exist but none is intact, `CheckpointError` lists them all: starting over silently would
    throw the run away."""
    pointer = root / LATEST
    named = pointer.read_text().strip() if pointer.is_file() else None
    candidates = _step_dirs(root)
    if named and not (root / named).is_dir():
        log.warning("%s names %s, which does not exist; using the newest intact checkpoint", pointer, named)
    problems = []
    for path in candidates:
        problem = verify(path)
        if problem is None:
            if problems:
                log.warning(
                    "falling back to checkpoint %s: %s", path, "; ".join(f"{p} {why}" for p, why in problems)
                )
            return path
        problems.append((path, problem))
        log.warning("checkpoint %s is not usable: %s", path, problem)
    if problems:
        listing = "\n  ".join(f"{p}: {why}" for p, why in problems)
        raise CheckpointError(
            f"no intact checkpoint under {root}:\n  {listing}\nMove them away to start the run over."
        )
    return None


def read_meta(path: Path) -> dict:
    try:
        return read_json(path / "meta.json", keys=("step",))
    except (OSError, ValueError) as error:
        raise CheckpointError(f"checkpoint {path}: cannot read meta.json: {error}") from None
