"""hf-engine checkpoints: everything a killed run needs to continue exactly where it stopped.

Layout under `<run_dir>/checkpoints/`:

    step_00000030/
        model/            Hugging Face folder (config, safetensors, tokenizer) — exportable as it is
        trainer.pt        optimiser and scheduler state, step, consumed samples
        rng_rank{r}.pt    Python, NumPy, torch (CPU and CUDA) generator states of rank r
        meta.json         step, config hash, scheme, validation metrics at that step
    latest                name of the newest complete checkpoint

A checkpoint is written under `step_X.tmp/` and renamed when complete, then `latest` is replaced atomically, so a
kill at any moment leaves the previous checkpoint intact.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist

LATEST = "latest"


@dataclass
class TrainerState:
    step: int
    consumed_samples: int


def step_dir(root: Path, step: int) -> Path:
    return root / f"step_{step:08d}"


def latest_checkpoint(root: Path) -> Path | None:
    """The newest complete checkpoint under `root`, or None."""
    pointer = root / LATEST
    if not pointer.exists():
        return None
    path = root / pointer.read_text().strip()
    if not (path / "meta.json").exists():
        raise FileNotFoundError(f"{pointer} names {path.name}, which is not a complete checkpoint")
    return path


def read_meta(path: Path) -> dict:
    return json.loads((path / "meta.json").read_text())


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
    if _rank() == 0:
        model.save_pretrained(tmp / "model")
        tokenizer.save_pretrained(tmp / "model")
        torch.save(
            {
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "step": state.step,
                "consumed_samples": state.consumed_samples,
            },
            tmp / "trainer.pt",
        )
        (tmp / "meta.json").write_text(json.dumps({**meta, "step": state.step}, indent=2))
    _barrier()
    if _rank() == 0:
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


def load_trainer(path: Path, optimizer: torch.optim.Optimizer, scheduler) -> TrainerState:
    """Restore optimiser, scheduler and this rank's RNG from checkpoint `path`; the model is loaded separately
    (from `path / "model"`, a Hugging Face folder)."""
    trainer = torch.load(path / "trainer.pt", map_location="cpu", weights_only=False)
    optimizer.load_state_dict(trainer["optimizer"])
    scheduler.load_state_dict(trainer["scheduler"])
    rng_file = path / f"rng_rank{_rank()}.pt"
    if not rng_file.exists():
        raise FileNotFoundError(f"{rng_file} missing: resume with the same number of ranks as the checkpoint")
    set_rng_state(torch.load(rng_file, weights_only=False))
    return TrainerState(step=trainer["step"], consumed_samples=trainer["consumed_samples"])
