"""The megatron engine: the training plan executed by Megatron-Bridge inside the NeMo container (cluster).

Targets Megatron-Bridge 0.4.x (NeMo Framework container 26.04; Python 3.12, Transformer Engine), whose recipe
`megatron.bridge.recipes.gemma.gemma3.gemma3_1b_pretrain_config()` takes no arguments and returns a
`ConfigContainer`; we set our plan on it field by field (`overrides`). A job has two stages:

    python training/nemo/run_cpt.py recipe=cpt_patok cluster.stage=prepare                # 1 process, 1 GPU
    torchrun --standalone --nproc-per-node 8 training/nemo/run_cpt.py recipe=cpt_patok      # cluster.stage=train
    python training/nemo/run_cpt.py recipe=cpt_patok dry_run=true                            # anywhere, no GPU

`prepare` imports the HF weights once into a stable folder (AutoBridge.import_ckpt), then proves they load: the
imported Megatron model and the HF model must produce the same logits on fixed prompts (bf16 tolerance), or the
job stops. `train` runs `pretrain()` with the import as `checkpoint.pretrained_checkpoint`; `checkpoint.load` and
`checkpoint.save` are the run's stable folder, so a resubmitted job resumes from the latest checkpoint, and
`train.exit_duration_in_mins` makes it save and exit before PBS kills it. Megatron counts that duration from
pretrain(), so it is the walltime minus what the job already spent (prepare, start-up: `cluster.elapsed_minutes`,
passed by the job script) minus a margin for the final save.

The traps of the Gemma 3 recipe, all overridden here: NullTokenizer and mock data (blend None), 32k sequences,
the tokenizer-sized vocabulary (`use_tokenizer_vocab_size`; Gemma keeps its 262,144 rows), and weight decay that
the scheduler resets to 0.033 unless `start_weight_decay`/`end_weight_decay` are set.

A dry run resolves everything and writes the exact overrides without importing megatron.bridge: on a machine
without the container that is all this module can do, and what the tests check.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from morphcpt.errors import UserError
from morphcpt.jsonio import read_json
from morphcpt.train import bridge_compat
from morphcpt.train import inputs as run_inputs
from morphcpt.train.plan import CPTPlan, plan_to_yaml, save_dry_run
from morphcpt.train.progress import write_progress as write_progress_file

IMPORT_MARKER = "import.done.json"
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


def parallel_layout(plan: CPTPlan) -> dict[str, int]:
    """World size, data-parallel size and the gradient accumulation that reaches the global batch."""
    world = plan.cluster.nodes * plan.cluster.gpus_per_node
    model_parallel = plan.cluster.tensor_parallel * plan.cluster.pipeline_parallel
    if world % model_parallel:
        raise ValueError(f"{world} GPUs cannot hold TP x PP = {model_parallel}")
    data_parallel = world // model_parallel
    per_step = plan.loop.micro_batch_size * data_parallel
    if plan.loop.global_batch_size % per_step:
        raise ValueError(
            f"global batch {plan.loop.global_batch_size} is not a multiple of micro batch x DP = {per_step}"
        )
    return {
        "world_size": world,
        "data_parallel": data_parallel,
        "gradient_accumulation": plan.loop.global_batch_size // per_step,
    }


def overrides(plan: CPTPlan) -> dict[str, Any]:
    """The exact values set on the recipe's ConfigContainer, as dotted paths (in application order)."""
    if plan.model.vocab_size is None or not plan.model.pretrained:
        raise ValueError(
            "the megatron engine continues pretraining: set model.pretrained and model.vocab_size"
        )
    if plan.loop.precision != "bf16-mixed":
        raise ValueError("the megatron engine trains in bf16-mixed only")
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
                f"{bridge_compat.supported_series()}"
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
    is refused with the reason."""
    version, api = bridge_compat.require_supported()
    _, recipe = bridge_compat.recipe(api)
    cfg = recipe()
    apply_overrides(cfg, {**overrides(plan), **dict(api.extra_overrides), **(data or {})}, version)
    return cfg


def dry_run(plan: CPTPlan) -> dict:
    """Resolve the plan and the exact overrides, save them under `<run_dir>/plan/`, print them. No megatron."""
    report = {
        "megatron_bridge": bridge_compat.supported_series(),
        "recipe": "gemma3_1b_pretrain_config (megatron.bridge.recipes.gemma)",
        "layout": parallel_layout(plan),
        "overrides": overrides(plan),
        "version_specific": {
            f"{a}.{b}.x": dict(api.extra_overrides) for (a, b), api in bridge_compat.SUPPORTED.items()
        },
    }
    save_dry_run(plan, "megatron_overrides", report)
    return report


def _write_run_folder(plan: CPTPlan, extra: dict) -> None:
    """config.yaml, the overrides, and metadata.json (kept from the first job; later jobs are appended)."""
    run_dir = Path(plan.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(plan_to_yaml(plan))
    (run_dir / "megatron_overrides.json").write_text(json.dumps(overrides(plan), indent=2))
    meta_path = run_dir / "metadata.json"
    now = datetime.now(UTC).isoformat(timespec="seconds")
    if meta_path.exists():
        meta = read_json(meta_path, keys=("jobs",), fix="delete it: the next job writes it again")
    else:
        meta = {
            "run_name": plan.run_name,
            "engine": "megatron",
            "scheme": plan.data.scheme,
            "base_model": plan.model.pretrained,
            "config_hash": plan.config_hash(),
            "created": now,
            "jobs": [],
            **extra,
        }
    meta["jobs"].append({"prepared": now, "job_id": os.environ.get("PBS_JOBID")})
    meta_path.write_text(json.dumps(meta, indent=2))


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _init_single_process() -> None:
    import torch

    if not torch.distributed.is_initialized():
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        # a port the OS says is free, not a fixed one: two jobs' prepare stages may share a node
        os.environ.setdefault("MASTER_PORT", str(_free_port()))
        torch.distributed.init_process_group("nccl", rank=0, world_size=1)
        torch.cuda.set_device(0)


def import_weights(plan: CPTPlan) -> Path:
    """Import the HF checkpoint into Megatron format once; later calls find the marker and return at once.

    The three variants' jobs share one import folder and may start together, so each imports into a staging
    folder of its own and renames it into place; a job that loses the race keeps the winner's import.
    """
    import shutil
    import socket

    import torch
    from megatron.bridge import AutoBridge

    target = Path(plan.cluster.import_dir)
    if (target / IMPORT_MARKER).exists():
        check_import(plan, target)
        return target
    staging = target.with_name(f"{target.name}.tmp-{socket.gethostname()}-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    AutoBridge.import_ckpt(
        hf_model_id=plan.model.pretrained, megatron_path=str(staging), torch_dtype=torch.bfloat16
    )
    base = run_inputs.source_record(str(plan.model.pretrained), None)
    (staging / IMPORT_MARKER).write_text(json.dumps({"source": plan.model.pretrained, "base_model": base}))
    if target.exists() and not (target / IMPORT_MARKER).exists():
        shutil.rmtree(target)  # left by an interrupted import of an earlier version: never complete
    try:
        os.rename(staging, target)  # fails when another job's complete import is already there
    except OSError:
        if not (target / IMPORT_MARKER).exists():
            raise
        shutil.rmtree(staging, ignore_errors=True)
    return target


def check_import(plan: CPTPlan, target: Path) -> None:
    """A finished import is reused only while it is whole (its iter_ folder) and was made from the files
    `model.pretrained` holds now (a base model replaced in place would otherwise train on the old weights)."""
    fix = f"delete {target} and rerun cluster.stage=prepare (the import is made again)"
    marker = read_json(target / IMPORT_MARKER, fix=fix)
    if not any(target.glob("iter_*")):
        raise WeightVerificationError(f"the import {target} holds no iter_* folder (deleted?); {fix}")
    recorded = marker.get("base_model")
    if recorded is None or marker.get("source") != plan.model.pretrained:
        return  # an import made before contents were recorded, or one the check stage names (another source)
    current = run_inputs.source_record(str(plan.model.pretrained), recorded)
    changed = run_inputs.compare({"inputs": {"base_model": recorded}}, {"inputs": {"base_model": current}})
    if changed:
        raise WeightVerificationError(
            f"the import {target} was made from other files than {plan.model.pretrained} holds now "
            f"({changed['base_model']}); {fix}"
        )


def megatron_hf_parity(hf_reference: str, megatron_dir: Path, hf_dir: str, tokenizer_dir: str):
    """LogitParity ("bf16") of the Megatron checkpoint `megatron_dir` against the HF model `hf_dir` on the fixed
    prompts (one GPU; `hf_reference` tells AutoBridge the architecture)."""
    import torch
    from megatron.bridge import AutoBridge
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from morphcpt.train.parity import compare_logits, prompt_ids

    _init_single_process()
    ids, mask = (t.cuda() for t in prompt_ids(AutoTokenizer.from_pretrained(tokenizer_dir)))
    positions = torch.arange(ids.shape[1], device=ids.device).expand_as(ids)
    bridge = AutoBridge.from_hf_pretrained(hf_reference, torch_dtype=torch.bfloat16)
    megatron_model = bridge.load_megatron_model(str(megatron_dir), wrap_with_ddp=False)[0].cuda().eval()
    hf_model = AutoModelForCausalLM.from_pretrained(hf_dir, dtype=torch.bfloat16).cuda().eval()
    with torch.no_grad():
        megatron_logits = megatron_model(input_ids=ids, position_ids=positions, attention_mask=None)
        hf_logits = hf_model(input_ids=ids, attention_mask=mask).logits
    vocab = hf_logits.shape[-1]  # Megatron may pad the vocabulary to a multiple of its divisor
    return compare_logits(megatron_logits[..., :vocab], hf_logits, tolerance="bf16", mask=mask)


def verify_import(plan: CPTPlan) -> dict:
    """The imported Megatron model must reproduce the HF model's logits on fixed prompts, or training stops."""
    target = Path(plan.cluster.import_dir)
    marker = target / VERIFIED_MARKER
    if marker.exists():
        return read_json(
            marker, fix="delete it and rerun cluster.stage=prepare (the import is verified again)"
        )
    parity = megatron_hf_parity(
        plan.model.pretrained, target, plan.model.pretrained, plan.model.tokenizer or plan.model.pretrained
    )
    if not parity.ok():
        raise WeightVerificationError(
            f"imported weights in {target} do not reproduce {plan.model.pretrained}: {parity.as_dict()}. "
            f"Delete {target} and rerun cluster.stage=prepare; do not train on these weights."
        )
    result = {"source": plan.model.pretrained, **parity.as_dict()}
    marker.write_text(json.dumps(result, indent=2))
    return result


