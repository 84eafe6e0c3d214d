"""The hf engine: the training plan executed with transformers on one machine (CPU, one GPU, or several GPUs
under torchrun): Gemma 3 by default, or any causal LM `AutoModelForCausalLM` loads from `model.pretrained`, on the same
indexed data as the cluster through megatron-core's GPTDataset.

    result = train(load_plan(["recipe=demo_base", "data.root=outputs/demo/data"]))
    torchrun --nproc-per-node 4 -m morphcpt.train recipe=cpt_patok engine=hf

What it does, step by step: plan the memory on the card (`memory/planner.py`: `auto` micro batch, refusal of what
does not fit, before anything is allocated); resume from the run folder's latest checkpoint if there is one (else
load the pretrained weights, verified, or initialise the tiny model); on a GPU under bf16-mixed, bf16 parameters
with fp32 master weights (`precision.py`, `optim.py`), each decoder layer compiled, AdamW fused; linear warmup and
cosine decay to `min_lr`; gradient accumulation to the global batch with the chunked cross entropy
(`modeling/loss.py`: never the logits of the whole vocabulary); clipping; validation loss and bits per byte
(`step.py`); checkpoints every `checkpoint.interval` steps, at the end, and on SIGTERM, written in the background
from a snapshot (`checkpoints.py`). The model is laid over ranks by `parallel.py` (ddp or FSDP2, activation
checkpointing, offload, compile), optionally with LoRA adapters (`modeling/lora.py`); what a checkpoint holds under
each layout is `checkpoint_layout.py`. `HFEngine` (bottom) is this engine behind the contract of `train/engine.py`.

Weight decay applies to every matrix, never to norms or biases (`optim.param_groups`). A killed run resumes bit-for-bit: samples are addressed by index (step x global batch), and the
checkpoint holds the optimiser, scheduler and RNG states.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import torch
import torch.distributed as dist
from transformers.utils import logging as transformers_logging

from morphcpt.jsonio import read_json
from morphcpt.modeling import checkpoint_files
from morphcpt.modeling.loss import check_against_model
from morphcpt.modeling.models import build_model, config_from_plan, load_pretrained, load_strict, place
from morphcpt.plan.compose import plan_to_yaml, save_dry_run
from morphcpt.plan.schema import CPTPlan, PlanError
from morphcpt.train import run_inputs
from morphcpt.train.data import (
    FINGERPRINT_SAMPLES,
    TrainData,
    build_datasets,
    ensure_process_group,
    fingerprint,
)
from morphcpt.train.engine import Engine
from morphcpt.train.hf import checkpoints, optim, parallel, precision
from morphcpt.train.hf.metrics import Metrics, peak_memory_mb, truncate_metrics
from morphcpt.train.hf.step import Ranks, Run, all_reduce, evaluate, optimizer_step
from morphcpt.train.memory import planner
from morphcpt.train.progress import write_progress


@dataclass
class RunResult:
    run_dir: Path
    final_step: int
    val_loss: float
    val_bpb: float
    checkpoint_dir: Path  # the newest checkpoint; `checkpoint_dir / "model"` is a Hugging Face folder
    interrupted: bool  # stopped before the last step (SIGTERM or loop.max_steps_per_run); rerun to resume
    signalled: bool = False  # stopped by SIGTERM (the command exits 143, so a job script can tell)


@dataclass
class TrainHooks:
    """How a caller adapts the loop without copying it (the EEVE stages, `morphcpt.train.eeve.engine`): which tensors
    train (`freeze`, setting `requires_grad` on the built or resumed model before it is laid out over ranks: DDP
    and FSDP2 read it when they wrap the model), the optimiser's groups and any gradient masks (`param_groups`,
    called on the laid-out model, whose parameters are FSDP2 shards under fsdp), and what to attach to the
    optimiser (`on_optimizer`, e.g. a step pre-hook)."""

    param_groups: Callable[[torch.nn.Module, float], list[dict]] = optim.param_groups
    on_optimizer: Callable[[torch.optim.Optimizer], None] | None = None
    freeze: Callable[[torch.nn.Module], None] | None = None


def _setup_ranks() -> Ranks:
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device(f"cuda:{local_rank}") if torch.cuda.is_available() else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    if world > 1 and not dist.is_initialized():
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    return Ranks(rank=dist.get_rank() if world > 1 else 0, world=world, device=device)


class _StopFlag:
    """Set by SIGTERM (PBS, torchrun, kill) or SIGINT (Ctrl-C): the loop checkpoints after the current step and
    returns."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self) -> None:
        self.requested = False
        self._previous = None

    def __enter__(self) -> _StopFlag:
        if threading.current_thread() is threading.main_thread():
            self._previous = {sig: signal.signal(sig, self._handle) for sig in self.SIGNALS}
        return self

    def _handle(self, signum, frame) -> None:
        self.requested = True

    def __exit__(self, *exc) -> None:
        for sig, previous in (self._previous or {}).items():
            if previous is not None:  # None: the handler was not set from Python, nothing to restore
                signal.signal(sig, previous)


