"""How the hf engine lays a model over ranks and memory: DDP or FSDP2 (`fully_shard`), activation checkpointing,
CPU offload, torch.compile per decoder layer, and the collectives a training step needs whatever the layout.

    wrapped = shard(model, plan.loop, device, bf16, world)   # after PEFT and the parameter dtype, before the optimiser
    with no_sync(wrapped, sync=last_micro_batch):  ...backward...  # accumulate without communicating
    norm = clip_grad_norm(model, 1.0)

FSDP2 shards every decoder layer on its own (each is all-gathered just before it runs and freed after) and the
rest (embeddings, final norm, the tied output layer) as the root group. On several nodes the shards stay within a
node and each node holds one whole sharded copy (HSDP, a 2-D device mesh: `fsdp_mesh`), unless
`loop.fsdp_shard_size` spreads one copy further. Under bf16-mixed on a GPU the policy is
bf16 parameters with fp32 gradient reductions; on CPU everything stays fp32, so an fsdp run computes what a
single process does. Decoder layers are found from the model's own `_no_split_modules` (what transformers uses
for device maps), so any causal LM that `AutoModelForCausalLM` loads can be sharded.
"""

from __future__ import annotations

import os
from contextlib import contextmanager, nullcontext

import torch
import torch.distributed as dist

from morphcpt.errors import UserError
from morphcpt.plan.schema import LoopPlan


class ShardingError(UserError, ValueError):
    """The model cannot be laid out as the plan asks (no decoder layers to shard, not enough host memory)."""


def decoder_layers(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The model's repeated blocks (transformer decoder layers), in order; `ShardingError` when none is found."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model  # a PEFT wrapper
    names = set(getattr(base, "_no_split_modules", None) or [])
    layers = [m for m in model.modules() if type(m).__name__ in names]
    if not layers:
        raise ShardingError(
            f"cannot find the decoder layers of {type(base).__name__}: sharding and activation checkpointing "
            f"wrap each layer, found from the model's `_no_split_modules` ({sorted(names) or 'not set'}); "
            "use loop.sharding=ddp and loop.activation_checkpointing=false for this model"
        )
    return layers


def host_memory_bytes() -> int | None:
    """Physical memory of this machine (None where the OS does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_offload_memory(model: torch.nn.Module, local_ranks: int) -> None:
    """CPU offload keeps fp32 parameters, gradients and Adam's two moments (16 bytes a parameter) of the whole
    model in this machine's memory (its ranks' shards together); refuse before training when that cannot fit."""
    need = 16 * sum(p.numel() for p in model.parameters() if p.requires_grad)
    need += 4 * sum(p.numel() for p in model.parameters() if not p.requires_grad)
    have = host_memory_bytes()
    if have is not None and need > 0.9 * have:
        raise ShardingError(
            f"loop.cpu_offload=true needs about {need / 2**30:.1f} GiB of host memory for the offloaded "
            f"parameters, gradients and optimiser state ({local_ranks} local ranks together), but this machine "
            f"has {have / 2**30:.1f} GiB; use more nodes, LoRA (peft.method=lora) or no offload"
        )


def enable_activation_checkpointing(model: torch.nn.Module) -> None:
    """Recompute each decoder layer's activations in backward (torch.utils.checkpoint, non-reentrant)."""
    decoder_layers(model)  # the same clear error as sharding when there are no layers
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    if not getattr(base, "supports_gradient_checkpointing", False):
        raise ShardingError(f"{type(base).__name__} does not support activation checkpointing")
    kwargs = {"use_reentrant": False}
    if hasattr(base, "activation_checkpointing_enable"):  # transformers >= 5.x; the older name is deprecated
        base.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs)
    else:
        base.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)
    if hasattr(base, "enable_input_require_grads") and hasattr(model, "get_base_model"):
        base.enable_input_require_grads()  # frozen embeddings (LoRA): checkpointed layers still need grads


def shard_ranks(loop: LoopPlan, world: int, ranks_per_node: int) -> int:
    """How many ranks one fsdp copy of the model is sharded over: `loop.fsdp_shard_size`, else one node's ranks,
    at most the world (the memory planner counts the sharded state with the same rule)."""
    return min(world, loop.fsdp_shard_size or ranks_per_node)


