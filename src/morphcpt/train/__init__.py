"""Continued pretraining: one typed plan (`plan.py`), two engines that execute it.

- `megatron` (`megatron.py`): Megatron-Bridge inside the NeMo container on the cluster (torchrun, 8 GPUs/node).
- `hf` (`hf.py`): transformers' Gemma3ForCausalLM on any machine; powers the demo and the tests.

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
from morphcpt.train.plan import CPTPlan, check_outputs_mounted, load_plan, plan_from_config, register
from morphcpt.train.progress import write_progress

__all__ = ["CPTPlan", "load_plan", "main", "run"]


def run(plan: CPTPlan):
    """Execute a plan with its engine. Dry runs resolve and print without training (see each engine)."""
    check_outputs_mounted(plan, os.environ.get("MORPHCPT_MOUNTS"))
    if plan.data.scheme == "eeve" and not plan.dry_run:  # vocabulary expansion: resize, then seven stages
        from morphcpt.train import eeve

        return eeve.run(plan)
    if plan.engine == "megatron":
        from morphcpt.train import megatron

        return megatron.run(plan)
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
    0. Says on stderr how the run stopped and where it can resume."""
    interrupted = getattr(result, "interrupted", False)
    if interrupted:
        why = "by SIGTERM" if getattr(result, "signalled", False) else "by loop.max_steps_per_run"
        print(
            f"training stopped {why} at step {result.final_step}; checkpoint {result.checkpoint_dir}; "
            "rerun the same command to resume",
            file=sys.stderr,
        )
    return 128 + signal.SIGTERM if interrupted and getattr(result, "signalled", False) else 0


def _said_errors() -> tuple[type[Exception], ...]:
    """Errors whose message says what to do: shown alone, without Hydra's traceback."""
    from morphcpt.train.megatron import WeightVerificationError
    from morphcpt.train.plan import OutputsNotMounted

    return (WeightVerificationError, OutputsNotMounted)


@hydra.main(config_path=str(paths.CONF_DIR), config_name="train", version_base="1.3")
def _hydra_main(cfg) -> None:
    try:
        result = run(plan_from_config(cfg))
    except Exception as error:
        if not isinstance(error, _said_errors()):
            raise
        print(f"{type(error).__name__}: {error}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    status = exit_status(result)
    if status:
        raise SystemExit(status)


def main() -> None:
    """Entry point: `python -m morphcpt.train KEY=VALUE ...`; the plan's flags (`--max-steps 10000`, see
    `morphcpt.train.flags`) are read as the overrides they stand for."""
    from morphcpt.train.flags import rewrite_argv

    rewrite_argv()
    _hydra_main()