def _write_run_folder(plan: CPTPlan, data: TrainData, resumed_from: Path | None, ranks: Ranks) -> None:
    """config.yaml, metadata.json and data_fingerprint.json; on resume, check the data is still the same."""
    run_dir = Path(plan.run_dir)
    (run_dir / "config.yaml").write_text(plan_to_yaml(plan))
    meta_path, fp_path = run_dir / "metadata.json", run_dir / "data_fingerprint.json"
    now = datetime.now(UTC).isoformat(timespec="seconds")
    if resumed_from is None or not meta_path.exists():
        import transformers

        meta = {
            "run_name": plan.run_name,
            "engine": "hf",
            "scheme": plan.data.scheme,
            "base_model": plan.model.pretrained,
            "config_hash": plan.config_hash(),
            "created": now,
            "host": socket.gethostname(),
            "world_size": ranks.world,
            "device": str(ranks.device),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "resumes": [],
        }
        fp_path.write_text(json.dumps(fingerprint(data, FINGERPRINT_SAMPLES), indent=2))
    else:
        meta = read_json(meta_path, keys=("resumes",), fix="delete it: the run writes it again")
        meta["resumes"].append({"at": now, "from": resumed_from.name, "world_size": ranks.world})
        fix = "delete it: the run records its data again (inputs.json still checks the data)"
        recorded = read_json(fp_path, keys=("first_samples_sha256",), fix=fix)["first_samples_sha256"]
        current = fingerprint(data, FINGERPRINT_SAMPLES)["first_samples_sha256"]
        if recorded != current:
            raise run_inputs.InputsChanged(
                f"{run_dir} was trained on other data (first samples hash {recorded[:12]} != {current[:12]}); "
                "use a new run_name for a different dataset"
            )
    meta_path.write_text(json.dumps(meta, indent=2))


def _build_model(plan: CPTPlan, vocab, resume: Path | None, device: torch.device):
    """The model to train, loaded straight into its placement and dtype (`precision.load_placement`): one copy
    of the weights, on the GPU in what trains there, or on the host for fsdp to shard layer by layer."""
    where, dtype = precision.load_placement(plan.loop, plan.peft, device)
    if resume is not None:
        model = place(load_strict(resume / "model"), where, dtype)
    elif plan.model.pretrained:
        model = load_pretrained(
            plan.model.pretrained, vocab_size=plan.model.vocab_size, device=where, dtype=dtype
        )
    else:
        config = config_from_plan(plan.model, plan.model.vocab_size or vocab.size, vocab)
        # initialised on the GPU (seconds, not a CPU's minute), unless its shards are to live on the host
        init = torch.device("cpu") if plan.loop.cpu_offload else device
        model = place(build_model(config, seed=plan.loop.seed, device=init), init, dtype)
    if plan.peft.method == "lora":
        from morphcpt.modeling import lora
        from morphcpt.modeling.checkpoint_files import ADAPTER_DIR

        if resume is not None and (resume / ADAPTER_DIR).is_dir():
            return lora.load_lora(model, resume / ADAPTER_DIR)
        return lora.apply_lora(model, plan.peft, seed=plan.loop.seed)
    return model


