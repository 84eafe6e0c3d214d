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

Saving has two halves. `snapshot` runs in the training thread: every rank's RNG states, and on rank 0 the model's
weights (the fp32 masters of a bf16 model) and the optimiser state copied to host memory (pinned buffers reused
from save to save, so that 12 GB copy at the link's speed), the scheduler state, step and metadata. `write` then writes
the files, waits for every rank's, and on rank 0 reads them back into `files.json`, renames the folder into place,
moves `latest` and rotates. An `AsyncWriter` (`checkpoint.async_save`, the default) runs `write` in a background
thread while training goes on; a new save waits for the previous write, and a failed write is raised at the next
save or `wait()`, naming the checkpoint (it never becomes `latest`). The files are the same either way, so
resuming is exact either way. What cannot be snapshotted cheaply is written synchronously inside `snapshot`: under
fsdp the gathered model and the optimiser shards (collective), and a LoRA run's adapter and base.

    writer = AsyncWriter(world)                                  # every rank, once (a gloo group for its barrier)
    save(root, model, tokenizer, optimizer, scheduler, state, meta, keep, writer=writer)  # blocks for the snapshot
    writer.wait()                                                # before anything reads the checkpoint

On resume, `latest_checkpoint` verifies the newest checkpoint against its `files.json` and, when a file is missing,
truncated or altered, falls back with a warning to the previous complete one that `checkpoint.keep` retained.
Every error names the checkpoint.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import random
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist

from morphcpt.modeling.checkpoint_files import (
    FILES,
    LATEST,
    CheckpointError,
    manifest,
    read_meta,
    step_dir,
    verify,
)
from morphcpt.train.hf import checkpoint_layout
from morphcpt.train.hf.parallel import barrier, is_fsdp

log = logging.getLogger(__name__)


@dataclass
class TrainerState:
    step: int
    consumed_samples: int


def _rank() -> int:
    return dist.get_rank() if dist.is_initialized() else 0


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
    *,
    model_state: dict | None = None,
    writer=None,
) -> Path:
    """Write a checkpoint of `state.step` (all ranks call this; rank 0 writes the shared parts) and return its
    final folder. `model_state` replaces the model's own state dict (the fp32 master weights of a bf16 model).
    With an `AsyncWriter` the files are written in the background: the folder appears when `writer.wait()` says
    so (or at the next save)."""
    pool = None
    if writer is not None:  # the previous write must be done: its host buffers are reused for this snapshot
        writer.wait()
        pool = writer.pool
    snap = snapshot(root, model, tokenizer, optimizer, scheduler, state, meta, keep, model_state, pool)
    if writer is None:
        write(snap, group=None)
        barrier()
    else:
        writer.submit(snap)
    return snap.final


def finalize(root: Path, tmp: Path, final: Path, keep: int) -> None:
    """Rank 0, once every rank's files are in `tmp`: read every file back (every rank's RNG state included) and
    record what was written; a checkpoint that cannot be read back never becomes `latest`."""
    (tmp / FILES).write_text(json.dumps(manifest(tmp), indent=1))
    if problem := verify(tmp, checksums=False):  # the manifest just read every byte back
        raise CheckpointError(f"checkpoint {final} failed its check after writing: {problem}")
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    pointer = root / (LATEST + ".tmp")
    pointer.write_text(final.name)
    os.replace(pointer, root / LATEST)
    _rotate(root, keep)


@dataclass
class Snapshot:
    """Everything one checkpoint holds, taken at its step."""

    root: Path
    final: Path
    tmp: Path
    keep: int
    rank: int
    world: int
    rng: dict
    config: object = None  # rank 0: the model's config and generation config (deep copies), for model/
    generation_config: object = None
    model_class: type | None = None
    model_state: dict | None = None  # rank 0: host copies; None when model/ was written in `snapshot`
    tokenizer: object = None
    trainer: dict | None = None
    meta: dict | None = None
    taken_s: float = 0.0


@dataclass
class _Pool:
    """Host buffers reused from one snapshot to the next (pinned when the source is on a GPU)."""

    buffers: dict = field(default_factory=dict)

    def copy(self, obj, key: str, memo: dict):
        if torch.is_tensor(obj):
            alias = (
                obj.untyped_storage().data_ptr(),
                obj.storage_offset(),
                tuple(obj.shape),
                tuple(obj.stride()),
            )
            if alias in memo:  # tied weights stay one tensor, as in the model (save_pretrained keeps one)
                return memo[alias]
            source = obj.detach()
            if source.device.type == "cpu":
                out = source.clone()
            else:
                out = self.buffers.get(key)
                if out is None or out.shape != source.shape or out.dtype != source.dtype:
                    out = torch.empty(source.shape, dtype=source.dtype, pin_memory=torch.cuda.is_available())
                    self.buffers[key] = out
                out.copy_(source, non_blocking=True)
            memo[alias] = out
            return out
        if isinstance(obj, dict):
            return {k: self.copy(v, f"{key}/{k}", memo) for k, v in obj.items()}
        if isinstance(obj, list | tuple):
            return type(obj)(self.copy(v, f"{key}/{i}", memo) for i, v in enumerate(obj))
        return copy.deepcopy(obj)


