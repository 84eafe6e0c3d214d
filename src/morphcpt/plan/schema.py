"""The training plan's schema: one typed config that both engines (megatron on the cluster, hf anywhere) execute,
and `validate`, which refuses a plan that cannot run with the reason.

The dataclasses below are the schema; `conf/train.yaml` holds the cluster defaults (the user's plan for
gemma-3-1b-pt) and `conf/recipe/*.yaml` hold only what a run changes. `compose.py` composes them with Hydra in
struct mode, so a misspelt key is an error.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from morphcpt.errors import UserError
from morphcpt.plan.card import card_bytes

ENGINES = ("megatron", "hf")
STAGES = ("check", "prepare", "train")
PRECISIONS = ("bf16-mixed", "fp16-mixed", "fp32")
SHARDINGS = ("ddp", "fsdp")
PEFT_METHODS = ("none", "lora")
COMPILE_MODES = ("auto", "layers", "model", "none")
PARAM_DTYPES = ("auto", "bf16", "fp32")
# Loop keys that change how a step is laid out over ranks and memory, or how fast it runs, never what it computes:
# left out of the config hash, so a run may resume under another sharding (more GPUs) or micro batch (samples are
# addressed by index, so a step reads the same global batch at any micro batch; "auto" may pick another one).
LAYOUT_KEYS = (
    "max_steps_per_run",
    "micro_batch_size",
    "sharding",
    "fsdp_shard_size",
    "activation_checkpointing",
    "cpu_offload",
    "compile",
    "param_dtype",  # checkpoints hold fp32 weights and optimiser state either way
    "fused_optimizer",
    "loss_chunk_tokens",
    "max_skipped_steps",  # a guard on the run, not what is trained
)


class PlanError(UserError, ValueError):
    """A setting of the training plan that cannot run; the message names it."""


@dataclass
class ModelPlan:
    """Which model to start from. `pretrained` set: continued pretraining of those weights (a Hub id or an HF
    folder). `pretrained` null: a randomly initialised Gemma 3 of the shape below (the demo's tiny base)."""

    name: str = "gemma3-1b"
    pretrained: str | None = "google/gemma-3-1b-pt"
    tokenizer: str | None = None  # null: the tokenizer saved with `pretrained`
    # Embedding rows. null: the pretrained model's own (never resized), or the tokenizer's size for random init.
    vocab_size: int | None = None
    # Shape of a randomly initialised model (ignored when `pretrained` is set).
    hidden_size: int = 64
    num_layers: int = 4
    num_heads: int = 4
    num_kv_heads: int = 1
    head_dim: int = 16
    intermediate_size: int = 256
    sliding_window: int = 32
    global_every: int = 2  # every n-th layer attends globally, the others use the sliding window
    max_position_embeddings: int = 2048


@dataclass
class DataPlan:
    """The preprocessed data (see morphcpt.preprocess): a blend of one scheme's chunks, plus the canonical
    validation set that every scheme shares, so validation losses are comparable across schemes."""

    root: str = "${oc.env:MORPHCPT_DATA_ROOT,data/processed}"
    scheme: str = "vanilla"
    num_chunks: int = 20
    chunk_name: str = (
        "chunk_{index:02d}"  # str.format pattern; chunk i is <root>/<scheme>/<name>_text_document
    )
    validation_name: str = "validation"  # <root>/validation/<name>_text_document
    # Blend weights, one per chunk. null: equal weights. Weights are always passed to Megatron: without them a
    # blend is capped at one epoch and a run longer than the data stops early.
    weights: list[float] | None = None
    seed: int = 1234  # GPTDataset shuffling
    # Replicate k (seed k) of this arm: k >= 1 trains on <root>/<scheme>/seed<k>/ where the scheme's ids depend on
    # the seed (stochastok, patok; morphcpt.preprocess replicate=k), shuffles with data.seed + k, initialises
    # with loop.seed + k and is named <run_name>-seed<k> (`plan_from_config`). 0: today's run, folders and names.
    replicate: int = 0

    def chunk_prefixes(self) -> list[Path]:
        from morphcpt.tokenization.schemes import data_folder

        folder = data_folder(self.scheme, self.replicate)
        return [
            Path(self.root) / folder / f"{self.chunk_name.format(index=i)}_text_document"
            for i in range(1, self.num_chunks + 1)
        ]

    def validation_prefix(self) -> Path:
        return Path(self.root) / "validation" / f"{self.validation_name}_text_document"

    def blend_weights(self) -> list[float]:
        weights = self.weights if self.weights is not None else [1.0] * self.num_chunks
        if len(weights) != self.num_chunks:
            raise PlanError(f"data.weights has {len(weights)} entries for {self.num_chunks} chunks")
        return [float(w) for w in weights]


@dataclass
class LoopPlan:
    """Length and shape of training. Gradient accumulation = global / (micro x data-parallel ranks)."""

    steps: int = 10_000
    seq_length: int = 2048
    global_batch_size: int = 256
    # Samples per rank per forward pass, or "auto": the largest that fits `cluster.gpu_memory` with the planner's
    # margin and divides the global batch (`python -m morphcpt.train.memory` shows the choice).
    micro_batch_size: int | str = 2
    # "bf16-mixed"; "fp16-mixed" (hf engine, cards without bf16: V100, T4) is fp16 autocast with a dynamic loss
    # scale, stopped after `max_skipped_steps` skipped steps in a row (precision.Fp16Overflow); "fp32". CPU: fp32.
    precision: str = "bf16-mixed"
    seed: int = 1234
    # hf engine: stop after this many optimiser steps in one invocation (a checkpoint is written); null: no limit.
    max_steps_per_run: int | None = None
    # Token budget (10M, 100M, 1B, 10B or a number): sets `steps` = ceil(budget / (global batch x seq length)).
    train_tokens: str | None = None
    # hf engine, memory (see `python -m morphcpt.train.memory`): "ddp" replicates the model, gradients and
    # optimiser state on every rank; "fsdp" shards all three over the ranks (FSDP2 fully_shard; bf16 parameters
    # with fp32 gradient reductions on GPU under bf16-mixed).
    sharding: str = "ddp"
    # fsdp: how many ranks one copy of the model is sharded over. null: the ranks of one node, so on several nodes
    # each node holds a whole sharded copy and nodes only all-reduce gradients (HSDP; the all-gathers stay on the
    # node's fast links). The world size: one copy over every rank of every node, for models one node cannot hold.
    fsdp_shard_size: int | None = None
    activation_checkpointing: bool = False  # recompute each decoder layer in backward (non-reentrant)
    cpu_offload: bool = False  # fsdp only: parameters, gradients and optimiser state live in host memory
    # hf engine, speed (docs/gpu-memory-and-speed.md). torch.compile: "layers" (each decoder layer), "model" (the
    # whole decoder), "none"; "auto": layers on a GPU, none on a CPU.
    compile: str = "auto"
    # Parameters in "bf16" with fp32 master weights in the optimiser, or "fp32" (bf16 autocast on a GPU); "auto":
    # bf16 on a GPU under bf16-mixed with ddp and no LoRA, else fp32 (morphcpt.train.hf.precision says what each gives).
    param_dtype: str = "auto"
    # AdamW as one fused kernel on CUDA (torch's foreach implementation elsewhere)
    fused_optimizer: bool = True
    # Tokens per chunk of the chunked cross entropy (no full-vocabulary logits); null: 1 GiB of fp32 logits a chunk.
    loss_chunk_tokens: int | None = None
    max_skipped_steps: int = 25

    def apply_token_budget(self) -> None:
        if self.train_tokens is not None:
            from morphcpt.corpus.budget import parse_count

            self.steps = -(-parse_count(self.train_tokens) // (self.global_batch_size * self.seq_length))


@dataclass
class OptimPlan:
    """AdamW, decoupled weight decay (`name: adafactor`: memory-light); warmup, then cosine decay to `min_lr`."""

    name: str = "adamw"
    lr: float = 1.0e-4
    min_lr: float = 1.0e-5
    warmup_steps: int = 500
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.95
    eps: float = 1.0e-8
    clip_grad: float = 1.0


@dataclass
class PeftPlan:
    """hf engine: parameter-efficient training. "lora" trains low-rank adapters on `target_modules` (module
    names, e.g. q_proj) and freezes the base model; adapters are saved on their own and merged on export."""

    method: str = "none"
    rank: int = 16
    alpha: float = 32.0
    dropout: float = 0.0
    target_modules: list[str] = field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    )


@dataclass
class ValidationPlan:
    interval: int = 500
    iters: int = 32  # megatron: global batches per validation
    max_batches: int | None = None  # hf: batches per validation; null: the whole validation set
    micro_batch_size: int | None = None  # hf: samples per validation batch; null: loop.micro_batch_size


@dataclass
class CheckpointPlan:
    interval: int = 1000
    keep: int = 3  # newest checkpoints kept (megatron: checkpoint.most_recent_k)
    # hf engine: write checkpoints in a background thread from a snapshot in host memory (training stalls only
    # for the snapshot); false: write them before training goes on.
    async_save: bool = True


@dataclass
class LoggingPlan:
    interval: int = 10
    tensorboard: bool = True
    progress_bar: bool = True
    wandb: bool = False
    wandb_project: str = "gemma3-seapile-cpt"
    wandb_mode: str = "${oc.env:WANDB_MODE,online}"  # "offline" needs no network; `wandb sync` later


@dataclass
class ClusterPlan:
    """Where the job runs: its shape (nodes x GPUs; both engines' check stages read it) and the GPUs (both engines
    plan their memory for `gpu_memory`), and for the Megatron-Bridge engine its parallelism, the PBS walltime and
    where the imported weights live."""

    # Memory of one GPU ("40GB": the user's A100-SXM4-40GB; GB and GiB both mean 2**30 bytes, as cards are
    # quoted) and its type (A100, H100, H200, L40S, ...): the memory planner, `loop.micro_batch_size=auto` and the
    # check stage plan for this card; .env's GPU_MEMORY / GPU_TYPE set them for the rendered jobs.
    gpu_memory: str = "40GB"
    gpu_type: str = "A100"
    # "check": build and validate everything Bridge would, without a GPU; "prepare": import the HF weights once
    # and verify them; "train": pretrain()
    stage: str = "train"
    nodes: int = 1
    gpus_per_node: int = 8
    tensor_parallel: int = 1
    pipeline_parallel: int = 1
    walltime: str = "24:00:00"  # the job's walltime; training exits `exit_margin_minutes` before it
    exit_margin_minutes: int = 20
    # Minutes the job had already used when the train stage started (the PBS script passes them): Megatron counts
    # `exit_duration_in_mins` from pretrain(), so the prepare stage and start-up must come off the walltime.
    elapsed_minutes: int = 0
    import_dir: str = "${output_root}/imports/${model.name}"
    ckpt_format: str = "torch_dist"


@dataclass
class EEVEPlan:
    """EEVE staged training (morphcpt.train.eeve.engine; used when data.scheme is eeve): the stages to run, ascending,
    and per stage k (list index k-1) its steps, peak learning rate and warmup; min_lr = lr x min_lr_ratio.
    `model.pretrained` is the model to expand, `model.tokenizer` the expanded tokenizer folder."""

    stages: list[int] = field(default_factory=lambda: [1, 2, 3, 4, 5, 6, 7])
    steps: list[int] = field(default_factory=lambda: [1000, 1000, 1000, 1000, 1000, 4000, 1000])
    lr: list[float] = field(default_factory=lambda: [2e-4, 2e-4, 2e-4, 1e-4, 1e-4, 1e-4, 5e-5])
    warmup_steps: list[int] = field(default_factory=lambda: [50, 50, 50, 50, 50, 200, 50])
    min_lr_ratio: float = 0.1

    def check(self) -> None:
        for name in ("steps", "lr", "warmup_steps"):
            if len(getattr(self, name)) != 7:
                raise PlanError(f"eeve.{name} needs one entry per stage (7), got {getattr(self, name)}")
        stages = list(self.stages)
        if not stages or stages != sorted(set(stages)) or not set(stages) <= set(range(1, 8)):
            raise PlanError(
                f"eeve.stages must be stage numbers 1-7 in ascending order without repeats (each stage starts "
                f"from the one before), got {stages}"
            )
        for k in stages:
            if not 0 <= self.warmup_steps[k - 1] < self.steps[k - 1]:
                raise PlanError(f"eeve stage {k}: warmup {self.warmup_steps[k - 1]} must be below its steps")


@dataclass
class CPTPlan:
    """A whole run. The run folder (`run_dir`) never contains a job id, so a resubmitted job resumes."""

    run_name: str = "${model.name}-${data.scheme}"
    engine: str = "megatron"
    dry_run: bool = False
    output_root: str = "${oc.env:MORPHCPT_OUTPUT_ROOT,outputs}"
    run_dir: str = "${output_root}/runs/${run_name}"
    model: ModelPlan = field(default_factory=ModelPlan)
    data: DataPlan = field(default_factory=DataPlan)
    loop: LoopPlan = field(default_factory=LoopPlan)
    optim: OptimPlan = field(default_factory=OptimPlan)
    peft: PeftPlan = field(default_factory=PeftPlan)
    validation: ValidationPlan = field(default_factory=ValidationPlan)
    checkpoint: CheckpointPlan = field(default_factory=CheckpointPlan)
    logging: LoggingPlan = field(default_factory=LoggingPlan)
    cluster: ClusterPlan = field(default_factory=ClusterPlan)
    eeve: EEVEPlan = field(default_factory=EEVEPlan)

    @property
    def checkpoint_dir(self) -> Path:
        return Path(self.run_dir) / "checkpoints"

    def config_hash(self) -> str:
        """Identity of what is trained: model, data, loop shape and optimiser — not logging, not intervals.

        A run folder whose checkpoints carry another hash belongs to another plan; resuming it would be wrong.
        """
        data = asdict(self.data)
        if not data["replicate"]:  # absent at 0: runs from before replicates keep the hash they always had
            del data["replicate"]
        optim = {k: v for k, v in asdict(self.optim).items() if (k, v) != ("name", "adamw")}  # hash kept
        identity = {
            "model": asdict(self.model),
            "data": data,
            "loop": {k: v for k, v in asdict(self.loop).items() if k not in LAYOUT_KEYS},
            "optim": optim,
        }
        if self.peft.method != "none":  # absent otherwise: full-model runs keep the hash they always had
            identity["peft"] = asdict(self.peft)
        return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


def validate(plan: CPTPlan) -> CPTPlan:
    """Refuse plans that cannot run, with the reason."""
    if plan.engine not in ENGINES:
        raise PlanError(f"engine must be one of {ENGINES}, got {plan.engine!r}")
    if plan.cluster.stage not in STAGES:
        raise PlanError(f"cluster.stage must be one of {STAGES}, got {plan.cluster.stage!r}")
    loop = plan.loop
    if loop.precision not in PRECISIONS:
        raise PlanError(f"loop.precision must be one of {PRECISIONS}, got {loop.precision!r}")
    if loop.sharding not in SHARDINGS:
        raise PlanError(f"loop.sharding must be one of {SHARDINGS}, got {loop.sharding!r}")
    if loop.fsdp_shard_size is not None and (loop.sharding != "fsdp" or loop.fsdp_shard_size < 1):
        raise PlanError(
            f"loop.fsdp_shard_size={loop.fsdp_shard_size} needs loop.sharding=fsdp and a number of ranks >= 1 "
            "(null: the ranks of one node)"
        )
    if loop.compile not in COMPILE_MODES:
        raise PlanError(f"loop.compile must be one of {COMPILE_MODES}, got {loop.compile!r}")
    if loop.param_dtype not in PARAM_DTYPES:
        raise PlanError(f"loop.param_dtype must be one of {PARAM_DTYPES}, got {loop.param_dtype!r}")
    if loop.loss_chunk_tokens is not None and loop.loss_chunk_tokens < 1:
        raise PlanError(f"loop.loss_chunk_tokens must be >= 1 or null, got {loop.loss_chunk_tokens}")
    if loop.precision == "fp16-mixed" and (plan.engine != "hf" or loop.param_dtype == "bf16"):
        raise PlanError(
            "loop.precision=fp16-mixed (cards without bf16) runs with engine=hf and fp32 parameters "
            "(loop.param_dtype=auto or fp32)"
        )
    if loop.cpu_offload and loop.sharding != "fsdp":
        raise PlanError("loop.cpu_offload=true needs loop.sharding=fsdp (FSDP2 offloads the shards)")
    if plan.peft.method not in PEFT_METHODS:
        raise PlanError(f"peft.method must be one of {PEFT_METHODS}, got {plan.peft.method!r}")
    if plan.peft.method == "lora" and (plan.peft.rank < 1 or not plan.peft.target_modules):
        raise PlanError("peft.method=lora needs peft.rank >= 1 and at least one peft.target_modules entry")
    if plan.peft.method == "lora" and loop.sharding == "fsdp":
        raise PlanError("peft.method=lora runs under loop.sharding=ddp (the frozen base is not sharded yet)")
    if isinstance(loop.micro_batch_size, str) and loop.micro_batch_size != "auto":
        raise PlanError(f"loop.micro_batch_size must be a number or auto, got {loop.micro_batch_size!r}")
    if loop.micro_batch_size != "auto":
        if loop.micro_batch_size < 1:
            raise PlanError(f"loop.micro_batch_size must be >= 1, got {loop.micro_batch_size}")
        if loop.global_batch_size % loop.micro_batch_size:
            raise PlanError(
                f"global batch {loop.global_batch_size} is not a multiple of micro batch {loop.micro_batch_size}"
            )
    card_bytes(plan.cluster.gpu_memory, "cluster.gpu_memory")
    if plan.optim.name not in ("adamw", "adafactor"):
        raise PlanError(f"optim.name must be one of adamw, adafactor; got {plan.optim.name!r}")
    if plan.optim.name != "adamw" and (plan.engine == "megatron" or plan.data.scheme == "eeve"):
        where = "the megatron engine" if plan.engine == "megatron" else "EEVE"  # they train with AdamW only
        raise PlanError(f"optim.name={plan.optim.name} runs on the hf engine only; {where} trains with AdamW")
    if plan.optim.name == "adafactor" and plan.loop.sharding != "ddp":
        raise PlanError("optim.name=adafactor runs under loop.sharding=ddp (its state is not sharded yet)")
    if not 0 <= plan.optim.min_lr <= plan.optim.lr:
        raise PlanError(f"need 0 <= min_lr <= lr, got {plan.optim.min_lr} and {plan.optim.lr}")
    if plan.optim.warmup_steps >= loop.steps:
        raise PlanError(
            f"warmup ({plan.optim.warmup_steps}) must be shorter than the run ({loop.steps} steps)"
        )
    if plan.data.replicate < 0:
        raise ValueError(f"data.replicate must be 0 or more (seed k of the arm), got {plan.data.replicate}")
    if plan.model.pretrained is None and not plan.model.tokenizer:
        raise PlanError(
            "a randomly initialised model (model.pretrained=null) needs model.tokenizer=DIR, e.g. the folder "
            "`morphcpt train-tokenizer` wrote"
        )
    plan.data.blend_weights()
    plan.eeve.check()
    return plan