CHECKPOINT_TIMES = "checkpoint_times.jsonl"


def _log_checkpoint(run_dir: Path, ranks: Ranks, row: dict) -> None:
    """How long each save held training up, and how long its background write took (rank 0; beside
    metrics.jsonl, which stays the record of the training steps)."""
    if ranks.main:
        with open(run_dir / CHECKPOINT_TIMES, "a") as out:
            out.write(json.dumps(row) + "\n")


def _prepare(plan: CPTPlan, model: torch.nn.Module, ranks: Ranks, hooks: TrainHooks) -> Run:
    """The model in its parameter precision, laid out (checkpointing, compile, loss module, ddp/fsdp), and the
    optimiser over what trains: the fp32 masters of a bf16 model, else the model's parameters (after sharding,
    which replaces them by shards)."""
    loop = plan.loop
    if hooks.freeze is not None:  # what trains is decided before DDP/FSDP2 (and the masters) read it
        hooks.freeze(model)
    dtype = precision.param_dtype(loop, plan.peft, ranks.device)
    master = None
    gpu = ranks.device.type == "cuda"
    if dtype == "bf16" and plan.peft.method == "none":  # hooks first: they choose what trains (which masters)
        groups = hooks.param_groups(model, plan.optim.weight_decay)
        master = optim.MasterWeights(model, groups, ranks.world)
        wrapped = parallel.shard(model, loop, ranks.device, True, ranks.world, replicate=False)
        groups = master.groups
    else:  # fp32 parameters, or LoRA's bf16 frozen base (loaded so) with fp32 adapters
        bf16 = loop.precision == "bf16-mixed" and gpu
        wrapped = parallel.shard(model, loop, ranks.device, bf16, ranks.world)
        groups = hooks.param_groups(model, plan.optim.weight_decay)
    optimizer = optim.build_optimizer(groups, plan.optim, loop.fused_optimizer, ranks.device)
    if hooks.on_optimizer is not None:
        hooks.on_optimizer(optimizer)
    # bf16-mixed is a GPU's (CPU runs fp32); fp16-mixed, asked for explicitly, runs as asked on any device
    fp16 = loop.precision == "fp16-mixed"
    autocast = master is None and (fp16 or (loop.precision == "bf16-mixed" and gpu))
    scaler = precision.grad_scaler(loop, ranks.device, parallel.is_fsdp(wrapped))
    return Run(ranks, model, wrapped, optimizer, master, autocast, precision.amp_dtype(loop), scaler)


def _precision_words(plan: CPTPlan, dtype: str, cuda: bool) -> str:
    if plan.loop.precision == "fp16-mixed":
        return "fp16 autocast, dynamic loss scale"
    if dtype == "bf16":
        lora = plan.peft.method == "lora"
        return "bf16 frozen base, fp32 adapters" if lora else "bf16 parameters, fp32 masters"
    return "bf16 autocast" if cuda and plan.loop.precision == "bf16-mixed" else "fp32"


