"""What a checkpoint holds of the model and the optimiser under each layout, and how it is read back.

    ddp   model/     Hugging Face folder of the full model (rank 0)
          trainer.pt the optimiser's own state dict (rank 0)
    fsdp  model/     the same full Hugging Face folder, gathered from the shards (rank 0), so export is unchanged
          sharded/   the optimiser state through torch.distributed.checkpoint: every rank writes its own shard,
                     and a later run reads it back on any number of ranks (DCP reshards on load)
    lora  model/     the frozen base model (its weights bitwise the ones training started from)
          adapter/   the LoRA adapter on its own (PEFT's adapter_config.json + adapter_model.safetensors)

A checkpoint records its layout in meta.json; resuming under another sharding layout is refused with the reason
(the optimiser state of one cannot be converted into the other here), while the number of ranks may change.
"""

from __future__ import annotations

from pathlib import Path

import torch

from morphcpt.modeling.checkpoint_files import ADAPTER_DIR, SHARDED_DIR, CheckpointError
from morphcpt.train.hf.parallel import is_fsdp


def is_lora(model: torch.nn.Module) -> bool:
    return hasattr(model, "peft_config")


def layout_of(model: torch.nn.Module) -> dict:
    return {"sharding": "fsdp" if is_fsdp(model) else "ddp", "peft": "lora" if is_lora(model) else "none"}


def base_state_dict(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """A LoRA model's base weights under the base model's own names (adapters left out)."""
    base = model.get_base_model()
    return {
        name.replace(".base_layer.", "."): tensor
        for name, tensor in base.state_dict().items()
        if ".lora_" not in name
    }


def write_model(model: torch.nn.Module, tokenizer, folder: Path, main: bool) -> None:
    """Write `folder/model` (and `folder/adapter` for LoRA). Every rank calls this: under fsdp the full weights
    are gathered from all ranks first."""
    full = None
    if is_fsdp(model):
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

        full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    if not main:
        return
    if is_lora(model):
        model.save_pretrained(folder / ADAPTER_DIR)  # PEFT writes the adapter weights only
        model.get_base_model().save_pretrained(folder / "model", state_dict=base_state_dict(model))
    else:
        model.save_pretrained(folder / "model", state_dict=full)
    tokenizer.save_pretrained(folder / "model")


def optimizer_payload(model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict | None:
    """The optimiser state for rank 0's trainer.pt, or None under fsdp (written by `write_sharded`)."""
    return None if is_fsdp(model) else optimizer.state_dict()


def write_sharded(model: torch.nn.Module, optimizer: torch.optim.Optimizer, folder: Path) -> None:
    """Under fsdp, every rank writes its optimiser shard to `folder/sharded` (torch.distributed.checkpoint)."""
    if not is_fsdp(model):
        return
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

    dcp.save({"optimizer": get_optimizer_state_dict(model, optimizer)}, checkpoint_id=folder / SHARDED_DIR)


def check_layout(path: Path, meta: dict, model: torch.nn.Module) -> None:
    """Refuse a checkpoint written under another layout, naming both."""
    written = {"sharding": meta.get("sharding", "ddp"), "peft": meta.get("peft", "none")}
    now = layout_of(model)
    if written != now:
        raise CheckpointError(
            f"checkpoint {path} was written with loop.sharding={written['sharding']}, "
            f"peft.method={written['peft']} but this run uses loop.sharding={now['sharding']}, "
            f"peft.method={now['peft']}; its optimiser state cannot be converted: resume with "
            f"loop.sharding={written['sharding']} peft.method={written['peft']} (any number of ranks)"
        )


def load_optimizer(path: Path, model, optimizer: torch.optim.Optimizer, payload: dict | None) -> None:
    """Restore the optimiser from checkpoint `path` (trainer.pt's `payload`, or the DCP shards under fsdp)."""
    if not is_fsdp(model):
        optimizer.load_state_dict(payload)
        return
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict, set_optimizer_state_dict

    state = {"optimizer": get_optimizer_state_dict(model, optimizer)}
    dcp.load(state, checkpoint_id=path / SHARDED_DIR)
    set_optimizer_state_dict(model, optimizer, optim_state_dict=state["optimizer"])
