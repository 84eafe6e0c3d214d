"""Continued pretraining: one typed plan (`plan.py`), two engines that execute it.

- `megatron` (`megatron.py`): Megatron-Bridge inside the NeMo container on the cluster (torchrun, 8 GPUs/node).
- `hf` (`hf.py`): transformers' Gemma3ForCausalLM on any machine; powers the demo and the tests.

Both have a `check` stage (`cluster.stage=check`: `megatron_check.py`, `hf_check.py`) that a job runs first, and
both plan their GPU memory with `memory.py` for the card the plan names (`cluster.gpu_memory`).

    python -m morphcpt.train recipe=demo_base data.root=outputs/demo/data     # or: morphcpt train ...
    python -m morphcpt.train recipe=cpt_patok dry_run=true                    # print the cluster plan
    from morphcpt.train import load_plan, run;  result = run(load_plan(["recipe=demo_base"]))

Heavy libraries (torch, transformers, megatron) are imported only by the engine that runs.
"""

from __future__ import annotations

import os
import signal
import sys

import hydra

from morphcpt import paths
from morphcpt.errors import UserError, reported
from morphcpt.train.plan import CPTPlan, check_outputs_mounted, load_plan, plan_from_config, register
from morphcpt.train.progress import write_progress

__all__ = ["CPTPlan", "load_plan", "main", "run"]


def run(plan: CPTPlan):
    """Execute a plan with its engine. Dry runs resolve and print without training (see each engine);
    `cluster.stage=check` checks what a job needs (data, tokenizer, memory on the plan's card) without training."""
    check_outputs_mounted(plan, os.environ.get("MORPHCPT_MOUNTS"))
    if plan.engine == "hf" and plan.cluster.stage != "train":
        if plan.cluster.stage == "prepare":
            raise ValueError(
                "cluster.stage=prepare imports weights for the megatron engine; the hf engine has none"
            )
        from morphcpt.train import hf_check

        return hf_check.run(plan)
    if plan.data.scheme == "eeve" and not plan.dry_run:  # vocabulary expansion: resize, then seven stages
        from morphcpt.train import eeve

        return eeve.run(plan)
    if plan.engine == "megatron":
        from morphcpt.train import megatron_run

        return megatron_run.run(plan)
    from morphcpt.train import hf

    if plan.dry_run:
        return hf.describe(plan)
    result = hf.train(plan)
    if (
        int(os.environ.get("RANK", "0")) == 0
    ):  # what the job script and the chain read (as the megatron engine)
        exit_reason = (
            "signal" if result.signalled else "max_steps_per_run" if result.interrupted else "finished"
        )
        write_progress(result.run_dir, result.final_step, plan.loop.steps, exit_reason)
    return result


register()


def exit_status(result) -> int:
    """The command's exit status for a run's result: 143 (128 + SIGTERM, what a shell reports for a process the
    signal ended) when SIGTERM stopped it, so a job script can tell an interrupted run from a finished one; else
    0. Says on stderr how the run stopped and where it can resume.

    `result` is an `hf.RunResult` or an `eeve.EEVEResult` (which also names the stage); the megatron engine and
    dry runs return other things, which never count as interrupted."""
    if not getattr(result, "interrupted", False):
        return 0
    signalled = result.signalled
    why = "by SIGTERM" if signalled else "by loop.max_steps_per_run"
    stage = getattr(result, "stage", None)
    what = "training" if stage is None else f"EEVE stage {stage}"
    print(
        f"{what} stopped {why} at step {result.final_step}; checkpoint {result.checkpoint_dir}; "
        "rerun the same command to resume",
        file=sys.stderr,
    )
    return 128 + signal.SIGTERM if signalled else 0


def _said_errors() -> tuple[type[Exception], ...]:
    """Errors whose message says what to do: shown alone, without Hydra's traceback."""
    from morphcpt.train.megatron import WeightVerificationError
    from morphcpt.train.plan import OutputsNotMounted

    return (WeightVerificationError, OutputsNotMounted)


@hydra.main(config_path=str(paths.CONF_DIR), config_name="train", version_base="1.3")
def _hydra_main(cfg) -> None:
    """Hydra entry point. Bad input or a broken file is one sentence on stderr and exit status 1
    (`morphcpt.errors.UserError`, and the errors `_said_errors` lists); anything else keeps its traceback."""
    with reported("morphcpt train"):
        try:
            plan = plan_from_config(cfg)
        except ValueError as error:  # a setting the plan's checks refuse: the message names it
            raise UserError(f"the training plan is not valid: {error}") from None
        try:
            result = run(plan)
        except Exception as error:
            if not isinstance(error, _said_errors()):
                raise
            raise UserError(f"{type(error).__name__}: {error}") from None
        status = exit_status(result)
    if status:
        raise SystemExit(status)


def main() -> None:
    """Entry point: `python -m morphcpt.train KEY=VALUE ...`; the plan's flags (`--max-steps 10000`, see
    `morphcpt.train.flags`) are read as the overrides they stand for."""
    from morphcpt.train.flags import rewrite_argv

    rewrite_argv()
    _hydra_main()