def fsdp_mesh(loop: LoopPlan, device: torch.device):
    """FSDP2's device mesh for this job: None (plain FSDP over every rank) when one copy of the model spans the
    whole world, else replicas x shard ranks, `loop.fsdp_shard_size` ranks a copy (default: one node's ranks,
    torchrun's LOCAL_WORLD_SIZE). With one copy per node, the all-gathers and reduce-scatters of every layer stay
    on the node's fast links and the nodes exchange only one all-reduce of the gradient shards a step."""
    world = dist.get_world_size() if dist.is_initialized() else 1
    size = shard_ranks(loop, world, int(os.environ.get("LOCAL_WORLD_SIZE", world)))
    if size >= world:
        return None
    if world % size:
        raise ShardingError(
            f"loop.fsdp_shard_size={size} does not divide the {world} ranks into whole copies of the model; "
            f"use a divisor of {world} (null: the ranks of one node)"
        )
    from torch.distributed.device_mesh import init_device_mesh

    return init_device_mesh(device.type, (world // size, size), mesh_dim_names=("replicate", "shard"))


def compile_mode(loop: LoopPlan, device: torch.device) -> str:
    """`loop.compile` for this device: "auto" is per decoder layer on a GPU, none on a CPU (where compiling a small
    model costs more than it saves)."""
    if loop.compile == "auto":
        return "layers" if device.type == "cuda" else "none"
    return loop.compile


def apply_compile(model: torch.nn.Module, mode: str) -> None:
    """torch.compile in place: each decoder layer on its own ("layers": the layers share their compiled code, so
    compiling takes one layer's time) or the whole decoder ("model"). Module names and state dicts are unchanged."""
    if mode == "none":
        return
    import torch._dynamo

    # One graph per attention kind (sliding, global), train or eval, and dtype or set of frozen parameters (EEVE's
    # stages): past the default limit of 8 the rest would silently run eagerly.
    config = torch._dynamo.config
    config.recompile_limit = max(config.recompile_limit, 64)
    if mode == "layers":
        for layer in decoder_layers(model):
            layer.compile()
    elif mode == "model":
        model.get_decoder().compile()


def shard(
    model: torch.nn.Module,
    loop: LoopPlan,
    device: torch.device,
    bf16: bool,
    world: int,
    replicate: bool = True,
):
    """Apply the plan's layout to `model` (already on `device`, in its training dtype): activation checkpointing,
    then `loop.compile`, then the loss module (`morphcpt.modeling.loss.LossModule`, what training calls), sharded by
    FSDP2 (each decoder layer, then the loss module as the root group: embeddings, final norm, output layer) or
    wrapped in DistributedDataParallel over several ranks unless `replicate=False` (bf16 parameters reduce their
    fp32 gradients themselves, `morphcpt.train.hf.precision`). Returns the module to call in training."""
    from morphcpt.modeling.loss import LossModule

    if loop.activation_checkpointing:
        enable_activation_checkpointing(model)
    apply_compile(model, compile_mode(loop, device))
    loss_module = LossModule(model, loop.loss_chunk_tokens)
    if loop.sharding == "fsdp":
        from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, OffloadPolicy, fully_shard

        layers = decoder_layers(model)
        if loop.cpu_offload:
            check_offload_memory(model, int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
        mp = (
            MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
            if bf16
            else MixedPrecisionPolicy()
        )
        offload = CPUOffloadPolicy() if loop.cpu_offload and device.type == "cuda" else OffloadPolicy()
        mesh = fsdp_mesh(loop, device)
        for layer in layers:
            fully_shard(layer, mesh=mesh, mp_policy=mp, offload_policy=offload)
        fully_shard(loss_module, mesh=mesh, mp_policy=mp, offload_policy=offload)
        return loss_module
    if world > 1 and replicate:
        device_ids = [device.index] if device.type == "cuda" else None
        # gradients as views into the buckets: no second copy of them (4 bytes a parameter)
        return torch.nn.parallel.DistributedDataParallel(
            loss_module, device_ids=device_ids, gradient_as_bucket_view=True
        )
    return loss_module


def barrier() -> None:
    """Wait for every rank (nothing to wait for on one process)."""
    if dist.is_initialized() and dist.get_world_size() > 1:
        dist.barrier()


def is_fsdp(model: torch.nn.Module) -> bool:
    """Sharded by FSDP2: the module itself (the loss module training calls) or the model inside it, whose
    parameters are then DTensor shards."""
    from torch.distributed.fsdp import FSDPModule
    from torch.distributed.tensor import DTensor

    return isinstance(model, FSDPModule) or any(isinstance(p, DTensor) for p in model.parameters())


def no_sync(wrapped: torch.nn.Module, sync: bool):
    """Context for one micro-batch's backward: gradients are reduced over ranks only when `sync` (the last
    micro-batch of a step)."""
    if sync:
        return nullcontext()
    if is_fsdp(wrapped):
        return _fsdp_no_sync(wrapped)
    if isinstance(wrapped, torch.nn.parallel.DistributedDataParallel):
        return wrapped.no_sync()
    return nullcontext()


@contextmanager
def _fsdp_no_sync(model):
    model.set_requires_gradient_sync(False)
    try:
        yield
    finally:
        model.set_requires_gradient_sync(True)


def clip_grad_norm(model: torch.nn.Module, max_norm: float) -> float:
    """Clip the total gradient norm over all ranks' shards; returns the norm before clipping."""
    params = [p for p in model.parameters() if p.requires_grad]
    norm = torch.nn.utils.clip_grad_norm_(params, max_norm)
    if hasattr(norm, "full_tensor"):  # a DTensor under FSDP2: the norm of the whole gradient
        norm = norm.full_tensor()
    return norm.item()
