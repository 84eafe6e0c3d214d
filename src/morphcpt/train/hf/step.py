"""One optimiser step and one validation pass of the hf engine (`engine.py` runs them): micro batches through the loss
module (`modeling/loss.py`: chunked cross entropy, no full-vocabulary logits), gradient accumulation, the gradients' sum
over ranks, clipping, the AdamW step.

    nats, tokens, grad_norm, lr = optimizer_step(run, data, plan, step)
    metrics = evaluate(run, data, plan)      # val_loss, val_ppl, val_bpb, val_tokens, val_bytes

`run` is what `hf.train` built: ranks, the model, the module training calls (`wrapped`: the loss module, under DDP
or FSDP2), the optimiser, and the fp32 master weights of a bf16 model (`optim.MasterWeights`) or None.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.distributed as dist

from morphcpt.plan.schema import CPTPlan
from morphcpt.train.data import TrainData, collate
from morphcpt.train.hf import heartbeat, parallel, precision


@dataclass
class Ranks:
    rank: int
    world: int
    device: torch.device

    @property
    def main(self) -> bool:
        return self.rank == 0


@dataclass
class Run:
    """The training state a step works on."""

    ranks: Ranks
    model: torch.nn.Module
    wrapped: torch.nn.Module
    optimizer: torch.optim.Optimizer
    master: object | None  # optim.MasterWeights
    autocast: bool  # autocast around forward passes (fp32 parameters, or a LoRA run's bf16 base, on a GPU)
    amp_dtype: torch.dtype = torch.bfloat16  # autocast's dtype: fp16 under fp16-mixed
    scaler: object | None = None  # fp16-mixed's loss scale (torch.amp.GradScaler), else None
    skipped: int = 0  # fp16-mixed: optimiser steps skipped in a row (their gradients overflowed)


def all_reduce(values: list[float], device: torch.device, op=None) -> list[float]:
    tensor = torch.tensor(values, dtype=torch.float64, device=device)
    if dist.is_initialized() and dist.get_world_size() > 1:
        dist.all_reduce(tensor, op=op or dist.ReduceOp.SUM)
    return tensor.tolist()


def token_losses(run: Run, batch: dict, weights_total: float | None = None):
    """(weighted loss to backpropagate or None, per-token cross entropy in nats (fp32, masked), loss mask) of one
    micro batch. With `weights_total`, each token weighs mask / weights_total (a step's mean over its tokens)."""
    device = run.ranks.device
    tokens = batch["tokens"].to(device)
    labels = batch["labels"].to(device)
    mask = batch["loss_mask"].to(device)
    weights = mask / weights_total if weights_total is not None else None
    with torch.autocast(device.type, dtype=run.amp_dtype, enabled=run.autocast):
        weighted, nats = run.wrapped(tokens, labels, weights)
    return weighted, nats * mask, mask


def optimizer_step(run: Run, data: TrainData, plan: CPTPlan, step: int):
    """One optimiser step over the global batch of `step`; returns (nats, tokens) summed over all ranks, the
    gradient norm before clipping, and the learning rate used.

    Samples are addressed by index: step s, micro-batch m, rank r read samples
    s x global + (m x ranks + r) x micro ... + micro - 1, the same on every run and after every resume.
    """
    loop, ranks = plan.loop, run.ranks
    per_step = loop.micro_batch_size * ranks.world
    accumulation = loop.global_batch_size // per_step
    base = step * loop.global_batch_size + ranks.rank * loop.micro_batch_size
    batches = [
        collate(data.train, range(start, start + loop.micro_batch_size))
        for start in (base + m * per_step for m in range(accumulation))
    ]
    # Normalise by this rank's token count over the whole step, so accumulation equals one large batch.
    local_tokens = sum(b["loss_mask"].sum().item() for b in batches)
    step_nats = 0.0
    for m, batch in enumerate(batches):
        heartbeat.beat()  # from the loop itself: a rank that hangs stops it (multi-node jobs watch it)
        with parallel.no_sync(run.wrapped, sync=m == accumulation - 1):
            weighted, nats, _ = token_losses(run, batch, local_tokens)
            (weighted if run.scaler is None else run.scaler.scale(weighted)).backward()
        step_nats += nats.sum().item()
    if run.master is not None:
        run.master.reduce()
        norm = torch.nn.utils.clip_grad_norm_(run.master.grads(), plan.optim.clip_grad).item()
    else:
        # fp16: clip the true gradients (an overflow leaves inf here, and the scaler skips the step)
        if run.scaler is not None:
            run.scaler.unscale_(run.optimizer)
        norm = parallel.clip_grad_norm(run.model, plan.optim.clip_grad)
    lr = run.optimizer.param_groups[0]["lr"]
    if run.scaler is not None:
        scale = run.scaler.get_scale()
        run.scaler.step(run.optimizer)
        run.scaler.update()
        # the scale drops exactly when the step was skipped (inf or NaN gradients on some rank)
        run.skipped = run.skipped + 1 if run.scaler.get_scale() < scale else 0
        if run.skipped >= loop.max_skipped_steps:
            raise precision.Fp16Overflow(
                f"loop.precision=fp16-mixed: {run.skipped} optimiser steps in a row were skipped (steps "
                f"{step - run.skipped + 1}-{step}), their gradients overflowed at every loss scale down to "
                f"{run.scaler.get_scale():g}: the model's values exceed fp16's range (65,504) in the forward pass, "
                "so no loss scale helps. Train in bf16 (loop.precision=bf16-mixed, on a card with bf16) or fp32 "
                "(loop.precision=fp32); loop.max_skipped_steps sets this limit"
            )
    else:
        run.optimizer.step()
    run.optimizer.zero_grad(set_to_none=True)
    if run.master is not None:
        run.master.sync()
    nats, tokens = all_reduce([step_nats, local_tokens], ranks.device)
    return nats, tokens, norm, lr


@torch.no_grad()
def evaluate(run: Run, data: TrainData, plan: CPTPlan) -> dict:
    """Validation loss (nats/token), perplexity (exp of the loss) and bits per byte over the canonical validation
    set.

    Bits per byte divides the summed nats by the UTF-8 bytes of exactly the tokens that were scored (their pieces'
    byte lengths), so it compares schemes, tokenizers and truncated evaluations on the same footing. The micro
    batch is `validation.micro_batch_size`, else the training one: with the chunked loss a validation sample holds
    less than a training one at any vocabulary.
    """
    ranks = run.ranks
    run.model.eval()
    mbs = plan.validation.micro_batch_size or plan.loop.micro_batch_size
    starts = range(0, len(data.validation), mbs)
    if plan.validation.max_batches is not None:
        starts = starts[: plan.validation.max_batches]
    table = torch.from_numpy(data.byte_table)
    nats = tokens = nbytes = 0.0
    mine = list(starts[ranks.rank :: ranks.world])
    # Under fsdp every forward is collective (each layer is all-gathered): ranks with fewer batches than the
    # first rank run the first batch again and discard it, so all ranks make the same number of calls.
    rounds = -(-len(starts) // ranks.world) if parallel.is_fsdp(run.wrapped) else len(mine)
    for i in range(rounds):
        heartbeat.beat()
        start = mine[i] if i < len(mine) else starts[0]
        batch = collate(data.validation, range(start, min(start + mbs, len(data.validation))))
        _, losses, mask = token_losses(run, batch)
        if i >= len(mine):
            continue
        nats += losses.sum().item()
        tokens += mask.sum().item()
        nbytes += (table[batch["labels"]] * batch["loss_mask"]).sum().item()
    nats, tokens, nbytes = all_reduce([nats, tokens, nbytes], ranks.device)
    run.model.train()
    return {
        "val_loss": nats / max(tokens, 1),
        "val_ppl": math.exp(min(nats / max(tokens, 1), 700.0)),  # capped: exp overflows a float past ~709
        "val_bpb": nats / math.log(2) / max(nbytes, 1),
        "val_tokens": int(tokens),
        "val_bytes": int(nbytes),
    }
