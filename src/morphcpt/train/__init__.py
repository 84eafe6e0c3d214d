"""Continued pretraining: one typed plan (`plan/`), two engines that execute it, each in its own folder.

- `megatron/`: Megatron-Bridge inside the NeMo container on the cluster (torchrun, 8 GPUs/node).
- `hf/`: transformers' Gemma3ForCausalLM on any machine; powers the demo and the tests. `eeve/` runs EEVE's staged
  training with it.

Every engine meets the contract in `engine.py` (check, describe, train); this module only dispatches on
`plan.engine`. Both engines have a `check` stage (`cluster.stage=check`: `megatron/check.py`, `hf/check.py`) that a
job runs first, and both plan their GPU memory with `memory/` for the card the plan names (`cluster.gpu_memory`).
README.md in this folder says what each file is for.

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
from morphcpt.plan.compose import check_outputs_mounted, load_plan, plan_from_config, register
from morphcpt.plan.schema import CPTPlan
from morphcpt.train.engine import Engine

__all__ = ["CPTPlan", "load_plan", "main", "run"]


def engine_for(plan: CPTPlan) -> Engine:
    """The engine `plan.engine` names (`engine.py` is the contract); on the hf engine, `data.scheme=eeve` trains as
    EEVE's seven stages. Each engine's module is imported only when its engine runs."""
    if plan.engine == "megatron":
        from morphcpt.train.megatron.engine import MegatronEngine

        return MegatronEngine()
    if plan.data.scheme == "eeve":
        from morphcpt.train.eeve.engine import EEVEEngine

        return EEVEEngine()
    from morphcpt.train.hf.engine import HFEngine

    return HFEngine()


def run(plan: CPTPlan):
    """Execute a plan with its engine. Dry runs resolve and print without training (see each engine);
    `cluster.stage=check` checks what a job needs (data, tokenizer, memory on the plan's card) without training."""
    check_outputs_mounted(plan, os.environ.get("MORPHCPT_MOUNTS"))
    return engine_for(plan).run(plan)


register()


def exit_status(result) -> int:
    """The command's exit status for a run's result: 143 (128 + SIGTERM, what a shell reports for a process the
    signal ended) when SIGTERM stopped it, so a job script can tell an interrupted run from a finished one; else
    0. Says on stderr how the run stopped and where it can resume.

    `result` is an `hf.engine.RunResult` or an `eeve.engine.EEVEResult` (which also names the stage); the megatron engine and
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
    from morphcpt.plan.compose import OutputsNotMounted
    from morphcpt.train.megatron.config import WeightVerificationError

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
    `morphcpt.plan.flags`) are read as the overrides they stand for."""
    from morphcpt.plan.flags import rewrite_argv

    rewrite_argv()
    _hydra_main()
