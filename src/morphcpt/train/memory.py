"""The memory planner: per-GPU memory of a training plan before submitting it, and the largest micro batch that
fits.

    python -m morphcpt.train.memory recipe=cpt_patok engine=hf [gpu_memory=80GB] [gpus=4]
    python -m morphcpt.train.memory recipe=cpt_patok loop.sharding=fsdp loop.activation_checkpointing=true

It prints, for the plan's layout and for each alternative (ddp, fsdp, activation checkpointing, offload, LoRA):
parameters, gradients, optimiser state (AdamW: two fp32 moments) and activations per micro batch, and the
largest micro batch whose total fits `gpu_memory` (less a fixed reserve for the CUDA context and fragmentation).

The model's shape comes from its config (a local folder, the Hub cache, or the 1B reference shape for the
default gemma3-1b); nothing is allocated: the model is built on the meta device to count its parameters.
Activations are an estimate from the shape (see `activation_bytes`); `measured_bytes` counts what a real step
holds, and tests/test_train_memory.py and `benchmarks/train.py` compare the two on CPU.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

import torch

from morphcpt.train.plan import CPTPlan

RESERVE_BYTES = 2 * 2**30  # CUDA context, allocator fragmentation, NCCL buffers


@dataclass
class Shape:
    params: int  # all parameters (a tied embedding counted once)
    embedding: int  # parameters outside the decoder layers (embeddings, final norm)
    layer_params: int  # parameters of the largest decoder layer
    layers: int
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    lora: int  # LoRA adapter parameters for the plan's peft settings (0 when peft.method=none)


@dataclass
class Estimate:
    layout: str
    params: int  # bytes per GPU
    grads: int
    optimizer: int
    activations_per_sample: int
    working: int  # all-gathered layers in flight (fsdp)
    host: int  # bytes kept in host memory (offload)

    def total(self, micro_batch: int) -> int:
        return (
            self.params
            + self.grads
            + self.optimizer
            + self.working
            + micro_batch * self.activations_per_sample
        )

    def largest_micro_batch(self, gpu_bytes: int) -> int:
        room = gpu_bytes - RESERVE_BYTES - self.total(0)
        return max(room // self.activations_per_sample, 0)


def parse_bytes(text: str) -> int:
    """'80GB', '24GiB', '512MB' -> bytes (GB and GiB both taken as 2**30, as GPU memory is quoted)."""
    match = re.fullmatch(r"\s*([\d.]+)\s*([KMGT]?)i?B?\s*", text, re.IGNORECASE)
    if not match:
        raise ValueError(f"gpu_memory must look like 80GB or 24GiB, got {text!r}")
    return int(float(match.group(1)) * 1024 ** "BKMGT".index(match.group(2).upper() or "B"))


def model_config(plan: CPTPlan, vocab_size: int | None = None):
    """The transformers config of the plan's model, without downloading weights: a local folder or the Hub
    cache first, then the Hub; the default gemma3-1b and the pilot's gemma3-270m fall back to their reference
    shapes (no network needed)."""
    from morphcpt.train.models import GEMMA3_1B_VOCAB, config_from_plan, gemma3_1b_config, gemma3_270m_config

    known = {"gemma3-1b": gemma3_1b_config, "gemma3-270m": gemma3_270m_config}

    if plan.model.pretrained:
        from transformers import AutoConfig

        from morphcpt import paths

        source = paths.model_source(plan.model.pretrained)
        for local_only in (True, False):
            try:
                config = AutoConfig.from_pretrained(source, local_files_only=local_only)
                return getattr(config, "text_config", config)
            except (OSError, ValueError):
                if plan.model.name in known:  # a shape we know: skip the network
                    return known[plan.model.name]()
                if not local_only:
                    raise
    return config_from_plan(plan.model, vocab_size or plan.model.vocab_size or GEMMA3_1B_VOCAB)


def model_shape(plan: CPTPlan, vocab_size: int | None = None) -> Shape:
    from transformers import AutoModelForCausalLM

    from morphcpt.train.sharding import decoder_layers

    config = model_config(plan, vocab_size)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    layers = decoder_layers(model)
    per_layer = [sum(p.numel() for p in layer.parameters()) for layer in layers]
    total = sum(p.numel() for p in model.parameters())
    lora = 0
    if plan.peft.method == "lora":
        targets = set(plan.peft.target_modules)
        for name, module in model.named_modules():
            if isinstance(module, torch.nn.Linear) and name.rsplit(".", 1)[-1] in targets:
                lora += plan.peft.rank * (module.in_features + module.out_features)
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    return Shape(
        params=total,
        embedding=total - sum(per_layer),
        layer_params=max(per_layer),
        layers=len(layers),
        hidden=config.hidden_size,
        intermediate=config.intermediate_size,
        heads=config.num_attention_heads,
        kv_heads=getattr(config, "num_key_value_heads", config.num_attention_heads),
        head_dim=head_dim,
        vocab=config.vocab_size,
        lora=lora,
    )


def activation_bytes(shape: Shape, seq: int, act_bytes: int, checkpointing: bool, flash: bool = True) -> int:
    """Bytes of activations one sample keeps for backward.

    Per layer and token, the tensors autograd saves: norms' inputs and outputs and the residual (~10 x hidden),
    q, k, v, attention output and o_proj input (4 x heads x head_dim + 2 x kv_heads x head_dim), the MLP's gate,
    up, activation and product (4 x intermediate). Flash / memory-efficient SDPA kernels (GPU) keep no
    seq x seq matrix; without them (`flash=False`, e.g. on CPU) each layer also keeps its attention
    probabilities (heads x seq x seq). With checkpointing only each layer's input is kept, plus one layer
    recomputed at a time. The logits are fp32 (cast for the loss): they, their log-softmax and its gradient
    make 3 x 4 bytes x vocab per token, whatever the precision."""
    per_token_layer = (
        10 * shape.hidden + 4 * shape.heads * shape.head_dim + 2 * shape.kv_heads * shape.head_dim
    ) + 4 * shape.intermediate
    layer = per_token_layer * act_bytes * seq + (0 if flash else shape.heads * seq * seq * act_bytes)
    stored = shape.layers * shape.hidden * act_bytes * seq + layer if checkpointing else shape.layers * layer
    logits = 3 * 4 * shape.vocab * seq
    return stored + logits


def estimate(
    shape: Shape,
    seq: int,
    world: int,
    sharding: str,
    checkpointing: bool = False,
    offload: bool = False,
    lora: bool = False,
    bf16: bool = True,
    flash: bool = True,
) -> Estimate:
    """Per-GPU bytes of one layout. fp32 master parameters and AdamW moments; under fsdp with bf16 the layers
    being computed are all-gathered in bf16 (the current and the prefetched one, plus the root group); under ddp
    with bf16, autocast's cache of bf16 weight copies."""
    act_bytes = 2 if bf16 else 4
    trained = shape.lora if lora else shape.params
    name = (
        sharding
        + (" +ckpt" if checkpointing else "")
        + (" +offload" if offload else "")
        + (" +lora" if lora else "")
    )
    if sharding == "fsdp":
        params, grads, optimizer = 4 * shape.params // world, 4 * trained // world, 8 * trained // world
        working = act_bytes * (2 * shape.layer_params + shape.embedding)
    else:  # fp32 master weights; bf16 autocast keeps a bf16 copy of every weight during the forward
        params, grads, optimizer = 4 * shape.params, 4 * trained, 8 * trained
        working = 2 * shape.params if bf16 else 0
    host = 0
    if offload:
        host = (params + grads + optimizer) * world
        params = grads = optimizer = 0
    return Estimate(
        layout=name,
        params=params,
        grads=grads,
        optimizer=optimizer,
        activations_per_sample=activation_bytes(shape, seq, act_bytes, checkpointing, flash),
        working=working,
        host=host,
    )


