"""The hf engine's parameter precision and optimiser: bf16 parameters with fp32 master weights, or fp32 parameters
(under bf16 autocast on a GPU); AdamW, fused on CUDA.

    dtype = param_dtype(plan.loop, plan.peft, device)            # "bf16" or "fp32" for this run
    master = MasterWeights(model, groups, world) if dtype == "bf16" else None
    optimizer = build_optimizer(master.groups if master else groups, plan.optim, device)
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
and norms stay fp32, at the cost of autocast's bf16 weight copies every forward. It is what CPU runs, fsdp (which
keeps fp32 shards and gathers bf16 copies itself) and LoRA (a frozen base) use.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from morphcpt.train.plan import LoopPlan, OptimPlan, PeftPlan


def param_dtype(loop: LoopPlan, peft: PeftPlan, device: torch.device) -> str:
    """ "bf16" or "fp32": `loop.param_dtype`, with "auto" meaning bf16 on a GPU under bf16-mixed with ddp and no
    LoRA, fp32 otherwise. An explicit bf16 the layout cannot honour is refused."""
    if loop.param_dtype == "auto":
        bf16 = device.type == "cuda" and loop.precision == "bf16-mixed"
        return "bf16" if bf16 and loop.sharding == "ddp" and peft.method == "none" else "fp32"
    if loop.param_dtype == "bf16" and (loop.sharding != "ddp" or peft.method != "none"):
        raise ValueError(
            "loop.param_dtype=bf16 runs under loop.sharding=ddp without LoRA; fsdp has its own bf16 mixed precision "
            "(fp32 shards, bf16 compute) and LoRA keeps its frozen base: use loop.param_dtype=auto"
        )
    return loop.param_dtype


class MasterWeights:
    """fp32 master copies of a model whose parameters it turns to bf16 (see the module docstring).

    `groups` are the optimiser's parameter groups over the model's parameters (their extra keys, such as EEVE's
    row decay, are kept); `self.groups` are the same over the masters. Frozen parameters get a master too, so what
    is saved and exported is the full-precision model."""

    def __init__(self, model: torch.nn.Module, groups: list[dict], world: int = 1) -> None:
        self.world = world
        self.params = [p for p in model.parameters() if p.is_floating_point()]  # a tied tensor once
        self.masters = [p.detach().float().clone() for p in self.params]
        self._master_of = {id(p): m for p, m in zip(self.params, self.masters, strict=True)}
        self.trainable = [(p, m) for p, m in zip(self.params, self.masters, strict=True) if p.requires_grad]
        for param in self.params:
            param.data = param.data.to(torch.bfloat16)
        self.groups = [{**g, "params": [self._master_of[id(p)] for p in g["params"]]} for g in groups]
        for param, master in self.trainable:
            param.register_post_accumulate_grad_hook(self._hook(master))

    @staticmethod
    def _hook(master: torch.Tensor):
        def accumulate(param: torch.Tensor) -> None:
            if master.grad is None:
                master.grad = param.grad.float()
            else:
                master.grad.add_(param.grad)
            param.grad = None

        return accumulate

    def grads(self) -> list[torch.Tensor]:
        return [m for _, m in self.trainable if m.grad is not None]

    def reduce(self) -> None:
        """Average the fp32 gradients over the ranks (what DistributedDataParallel does for fp32 parameters)."""
        if self.world <= 1 or not dist.is_initialized():
            return
        pending = [dist.all_reduce(m.grad, async_op=True) for m in self.grads()]
        for work in pending:
            work.wait()
        torch._foreach_div_(self.grads(), float(self.world))

    @torch.no_grad()
    def sync(self) -> None:
        """Round the updated masters into the model's bf16 parameters."""
        params = [p for p, _ in self.trainable]
        if params:
            torch._foreach_copy_(params, [m for _, m in self.trainable])

    def state_dict(self, model: torch.nn.Module) -> dict[str, torch.Tensor]:
        """The model's state dict with the fp32 masters in place of the bf16 parameters (tied names share one
        tensor, as in the model); buffers as they are."""
        out = {}
        for name, tensor in model.state_dict(keep_vars=True).items():
            out[name] = self._master_of.get(id(tensor), tensor).detach()
        return out


def build_optimizer(
    groups: list[dict], optim: OptimPlan, fused: bool, device: torch.device
) -> torch.optim.Optimizer:
    """AdamW over `groups`: fused (one kernel for all tensors) on CUDA when `fused` (`loop.fused_optimizer`),
    torch's default (foreach) elsewhere."""
    fused = fused and device.type == "cuda"
    return torch.optim.AdamW(
        groups, lr=optim.lr, betas=(optim.beta1, optim.beta2), eps=optim.eps, fused=fused or None
    )
