"""The hf engine's parameter precision: bf16 parameters with fp32 master weights (`optim.MasterWeights`), or fp32
parameters (under bf16 autocast on a GPU); fp16-mixed's loss scale.

    dtype = param_dtype(plan.loop, plan.peft, device)            # "bf16" or "fp32" for this run
    master = MasterWeights(model, groups, world) if dtype == "bf16" else None     # optim.py
    optimizer = build_optimizer(master.groups if master else groups, plan.optim, fused, device)
    ... backward ...; master.reduce(); clip(master.grads()); optimizer.step(); master.sync()

Numerics of `loop.param_dtype=bf16` (the default on a GPU under bf16-mixed with ddp): the model's weights are bf16,
so forward and backward compute in bf16 throughout (activations and the residual stream included; the RMSNorms and
the loss compute in fp32 inside). Every floating parameter also has an fp32 master copy, which the optimiser
updates with fp32 AdamW moments. Each parameter's bf16 gradient is added into an fp32 gradient the moment autograd
produces it (a post-accumulate-grad hook, which frees the bf16 one), so gradient accumulation over micro batches,
the sum over ranks (an fp32 all-reduce per step) and clipping are fp32; after the step the masters are rounded to
bf16 into the model. This is Megatron's bf16 mixed precision (bf16 parameters, fp32 main gradients and main
parameters, fp32 optimiser states), so both engines optimise with the same numerics. Checkpoints hold the fp32
masters: a resumed run continues exactly, and exports keep full precision.

`loop.param_dtype=fp32` keeps fp32 weights (bf16 autocast for the matrix products on a GPU): the residual stream
and norms stay fp32, at the cost of autocast's bf16 weight copies every forward. It is what CPU runs and fsdp
(which keeps fp32 shards and gathers bf16 copies itself) use.

LoRA under `param_dtype` bf16 (its default on a GPU under bf16-mixed) keeps the frozen base in bf16 and nothing
else of it: 2 bytes a base parameter instead of 4, no masters (the base never changes); the adapters stay fp32
and train under bf16 autocast. Checkpoints and the export then hold the bf16 base the adapters were trained on.

`loop.precision=fp16-mixed` is for cards without bf16 (V100, T4): fp32 parameters, fp16 autocast, and a dynamic
loss scale (`torch.amp.GradScaler`; FSDP2's sharded variant agrees on skipped steps over the ranks): the loss is
multiplied before backward so small fp16 gradients do not flush to zero, gradients are unscaled before clipping,
and a step whose gradients overflowed is skipped while the scale halves. The scale is saved with the scheduler.

Where the weights are loaded (`load_placement`): straight onto the GPU in their training dtype (ddp), or kept in
host memory for FSDP2 to move one layer at a time as it shards them (fsdp), so no rank ever holds two copies.
"""

from __future__ import annotations

import torch

from morphcpt.errors import UserError
from morphcpt.plan.schema import LoopPlan, PeftPlan, PlanError


def param_dtype(loop: LoopPlan, peft: PeftPlan, device: torch.device) -> str:
    """ "bf16" or "fp32": `loop.param_dtype`, with "auto" meaning bf16 on a GPU under bf16-mixed with ddp (LoRA: the
    frozen base), fp32 otherwise. An explicit bf16 the layout cannot honour is refused."""
    if loop.param_dtype == "auto":
        bf16 = device.type == "cuda" and loop.precision == "bf16-mixed"
        return "bf16" if bf16 and loop.sharding == "ddp" else "fp32"
    if loop.param_dtype == "bf16" and (loop.sharding != "ddp" or loop.precision == "fp16-mixed"):
        raise ValueError(
            "loop.param_dtype=bf16 runs under loop.sharding=ddp with loop.precision=bf16-mixed; fsdp has its own bf16 "
            "mixed precision (fp32 shards, bf16 compute) and fp16-mixed keeps fp32 parameters: use "
            "loop.param_dtype=auto"
        )
    return loop.param_dtype


def frozen_base_bf16(loop: LoopPlan, peft: PeftPlan, device: torch.device) -> bool:
    """A LoRA run whose frozen base is held in bf16 (see the module docstring)."""
    return peft.method == "lora" and param_dtype(loop, peft, device) == "bf16"


def load_placement(loop: LoopPlan, peft: PeftPlan, device: torch.device) -> tuple[torch.device, torch.dtype]:
    """(device, dtype) the model's weights are loaded into: host memory for fsdp on a GPU (FSDP2 moves each layer
    to the GPU as it shards it, or keeps it on the host under cpu_offload), else the training device; bf16 for a
    LoRA run's frozen base, else fp32 (a bf16 model's fp32 weights become its masters without a copy)."""
    dtype = torch.bfloat16 if frozen_base_bf16(loop, peft, device) else torch.float32
    if loop.sharding == "fsdp" and device.type == "cuda":
        return torch.device("cpu"), dtype
    return device, dtype


def amp_dtype(loop: LoopPlan) -> torch.dtype:
    return torch.float16 if loop.precision == "fp16-mixed" else torch.bfloat16


def check_bf16(loop: LoopPlan, gpu_type: str, device: torch.device | None = None) -> None:
    """bf16-mixed on a card without bf16 (the plan's `cluster.gpu_type`, or the GPU this rank runs on) stops
    before anything is allocated, naming fp16-mixed."""
    from morphcpt.plan.card import gpu_type as facts

    if loop.precision != "bf16-mixed":
        return
    card = facts(gpu_type)
    name = gpu_type
    missing = card is not None and not card.bf16
    if (
        device is not None
        and device.type == "cuda"
        and not torch.cuda.is_bf16_supported(including_emulation=False)
    ):
        missing, name = True, torch.cuda.get_device_name(device)
    if missing:
        raise PlanError(
            f"loop.precision=bf16-mixed but {name} has no bf16: set loop.precision=fp16-mixed (fp16 autocast with "
            "loss scaling; the hf engine)"
        )


class Fp16Overflow(UserError, RuntimeError):
    """fp16-mixed overflowed at every loss scale for `loop.max_skipped_steps` steps in a row: nothing trains.

    The default, 25: from the loss scale's start (2**16) 25 halvings reach 2**-9, where no scale helps, so the
    overflow is in the forward pass (values past fp16's 65,504) and only bf16 or fp32 trains."""


def grad_scaler(loop: LoopPlan, device: torch.device, fsdp: bool):
    """The dynamic loss scale of fp16-mixed (None otherwise): torch.amp's, or under FSDP2 the sharded one, which
    reduces the overflow check over the ranks so all of them skip the same steps."""
    if loop.precision != "fp16-mixed":
        return None
    if not isinstance(loop.max_skipped_steps, int) or loop.max_skipped_steps < 1:
        raise PlanError(f"loop.max_skipped_steps must be a whole number >= 1, got {loop.max_skipped_steps!r}")
    if fsdp:
        from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

        return ShardedGradScaler(device=device.type)
    return torch.amp.GradScaler(device.type)
