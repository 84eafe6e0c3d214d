"""The hf engine's optimiser: the parameter groups (weight decay on matrices, the tied embedding included, never on
norms or biases: Megatron-Core's default, so both engines optimise the same objective), AdamW (fused on CUDA) or
Adafactor, the fp32 master weights a bf16 model steps through (`precision.py` says when), and the learning-rate
schedule (linear warmup, cosine decay to `min_lr`) whose state carries fp16's loss scale.

    groups = param_groups(model, plan.optim.weight_decay)
    master = MasterWeights(model, groups, world) if dtype == "bf16" else None
    optimizer = build_optimizer(master.groups if master else groups, plan.optim, fused, device)
    scheduler = ScaledLR(optimizer, lambda step: lr_multiplier(step, plan.optim, steps), scaler)
"""

from __future__ import annotations

import math

import torch
import torch.distributed as dist

from morphcpt.plan.schema import OptimPlan


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


class ScaledLR(torch.optim.lr_scheduler.LambdaLR):
    """The learning-rate schedule, whose state also carries the loss scale (a resumed fp16 run continues with the
    scale it had, instead of re-finding it through skipped steps)."""

    def __init__(self, optimizer: torch.optim.Optimizer, lr_lambda, scaler=None) -> None:
        self.scaler = scaler
        super().__init__(optimizer, lr_lambda)

    def state_dict(self) -> dict:
        state = {k: v for k, v in super().state_dict().items() if k != "scaler"}
        if self.scaler is not None:
            state["grad_scaler"] = self.scaler.state_dict()
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        scale = state.pop("grad_scaler", None)
        super().load_state_dict(state)
        if self.scaler is not None and scale is not None:
            self.scaler.load_state_dict(scale)


class MasterWeights:
    """fp32 master copies of a model whose parameters it turns to bf16 (see the module docstring).

    `groups` are the optimiser's parameter groups over the model's parameters (their extra keys, such as EEVE's
    row decay, are kept); `self.groups` are the same over the masters. Frozen parameters get a master too, so what
    is saved and exported is the full-precision model."""

    def __init__(self, model: torch.nn.Module, groups: list[dict], world: int = 1) -> None:
        self.world = world
        self.params = [p for p in model.parameters() if p.is_floating_point()]  # a tied tensor once
        # An fp32 parameter's own storage becomes its master (the parameter gets a new bf16 tensor): loading and
        # this step hold 6 bytes a parameter at most, never 8.
        self.masters = [p.detach().float() for p in self.params]
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
    torch's default (foreach) elsewhere. `optim.name: adafactor`: transformers' Adafactor at the schedule's
    learning rate (no relative step, no parameter scaling, no momentum), each group's weight decay kept."""
    if optim.name == "adafactor":
        from transformers.optimization import Adafactor

        return Adafactor(
            groups,
            lr=optim.lr,
            scale_parameter=False,
            relative_step=False,
            warmup_init=False,
            beta1=None,
            clip_threshold=1.0,
        )
    fused = fused and device.type == "cuda"
    return torch.optim.AdamW(
        groups, lr=optim.lr, betas=(optim.beta1, optim.beta2), eps=optim.eps, fused=fused or None
    )
