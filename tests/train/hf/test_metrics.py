"""The hf engine's W&B and TensorBoard names are Megatron-Bridge's for the quantities both engines log, so the runs
of both engines share one panel per metric."""

from __future__ import annotations

from pathlib import Path

from morphcpt.train import load_plan
from morphcpt.train.hf import metrics


class FakeRun:
    """Records what `wandb.log` was given."""

    def __init__(self) -> None:
        self.logged: dict[str, float] = {}

    def log(self, values: dict, step: int) -> None:
        self.logged.update(values)

    def finish(self) -> None:
        pass


def test_wandb_names_are_bridges_for_what_both_engines_log(tmp_path, monkeypatch):
    run = FakeRun()
    monkeypatch.setattr(metrics, "_start_wandb", lambda plan: run)
    plan = load_plan(["recipe=demo_base", f"output_root={tmp_path}", "logging.wandb=true"])
    plan.logging.tensorboard = False
    Path(plan.run_dir).mkdir(parents=True)
    sink = metrics.Metrics(plan, start_step=0, enabled=True)
    sink.train_step({"kind": "train", "step": plan.logging.interval, "loss": 2.0, "lr": 1e-4, "grad_norm": 0.5,
                     "tokens_per_s": 10.0})  # fmt: skip
    sink.validation({"kind": "val", "step": 2, "val_loss": 1.5, "val_ppl": 4.48, "val_bpb": 0.9})
    sink.close()
    # Megatron-Bridge 0.4.0: training_log logs "lm loss", "learning-rate", "grad-norm"; eval.py "<key> validation"
    assert {"lm loss", "learning-rate", "grad-norm", "lm loss validation", "lm loss validation ppl"} <= set(
        run.logged
    )
    assert {"train/tokens_per_s", "val/bpb"} <= set(run.logged) and "val/val_loss" not in run.logged


def test_the_check_stage_says_how_many_epochs_the_plan_reads(tmp_path, sample_corpus):
    from morphcpt.indexed import read_index
    from morphcpt.train.hf.check import data_epochs, epochs_line
    from train_helpers import tiny_plan, write_data

    data_root = write_data(tmp_path / "data", sample_corpus, limit=120)
    plan = tiny_plan(data_root, tmp_path / "out")
    held = sum(int(read_index(p)["lengths"].sum()) for p in plan.data.chunk_prefixes())
    data = data_epochs(plan)
    planned = plan.loop.steps * plan.loop.global_batch_size * plan.loop.seq_length
    assert data == {"tokens": held, "planned_tokens": planned, "epochs": planned / held}
    assert epochs_line(data).endswith(f"{planned / held:.2f} epochs")
