"""hf-engine checkpoints: everything a killed run needs to continue exactly where it stopped.

Layout under `<run_dir>/checkpoints/`:

    step_00000030/
        model/            Hugging Face folder (config, safetensors, tokenizer) — exportable as it is
        adapter/          LoRA runs: the adapter on its own (model/ is then the frozen base)
        sharded/          fsdp runs: the optimiser state, one shard per rank (torch.distributed.checkpoint)
        trainer.pt        optimiser (ddp) and scheduler state, step, consumed samples
        rng_rank{r}.pt    Python, NumPy, torch (CPU and CUDA) generator states of rank r
        meta.json         step, config hash, scheme, validation metrics at that step
        files.json        size and sha256 of every file above, written last
    latest                name of the newest complete checkpoint

A checkpoint is written under `step_X.tmp/`, read back and checksummed into `files.json`, and renamed when
complete; then `latest` is replaced atomically, so a kill at any moment leaves the previous checkpoint intact.
On resume, `latest_checkpoint` verifies the newest checkpoint against its `files.json` and, when a file is missing,
truncated or altered, falls back with a warning to the previous complete one that `checkpoint.keep` retained.
Every error names the checkpoint.
"""

from __future__ import annotations

import json
import logging
import os
import random
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist

from morphcpt.indexed import file_digest
from morphcpt.jsonio import read_json
from morphcpt.train import state as layouts
from morphcpt.train.state import CheckpointError

log = logging.getLogger(__name__)

LATEST = "latest"
FILES = "files.json"


@dataclass
class TrainerState:
    step: int
    consumed_samples: int


def step_dir(root: Path, step: int) -> Path:
    return root / f"step_{step:08d}"


def _manifest(folder: Path) -> dict[str, dict]:
    """{relative path: {"bytes", "sha256"}} of every file under `folder` but the manifest itself."""
    return {
        str(path.relative_to(folder)): file_digest(path)
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != FILES
    }


def verify(path: Path) -> str | None:
    """None when checkpoint `path` is complete and intact, else what is wrong with it.

    With a `files.json`, every file must be there with its recorded size and sha256. A checkpoint written before
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
            if file_digest(file)["sha256"] != want["sha256"]:
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


def _rank() -> int:
    return dist.get_rank() if dist.is_initialized() else 0


def _barrier() -> None:
    if dist.is_initialized() and dist.get_world_size() > 1:
        dist.barrier()


def rng_state() -> dict:
    return {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
    }


def set_rng_state(state: dict) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if state["cuda"] is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save(
    root: Path,
    model,
    tokenizer,
    optimizer: torch.optim.Optimizer,
    scheduler,
    state: TrainerState,
    meta: dict,
    keep: int,
) -> Path:
    """Write a checkpoint of `state.step` (all ranks call this; rank 0 writes the shared parts)."""
    final = step_dir(root, state.step)
    tmp = final.with_name(final.name + ".tmp")
    if _rank() == 0:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
    _barrier()
    torch.save(rng_state(), tmp / f"rng_rank{_rank()}.pt")
    layouts.write_model(model, tokenizer, tmp, main=_rank() == 0)  # collective under fsdp
    layouts.write_sharded(model, optimizer, tmp)  # fsdp: every rank writes its optimiser shard
    if _rank() == 0:
        world = dist.get_world_size() if dist.is_initialized() else 1
        meta = {**meta, **layouts.layout_of(model), "world_size": world}
        torch.save(
            {
                "optimizer": layouts.optimizer_payload(model, optimizer),
                "scheduler": scheduler.state_dict(),
                "step": state.step,
                "consumed_samples": state.consumed_samples,
            },
            tmp / "trainer.pt",
        )
        (tmp / "meta.json").write_text(json.dumps({**meta, "step": state.step}, indent=2))
    _barrier()
    if _rank() == 0:
        # Read every file back (every rank's RNG state included) and record what was written; a checkpoint
        # that cannot be read back never becomes `latest`.
        (tmp / FILES).write_text(json.dumps(_manifest(tmp), indent=1))
        if problem := verify(tmp):
            raise CheckpointError(f"checkpoint {final} failed its check after writing: {problem}")
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
        pointer = root / (LATEST + ".tmp")
        pointer.write_text(final.name)
        os.replace(pointer, root / LATEST)
        _rotate(root, keep)
    _barrier()
    return final


def _rotate(root: Path, keep: int) -> None:
    done = sorted(p for p in root.glob("step_*") if p.is_dir() and not p.name.endswith(".tmp"))
    for old in done[: max(len(done) - keep, 0)]:
        shutil.rmtree(old)


def load_trainer(path: Path, optimizer: torch.optim.Optimizer, scheduler, model=None) -> TrainerState:
    """Restore optimiser, scheduler and this rank's RNG from checkpoint `path`; the model is loaded separately
    (from `path / "model"`, a Hugging Face folder). `model` (the one training, sharded or not) is needed for a
    checkpoint whose optimiser state is sharded, and to check the checkpoint's layout.

    A checkpoint written by another number of ranks resumes (model and optimiser are whole, or resharded by
    torch.distributed.checkpoint); ranks without an RNG state of their own keep their fresh seeds, which only
    matters to dropout."""
    meta = read_meta(path)
    if model is not None:
        layouts.check_layout(path, meta, model)
    rng_file = path / f"rng_rank{_rank()}.pt"
    world = dist.get_world_size() if dist.is_initialized() else 1
    if not rng_file.exists() and meta.get("world_size", world) == world:
        raise CheckpointError(f"checkpoint {path}: {rng_file.name} is missing")
    try:
        trainer = torch.load(path / "trainer.pt", map_location="cpu", weights_only=False)
        if model is None:
            optimizer.load_state_dict(trainer["optimizer"])
        else:
            layouts.load_optimizer(path, model, optimizer, trainer["optimizer"])
        scheduler.load_state_dict(trainer["scheduler"])
        if rng_file.exists():
            set_rng_state(torch.load(rng_file, weights_only=False))
        else:
            log.warning(
                "%s was written by %s ranks: rank %d keeps its fresh RNG", path, meta["world_size"], _rank()
            )
        return TrainerState(step=trainer["step"], consumed_samples=trainer["consumed_samples"])
    except Exception as error:  # a pickle, zip or state-dict error says nothing of which checkpoint
        raise CheckpointError(f"checkpoint {path}: cannot restore the trainer state: {error}") from error
