"""The megatron engine: the training plan executed by Megatron-Bridge inside the NeMo container (cluster).

Targets Megatron-Bridge 0.4.x (NeMo Framework container 26.04; Python 3.12, Transformer Engine), whose recipe
`megatron.bridge.recipes.gemma.gemma3.gemma3_1b_pretrain_config()` takes no arguments and returns a
`ConfigContainer`; we set our plan on it field by field (`overrides`). A job has two stages:

    python training/nemo/run_cpt.py recipe=cpt_patok cluster.stage=prepare                # 1 process, 1 GPU
    torchrun --standalone --nproc-per-node 8 training/nemo/run_cpt.py recipe=cpt_patok      # cluster.stage=train
    python training/nemo/run_cpt.py recipe=cpt_patok dry_run=true                            # anywhere, no GPU

`prepare` (prepare.py) imports the HF weights once into a stable folder (AutoBridge.import_ckpt), then proves they load: the
imported Megatron model and the HF model must produce the same logits on fixed prompts (bf16 tolerance), or the
job stops. `train` runs `pretrain()` with the import as `checkpoint.pretrained_checkpoint`; `checkpoint.load` and
`checkpoint.save` are the run's stable folder, so a resubmitted job resumes from the latest checkpoint, and
`train.exit_duration_in_mins` makes it save and exit before PBS kills it. Megatron counts that duration from
pretrain(), so it is the walltime minus what the job already spent (prepare, start-up: `cluster.elapsed_minutes`,
passed by the job script) minus a margin for the final save.

The traps of the Gemma 3 recipe, all overridden here: NullTokenizer and mock data (blend None), 32k sequences,
the tokenizer-sized vocabulary (`use_tokenizer_vocab_size`; Gemma keeps its 262,144 rows), and weight decay that
the scheduler resets to 0.033 unless `start_weight_decay`/`end_weight_decay` are set.

Other Gemma 3 sizes (the pilot's gemma-3-270m): neither release checked (0.4.0, 0.6.x) has a recipe for them, so
the 1B recipe's settings are kept and its model takes the shape of `model.pretrained`, read by AutoBridge from
the Hugging Face config (`bridge_compat.model_shape_from_hf`; no weights are loaded for that).

A dry run resolves everything and writes the exact overrides without importing megatron.bridge: on a machine
without the container that is all this module can do, and what the tests check.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from morphcpt.errors import UserError
from morphcpt.plan.compose import save_dry_run
from morphcpt.plan.schema import CPTPlan, PlanError
from morphcpt.train.megatron import compat
from morphcpt.train.megatron.parallel import parallel_layout, recompute_overrides
from morphcpt.train.progress import write_progress

IMPORT_MARKER = "import.done.json"
RECIPE_MODEL = "gemma3-1b"  # model.name of the model the releases' recipe builds
VERIFIED_MARKER = "verified.json"


class WeightVerificationError(UserError, RuntimeError):
    """The imported Megatron weights do not reproduce the Hugging Face model's logits."""


def walltime_minutes(walltime: str) -> int:
    """PBS walltime "HH:MM:SS" (or "HH:MM") in whole minutes."""
    parts = [int(p) for p in walltime.split(":")]
    if len(parts) == 2:
        parts.append(0)
    if len(parts) != 3:
        raise ValueError(f"walltime must be HH:MM[:SS], got {walltime!r}")
    hours, minutes, seconds = parts
    return hours * 60 + minutes + seconds // 60


def exit_duration_minutes(plan: CPTPlan) -> int:
    """Minutes after which training saves and exits: the walltime minus what the job used before pretrain()
    (`cluster.elapsed_minutes`; Megatron's clock starts there) minus the margin a checkpoint save needs."""
    cluster = plan.cluster
    if cluster.elapsed_minutes < 0:
        raise ValueError(f"cluster.elapsed_minutes must be >= 0, got {cluster.elapsed_minutes}")
    minutes = walltime_minutes(cluster.walltime) - cluster.elapsed_minutes - cluster.exit_margin_minutes
    if minutes <= 0:
        raise ValueError(
            f"walltime {cluster.walltime} leaves no time to train after the {cluster.elapsed_minutes} min the job "
            f"already used and the {cluster.exit_margin_minutes} min margin"
        )
    return minutes


