"""The hf engine's memory per GPU for a plan, before anything is allocated (the planner, `memory.py`, fits it to the
card).

    shape = model_shape(plan)                          # parameters, layers, widths, the plan's vocabulary
    est = estimate(shape, seq=2048, world=8, sharding="ddp", checkpointing=False)
    est.total(micro_batch=2)                           # bytes per GPU at the peak of a step

The model's shape comes from its config (a local folder, the Hub cache, or the 1B reference shape for the default
gemma3-1b); nothing is allocated: the model is built on the meta device to count its parameters. The vocabulary is
the plan's (`model.vocab_size`, else the pretrained model's, else the tokenizer's), never a sample tokenizer's; an
EEVE run grows and unties the embedding first, so its shape has the expanded rows twice. Activations are an
estimate from the shape (`activation_bytes`); `measured_bytes` counts what a real step holds, and
tests/test_train_memory.py compares the two on CPU.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from morphcpt.train.gpus import Estimate
from morphcpt.train.plan import CPTPlan

EEVE_DEFAULT_NEW = (
    2048  # `morphcpt.tokenization.eeve --num-new`'s default, when the expanded tokenizer is not made yet
)


@dataclass
class Shape:
    params: int  # all parameters (a tied embedding counted once)
    embedding: int  # parameters outside the decoder layers (embeddings, output head, final norm)
    layer_params: int  # parameters of the largest decoder layer
    layers: int
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    lora: int  # LoRA adapter parameters for the plan's peft settings (0 when peft.method=none)
    note: str = ""  # what was assumed (an EEVE tokenizer not made yet)


def model_config(plan: CPTPlan, vocab_size: int | None = None):
    """The transformers config of the plan's model, without downloading weights: a local folder or the Hub
    cache first, then the Hub; the default gemma3-1b falls back to its reference shape (no network needed).
    A randomly initialised model gets the plan's vocabulary, else `vocab_size`, else its tokenizer's size."""
    from morphcpt.train.models import GEMMA3_1B_VOCAB, config_from_plan, gemma3_1b_config

    if plan.model.pretrained:
        from transformers import AutoConfig

        from morphcpt import paths

        source = paths.model_source(plan.model.pretrained)
        for local_only in (True, False):
            try:
                config = AutoConfig.from_pretrained(source, local_files_only=local_only)
                return getattr(config, "text_config", config)
            except (OSError, ValueError):
                if plan.model.name == "gemma3-1b":  # the default: its shape is known, skip the network
                    return gemma3_1b_config()
                if not local_only:
                    raise
    vocab = plan.model.vocab_size or vocab_size
    if vocab is None and plan.model.tokenizer:
        from morphcpt.tokenization.vocabulary import Vocabulary

        vocab = Vocabulary.load(plan.model.tokenizer).size
    return config_from_plan(plan.model, vocab or GEMMA3_1B_VOCAB)


def _eeve_rows(plan: CPTPlan, base_rows: int) -> tuple[int, str]:
    """Rows of the EEVE-grown embedding: the expanded tokenizer's, or the default expansion when it is not made."""
    expansion = Path(plan.model.tokenizer or "") / "eeve_expansion.json"
    if plan.model.tokenizer and expansion.is_file():
        record = json.loads(expansion.read_text())
        return int(record["first_new_id"]) + len(record["pieces"]), ""
    rows = base_rows + EEVE_DEFAULT_NEW
    return rows, f"EEVE tokenizer not made yet: {EEVE_DEFAULT_NEW} new pieces assumed ({rows} rows, untied)"


def model_shape(plan: CPTPlan, vocab_size: int | None = None) -> Shape:
    from transformers import AutoModelForCausalLM

    from morphcpt.train.sharding import decoder_layers

    config = model_config(plan, vocab_size)
    note = ""
    if plan.data.scheme == "eeve":  # resized and untied before training (morphcpt.train.eeve.resize)
        rows, note = _eeve_rows(plan, config.vocab_size)
        config = copy.deepcopy(config)
        config.vocab_size, config.tie_word_embeddings = rows, False
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
        note=note,
    )


