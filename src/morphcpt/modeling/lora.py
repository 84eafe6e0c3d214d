"""LoRA for the hf engine (`peft.method=lora`), through PEFT: low-rank adapters on the plan's target modules,
the base model frozen.

    model = apply_lora(model, plan.peft, seed=plan.loop.seed)     # fresh adapters (same on every rank)
    model = load_lora(model, checkpoint / "adapter")              # resume: trainable adapters from a checkpoint
    merged = merge(model)                                         # plain transformers model, adapters folded in

Only adapter parameters require gradients, so the optimiser holds (and weight decay touches) nothing else and
the base weights stay bitwise what they were. PEFT is an optional dependency: `pip install -e ".[lora]"`.
"""

from __future__ import annotations

from pathlib import Path

import torch

from morphcpt.errors import UserError
from morphcpt.plan.schema import PeftPlan


class LoraError(UserError, ValueError):
    """The LoRA plan does not fit the model (e.g. target modules it does not have)."""


def _peft():
    try:
        import peft
    except ImportError:
        raise LoraError(
            'peft.method=lora needs the PEFT library: pip install -e ".[lora]" (or pip install peft)'
        ) from None
    return peft


def check_targets(model: torch.nn.Module, targets: list[str]) -> None:
    """Every target must name some module of `model` (its last name component, as PEFT matches them)."""
    linear = sorted(
        {name.rsplit(".", 1)[-1] for name, m in model.named_modules() if isinstance(m, torch.nn.Linear)}
    )
    names = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()} | {
        name for name, _ in model.named_modules()
    }
    missing = [t for t in targets if t not in names]
    if missing:
        raise LoraError(
            f"peft.target_modules {missing} are not modules of {type(model).__name__}; its linear layers are "
            f"{linear}"
        )


def apply_lora(model: torch.nn.Module, plan: PeftPlan, seed: int):
    """Wrap `model` with fresh LoRA adapters (initialised from `seed`, so every rank starts the same)."""
    peft = _peft()
    check_targets(model, list(plan.target_modules))
    config = peft.LoraConfig(
        r=plan.rank,
        lora_alpha=plan.alpha,
        lora_dropout=plan.dropout,
        target_modules=list(plan.target_modules),
        task_type="CAUSAL_LM",
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return peft.get_peft_model(model, config)


def load_lora(model: torch.nn.Module, adapter_dir: Path, trainable: bool = True):
    """`model` (the base) with the adapter saved in `adapter_dir`."""
    peft = _peft()
    return peft.PeftModel.from_pretrained(model, str(adapter_dir), is_trainable=trainable)


def merge(model) -> torch.nn.Module:
    """Fold the adapters into the base weights; returns the plain transformers model."""
    return model.merge_and_unload()
