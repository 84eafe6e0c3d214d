"""The hf engine: the training plan executed with transformers on one machine (CPU, one GPU, or several GPUs
under torchrun): Gemma 3 by default, or any causal LM `AutoModelForCausalLM` loads from `model.pretrained`, on the same
indexed data as the cluster through megatron-core's GPTDataset.

    result = train(load_plan(["recipe=demo_base", "data.root=outputs/demo/data"]))
    torchrun --nproc-per-node 4 -m morphcpt.train recipe=cpt_patok engine=hf

What it does, step by step: resume from the run folder's latest checkpoint if there is one (else load the
pretrained weights, verified, or initialise the tiny model); AdamW with decoupled weight decay; linear warmup and
cosine decay to `min_lr`; gradient accumulation to the global batch; clipping; bf16 autocast on GPU (fp32 on CPU);
validation loss and bits per byte; checkpoints every `checkpoint.interval` steps, at the end, and on SIGTERM.
The model is laid over ranks by `sharding.py` (ddp or FSDP2, activation checkpointing, offload), optionally with
LoRA adapters (`lora.py`); what a checkpoint holds under each layout is `state.py`.

Weight decay applies to every matrix, including the embedding that Gemma ties to the output layer, and never to
norms or biases (1-D tensors): this is what Megatron-Core does by default, so both engines optimise the same
objective. A killed run resumes bit-for-bit: samples are addressed by index (step x global batch), and the
checkpoint holds the optimiser, scheduler and RNG states.
"""

from __future__ import annotations

import json
import math
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
import torch.nn.functional as F
from transformers.utils import logging as transformers_logging

from morphcpt.jsonio import read_json
from morphcpt.train import checkpoints, sharding
from morphcpt.train import inputs as run_inputs
from morphcpt.train.data import FINGERPRINT_SAMPLES, TrainData, build_datasets, collate, fingerprint
from morphcpt.train.metrics import Metrics, peak_memory_mb, truncate_metrics
from morphcpt.train.models import build_model, config_from_plan, load_pretrained, load_strict
from morphcpt.train.plan import CPTPlan, OptimPlan, PlanError, plan_to_yaml, save_dry_run


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
class _Ranks:
    rank: int
    world: int
    device: torch.device

    @property
    def main(self) -> bool:
        return self.rank == 0


def lr_multiplier(step: int, optim: OptimPlan, total_steps: int) -> float:
    """lr(step) / lr for 0-based optimiser step `step`: linear warmup reaching lr at the last warmup step, then
    cosine decay reaching min_lr at the last step of the run."""
    if step < optim.warmup_steps:
        return (step + 1) / optim.warmup_steps
    progress = min((step + 1 - optim.warmup_steps) / max(total_steps - optim.warmup_steps, 1), 1.0)
    floor = optim.min_lr / optim.lr
    return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress))


def param_groups(model: torch.nn.Module, weight_decay: float) -> list[dict]:
    """Decay matrices (the tied embedding included), not norms or biases; shared tensors appear once."""
    decay, no_decay = [], []
    for param in model.parameters():  # parameters() yields a tied tensor once
        if param.requires_grad:
            (decay if param.ndim >= 2 else no_decay).append(param)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


@dataclass
class TrainHooks:
    """How a caller adapts the loop without copying it (the EEVE stages, `morphcpt.train.eeve`): which tensors
    train (`freeze`, setting `requires_grad` on the built or resumed model before it is laid out over ranks: DDP
    and FSDP2 read it when they wrap the model), the optimiser's groups and any gradient masks (`param_groups`,
    called on the laid-out model, whose parameters are FSDP2 shards under fsdp), and what to attach to the
    optimiser (`on_optimizer`, e.g. a step pre-hook)."""

    param_groups: Callable[[torch.nn.Module, float], list[dict]] = param_groups
    on_optimizer: Callable[[torch.optim.Optimizer], None] | None = None
    freeze: Callable[[torch.nn.Module], None] | None = None


def _setup_ranks() -> _Ranks:
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device(f"cuda:{local_rank}") if torch.cuda.is_available() else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    if world > 1 and not dist.is_initialized():
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    return _Ranks(rank=dist.get_rank() if world > 1 else 0, world=world, device=device)


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


def _all_reduce(values: list[float], device: torch.device, op=None) -> list[float]:
    tensor = torch.tensor(values, dtype=torch.float64, device=device)
    if dist.is_initialized() and dist.get_world_size() > 1:
        dist.all_reduce(tensor, op=op or dist.ReduceOp.SUM)
    return tensor.tolist()