def overrides(plan: CPTPlan) -> dict[str, Any]:
    """The exact values set on the recipe's ConfigContainer, as dotted paths (in application order)."""
    if plan.model.vocab_size is None or not plan.model.pretrained:
        raise ValueError(
            "the megatron engine continues pretraining: set model.pretrained and model.vocab_size"
        )
    if plan.loop.precision != "bf16-mixed":
        raise ValueError("the megatron engine trains in bf16-mixed only")
    if plan.loop.micro_batch_size == "auto":
        raise ValueError(
            "loop.micro_batch_size=auto: resolve it first (morphcpt.train.memory.planner.resolve_micro_batch)"
        )
    run_dir = Path(plan.run_dir)
    ckpt = str(plan.checkpoint_dir)
    wd = plan.optim.weight_decay
    wandb = plan.logging.wandb
    return {
        # model: the released shape, our sequence length, the vocabulary kept at the checkpoint's size
        "model.seq_length": plan.loop.seq_length,
        "model.vocab_size": plan.model.vocab_size,
        "model.tensor_model_parallel_size": plan.cluster.tensor_parallel,
        "model.pipeline_model_parallel_size": plan.cluster.pipeline_parallel,
        # memory: the planner (morphcpt.train.memory.planner) checks that this fits cluster.gpu_memory
        **recompute_overrides(plan),
        # tokenizer: none is needed, the data is already token ids. Bridge's NullTokenizer with the model's
        # vocabulary keeps the embedding at 262,144 rows; a HuggingFaceTokenizer would be checked by len(), which
        # is 262,145 for gemma-3-1b-pt (an image token past the embedding) and Bridge refuses the model.
        "tokenizer.tokenizer_type": "NullTokenizer",
        "tokenizer.tokenizer_model": None,
        "tokenizer.vocab_size": plan.model.vocab_size,
        # data: this scheme's chunks for training, the canonical set for validation (the default is mock data)
        "dataset.seq_length": plan.loop.seq_length,
        "dataset.blend": None,
        "dataset.split": None,
        "dataset.blend_per_split": [
            [[str(p) for p in plan.data.chunk_prefixes()], plan.data.blend_weights()],
            [[str(plan.data.validation_prefix())], None],
            None,
        ],
        "dataset.path_to_cache": str(run_dir / "data_cache"),
        "dataset.random_seed": plan.data.seed,
        # loop
        "train.train_iters": plan.loop.steps,
        "train.global_batch_size": plan.loop.global_batch_size,
        "train.micro_batch_size": plan.loop.micro_batch_size,
        "train.exit_duration_in_mins": exit_duration_minutes(plan),
        # SIGTERM (qdel, or PBS at the walltime) also saves and exits after the current step. Only a backstop:
        # PBS sends SIGKILL after its kill_delay, which may be too short for a save; the duration above is the plan
        "train.exit_signal_handler": True,
        "validation.eval_interval": plan.validation.interval,
        "validation.eval_iters": plan.validation.iters,
        # optimiser and schedule; the scheduler owns weight decay, so both ends are set to the plan's value
        "optimizer.lr": plan.optim.lr,
        "optimizer.min_lr": plan.optim.min_lr,
        "optimizer.weight_decay": wd,
        "optimizer.adam_beta1": plan.optim.beta1,
        "optimizer.adam_beta2": plan.optim.beta2,
        "optimizer.adam_eps": plan.optim.eps,
        "optimizer.clip_grad": plan.optim.clip_grad,
        "optimizer.bf16": True,
        "scheduler.lr_warmup_iters": plan.optim.warmup_steps,
        "scheduler.lr_decay_iters": plan.loop.steps,
        "scheduler.lr_decay_style": "cosine",
        "scheduler.start_weight_decay": wd,
        "scheduler.end_weight_decay": wd,
        "scheduler.weight_decay_incr_style": "constant",
        "mixed_precision": "bf16_mixed",
        # checkpoints: one stable folder per run (load == save: resubmitted jobs resume), imported weights to start
        "checkpoint.save": ckpt,
        "checkpoint.load": ckpt,
        "checkpoint.save_interval": plan.checkpoint.interval,
        # older checkpoints are deleted (a 1B checkpoint with optimiser state is ~14 GB)
        "checkpoint.most_recent_k": plan.checkpoint.keep,
        "checkpoint.pretrained_checkpoint": plan.cluster.import_dir,
        "checkpoint.ckpt_format": plan.cluster.ckpt_format,
        # logging
        "logger.log_interval": plan.logging.interval,
        "logger.tensorboard_dir": str(run_dir / "tensorboard") if plan.logging.tensorboard else None,
        "logger.wandb_project": plan.logging.wandb_project if wandb else None,
        "logger.wandb_exp_name": plan.run_name if wandb else None,
        "logger.wandb_save_dir": str(run_dir / "wandb") if wandb else None,
        "rng.seed": plan.loop.seed,
    }