def prepare(plan: CPTPlan) -> dict:
    """Stage 1 (one process, one GPU): import once, verify once, fingerprint the data once, record the job."""
    from morphcpt.tokenization.vocabulary import Vocabulary
    from morphcpt.train.data import (
        FINGERPRINT_SAMPLES,
        build_datasets,
        check_ready,
        check_tokenizer,
        fingerprint,
    )

    check_ready(plan.data)
    vocab = Vocabulary.load(plan.model.tokenizer or plan.model.pretrained)
    check_tokenizer([*plan.data.chunk_prefixes(), plan.data.validation_prefix()], vocab)
    # a resubmitted job must not resume the run's checkpoints on a tokenizer, base model or data changed in place
    resuming = (plan.checkpoint_dir / "latest_checkpointed_iteration.txt").exists()
    run_inputs.check_resume(plan, plan.run_dir, plan.checkpoint_dir if resuming else None, main=True)
    import_weights(plan)
    verification = verify_import(plan)
    run_dir = Path(plan.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    fingerprint_path = run_dir / "data_fingerprint.json"
    if not fingerprint_path.exists():
        data = build_datasets(plan.data, plan.loop, vocab, cache_dir=run_dir / "data_cache")
        fingerprint_path.write_text(json.dumps(fingerprint(data, FINGERPRINT_SAMPLES), indent=2))
    _write_run_folder(
        plan, {"megatron_bridge": bridge_compat.installed_version(), "weight_verification": verification}
    )
    return verification


def global_rank() -> int:
    """This process's rank as torchrun sets it (0 without torchrun); valid before and after pretrain()."""
    return int(os.environ.get("RANK", "0"))


def write_progress(plan: CPTPlan, exit_reason: str) -> dict:
    """`<run_dir>/progress.json` from Megatron's checkpoint tracker (rank 0 only; see `morphcpt.train.progress`)."""
    tracker = plan.checkpoint_dir / "latest_checkpointed_iteration.txt"
    text = tracker.read_text().strip() if tracker.exists() else ""
    return write_progress_file(plan.run_dir, int(text) if text.isdigit() else 0, plan.loop.steps, exit_reason)


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
    return (
        f"  {script.format('python')} cluster.stage=prepare   (once: import and verify the weights, 1 GPU)\n"
        f"  {script.format(torchrun)}   (train)\n"
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
    check_ready(plan.data)
    cfg = build_config(plan, training_blend(plan))
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
            progress = write_progress(plan, exit_reason)
            print(f"[morphcpt] progress: {json.dumps(progress)}", flush=True)