def describe(plan: CPTPlan) -> dict:
    """Dry run: what `train(plan)` would do on this machine (ranks from torchrun's environment), without data."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    planner.resolve_micro_batch(plan, "hf", world)
    loop = plan.loop
    per_step = loop.micro_batch_size * world
    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    dtype = precision.param_dtype(loop, plan.peft, device)
    report = {
        "world_size": world,
        "device": device.type,
        "precision": _precision_words(plan, dtype, cuda),
        "compile": parallel.compile_mode(loop, device),
        "micro_batch_size": loop.micro_batch_size,
        "checkpoint_async": plan.checkpoint.async_save,
        "sharding": loop.sharding,
        "activation_checkpointing": loop.activation_checkpointing,
        "cpu_offload": loop.cpu_offload,
        "peft": plan.peft.method,
        "gradient_accumulation": loop.global_batch_size / per_step,
        "training_samples": loop.steps * loop.global_batch_size,
        "train_prefixes": [str(p) for p in plan.data.chunk_prefixes()],
        "validation_prefix": str(plan.data.validation_prefix()),
        "checkpoint_dir": str(plan.checkpoint_dir),
        "resume_from": str(checkpoint_files.latest_checkpoint(plan.checkpoint_dir))
        if plan.checkpoint_dir.exists()
        else None,
    }
    save_dry_run(plan, "hf_engine", report)
    return report


def train(plan: CPTPlan, hooks: TrainHooks | None = None) -> RunResult:
    """Run (or resume) the plan with the hf engine; returns where things are and the last validation."""
    from morphcpt.tokenization.vocabulary import Vocabulary

    ranks = _setup_ranks()
    # Before any GPU memory is allocated: `auto` becomes a number, and a plan that does not fit its card stops here
    # with the layouts that would (the job's check stage said so already, unless the plan changed since).
    planner.resolve_micro_batch(plan, "hf", ranks.world)
    if ranks.device.type == "cuda":
        planner.check_device(plan, ranks.device)
        precision.check_bf16(plan.loop, plan.cluster.gpu_type, ranks.device)
        planner.check_fits(plan, "hf", ranks.world)
    if not plan.logging.progress_bar:
        transformers_logging.disable_progress_bar()  # no per-save/load bars either (the demo's console)
    run_dir = Path(plan.run_dir)
    ckpt_root = plan.checkpoint_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    ckpt_root.mkdir(parents=True, exist_ok=True)
    loop = plan.loop
    per_step = loop.micro_batch_size * ranks.world
    if loop.global_batch_size % per_step:
        raise PlanError(
            f"global batch {loop.global_batch_size} is not a multiple of micro {loop.micro_batch_size} x {ranks.world} ranks"
        )
    resume = checkpoint_files.latest_checkpoint(ckpt_root)
    if resume is not None and checkpoint_files.read_meta(resume)["config_hash"] != plan.config_hash():
        raise checkpoint_files.CheckpointError(
            f"{resume} was written by another plan (config hash differs); use a new run_name"
        )

    vocab = Vocabulary.load(plan.model.tokenizer or plan.model.pretrained)
    data = build_datasets(plan.data, loop, vocab, cache_dir=run_dir / "data_cache")
    # the tokenizer, base model and data by content: a resume on inputs changed in place is refused
    run_inputs.check_resume(plan, run_dir, resume, ranks.main)
    if ranks.main:
        _write_run_folder(plan, data, resume, ranks)
    model = _build_model(plan, vocab, resume, ranks.device)
    rows = model.get_input_embeddings().weight.shape[0]
    if rows < vocab.size:
        raise PlanError(f"model has {rows} embedding rows but the tokenizer has {vocab.size} ids")
    check_against_model(model, rows, next(model.parameters()).device)  # where it was loaded
    own_group = loop.sharding == "fsdp" and ensure_process_group(ranks.device)
    run = _prepare(plan, model, ranks, hooks or TrainHooks())
    optimizer = run.optimizer
    scheduler = optim.ScaledLR(
        optimizer, lambda step: optim.lr_multiplier(step, plan.optim, loop.steps), run.scaler
    )
    state = checkpoints.TrainerState(step=0, consumed_samples=0)
    last_val = {"step": None, "val_loss": float("nan"), "val_bpb": float("nan")}
    if resume is None:
        torch.manual_seed(plan.loop.seed + ranks.rank)
    else:
        state = checkpoints.load_trainer(resume, optimizer, scheduler, model=model)
        last_val = checkpoint_files.read_meta(resume).get("validation") or last_val
    if ranks.main:
        truncate_metrics(run_dir, state.step)

    meta = {"config_hash": plan.config_hash(), "scheme": plan.data.scheme, "run_name": plan.run_name}
    writer = checkpoints.AsyncWriter(ranks.world, enabled=plan.checkpoint.async_save)
    metrics = Metrics(plan, state.step, enabled=ranks.main)

    def save() -> Path:
        tic = time.perf_counter()
        previous = writer.last_write_s
        folder = checkpoints.save(
            ckpt_root,
            model,
            vocab.tokenizer,
            optimizer,
            scheduler,
            state,
            {**meta, "validation": last_val},
            plan.checkpoint.keep,
            model_state=run.master.state_dict(model) if run.master is not None else None,
            writer=writer,
        )
        _log_checkpoint(
            run_dir,
            ranks,
            {
                "step": state.step,
                "stall_s": round(time.perf_counter() - tic, 3),  # training held up: wait + snapshot
                "waited_s": round(writer.last_wait_s, 3),  # for the previous checkpoint's write to finish
                "previous_write_s": previous and round(previous, 3),
            },
        )
        return folder

    last_saved, saved_step = resume, state.step if resume is not None else None
    start_step = state.step
    model.train()
    stop_now = False
    with _StopFlag() as stop:
        while state.step < loop.steps:
            stop_now = all_reduce([float(stop.requested)], ranks.device, dist.ReduceOp.MAX)[0] > 0
            limit = loop.max_steps_per_run is not None and state.step - start_step >= loop.max_steps_per_run
            if stop_now or limit:
                break
            tic = time.perf_counter()
            nats, tokens, grad_norm, lr = optimizer_step(run, data, plan, state.step)
            scheduler.step()
            state.step += 1
            state.consumed_samples += loop.global_batch_size
            elapsed = time.perf_counter() - tic
            metrics.train_step(
                {
                    "kind": "train",
                    "step": state.step,
                    "loss": nats / tokens,
                    "lr": lr,
                    "grad_norm": grad_norm,
                    "tokens_per_s": loop.global_batch_size * loop.seq_length / elapsed,
                    "peak_memory_mb": peak_memory_mb(ranks.device),
                    "consumed_samples": state.consumed_samples,
                }
            )
            final = state.step == loop.steps
            if state.step % plan.validation.interval == 0 or final:
                last_val = {"step": state.step, **evaluate(run, data, plan)}
                metrics.validation({"kind": "val", **last_val})
            if state.step % plan.checkpoint.interval == 0 or final:
                last_saved, saved_step = save(), state.step
        interrupted = state.step < loop.steps
        if interrupted and saved_step != state.step:
            last_saved, saved_step = save(), state.step
    writer.wait()  # the last checkpoint is complete before the run returns (or anything reads it)
    parallel.barrier()
    if writer.last_write_s is not None:
        _log_checkpoint(run_dir, ranks, {"step": saved_step, "write_s": round(writer.last_write_s, 3)})
    metrics.close()
    if own_group:
        dist.destroy_process_group()
    return RunResult(
        run_dir=run_dir,
        final_step=state.step,
        val_loss=last_val["val_loss"],
        val_bpb=last_val["val_bpb"],
        checkpoint_dir=last_saved,
        interrupted=interrupted,
        signalled=stop_now,
    )


class HFEngine(Engine):
    """The hf engine behind the contract of `morphcpt.train.engine`."""

    name = "hf"

    def check(self, plan: CPTPlan) -> dict:
        from morphcpt.train.hf import check

        return check.run(plan)

    def describe(self, plan: CPTPlan) -> dict:
        return describe(plan)

    def train(self, plan: CPTPlan) -> RunResult:
        """`train`, then `progress.json` (rank 0): what the job script and the chain read, as of the megatron
        engine."""
        result = train(plan)
        if int(os.environ.get("RANK", "0")) == 0:
            exit_reason = (
                "signal" if result.signalled else "max_steps_per_run" if result.interrupted else "finished"
            )
            write_progress(result.run_dir, result.final_step, plan.loop.steps, exit_reason)
        return result