def apply_overrides(cfg, values: dict[str, Any], version: str = "?") -> None:
    """Set each dotted path on `cfg`; a path the installed Megatron-Bridge lacks is an error, not a no-op."""
    for path, value in values.items():
        *parents, leaf = path.split(".")
        target = cfg
        for name in parents:
            target = getattr(target, name)
        if not hasattr(target, leaf):
            raise AttributeError(
                f"ConfigContainer has no field {path!r} in Megatron-Bridge {version}; supported releases: "
                f"{compat.supported_series()}"
            )
        if path == "dataset.blend_per_split":
            value = [None if split is None else (split[0], split[1]) for split in value]
        setattr(target, leaf, value)


def training_blend(plan: CPTPlan) -> dict[str, Any]:
    """The blend override for data that exists: empty chunks (split into more chunks than lines) are left out,
    since megatron-core cannot open an empty dataset; see morphcpt.train.data.usable_chunks."""
    from morphcpt.train.data import usable_chunks

    prefixes, weights = usable_chunks(plan.data)
    validation = [[str(plan.data.validation_prefix())], None]
    return {"dataset.blend_per_split": [[[str(p) for p in prefixes], weights], validation, None]}


def build_config(plan: CPTPlan, data: dict[str, Any] | None = None):
    """The installed release's Gemma 3 1B recipe with the plan applied (imports megatron.bridge: cluster only,
    or the contract environment of tests/cluster), then `data` (training_blend) on top. An unsupported release
    is refused with the reason. Another Gemma 3 (`model.name` other than gemma3-1b) keeps the recipe's settings
    with its own shape (`bridge_compat.model_shape_from_hf`)."""
    version, api = compat.require_supported()
    _, recipe = compat.recipe(api)
    cfg = recipe()
    if plan.model.name != RECIPE_MODEL:
        compat.model_shape_from_hf(cfg.model, plan.model.pretrained)
    apply_overrides(cfg, {**overrides(plan), **dict(api.extra_overrides), **(data or {})}, version)
    return cfg


def dry_run(plan: CPTPlan) -> dict:
    """Resolve the plan and the exact overrides, save them under `<run_dir>/plan/`, print them. No megatron."""
    report = {
        "megatron_bridge": compat.supported_series(),
        "recipe": "gemma3_1b_pretrain_config (megatron.bridge.recipes.gemma)"
        + (
            ""
            if plan.model.name == RECIPE_MODEL
            else f", its model in the shape of {plan.model.pretrained} (AutoBridge)"
        ),
        "layout": parallel_layout(plan),
        "overrides": overrides(plan),
        "version_specific": {
            f"{a}.{b}.x": dict(api.extra_overrides) for (a, b), api in compat.SUPPORTED.items()
        },
    }
    save_dry_run(plan, "megatron_overrides", report)
    return report


def global_rank() -> int:
    """This process's rank as torchrun sets it (0 without torchrun); valid before and after pretrain()."""
    return int(os.environ.get("RANK", "0"))


def write_progress_from_tracker(plan: CPTPlan, exit_reason: str) -> dict:
    """`<run_dir>/progress.json` from Megatron's checkpoint tracker (rank 0 only; see `morphcpt.train.progress`)."""
    tracker = plan.checkpoint_dir / "latest_checkpointed_iteration.txt"
    text = tracker.read_text().strip() if tracker.exists() else ""
    return write_progress(plan.run_dir, int(text) if text.isdigit() else 0, plan.loop.steps, exit_reason)


def wandb_run_id(plan: CPTPlan) -> str:
    """A W&B run id that is the same for every job of a run (and differs between plans), so a resubmitted
    job continues the same W&B run instead of starting a new one."""
    return f"{plan.run_name}-{plan.config_hash()[:8]}"


def wandb_environment(plan: CPTPlan) -> dict[str, str]:
    """Environment Bridge's `wandb.init` picks up: Bridge passes no id or resume of its own."""
    if not plan.logging.wandb:
        return {}
    return {
        "WANDB_RUN_ID": wandb_run_id(plan),
        "WANDB_RESUME": "allow",
        "WANDB_MODE": plan.logging.wandb_mode,
    }


