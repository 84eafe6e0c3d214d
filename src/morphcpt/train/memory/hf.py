"""The hf engine's memory per GPU for a plan, before anything is allocated (the planner, `planner.py`, fits it to the
card).

    shape = model_shape(plan)                          # parameters, layers, widths, the plan's vocabulary
    est = estimate(shape, seq=2048, world=8, sharding="ddp", checkpointing=False)
    est.total(micro_batch=2)                           # bytes per GPU at the peak of a step

The model's shape comes from its config (a local folder, the Hub cache, or the 1B reference shape for the default
gemma3-1b); nothing is allocated: the model is built on the meta device to count its parameters. The vocabulary is
the plan's (`model.vocab_size`, else the pretrained model's, else the tokenizer's), never a sample tokenizer's; an
EEVE run grows and unties the embedding first, so its shape has the expanded rows twice. Activations are an
estimate from the shape (`activation_bytes`); `measured_bytes` counts what a real step holds, and
tests/train/memory/test_planner.py compares the two on CPU.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from morphcpt.modeling.loss import default_chunk
from morphcpt.plan.schema import CPTPlan
from morphcpt.train.memory.estimate import Estimate

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
    note: str = ""
    factored: int = 0  # fp32 values of Adafactor's state for all parameters: rows + columns a matrix, else numel  # what was assumed (an EEVE tokenizer not made yet)


def model_config(plan: CPTPlan, vocab_size: int | None = None):
    """The transformers config of the plan's model, without downloading weights: a local folder or the Hub
    cache first, then the Hub; the default gemma3-1b and the pilot's gemma3-270m fall back to their reference
    shapes (no network needed). A randomly initialised model gets the plan's vocabulary, else `vocab_size`, else its tokenizer's size."""
    from morphcpt.modeling.models import (
        GEMMA3_1B_VOCAB,
        config_from_plan,
        gemma3_1b_config,
        gemma3_270m_config,
    )

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

    from morphcpt.train.hf.parallel import decoder_layers

    config = model_config(plan, vocab_size)
    note = ""
    if plan.data.scheme == "eeve":  # resized and untied before training (morphcpt.train.eeve.engine.resize)
        rows, note = _eeve_rows(plan, config.vocab_size)
        config = copy.deepcopy(config)
        config.vocab_size, config.tie_word_embeddings = rows, False
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    layers = decoder_layers(model)
    per_layer = [sum(p.numel() for p in layer.parameters()) for layer in layers]
    total = sum(p.numel() for p in model.parameters())
    factored = sum(p.shape[0] + p.shape[-1] if p.dim() >= 2 else p.numel() for p in model.parameters())
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
        factored=factored,
    )


# Bytes one token keeps for backward in one decoder layer, as bytes per hidden unit, per q width, per kv width, per
# MLP width and a constant, where q = heads x head_dim and kv = kv_heads x head_dim. Measured on CPU with the real
# Gemma 3 decoder layer (`python benchmarks/activations.py`: live bytes after a forward pass, slopes over two
# sequence lengths at 2 and 4 layers, one dimension varied at a time; see benchmarks/RESULTS.md). The saved tensors
# follow from autograd's formulas, not from the device; what differs on a GPU is attention, whose flash and
# memory-efficient kernels keep only q, k, v, the output and a log-sum-exp (the constant), as CPU SDPA does without
# a mask. Numerics: "fp32" everything fp32 (CPU); "autocast" fp32 weights under bf16 autocast (the residual stream
# and the norms stay fp32); "bf16" weights and activations in bf16 (FSDP's bf16 mixed precision).
# "-compiled": the layer under torch.compile (the engine's default on a GPU), which keeps only what backward needs
# (norms and activations recomputed inside the compiled backward): 2 x (5h + 3q + 3kv + 3ffn) in bf16, Gemma 3's
# layer exactly as Megatron's count for it (megatron.py here).
LAYER_BYTES = {
    "fp32": (40, 16, 16, 16, 16),
    "autocast": (42, 12, 12, 8, 16),
    "bf16": (36, 12, 12, 8, 16),
    "autocast-compiled": (12, 6, 6, 6, 16),
    "bf16-compiled": (10, 6, 6, 6, 16),
}
RESIDUAL_BYTES = {"fp32": 4, "autocast": 4, "bf16": 2}  # a layer's input, what activation checkpointing keeps


def numerics(precision_bf16: bool, bf16_params: bool = False, compiled: bool = False) -> str:
    """The numerics of a step (see LAYER_BYTES): fp32 on CPU; on a GPU under bf16-mixed, bf16 parameters (or
    fsdp's bf16 compute) or fp32 parameters under autocast, each eager or compiled."""
    if not precision_bf16:
        return "fp32"
    mode = "bf16" if bf16_params else "autocast"
    return mode + ("-compiled" if compiled else "")


def layer_bytes(shape: Shape, mode: str) -> int:
    """Bytes one token keeps for backward in one decoder layer under numerics `mode`."""
    per_h, per_q, per_kv, per_ffn, constant = LAYER_BYTES[mode]
    q, kv = shape.heads * shape.head_dim, shape.kv_heads * shape.head_dim
    return per_h * shape.hidden + per_q * q + per_kv * kv + per_ffn * shape.intermediate + constant


def activation_bytes(shape: Shape, seq: int, mode: str, checkpointing: bool, flash: bool = True) -> int:
    """Bytes of activations one sample keeps for backward at the peak of a step.

    Per layer and token `layer_bytes` (the measured table above), plus what the model keeps outside its layers per
    token: the embedding's output and its scaled copy, the final hidden states and the rotary tables (measured
    13,316 B at gemma-3-1b in fp32, 11,268 B in bf16; the formula gives 13,312 and 11,008). Without a flash kernel
    (`flash=False`: CPU SDPA with a mask) each layer also keeps its attention probabilities (heads x seq x seq).
    With checkpointing only each layer's input is kept (`RESIDUAL_BYTES`), plus one layer recomputed at a time.
    The loss is `loss_bytes`."""
    residual = RESIDUAL_BYTES[mode.removesuffix("-compiled")]
    probabilities = 0 if flash else shape.heads * seq * seq * (4 if mode == "fp32" else 2)
    layer = layer_bytes(shape, mode) * seq + probabilities
    stored = shape.layers * shape.hidden * residual * seq + layer if checkpointing else shape.layers * layer
    return stored + (3 * residual * shape.hidden + 16 * shape.head_dim) * seq


def loss_bytes(
    shape: Shape, seq: int, chunk: int, compute_bytes: int, weight_bytes: int, head_trains: bool = True
) -> tuple[int, int, int, int]:
    """(per step, per sample, logits per sample, logits cap) bytes of the chunked cross entropy
    (`morphcpt.modeling.loss`) at its peak: the fp32 gradient of the output layer's weight it accumulates (4 x vocab
    x hidden), the head's weight cast to the compute dtype or its gradient cast back to the weight's (compute or
    weight bytes x vocab x hidden, when they differ), one chunk's logits (fp32, plus their compute-dtype copy), and
    per sample the gradient of the hidden states. The loss chunks the micro batch's tokens as one sequence, so the
    logits in flight are those of min(chunk, micro batch x seq) tokens: a chunk shorter than a sample is a fixed
    cost; a longer one grows with the micro batch up to the chunk (the last two values; measured within 4 % at seq
    1,024 and micro batch 8 on an H200). A frozen output layer (`head_trains` false: LoRA) has no weight gradient."""
    head = shape.vocab * shape.hidden
    working = 4 * head * head_trains + (
        head * max(compute_bytes, weight_bytes) if compute_bytes != 4 or weight_bytes != 4 else 0
    )
    per_token_logits = shape.vocab * (4 + (compute_bytes if compute_bytes != 4 else 0))
    per_sample = seq * shape.hidden * compute_bytes
    if chunk < seq:
        return working + chunk * per_token_logits, per_sample, 0, 0
    return working, per_sample, seq * per_token_logits, chunk * per_token_logits


def validation_bytes_per_sample(shape: Shape, seq: int, compute_bytes: int = 2) -> int:
    """What one validation sample adds at the peak of a forward pass without gradients: one layer's tensors in
    flight (no layer keeps anything for backward) and its hidden states; the chunked loss adds one chunk per step."""
    q, kv = shape.heads * shape.head_dim, shape.kv_heads * shape.head_dim
    return seq * compute_bytes * (3 * shape.hidden + q + 2 * kv + 3 * shape.intermediate)


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
    bf16_params: bool = False,
    compiled: bool = False,
    chunk: int | None = None,
    scratch: bool = False,
    fp16: bool = False,
    adafactor: bool = False,
) -> Estimate:
    """Per-GPU bytes of one layout (`bf16`: bf16-mixed on a GPU).

    - ddp, `bf16_params` (the engine's default on a GPU): bf16 weights (2 bytes), fp32 gradients accumulated as
      autograd produces them (4; the bf16 ones are freed at once), fp32 master weights and AdamW's two moments (12);
    - ddp, fp32 weights: weights, gradients (DDP's buckets hold them as views) and moments (4 + 4 + 8), plus
      autocast's cache of bf16 weight copies during the forward (2) under bf16-mixed;
    - fsdp: the same fp32 state sharded over the ranks, plus the layers being computed gathered in bf16 (the
      current and the prefetched one, and the root group: embeddings, final norm, output layer);
    - offload moves the state to the host, LoRA trains only the adapters; LoRA with `bf16_params` holds the
      frozen base in bf16 (2 bytes, no masters) and the adapters in fp32 with their gradients and AdamW moments;
    - `bf16` means 2-byte compute: bf16-mixed, or fp16-mixed (`fp16`, fp32 parameters under autocast);
    - `adafactor` (ddp): its factored second moment (`Shape.factored` fp32 values) instead of AdamW's two moments.
    Activations per sample: `activation_bytes` under the step's numerics; the loss: `loss_bytes`.

    The load peak (`load`): each rank loads the weights in fp32 into host memory (`host_load`) and moves them once
    to where they train (`models.load_pretrained`, `precision.load_placement`): ddp holds the fp32 model (its
    storage becomes the masters of a bf16 model, so 6 bytes a parameter at most) or LoRA's bf16 base; fsdp moves
    one layer (or the root group: embeddings and head) at a time before sharding it, so its peak is the shards
    plus that group in fp32. A model initialised from scratch (`scratch`) is built whole on the GPU first
    (fsdp without offload)."""
    compute_bytes = 2 if bf16 else 4
    mode = numerics(bf16, bf16_params or (bf16 and sharding == "fsdp"), compiled)
    trained = shape.lora if lora else shape.params
    name = (
        sharding
        + (" fp16" if fp16 else "")
        + (" bf16" if bf16_params else "")
        + (" +ckpt" if checkpointing else "")
        + (" +offload" if offload else "")
        + (" +lora" if lora else "")
    )
    group = 4 * max(shape.layer_params, shape.embedding)  # the largest group FSDP2 moves before sharding it
    if sharding == "fsdp":
        params, grads, optimizer = 4 * shape.params // world, 4 * trained // world, 8 * trained // world
        working = compute_bytes * (2 * shape.layer_params + shape.embedding)
        weight_bytes = compute_bytes  # the gathered bf16 copy is what the loss uses
        load = (0 if offload else params) + (4 * shape.params if scratch and not offload else group)
    elif lora and bf16_params:  # bf16 frozen base, fp32 adapters: nothing of the base has a master
        params, grads, optimizer = 2 * shape.params + 4 * trained, 4 * trained, 8 * trained  # base + adapters
        working, weight_bytes = 0, 2
        load = params
    elif bf16_params:
        params, grads, optimizer = 2 * shape.params, 4 * trained, 12 * trained
        working, weight_bytes = 0, 2
        load = 6 * shape.params  # the fp32 model, then its storage as masters beside the bf16 copy
    else:
        params, grads, optimizer = 4 * shape.params, 4 * trained, 8 * trained
        working, weight_bytes = (2 * shape.params if bf16 else 0), 4
        load = 4 * shape.params
    if adafactor:  # AdamW's two fp32 moments (8 bytes a parameter) give way to the factored state
        moments = 4 * shape.factored if not lora else 4 * trained  # adapters: small matrices, counted in full
        optimizer = optimizer - (8 * trained) + moments
    loss_working, loss_per_sample, logits_per_sample, logits_cap = loss_bytes(
        shape, seq, chunk or default_chunk(shape.vocab), compute_bytes, weight_bytes, head_trains=not lora
    )
    host = 0
    host_load = 0 if scratch else 4 * shape.params
    if offload:
        host = (params + grads + optimizer) * world
        params = grads = optimizer = 0
    return Estimate(
        layout=name,
        params=params,
        grads=grads,
        optimizer=optimizer,
        activations_per_sample=activation_bytes(shape, seq, mode, checkpointing, flash) + loss_per_sample,
        working=working + loss_working,
        logits_per_sample=logits_per_sample,
        logits_cap=logits_cap,
        host=host,
        load=load,
        host_load=host_load,
    )


def with_lora(plan: CPTPlan, shape: Shape) -> Shape:
    """The shape with the adapter parameters the plan's peft settings would add, when the plan itself has none."""
    if shape.lora:
        return shape
    lora_plan = replace(plan, peft=replace(plan.peft, method="lora"))
    return replace(shape, lora=model_shape(lora_plan).lora)


def measured_bytes(model: torch.nn.Module, optimizer: torch.optim.Optimizer, tokens: torch.Tensor) -> dict:
    """The measured peak of one fp32 training step on CPU (forward, chunked loss, backward, AdamW step on `tokens`,
    micro batch x seq), as the hf engine runs it: the bytes of the parameters and optimiser state held between
    steps, plus the peak of the torch CPU allocator above them during the step (the profiler's memory events:
    activations, logits, gradients and temporaries). A first step, unmeasured, creates the optimiser state."""
    from torch.profiler import ProfilerActivity, profile

    from morphcpt.modeling.loss import LossModule

    loss_module = LossModule(model)
    weights = torch.full(tokens.shape, 1.0 / tokens.numel())

    def step() -> None:
        weighted, _ = loss_module(tokens, tokens, weights)
        weighted.backward()
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