def measured_bytes(model: torch.nn.Module, optimizer: torch.optim.Optimizer, tokens: torch.Tensor) -> dict:
    """The measured peak of one fp32 training step on CPU (forward, loss, backward, AdamW step on `tokens`,
    micro batch x seq), as the hf engine runs it: the bytes of the parameters and optimiser state held between
    steps, plus the peak of the torch CPU allocator above them during the step (the profiler's memory events:
    activations, logits, gradients and temporaries). A first step, unmeasured, creates the optimiser state."""
    from torch.profiler import ProfilerActivity, profile

    def step() -> None:
        logits = model(input_ids=tokens).logits
        loss = torch.nn.functional.cross_entropy(logits.float().flatten(0, 1), tokens.flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    step()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    events = sorted(
        (e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"),
        key=lambda e: e.start_ns(),
    )
    live = peak = 0
    for event in events:
        live += event.nbytes()
        peak = max(peak, live)
    params = {p.untyped_storage().data_ptr(): p.untyped_storage().nbytes() for p in model.parameters()}
    held = sum(params.values()) + sum(
        t.nbytes for state in optimizer.state.values() for t in state.values() if torch.is_tensor(t)
    )
    return {"held": held, "step_peak": peak, "peak": held + peak}


def layouts(plan: CPTPlan) -> list[dict]:
    """The plan's own layout first, then the alternatives a user would weigh."""
    loop = plan.loop
    own = {
        "sharding": loop.sharding,
        "checkpointing": loop.activation_checkpointing,
        "offload": loop.cpu_offload,
        "lora": plan.peft.method == "lora",
    }
    options = [own] + [
        {"sharding": "ddp", "checkpointing": False, "offload": False, "lora": False},
        {"sharding": "ddp", "checkpointing": True, "offload": False, "lora": False},
        {"sharding": "fsdp", "checkpointing": False, "offload": False, "lora": False},
        {"sharding": "fsdp", "checkpointing": True, "offload": False, "lora": False},
        {"sharding": "fsdp", "checkpointing": True, "offload": True, "lora": False},
        {"sharding": "ddp", "checkpointing": False, "offload": False, "lora": True},
        {"sharding": "ddp", "checkpointing": True, "offload": False, "lora": True},
    ]
    unique = []
    for option in options:
        if option not in unique:
            unique.append(option)
    return unique


def gib(n: int) -> str:
    return f"{n / 2**30:8.2f}"


def report(plan: CPTPlan, gpu_bytes: int, world: int, shape: Shape | None = None) -> list[dict]:
    shape = shape or model_shape(plan)
    bf16 = plan.loop.precision == "bf16-mixed"
    rows = []
    for option in layouts(plan):
        if option["lora"] and plan.peft.method != "lora":
            plan_lora = Shape(**{**shape.__dict__, "lora": _default_lora(plan, shape)})
        else:
            plan_lora = shape
        est = estimate(plan_lora, plan.loop.seq_length, world, bf16=bf16, **option)
        mbs = est.largest_micro_batch(gpu_bytes)
        rows.append(
            {
                "layout": est.layout,
                "params": est.params,
                "grads": est.grads,
                "optimizer": est.optimizer,
                "working": est.working,
                "activations_per_sample": est.activations_per_sample,
                "total_at_plan_mbs": est.total(plan.loop.micro_batch_size),
                "largest_micro_batch": int(mbs),
                "host": est.host,
            }
        )
    return rows


def _default_lora(plan: CPTPlan, shape: Shape) -> int:
    """Adapter parameters with the plan's peft settings, computed when the plan itself does not use LoRA."""
    from dataclasses import replace

    lora_plan = replace(plan, peft=replace(plan.peft, method="lora"))
    return model_shape(lora_plan).lora


def main(argv: list[str] | None = None) -> int:
    from morphcpt.train.plan import load_plan

    args = list(sys.argv[1:] if argv is None else argv)
    gpu = parse_bytes(next((a.split("=", 1)[1] for a in args if a.startswith("gpu_memory=")), "80GB"))
    world = int(next((a.split("=", 1)[1] for a in args if a.startswith("gpus=")), "1"))
    plan = load_plan([a for a in args if not a.startswith(("gpu_memory=", "gpus="))])
    shape = model_shape(plan)
    print(
        f"# {plan.run_name} ({plan.model.name}): {shape.params / 1e9:.3f}B parameters ({shape.layers} layers, vocab {shape.vocab}), "
        f"seq {plan.loop.seq_length}, {world} GPU(s) of {gpu / 2**30:.0f} GiB, {plan.loop.precision}; GiB per GPU"
    )
    print(
        f"{'layout':28} {'params':>8} {'grads':>8} {'optim':>8} {'working':>8} {'act/smp':>8} "
        f"{'@mbs=' + str(plan.loop.micro_batch_size):>8} {'max mbs':>7} {'host':>8}"
    )
    for row in report(plan, gpu, world, shape):
        print(
            f"{row['layout']:28} {gib(row['params'])} {gib(row['grads'])} {gib(row['optimizer'])} "
            f"{gib(row['working'])} {gib(row['activations_per_sample'])} {gib(row['total_at_plan_mbs'])} "
            f"{row['largest_micro_batch']:7d} {gib(row['host'])}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
