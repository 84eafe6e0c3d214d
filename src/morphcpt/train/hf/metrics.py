"""Where a run's numbers go: a JSONL file in the run folder (every step, the record), TensorBoard, W&B when
enabled, and a console progress bar. Only rank 0 logs.

W&B reads its key from the environment (WANDB_API_KEY) or its own login; nothing here writes the key anywhere.
`logging.wandb_mode=offline` logs without network (sync later with `wandb sync <run_dir>/wandb`).
"""

from __future__ import annotations

import json
import os
import resource
from dataclasses import asdict
from pathlib import Path

import torch
from tqdm import tqdm

from morphcpt.plan.schema import CPTPlan

METRICS_FILE = "metrics.jsonl"


def peak_memory_mb(device: torch.device) -> float:
    """Peak GPU memory allocated on `device`, or the process's peak resident memory on CPU."""
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def _rows(path: Path) -> list[tuple[str, dict]]:
    """(line, row) of every complete row; a line cut off (a run killed while writing it) is left out."""
    rows = []
    for line in path.read_text().splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and "step" in row:
            rows.append((line, row))
    return rows


def read_metrics(run_dir: Path) -> list[dict]:
    path = Path(run_dir) / METRICS_FILE
    return [row for _, row in _rows(path)] if path.exists() else []


def truncate_metrics(run_dir: Path, step: int) -> None:
    """Drop rows after `step` (left by a run killed after its last checkpoint), and a last line cut off by a kill,
    so a resumed log stays single and readable."""
    path = Path(run_dir) / METRICS_FILE
    if not path.exists():
        return
    kept = [line for line, row in _rows(path) if row["step"] <= step]
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(line + "\n" for line in kept))
    os.replace(tmp, path)


# What Megatron-Bridge logs to W&B and TensorBoard for the same quantities (0.4.0: training/utils/train_utils.py
# `training_log`, training/eval.py), so runs of both engines share one panel per metric; the hf engine's own
# extras keep a train/ or val/ prefix (val/bpb, train/tokens_per_s).
SHARED_NAMES = {
    ("train", "loss"): "lm loss",
    ("train", "lr"): "learning-rate",
    ("train", "grad_norm"): "grad-norm",
    ("val", "val_loss"): "lm loss validation",
    ("val", "val_ppl"): "lm loss validation ppl",
}


def sink_name(prefix: str, key: str) -> str:
    """The W&B / TensorBoard name of a metrics.jsonl field: Bridge's name where it logs the same quantity."""
    return SHARED_NAMES.get((prefix, key)) or f"{prefix}/{key.removeprefix(prefix + '_')}"


class Metrics:
    """Fan-out of metric rows. `enabled=False` (ranks > 0) makes every call a no-op."""

    def __init__(self, plan: CPTPlan, start_step: int, enabled: bool) -> None:
        self.enabled = enabled
        self.interval = plan.logging.interval
        self._file = self._tb = self._wandb = self._bar = None
        if not enabled:
            return
        run_dir = Path(plan.run_dir)
        self._file = open(run_dir / METRICS_FILE, "a")  # noqa: SIM115 (closed in close())
        if plan.logging.tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self._tb = SummaryWriter(str(run_dir / "tensorboard"))
        if plan.logging.wandb:
            self._wandb = _start_wandb(plan)
        self._bar = tqdm(
            total=plan.loop.steps,
            initial=start_step,
            desc=plan.run_name,
            disable=not plan.logging.progress_bar,
            dynamic_ncols=True,
        )

    def train_step(self, row: dict) -> None:
        """One optimiser step: always to the JSONL; to the other sinks every `logging.interval` steps."""
        if not self.enabled:
            return
        self._write(row)
        self._bar.update(1)
        if row["step"] % self.interval == 0:
            self._bar.set_postfix(loss=f"{row['loss']:.4f}", lr=f"{row['lr']:.2e}", refresh=False)
            self._emit("train", row)

    def validation(self, row: dict) -> None:
        if not self.enabled:
            return
        self._write(row)
        ppl = f", val_ppl {row['val_ppl']:.2f}" if "val_ppl" in row else ""
        self._bar.write(
            f"step {row['step']}: val_loss {row['val_loss']:.4f}{ppl}, val_bpb {row['val_bpb']:.4f}"
        )
        self._emit("val", row)

    def _write(self, row: dict) -> None:
        self._file.write(json.dumps(row) + "\n")
        self._file.flush()

    def _emit(self, prefix: str, row: dict) -> None:
        values = {
            sink_name(prefix, k): v for k, v in row.items() if k not in ("step", "kind") and v is not None
        }
        if self._tb is not None:
            for key, value in values.items():
                self._tb.add_scalar(key, value, row["step"])
        if self._wandb is not None:
            self._wandb.log(values, step=row["step"])

    def close(self) -> None:
        if not self.enabled:
            return
        self._bar.close()
        self._file.close()
        if self._tb is not None:
            self._tb.close()
        if self._wandb is not None:
            self._wandb.finish()


def _start_wandb(plan: CPTPlan):
    try:
        import wandb
    except ImportError as err:
        raise ImportError("logging.wandb=true needs wandb: pip install 'morphcpt[wandb]'") from err
    return wandb.init(
        project=plan.logging.wandb_project,
        name=plan.run_name,
        id=f"{plan.run_name}-{plan.config_hash()}",  # stable: a resumed run continues the same W&B run
        resume="allow",
        dir=plan.run_dir,
        mode=plan.logging.wandb_mode,
        config=asdict(plan),
    )