def stage_commands(plan: CPTPlan) -> str:
    """What to type to run the prepare and train stages by hand (the PBS job runs check, prepare, train)."""
    typed = "<your overrides>"
    try:
        from hydra.core.hydra_config import HydraConfig

        if HydraConfig.initialized():
            task = HydraConfig.get().overrides.task
            typed = " ".join(o for o in task if not o.startswith("cluster.stage=")) or ""
    except ImportError:  # pragma: no cover - hydra is a dependency
        pass
    script = "training/nemo/run_in_enroot.sh {} training/nemo/run_cpt.py" + (f" {typed}" if typed else "")
    torchrun = f"torchrun --standalone --nproc-per-node {plan.cluster.gpus_per_node}"
    train_line = f"  {script.format(torchrun)}   (train)\n"
    if plan.cluster.nodes > 1:  # one torchrun per node: only inside a job of that many nodes
        train_line = (
            f"  training/nemo/torchrun_nodes.sh --nodes {plan.cluster.nodes} --gpus {plan.cluster.gpus_per_node} "
            f"--log-dir {plan.run_dir}/logs -- training/nemo/run_cpt.py {typed}   (train, in a job of "
            f"{plan.cluster.nodes} nodes)\n"
        )
    return (
        f"  {script.format('python')} cluster.stage=prepare   (once: import and verify the weights, 1 GPU)\n"
        f"{train_line}"
        "or submit the run's job, qsub jobs/run_cpt_<variant>.pbs, which runs check, prepare and train"
    )


def train(plan: CPTPlan) -> None:
    """Stage 2 (under torchrun): pretrain() from the verified import, or resume from the run's checkpoints.

    Bridge ends a job that reached `exit_duration_in_mins` or got SIGTERM with a save and `sys.exit(0)`; either
    way rank 0 then writes `<run_dir>/progress.json` (iteration reached, complete or not) for the job script.
    """
    from morphcpt.train.data import check_ready

    if not (Path(plan.cluster.import_dir) / VERIFIED_MARKER).exists():
        raise WeightVerificationError(
            f"no verified import in {plan.cluster.import_dir}: run cluster.stage=prepare first (the PBS job "
            f"does); by hand:\n{stage_commands(plan)}"
        )
    world = plan.cluster.nodes * plan.cluster.gpus_per_node
    if "WORLD_SIZE" not in os.environ and world > 1:
        raise SystemExit(
            f"cluster.stage=train trains on {world} GPUs under torchrun, and this is one plain process; type:\n"
            f"{stage_commands(plan)}"
        )
    launched = int(os.environ.get("WORLD_SIZE", "1"))
    if launched != world:
        # the check stage validated the layout (data-parallel size, gradient accumulation) at `world`
        raise PlanError(
            f"torchrun started {launched} processes, but the plan trains on cluster.nodes x cluster.gpus_per_node "
            f"= {plan.cluster.nodes} x {plan.cluster.gpus_per_node} = {world} GPUs, the layout its check stage "
            "validated: set TRAIN_NODES and TRAIN_NGPUS in .env to the job's nodes and GPUs, render the jobs "
            "again (bash job_templates/setup_jobs.sh) and resubmit"
        )
    check_ready(plan.data)
    cfg = build_config(plan, training_blend(plan))
    from morphcpt.train.memory.megatron import MegatronShape
    from morphcpt.train.memory.planner import check_fits

    # before pretrain() allocates anything: the check stage refused this already, unless the plan changed since
    check_fits(
        plan,
        "megatron",
        megatron_shape=MegatronShape.from_config(cfg, parallel_layout(plan)["data_parallel"]),
    )
    os.environ.update(wandb_environment(plan))
    from megatron.bridge.training.gpt_step import forward_step
    from megatron.bridge.training.pretrain import pretrain

    exit_reason = "finished"
    try:
        pretrain(config=cfg, forward_step_func=forward_step)
    except SystemExit as stop:
        exit_reason = f"sys.exit({stop.code}) (duration or signal)"
        if stop.code not in (0, None):
            raise
    finally:
        if global_rank() == 0:
            progress = write_progress_from_tracker(plan, exit_reason)
            print(f"[morphcpt] progress: {json.dumps(progress)}", flush=True)
