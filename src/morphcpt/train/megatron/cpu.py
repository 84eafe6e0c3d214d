"""Gemma 3 as a Megatron model on a CPU, without Transformer Engine: the layer spec Megatron-Bridge's Gemma 3
provider is given so that AutoBridge can import, run and export a real Gemma 3 where TE cannot run.

Bridge's own spec (`megatron.bridge.models.gemma.gemma3_provider.gemma3_layer_spec`) is built from TE modules only
(fused norm + linear, TE attention with Gemma 3's sliding window, TE norms), and megatron-core's local pieces do not
cover Gemma 3 on a CPU (its norm refuses the zero-centred gamma Gemma uses, its sliding-window mask is built on
"cuda"). This spec swaps each TE module for a plain-PyTorch one that computes the same function and, on purpose,
keeps TE's parameter names (`linear_qkv.layer_norm_weight`, `linear_proj.post_layernorm.weight`, ...): Bridge's
Gemma 3 name mapping and Megatron checkpoints then apply unchanged. Tensor parallel size 1 only (one CPU process).

    with temporary_distributed_context("gloo"), without_te_hooks():   # Bridge's one-process group
        provider = AutoBridge.from_hf_pretrained(folder).to_megatron_provider()
        use_cpu_spec(provider)                          # fp32, this spec, no fused kernels
        provider.finalize()
        model = provider.provide_distributed_model(wrap_with_ddp=False, use_cpu_initialization=True)
        logits = rotary_on_cpu(model[0])(input_ids=ids, position_ids=positions, attention_mask=None)
        with checkpoint_io_without_cuda():
            save_megatron_model(model, folder)

Beside the spec, the few calls of megatron-core and Bridge that assume CUDA or a real TE on the way (each named
where it is worked around; benchmarks/RESULTS.md lists them) are bypassed for the duration of a context only, and
only where they would fail. `roundtrip.py` drives the whole import → forward → export round trip.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from megatron.bridge.models.conversion.param_mapping import AutoMapping
from megatron.bridge.models.gemma.gemma3_provider import Gemma3SelfAttention
from megatron.core.fusions.fused_bias_dropout import get_bias_dropout_add
from megatron.core.tensor_parallel.layers import ColumnParallelLinear, RowParallelLinear
from megatron.core.transformer.attention import SelfAttentionSubmodules
from megatron.core.transformer.dot_product_attention import DotProductAttention
from megatron.core.transformer.enums import AttnMaskType
from megatron.core.transformer.mlp import MLP, MLPSubmodules
from megatron.core.transformer.spec_utils import ModuleSpec
from megatron.core.transformer.transformer_block import TransformerBlockSubmodules
from megatron.core.transformer.transformer_layer import TransformerLayer, TransformerLayerSubmodules


def _rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """Gemma's RMSNorm, as transformers computes it: in fp32, scaled by (1 + weight) (zero-centred gamma)."""
    normed = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps)
    return (normed * (1.0 + weight.float())).type_as(x)


class Gemma3Norm(torch.nn.Module):
    """Stands in for TENorm (RMSNorm, zero-centred gamma): q/k norms, post-norms, the final norm."""

    def __init__(self, config, hidden_size: int, eps: float = 1e-6, **_):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.zeros(hidden_size, dtype=config.params_dtype))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _rms_norm(x, self.weight, self.eps)


class Gemma3NormColumnLinear(ColumnParallelLinear):
    """Stands in for TELayerNormColumnParallelLinear: the pre-norm fused into the next linear (qkv, fc1), its
    weight under TE's name `layer_norm_weight`."""

    def __init__(self, input_size: int, output_size: int, *, config, **kwargs):
        super().__init__(input_size, output_size, config=config, **kwargs)
        self.eps = config.layernorm_epsilon
        self.layer_norm_weight = torch.nn.Parameter(torch.zeros(input_size, dtype=config.params_dtype))

    def forward(self, input_: torch.Tensor, weight=None, runtime_gather_output=None):
        return super().forward(
            _rms_norm(input_, self.layer_norm_weight, self.eps), weight, runtime_gather_output
        )