# Bytes one token keeps for backward in one decoder layer, as bytes per hidden unit, per q width, per kv width, per
# MLP width and a constant, where q = heads x head_dim and kv = kv_heads x head_dim. Measured on CPU with the real
# Gemma 3 decoder layer (`python benchmarks/activations.py`: live bytes after a forward pass, slopes over two
# sequence lengths at 2 and 4 layers, one dimension varied at a time; see benchmarks/RESULTS.md). The saved tensors
# follow from autograd's formulas, not from the device; what differs on a GPU is attention, whose flash and
# memory-efficient kernels keep only q, k, v, the output and a log-sum-exp (the constant), as CPU SDPA does without
# a mask. Numerics: "fp32" everything fp32 (CPU); "autocast" fp32 weights under bf16 autocast (the residual stream
# and the norms stay fp32); "bf16" weights and activations in bf16 (FSDP's bf16 mixed precision).
LAYER_BYTES = {
    "fp32": (40, 16, 16, 16, 16),
    "autocast": (42, 12, 12, 8, 16),
    "bf16": (36, 12, 12, 8, 16),
}
RESIDUAL_BYTES = {"fp32": 4, "autocast": 4, "bf16": 2}  # a layer's input, what activation checkpointing keeps


def numerics(precision_bf16: bool) -> str:
    """The numerics of a ddp step on a GPU under the plan's precision (see LAYER_BYTES)."""
    return "autocast" if precision_bf16 else "fp32"


def layer_bytes(shape: Shape, mode: str) -> int:
    """Bytes one token keeps for backward in one decoder layer under numerics `mode`."""
    per_h, per_q, per_kv, per_ffn, constant = LAYER_BYTES[mode]
    q, kv = shape.heads * shape.head_dim, shape.kv_heads * shape.head_dim
    return per_h * shape.hidden + per_q * q + per_kv * kv + per_ffn * shape.intermediate + constant


def outside_layers_bytes(shape: Shape, mode: str) -> int:
    """Bytes per token kept outside the layers: the embedding's output and its scaled copy, the final hidden
    states, and the rotary tables (measured: 13,316 B at gemma-3-1b in fp32, 11,268 B in bf16; this gives 13,312
    and 11,008)."""
    return 3 * RESIDUAL_BYTES[mode] * shape.hidden + 16 * shape.head_dim


def activation_bytes(shape: Shape, seq: int, mode: str, checkpointing: bool, flash: bool = True) -> int:
    """Bytes of activations one sample keeps for backward at the peak of a step.

    Per layer and token `layer_bytes` (the measured table above), plus `outside_layers_bytes`. Without a flash
    kernel (`flash=False`: CPU SDPA with a mask) each layer also keeps its attention probabilities
    (heads x seq x seq). With checkpointing only each layer's input is kept (`RESIDUAL_BYTES`), plus one layer
    recomputed at a time. The loss: the logits are cast to fp32 for the cross entropy; they, their log-softmax and
    its gradient make 3 x 4 bytes x vocab per token at the start of backward, whatever the precision."""
    probabilities = 0 if flash else shape.heads * seq * seq * (4 if mode == "fp32" else 2)
    layer = layer_bytes(shape, mode) * seq + probabilities
    if checkpointing:
        stored = shape.layers * shape.hidden * RESIDUAL_BYTES[mode] * seq + layer
    else:
        stored = shape.layers * layer
    logits = 3 * 4 * shape.vocab * seq
    return stored + outside_layers_bytes(shape, mode) * seq + logits


def validation_bytes_per_sample(shape: Shape, seq: int) -> int:
    """What one validation sample adds at the peak of a forward pass without gradients: its fp32 logits and their
    log-softmax over the whole vocabulary (the layers' own activations are freed as the pass goes)."""
    return 2 * 4 * shape.vocab * seq


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
    being computed are all-gathered in bf16 (the current and the prefetched one, plus the root group) and compute
    in bf16; under ddp with bf16, autocast's cache of bf16 weight copies."""
    act_bytes = 2 if bf16 else 4
    mode = "bf16" if bf16 and sharding == "fsdp" else numerics(bf16)
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
        if world > 1:  # DistributedDataParallel's gradient buckets, a second copy of the gradients
            working += 4 * trained
    host = 0
    if offload:
        host = (params + grads + optimizer) * world
        params = grads = optimizer = 0
    return Estimate(
        layout=name,
        params=params,
        grads=grads,
        optimizer=optimizer,
        activations_per_sample=activation_bytes(shape, seq, mode, checkpointing, flash),
        working=working,
        host=host,
    )


def with_lora(plan: CPTPlan, shape: Shape) -> Shape:
    """The shape with the adapter parameters the plan's peft settings would add, when the plan itself has none."""
    if shape.lora:
        return shape
    lora_plan = replace(plan, peft=replace(plan.peft, method="lora"))
    return replace(shape, lora=model_shape(lora_plan).lora)


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