def snapshot(
    root: Path,
    model,
    tokenizer,
    optimizer: torch.optim.Optimizer,
    scheduler,
    state: TrainerState,
    meta: dict,
    keep: int,
    model_state: dict | None = None,
    pool: _Pool | None = None,
) -> Snapshot:
    """The checkpoint of `state.step` in host memory (all ranks call this; see the module docstring)."""
    tic = time.perf_counter()
    pool = pool or _Pool()
    rank = _rank()
    world = dist.get_world_size() if dist.is_initialized() else 1
    final = step_dir(root, state.step)
    tmp = final.with_name(final.name + ".tmp")
    if rank == 0:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
    barrier()
    snap = Snapshot(root, final, tmp, keep, rank, world, rng=rng_state())
    direct = checkpoint_layout.is_lora(model) or is_fsdp(model)
    if direct:  # collective (fsdp) or read from the live adapter (LoRA): written now
        checkpoint_layout.write_model(model, tokenizer, tmp, main=rank == 0)
        checkpoint_layout.write_sharded(model, optimizer, tmp)
    if rank == 0:
        memo: dict = {}
        if not direct:
            snap.model_state = pool.copy(model_state or model.state_dict(), "model", memo)
            snap.config, snap.model_class = copy.deepcopy(model.config), type(model)
            snap.generation_config = copy.deepcopy(getattr(model, "generation_config", None))
            snap.tokenizer = tokenizer
        snap.trainer = {
            "optimizer": pool.copy(checkpoint_layout.optimizer_payload(model, optimizer), "optimizer", memo),
            "scheduler": copy.deepcopy(scheduler.state_dict()),
            "step": state.step,
            "consumed_samples": state.consumed_samples,
        }
        snap.meta = {**meta, **checkpoint_layout.layout_of(model), "world_size": world, "step": state.step}
    if torch.cuda.is_available():
        torch.cuda.synchronize()  # the non-blocking copies into the pinned buffers are done
    snap.taken_s = time.perf_counter() - tic
    return snap


def _save_model_state(snap: Snapshot) -> None:
    """model/ from the host copy: the weights with the model's own save_pretrained (tied weights, safetensors,
    config), through a shell of the model on the meta device, so the live model is not touched and the config
    records the dtype of the weights written (fp32 masters, not the bf16 parameters)."""
    with torch.device("meta"):
        shell = snap.model_class(snap.config)
    if snap.generation_config is not None:
        shell.generation_config = snap.generation_config
    folder = snap.tmp / "model"
    shell.save_pretrained(folder, state_dict=snap.model_state)
    dtypes = {str(t.dtype).removeprefix("torch.") for t in snap.model_state.values() if t.is_floating_point()}
    if len(dtypes) == 1:  # the shell's own dtype is the default one; say what the weights are
        config_file = folder / "config.json"
        config = json.loads(config_file.read_text())
        config["dtype"] = dtypes.pop()
        config_file.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    snap.tokenizer.save_pretrained(folder)


def write(snap: Snapshot, group=None) -> Path:
    """Write a snapshot's files, wait for every rank's, and on rank 0 check and publish the checkpoint."""
    torch.save(snap.rng, snap.tmp / f"rng_rank{snap.rank}.pt")
    if snap.rank == 0:
        if snap.model_state is not None:
            _save_model_state(snap)
        torch.save(snap.trainer, snap.tmp / "trainer.pt")
        (snap.tmp / "meta.json").write_text(json.dumps(snap.meta, indent=2))
    if snap.world > 1:
        dist.barrier(group=group)
    if snap.rank == 0:
        finalize(snap.root, snap.tmp, snap.final, snap.keep)
    return snap.final


class AsyncWriter:
    """Writes snapshots in a background thread, one at a time. Every rank makes one (its gloo group is created
    collectively); `enabled=False` writes in the calling thread, as a synchronous save."""

    def __init__(self, world: int, enabled: bool = True) -> None:
        self.enabled = enabled
        self.pool = _Pool()
        self.group = dist.new_group(backend="gloo") if world > 1 and dist.is_initialized() else None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._pending: Snapshot | None = None
        self.last_write_s: float | None = None
        self.last_wait_s = 0.0

    def submit(self, snap: Snapshot) -> None:
        self.wait()
        if not self.enabled:
            self._run(snap)
            self.wait()
            return
        self._pending = snap
        self._thread = threading.Thread(
            target=self._run, args=(snap,), name="checkpoint-writer", daemon=False
        )
        self._thread.start()

    def _run(self, snap: Snapshot) -> None:
        tic = time.perf_counter()
        try:
            write(snap, self.group)
        except BaseException as error:  # raised in the training thread at the next save or wait
            self._error = error
        self.last_write_s = time.perf_counter() - tic

    def wait(self) -> None:
        """Block until the last submitted snapshot is written (on this rank); raise what went wrong."""
        tic = time.perf_counter()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self.last_wait_s = time.perf_counter() - tic
        if self._error is not None:
            error, self._error = self._error, None
            final = self._pending.final if self._pending is not None else "?"
            raise CheckpointError(f"checkpoint {final} could not be written: {error}") from error
        self._pending = None


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
        checkpoint_layout.check_layout(path, meta, model)
    rng_file = path / f"rng_rank{_rank()}.pt"
    world = dist.get_world_size() if dist.is_initialized() else 1
    if not rng_file.exists() and meta.get("world_size", world) == world:
        raise CheckpointError(f"checkpoint {path}: {rng_file.name} is missing")
    try:
        trainer = torch.load(path / "trainer.pt", map_location="cpu", weights_only=False)
        if model is None:
            optimizer.load_state_dict(trainer["optimizer"])
        else:
            checkpoint_layout.load_optimizer(path, model, optimizer, trainer["optimizer"])
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