class Gemma3RowLinearPostNorm(RowParallelLinear):
    """Stands in for Bridge's TERowParallelLinearLayerNorm: a row-parallel linear (o_proj, down_proj) followed by
    Gemma's post-norm, `post_layernorm`."""

    def __init__(self, input_size: int, output_size: int, *, config, **kwargs):
        super().__init__(input_size, output_size, config=config, **kwargs)
        self.post_layernorm = Gemma3Norm(config, output_size, config.layernorm_epsilon)

    def forward(self, input_: torch.Tensor):
        output, bias = super().forward(input_)
        return self.post_layernorm(output), bias


class Gemma3CoreAttention(DotProductAttention):
    """Stands in for Bridge's Gemma3TEDotProductAttention: causal attention, in fp32, with a sliding window of
    `config.window_size` keys on the local layers (every layer but each `sum(interleaved_attn_pattern)`-th), the
    same rule and window (query i sees keys i-w+1 .. i) as Bridge's TE module and transformers."""

    def __init__(self, config, layer_number: int, attn_mask_type, attention_type, **kwargs):
        super().__init__(config, layer_number, attn_mask_type, attention_type, **kwargs)
        local = layer_number % sum(config.interleaved_attn_pattern) != 0
        self.window = int(config.window_size) if local and config.window_size else None

    def forward(self, query, key, value, attention_mask, attn_mask_type=None, attention_bias=None, **_):
        if attention_bias is not None:
            raise NotImplementedError("Gemma3CoreAttention takes no attention bias")
        sq, batch, heads, _ = query.shape
        sk, groups = key.shape[0], key.shape[2]
        # [s, b, n, d] -> [b, n, s, d]; each of the `groups` key/value heads serves heads // groups query heads
        q = query.permute(1, 2, 0, 3).float()
        k = key.repeat_interleave(heads // groups, dim=2).permute(1, 2, 0, 3).float()
        v = value.repeat_interleave(heads // groups, dim=2).permute(1, 2, 0, 3).float()
        scores = torch.matmul(q, k.transpose(-1, -2)) * self.softmax_scale
        i = torch.arange(sq, device=query.device)[:, None] + (sk - sq)
        j = torch.arange(sk, device=query.device)[None, :]
        allowed = j <= i
        if self.window is not None:
            allowed &= j > i - self.window
        if attention_mask is not None:  # Megatron's convention: True marks a masked position
            allowed = allowed & ~attention_mask.bool()
        probs = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        context = torch.matmul(probs, v).to(value.dtype)  # [b, n, sq, d]
        return context.permute(2, 0, 1, 3).reshape(sq, batch, heads * query.shape[-1])


# Bridge's AutoMapping picks how a tensor is split over tensor-parallel ranks from its module's class name
AutoMapping.register_module_type("Gemma3NormColumnLinear", "column")
AutoMapping.register_module_type("Gemma3RowLinearPostNorm", "row")
AutoMapping.register_module_type("Gemma3Norm", "replicated")


def gemma3_cpu_block_spec(config) -> TransformerBlockSubmodules:
    """The Gemma 3 decoder with no TE module, for Bridge's `transformer_layer_spec` (a whole-block spec, so that
    the final norm is Gemma's too: megatron-core would otherwise pick TENorm wherever `transformer_engine`
    imports)."""
    if config.tensor_model_parallel_size != 1:
        raise ValueError(
            f"the CPU Gemma 3 spec runs at tensor parallel size 1, not {config.tensor_model_parallel_size}"
        )
    layer = ModuleSpec(
        module=TransformerLayer,
        submodules=TransformerLayerSubmodules(
            self_attention=ModuleSpec(
                module=Gemma3SelfAttention,  # picks the local or global RoPE per layer; no TE inside
                params={"attn_mask_type": AttnMaskType.causal},
                submodules=SelfAttentionSubmodules(
                    linear_qkv=Gemma3NormColumnLinear,
                    core_attention=Gemma3CoreAttention,
                    q_layernorm=Gemma3Norm,
                    k_layernorm=Gemma3Norm,
                    linear_proj=Gemma3RowLinearPostNorm,
                ),
            ),
            self_attn_bda=get_bias_dropout_add,
            mlp=ModuleSpec(
                module=MLP,
                submodules=MLPSubmodules(
                    linear_fc1=Gemma3NormColumnLinear, linear_fc2=Gemma3RowLinearPostNorm
                ),
            ),
            mlp_bda=get_bias_dropout_add,
        ),
    )
    return TransformerBlockSubmodules(layer_specs=[layer] * config.num_layers, layer_norm=Gemma3Norm)


# Fused CUDA kernels and TE paths a CPU run must not take
CPU_SETTINGS = {
    "params_dtype": torch.float32,
    "pipeline_dtype": torch.float32,
    "autocast_dtype": torch.float32,
    "bf16": False,
    "fp16": False,
    "apply_rope_fusion": False,
    "bias_activation_fusion": False,
    "bias_dropout_fusion": False,
    "masked_softmax_fusion": False,
    "gradient_accumulation_fusion": False,
    "persist_layer_norm": False,
    "use_cpu_initialization": True,
}


# What megatron-core 0.17 binds at import time when `transformer_engine` does not import: (module, name, value)
NO_TE_BINDINGS = (
    ("megatron.core.transformer.transformer_block", "get_cpu_offload_context", None),
    ("megatron.core.transformer.transformer_block", "HAVE_TE", False),
    ("megatron.core.transformer.attention", "HAVE_TE", False),
    ("megatron.core.transformer.attention", "SplitAlongDim", None),
    ("megatron.core.transformer.attention", "TELinear", None),
    ("megatron.core.transformer.attention", "set_save_original_input", None),
    ("megatron.core.transformer.mlp", "HAVE_TE", False),
    ("megatron.core.tensor_parallel.layers", "HAVE_TE", False),
)


@contextmanager
def _bound(bindings) -> Iterator[None]:
    """Set (module, name, value) bindings for the duration of the context; restore them on exit."""
    import importlib

    saved = []
    for module_name, name, value in bindings:
        module = importlib.import_module(module_name)
        if hasattr(module, name):
            saved.append((module, name, getattr(module, name)))
            setattr(module, name, value)
    try:
        yield
    finally:
        for module, name, value in reversed(saved):
            setattr(module, name, value)


@contextmanager
def without_te_hooks() -> Iterator[None]:
    """megatron-core as it is built where `transformer_engine` does not import.

    Bridge imports TE unguarded, so a CPU environment carries an import-only stand-in (tests/cluster/te_stub);
    megatron-core then believes TE is present and calls it while building and running any decoder
    (TransformerBlock asks TE for a CPU-offload context, attention splits q/k/v with TE's SplitAlongDim). Inside
    this context those module bindings are what megatron-core sets without TE (NO_TE_BINDINGS), and where the
    installed nvidia-resiliency-ext is older than megatron-core expects, checkpoints are written with
    megatron-core's own torch_dist writer (`nvrx_bindings`)."""
    with _bound(NO_TE_BINDINGS + nvrx_bindings()):
        yield


def nvrx_bindings() -> tuple:
    """megatron-core 0.17 saves torch_dist checkpoints through nvidia-resiliency-ext whenever it imports, and needs
    its `get_write_results_queue` (dist_checkpointing/strategies/torch.py, get_async_strategy); PyPI's newest
    release (0.4.1) lacks it, so the save fails with "nvidia-resiliency-ext package is not installed". Then the
    save takes megatron-core's own writer, as it does where the package is absent (same format)."""
    try:
        from nvidia_resiliency_ext.checkpointing.async_ckpt.filesystem_async import (  # noqa: F401
            get_write_results_queue,
        )
    except ImportError:
        return (("megatron.core.dist_checkpointing.strategies.torch", "HAVE_NVRX", False),)
    return ()


@contextmanager
def checkpoint_io_without_cuda() -> Iterator[None]:
    """Let Megatron-Bridge write a Megatron checkpoint on a machine without CUDA. Two calls of the save path reach
    CUDA unconditionally and raise "Found no NVIDIA driver":

    - `save_megatron_model` -> `save_checkpoint` (megatron/bridge/training/checkpointing.py:805) -> `get_rng_state`
      (checkpointing.py:412): `torch.cuda.get_rng_state()`. An imported model's checkpoint needs no RNG state
      (training starts from it in finetune mode, which does not restore RNG): an empty CUDA RNG state is recorded.
    - megatron-core's torch_dist writer, `FileSystemWriterAsync.preload_tensors`
      (megatron/core/dist_checkpointing/strategies/filesystem_async.py:248): `torch.cuda.synchronize()` after
      copying tensors to host memory. With no CUDA device there is nothing to wait for: a no-op.
    - `save_state_dict_async_finalize` (megatron/core/dist_checkpointing/strategies/state_dict_saver.py:252), after
      the metadata is written, puts the failure flag it broadcasts on `torch.cuda.current_device()`: here the CPU,
      which the gloo group broadcasts.

    With CUDA available nothing changes."""
    if torch.cuda.is_available():
        yield
        return
    saved = torch.cuda.get_rng_state, torch.cuda.synchronize, torch.cuda.current_device
    torch.cuda.get_rng_state = lambda device="cuda": torch.empty(0, dtype=torch.uint8)
    torch.cuda.synchronize = lambda device=None: None
    torch.cuda.current_device = lambda: "cpu"
    try:
        yield
    finally:
        torch.cuda.get_rng_state, torch.cuda.synchronize, torch.cuda.current_device = saved


class _RotaryOnCPU:
    """RotaryEmbedding.get_emb without its move of `inv_freq` to `torch.cuda.current_device()` (megatron-core
    0.17, models/common/embeddings/rotary_pos_embedding.py:162, unconditional): the same frequencies, on the
    device `inv_freq` is on."""

    def get_emb(self, max_seq_len: int, offset: int = 0) -> torch.Tensor:
        freqs = self.get_freqs_non_repeated(max_seq_len, offset)
        if self.rotary_interleaved:
            emb = torch.stack((freqs.view(-1, 1), freqs.view(-1, 1)), dim=-1).view(freqs.shape[0], -1)
        else:
            emb = torch.cat((freqs, freqs), dim=-1)
        return emb[:, None, None, :]


def rotary_on_cpu(model: torch.nn.Module) -> torch.nn.Module:
    """Let every rotary embedding of a built model compute on the CPU (see _RotaryOnCPU); returns the model."""
    from megatron.core.models.common.embeddings.rotary_pos_embedding import RotaryEmbedding

    for module in model.modules():
        if isinstance(module, RotaryEmbedding) and not isinstance(module, _RotaryOnCPU):
            module.__class__ = type(type(module).__name__, (_RotaryOnCPU, type(module)), {})
    return model


def use_cpu_spec(provider) -> None:
    """Make a Gemma 3 provider from AutoBridge build the TE-free model above, in fp32, on the CPU.

    A checkpoint saved from it names `gemma3_cpu_block_spec` in its run config; from Megatron-Bridge 0.6 loading
    it (`export_ckpt`) instantiates only allow-listed modules, so this module is registered there."""
    try:
        from megatron.bridge.utils.instantiate_utils import register_allowed_target_prefix
    except ImportError:  # 0.4 has no allowlist
        pass
    else:
        register_allowed_target_prefix(__name__)
    provider.transformer_layer_spec = gemma3_cpu_block_spec
    for name, value in CPU_SETTINGS.items():
        setattr(provider, name, value)