def _token_losses(model, batch: dict, device: torch.device, bf16: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token cross-entropy (nats, fp32) and the loss mask of one micro-batch."""
    tokens = batch["tokens"].to(device)
    labels = batch["labels"].to(device)
    mask = batch["loss_mask"].to(device)
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
        logits = model(input_ids=tokens).logits
    nats = F.cross_entropy(logits.float().flatten(0, 1), labels.flatten(), reduction="none")
    return nats.view_as(mask) * mask, mask


@torch.no_grad()
def evaluate(model, data: TrainData, plan: CPTPlan, ranks: _Ranks, bf16: bool) -> dict:
    """Validation loss (nats/token), perplexity (exp of the loss) and bits per byte over the canonical validation
    set.

    Bits per byte divides the summed nats by the UTF-8 bytes of exactly the tokens that were scored (their pieces'
    byte lengths), so it compares schemes, tokenizers and truncated evaluations on the same footing.
    """
    model.eval()
    mbs = plan.validation.micro_batch_size or plan.loop.micro_batch_size
    starts = range(0, len(data.validation), mbs)
    if plan.validation.max_batches is not None:
        starts = starts[: plan.validation.max_batches]
    table = torch.from_numpy(data.byte_table)
    nats = tokens = nbytes = 0.0
    mine = list(starts[ranks.rank :: ranks.world])
    # Under fsdp every forward is collective (each layer is all-gathered): ranks with fewer batches than the
    # first rank run the first batch again and discard it, so all ranks make the same number of calls.
    rounds = -(-len(starts) // ranks.world) if sharding.is_fsdp(model) else len(mine)
    for i in range(rounds):
        start = mine[i] if i < len(mine) else starts[0]
        batch = collate(data.validation, range(start, min(start + mbs, len(data.validation))))
        losses, mask = _token_losses(model, batch, ranks.device, bf16)
        if i >= len(mine):
            continue
        nats += losses.sum().item()
        tokens += mask.sum().item()
        nbytes += (table[batch["labels"]] * batch["loss_mask"]).sum().item()
    nats, tokens, nbytes = _all_reduce([nats, tokens, nbytes], ranks.device)
    model.train()
    return {
        "val_loss": nats / max(tokens, 1),
        "val_ppl": math.exp(min(nats / max(tokens, 1), 700.0)),  # capped: exp overflows a float past ~709
        "val_bpb": nats / math.log(2) / max(nbytes, 1),
        "val_tokens": int(tokens),
        "val_bytes": int(nbytes),
    }


def _write_run_folder(plan: CPTPlan, data: TrainData, resumed_from: Path | None, ranks: _Ranks) -> None:
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
    if resume is not None:
        model = load_strict(resume / "model").to(device)
    elif plan.model.pretrained:
        model = load_pretrained(plan.model.pretrained, vocab_size=plan.model.vocab_size, device=device)
    else:
        config = config_from_plan(plan.model, plan.model.vocab_size or vocab.size, vocab)
        model = build_model(config, seed=plan.loop.seed).to(device)
    if plan.peft.method == "lora":
        from morphcpt.train import lora
        from morphcpt.train.state import ADAPTER_DIR

        if resume is not None and (resume / ADAPTER_DIR).is_dir():
            return lora.load_lora(model, resume / ADAPTER_DIR)
        return lora.apply_lora(model, plan.peft, seed=plan.loop.seed)
    return model


def _optimizer_step(wrapped, model, optimizer, data: TrainData, plan: CPTPlan, ranks: _Ranks, step: int):
    """One optimiser step over the global batch of `step`; returns (nats, tokens) summed over all ranks, the
    gradient norm before clipping, and the learning rate used.

    Samples are addressed by index: step s, micro-batch m, rank r read samples
    s x global + (m x ranks + r) x micro ... + micro - 1, the same on every run and after every resume.
    """
    loop = plan.loop
    per_step = loop.micro_batch_size * ranks.world
    accumulation = loop.global_batch_size // per_step
    bf16 = loop.precision == "bf16-mixed" and ranks.device.type == "cuda"
    base = step * loop.global_batch_size + ranks.rank * loop.micro_batch_size
    batches = [
        collate(data.train, range(start, start + loop.micro_batch_size))
        for start in (base + m * per_step for m in range(accumulation))
    ]
    # Normalise by this rank's token count over the whole step, so accumulation equals one large batch.
    local_tokens = sum(b["loss_mask"].sum().item() for b in batches)
    step_nats = 0.0
    for m, batch in enumerate(batches):
        with sharding.no_sync(wrapped, sync=m == accumulation - 1):
            losses, _ = _token_losses(wrapped, batch, ranks.device, bf16)
            (losses.sum() / local_tokens).backward()
        step_nats += losses.sum().item()
    grad_norm = sharding.clip_grad_norm(model, plan.optim.clip_grad)
    lr = optimizer.param_groups[0]["lr"]
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    nats, tokens = _all_reduce([step_nats, local_tokens], ranks.device)
    return nats, tokens, grad_norm, lr


def describe(plan: CPTPlan) -> dict:
    """Dry run: what `train(plan)` would do on this machine (ranks from torchrun's environment), without data."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    loop = plan.loop
    per_step = loop.micro_batch_size * world
    cuda = torch.cuda.is_available()
    report = {
        "world_size": world,
        "device": "cuda" if cuda else "cpu",
        "precision": "bf16 autocast" if cuda and loop.precision == "bf16-mixed" else "fp32",
        "sharding": loop.sharding,
        "activation_checkpointing": loop.activation_checkpointing,
        "cpu_offload": loop.cpu_offload,
        "peft": plan.peft.method,
        "gradient_accumulation": loop.global_batch_size / per_step,
        "training_samples": loop.steps * loop.global_batch_size,
        "train_prefixes": [str(p) for p in plan.data.chunk_prefixes()],
        "validation_prefix": str(plan.data.validation_prefix()),
        "checkpoint_dir": str(plan.checkpoint_dir),
        "resume_from": str(checkpoints.latest_checkpoint(plan.checkpoint_dir))
        if plan.checkpoint_dir.exists()
        else None,
    }
    save_dry_run(plan, "hf_engine", report)
    return report


def train(plan: CPTPlan, hooks: TrainHooks | None = None) -> RunResult:
    """Run (or resume) the plan with the hf engine; returns where things are and the last validation."""
    from morphcpt.tokenization.vocabulary import Vocabulary

    ranks = _setup_ranks()
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
    bf16 = loop.precision == "bf16-mixed" and ranks.device.type == "cuda"

    resume = checkpoints.latest_checkpoint(ckpt_root)
    if resume is not None and checkpoints.read_meta(resume)["config_hash"] != plan.config_hash():
        raise checkpoints.CheckpointError(
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
    own_group = loop.sharding == "fsdp" and sharding.ensure_process_group(ranks.device)
    hooks = hooks or TrainHooks()
    if hooks.freeze is not None:
        hooks.freeze(model)
    wrapped = sharding.shard(model, loop, ranks.device, bf16, ranks.world)  # before the optimiser sees params

    optimizer = torch.optim.AdamW(
        hooks.param_groups(model, plan.optim.weight_decay),
        lr=plan.optim.lr,
        betas=(plan.optim.beta1, plan.optim.beta2),
        eps=plan.optim.eps,
    )
    if hooks.on_optimizer is not None:
        hooks.on_optimizer(optimizer)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: lr_multiplier(step, plan.optim, loop.steps)
    )
    state = checkpoints.TrainerState(step=0, consumed_samples=0)
    last_val = {"step": None, "val_loss": float("nan"), "val_bpb": float("nan")}
    if resume is None:
        torch.manual_seed(plan.loop.seed + ranks.rank)
    else:
        state = checkpoints.load_trainer(resume, optimizer, scheduler, model=model)
        last_val = checkpoints.read_meta(resume).get("validation") or last_val
    if ranks.main:
        truncate_metrics(run_dir, state.step)

    meta = {"config_hash": plan.config_hash(), "scheme": plan.data.scheme, "run_name": plan.run_name}

    def save() -> Path:
        extra = {**meta, "validation": last_val}
        return checkpoints.save(
            ckpt_root, model, vocab.tokenizer, optimizer, scheduler, state, extra, plan.checkpoint.keep
        )

    metrics = Metrics(plan, state.step, enabled=ranks.main)
    last_saved = resume
    start_step = state.step
    model.train()
    stop_now = False
    with _StopFlag() as stop:
        while state.step < loop.steps:
            stop_now = _all_reduce([float(stop.requested)], ranks.device, dist.ReduceOp.MAX)[0] > 0
            limit = loop.max_steps_per_run is not None and state.step - start_step >= loop.max_steps_per_run
            if stop_now or limit:
                break
            tic = time.perf_counter()
            nats, tokens, grad_norm, lr = _optimizer_step(
                wrapped, model, optimizer, data, plan, ranks, state.step
            )
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
                last_val = {"step": state.step, **evaluate(model, data, plan, ranks, bf16)}
                metrics.validation({"kind": "val", **last_val})
            if state.step % plan.checkpoint.interval == 0 or final:
                last_saved = save()
        interrupted = state.step < loop.steps
        if interrupted and (last_saved is None or checkpoints.read_meta(last_saved)["step"] != state.step):
            last_saved = save()
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
