"""The megatron engine's memory per GPU, from Megatron-Bridge's real configuration (the check stage builds it) or,
where Bridge is not installed, from the plan and the recipe defaults it would get (tests/cluster proves the two
agree on the real Bridge 0.4 and 0.6).

    shape = MegatronShape.from_config(cfg)      # cfg: the ConfigContainer after runtime_config_update()
    shape = MegatronShape.from_plan(plan)       # anywhere: Gemma 3 1B with the recipe's defaults and our overrides
    est = estimate(shape)                       # gpus.Estimate, bytes per GPU on the most loaded pipeline stage

The formula (docs/gpu-memory-and-speed.md cites its sources):

- parameters, counted from the layer structure of Bridge's Gemma 3 spec (`gemma3_layer_spec`: fused input and
  pre-MLP RMSNorms in the QKV and FC1 linears, QK-norm, post-attention and post-MLP RMSNorms, gated FC1) and the
  vocabulary; the most loaded stage holds ceil(layers / PP) layers and the embedding (or the output layer) / TP;
- weights in bf16 (2 bytes), gradients in the DDP buffer in fp32 when `ddp.grad_reduce_in_fp32` (4 bytes), the
  optimiser's fp32 main parameters and two Adam moments (12 bytes) divided by the data-parallel size under the
  distributed optimiser - Megatron-LM's `theoretical_memory_usage.py` counts 6 + 12/DP bytes a parameter the same way;
- activations per token and layer, the tensors the layer saves for backward in bf16: the input and normed input of
  the two fused norm-linears (2 x 2h), the QK-norm inputs (q + kv), rotated q and k, v and the attention output
  (2q + 2kv; flash attention keeps no seq x seq matrix, only its fp32 log-sum-exp), the post-norm inputs (2h), FC1's
  output (2 ffn, gated) and FC2's input (ffn): 2 x (6h + 3q + 3kv + 3ffn) bytes. This is Korthikanti et al. 2022
  (arXiv:2205.05198, Table 2)'s count, which Bridge's `theoretical_memory_utils.compute_activation_memory` writes
  as 18 + 4 ffn/h per hidden unit, done for this layer's own tensors (Bridge's version assumes q = h, a non-gated
  MLP and no QK- or post-norms). Full recomputation keeps each layer's input (2h) and one layer's tensors at a time;
- one more layer's worth for the gradients in flight during backward; the embedding's output and the output layer's
  input (2h each); and at the loss, the bf16 logits and the fp32 copy Megatron's vocabulary-parallel cross entropy
  makes of them (6 bytes x vocab / TP per token, `fused_vocab_parallel_cross_entropy` in megatron-core 0.17);
- the first pipeline stage holds min(PP, micro batches) micro batches in flight (1F1B).

Not measured on a GPU yet: treat the activations as a model of the peak, not a measurement.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from morphcpt.plan.schema import CPTPlan
from morphcpt.train.memory.estimate import Estimate

DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2, "float8_e4m3fn": 1, "uint8": 1}


def _bytes(dtype) -> int:
    return DTYPE_BYTES.get(str(dtype).removeprefix("torch."), 4)


@dataclass(frozen=True)
class MegatronShape:
    layers: int
    hidden: int
    heads: int
    groups: int  # query groups (KV heads)
    head_dim: int
    ffn: int
    gated: bool
    qk_norm: bool
    post_norms: bool  # Gemma 3's post-attention and post-MLP RMSNorms
    vocab: int
    tied: bool
    tp: int
    pp: int
    sequence_parallel: bool
    seq: int
    micro_batch: int
    global_batch: int
    dp: int
    distributed_optimizer: bool
    grad_bytes: int  # gradient buffer (4: grad_reduce_in_fp32)
    optimizer_bytes: int  # fp32 main parameters + Adam's two moments, per parameter
    recompute: str | None  # None, "full", "selective"
    recompute_method: str | None  # "uniform" | "block" (full)
    recompute_num_layers: int
    recompute_modules: tuple[str, ...] = ()

    @classmethod
    def from_config(cls, cfg, data_parallel: int | None = None) -> MegatronShape:
        """From a Bridge ConfigContainer (after `runtime_config_update`, which sets its data-parallel size)."""
        m = cfg.model
        gemma3 = type(m).__name__.startswith("Gemma3")  # its layer spec has QK-norm and post-norms
        vocab = m.vocab_size
        if getattr(m, "should_pad_vocab", False):
            step = m.make_vocab_size_divisible_by * m.tensor_model_parallel_size
            vocab = math.ceil(vocab / step) * step
        distributed = bool(cfg.ddp.use_distributed_optimizer or cfg.optimizer.use_distributed_optimizer)
        opt = cfg.optimizer
        return cls(
            layers=m.num_layers,
            hidden=m.hidden_size,
            heads=m.num_attention_heads,
            groups=m.num_query_groups or m.num_attention_heads,
            head_dim=m.kv_channels or m.hidden_size // m.num_attention_heads,
            ffn=m.ffn_hidden_size,
            gated=bool(m.gated_linear_unit),
            qk_norm=bool(m.qk_layernorm) or gemma3,
            post_norms=gemma3,
            vocab=vocab,
            tied=bool(m.share_embeddings_and_output_weights),
            tp=m.tensor_model_parallel_size,
            pp=m.pipeline_model_parallel_size,
            sequence_parallel=bool(m.sequence_parallel),
            seq=m.seq_length,
            micro_batch=cfg.train.micro_batch_size,
            global_batch=cfg.train.global_batch_size,
            dp=data_parallel or cfg.data_parallel_size,
            distributed_optimizer=distributed,
            grad_bytes=4 if cfg.ddp.grad_reduce_in_fp32 else 2,
            optimizer_bytes=_bytes(opt.main_params_dtype)
            + _bytes(opt.exp_avg_dtype)
            + _bytes(opt.exp_avg_sq_dtype),
            recompute=m.recompute_granularity,
            recompute_method=m.recompute_method,
            recompute_num_layers=m.recompute_num_layers or 0,
            # the modules only matter to selective recomputation (the config lists core_attn whatever the granularity)
            recompute_modules=tuple(m.recompute_modules or ())
            if m.recompute_granularity == "selective"
            else (),
        )

    @classmethod
    def from_plan(cls, plan: CPTPlan, micro_batch: int | None = None) -> MegatronShape:
        """What `from_config` reads from the config `megatron.build_config(plan)` makes: Bridge's Gemma 3 1B
        provider (the pilot's gemma-3-270m shape where the plan names it), the recipe's distributed optimiser with fp32 gradients and states, and our overrides."""
        from morphcpt.modeling.models import GEMMA3_1B_SHAPE, GEMMA3_1B_VOCAB, GEMMA3_270M_SHAPE
        from morphcpt.train.megatron.parallel import parallel_layout, recompute_overrides

        micro = micro_batch or plan.loop.micro_batch_size
        layout = parallel_layout(plan, micro_batch=micro)
        recompute = recompute_overrides(plan)
        s = GEMMA3_270M_SHAPE if plan.model.name == "gemma3-270m" else GEMMA3_1B_SHAPE  # the pilot's, else 1B
        return cls(
            layers=s["num_layers"],
            hidden=s["hidden_size"],
            heads=s["num_heads"],
            groups=s["num_kv_heads"],
            head_dim=s["head_dim"],
            ffn=s["intermediate_size"],
            gated=True,
            qk_norm=True,
            post_norms=True,
            vocab=plan.model.vocab_size or GEMMA3_1B_VOCAB,
            tied=True,
            tp=plan.cluster.tensor_parallel,
            pp=plan.cluster.pipeline_parallel,
            sequence_parallel=False,
            seq=plan.loop.seq_length,
            micro_batch=micro,
            global_batch=plan.loop.global_batch_size,
            dp=layout["data_parallel"],
            distributed_optimizer=True,
            grad_bytes=4,
            optimizer_bytes=12,
            recompute=recompute["model.recompute_granularity"],
            recompute_method=recompute["model.recompute_method"],
            recompute_num_layers=recompute["model.recompute_num_layers"] or 0,
        )

    # --- parameters ------------------------------------------------------------------------------------------

    @property
    def q(self) -> int:
        return self.heads * self.head_dim

    @property
    def kv(self) -> int:
        return self.groups * self.head_dim

    def layer_params(self) -> tuple[int, int]:
        """(tensor-parallel linear weights, replicated norm weights) of one decoder layer."""
        h = self.hidden
        linear = (
            h * (self.q + 2 * self.kv) + self.q * h + (2 if self.gated else 1) * self.ffn * h + self.ffn * h
        )
        norms = 2 * h + (2 * h if self.post_norms else 0) + (2 * self.head_dim if self.qk_norm else 0)
        return linear, norms

    def params(self) -> int:
        """All parameters (a tied embedding counted once)."""
        linear, norms = self.layer_params()
        embeddings = self.vocab * self.hidden * (1 if self.tied else 2)
        return self.layers * (linear + norms) + embeddings + self.hidden

    def params_per_gpu(self) -> int:
        """Parameters on the most loaded GPU: ceil(layers / PP) layers and the embedding (first stage) or the
        output layer (last stage; a tied one keeps a copy there under PP), linear weights split over TP."""
        linear, norms = self.layer_params()
        layers = math.ceil(self.layers / self.pp)
        body = layers * (linear // self.tp + norms)
        table = self.vocab * self.hidden // self.tp
        if self.pp == 1:
            return body + table * (1 if self.tied else 2) + self.hidden
        return body + table + self.hidden  # first stage: embedding; last: output layer (+ final norm)

    # --- activations -----------------------------------------------------------------------------------------

    def layer_activation_bytes(self) -> int:
        """Bytes one token keeps for backward in one decoder layer (bf16; see the module docstring)."""
        h_part = 2 * self.hidden * 2 + (2 * self.hidden if self.post_norms else 0)  # norm-linears, post-norms
        if self.sequence_parallel:
            h_part /= self.tp
        qk = (self.q + self.kv) if self.qk_norm else 0
        attention = 2 * self.q + 2 * self.kv + qk
        mlp = (2 if self.gated else 1) * self.ffn + self.ffn
        per_tp = (attention + mlp) / self.tp
        lse = 4 * self.heads / self.tp  # flash attention's fp32 log-sum-exp
        return int(2 * (h_part + per_tp) + lse)

    def _stored_layers(self, layers: int) -> float:
        """Bytes per token the stage's layers keep, in units of one token, under the configured recomputation."""
        full = self.layer_activation_bytes()
        layer_input = 2 * self.hidden / (self.tp if self.sequence_parallel else 1)
        if self.recompute == "full":
            k = max(self.recompute_num_layers, 1)
            if self.recompute_method == "block":
                k = min(k, layers)
                return k * layer_input + (layers - k) * full
            return math.ceil(layers / k) * layer_input + k * full  # uniform: one group recomputed at a time
        if self.recompute == "selective" and "mlp" in self.recompute_modules:
            h = self.hidden / (self.tp if self.sequence_parallel else 1)
            mlp = 2 * (2 * h + ((2 if self.gated else 1) * self.ffn + self.ffn) / self.tp + h)
            return layers * (full - mlp + 2 * h)
        return (
            layers * full
        )  # none, or selective core_attn / layernorm: nothing to drop under flash attention

    def activations_per_sample(self) -> int:
        layers = math.ceil(self.layers / self.pp)
        in_flight = min(self.pp, max(self.global_batch // (self.micro_batch * self.dp), 1))
        per_token = (self._stored_layers(layers) + self.layer_activation_bytes()) * in_flight
        h_token = 2 * self.hidden / (self.tp if self.sequence_parallel else 1)
        per_token += 2 * h_token  # the embedding's output, the output layer's input
        per_token += 6 * self.vocab / self.tp  # bf16 logits and their fp32 copy at the loss (last stage)
        return int(per_token * self.seq)

    def describe(self) -> str:
        recompute = (
            f"recompute {self.recompute} ({self.recompute_method or ''} {self.recompute_num_layers or ''})".strip()
            if self.recompute
            else "no recompute"
        )
        optimiser = (
            f"distributed optimizer over DP {self.dp}"
            if self.distributed_optimizer
            else "optimizer replicated"
        )
        return f"TP {self.tp}, PP {self.pp}, DP {self.dp}, {optimiser}, {recompute}"


def estimate(shape: MegatronShape) -> Estimate:
    """Per-GPU bytes of the megatron engine's layout (see the module docstring)."""
    params = shape.params_per_gpu()
    shards = shape.dp if shape.distributed_optimizer else 1
    layout = "megatron" + (" +recompute" if shape.recompute == "full" else "")
    layout += f" TP{shape.tp}" if shape.tp > 1 else ""
    return Estimate(
        layout=layout,
        params=2 * params,
        grads=shape.grad_bytes * params,
        optimizer=shape.optimizer_bytes * params // shards,
        working=0,
        activations_per_sample=shape.activations_per_sample(),
    )
