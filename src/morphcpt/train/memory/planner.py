"""The memory planner: per-GPU memory of a training plan on the card it names (`cluster.gpu_memory`, default the
user's A100 40GB), for both engines, before anything is submitted or allocated; the micro batch `auto` picks; and
the refusal the check stages give a plan that does not fit.

    python -m morphcpt.train.memory recipe=cpt_patok                        # both engines, the plan's card
    python -m morphcpt.train.memory recipe=cpt_patok cluster.gpu_memory=80GB gpus=4 engine=hf

It prints, per engine, the plan's layout and the alternatives a user would weigh (hf: ddp, fsdp, activation
checkpointing, offload, LoRA; megatron: recomputation, tensor parallelism): parameters, gradients, optimiser state,
per-step working memory and activations per sample, the total at the plan's micro batch with the share of the card
it leaves free, and the largest micro batch that fits with the planner's 10 % margin and divides the global batch.
The estimates are `hf.py` and `megatron.py` (this folder); the arithmetic is `estimate.py`, the
card `morphcpt.plan.card`.

    resolve_micro_batch(plan, "hf", world)   # loop.micro_batch_size=auto -> the number; the engines call it
    check_fits(plan, "megatron", world)      # DoesNotFit with what fits instead; the check stages call it
"""

from __future__ import annotations

import copy
import os
import sys
from dataclasses import dataclass, replace

import torch

from morphcpt.errors import UserError, reported
from morphcpt.plan.card import GPU_TYPES, Card, gib, gpu_type, parse_bytes
from morphcpt.plan.schema import CPTPlan, PlanError
from morphcpt.train.hf import parallel, precision
from morphcpt.train.memory import hf, megatron
from morphcpt.train.memory.estimate import MARGIN, Estimate, fitting_micro_batch

# Re-exported: the hf estimate's names, as this module offered them before the megatron estimate existed.
Shape, model_config, model_shape, estimate = (
    hf.Shape,
    hf.model_config,
    hf.model_shape,
    hf.estimate,
)
measured_bytes = hf.measured_bytes
__all__ = ["DoesNotFit", "Row", "check_fits", "parse_bytes", "resolve_micro_batch", "rows"]


class DoesNotFit(UserError, ValueError):
    """The plan's estimate exceeds its card; the message lists what fits instead."""


@dataclass
class Row:
    """One layout's answer on the plan's card."""

    engine: str
    estimate: Estimate
    micro_batch: int  # the micro batch the total is for: the plan's, or what `auto` picks
    total: int
    margin: float  # share of the usable memory left free (negative: does not fit)
    largest: int  # largest micro batch that fits with MARGIN and divides the per-rank batch (0: none)
    change: str  # the plan overrides that give this layout ("" for the plan's own)

    @property
    def fits(self) -> bool:
        return self.margin >= 0


def engine_world(plan: CPTPlan, engine: str) -> int:
    """Ranks the engine trains on: a torchrun job's WORLD_SIZE for the hf engine, else the plan's GPUs."""
    if engine == "hf" and "WORLD_SIZE" in os.environ:
        return int(os.environ["WORLD_SIZE"])
    return plan.cluster.nodes * plan.cluster.gpus_per_node


def fsdp_ranks(plan: CPTPlan, world: int) -> int:
    """Ranks one hf fsdp copy is sharded over (`sharding.fsdp_mesh`): on several nodes one node's GPUs by default
    (HSDP: each node holds a whole sharded copy), so two nodes do not halve the sharded state of one."""
    per_node = int(os.environ.get("LOCAL_WORLD_SIZE", plan.cluster.gpus_per_node))
    return parallel.shard_ranks(plan.loop, world, per_node)


def per_rank_batch(plan: CPTPlan, engine: str, world: int) -> int:
    """Samples one data-parallel rank handles per optimiser step (what a micro batch must divide)."""
    if engine == "megatron":
        from morphcpt.train.megatron.parallel import data_parallel_size

        ranks = data_parallel_size(plan)
    else:
        ranks = world
    if plan.loop.global_batch_size % ranks:
        raise ValueError(f"global batch {plan.loop.global_batch_size} does not divide over {ranks} ranks")
    return plan.loop.global_batch_size // ranks


def _row(engine: str, est: Estimate, card: Card, micro: int | str, per_rank: int, change: str) -> Row:
    largest = fitting_micro_batch(est, card.usable, per_rank, MARGIN)
    at = largest if micro == "auto" else micro
    total = est.total(max(at, 1))
    return Row(engine, est, at, total, card.margin(total), largest, change)


# --- hf engine ---------------------------------------------------------------------------------------------------

HF_LAYOUTS = [  # (sharding, activation checkpointing, offload, lora)
    ("ddp", False, False, False),
    ("ddp", True, False, False),
    ("fsdp", False, False, False),
    ("fsdp", True, False, False),
    ("fsdp", True, True, False),
    ("ddp", False, False, True),
    ("ddp", True, False, True),
]


def _hf_change(plan: CPTPlan, sharding: str, ckpt: bool, offload: bool, lora: bool) -> str:
    loop, wanted = plan.loop, []
    if sharding != loop.sharding:
        wanted.append(f"loop.sharding={sharding}")
    if ckpt != loop.activation_checkpointing:
        wanted.append(f"loop.activation_checkpointing={str(ckpt).lower()}")
    if offload != loop.cpu_offload:
        wanted.append(f"loop.cpu_offload={str(offload).lower()}")
    if lora != (plan.peft.method == "lora"):
        wanted.append("peft.method=" + ("lora" if lora else "none"))
    if sharding == "fsdp" and plan.optim.name == "adafactor":  # Adafactor runs under ddp only
        wanted.append("optim.name=adamw")
    return " ".join(wanted)


def hf_rows(plan: CPTPlan, world: int, card: Card, shape: hf.Shape | None = None) -> list[Row]:
    """The plan's own layout first, then the alternatives."""
    shape = shape or hf.model_shape(plan)
    loop = plan.loop
    own = (loop.sharding, loop.activation_checkpointing, loop.cpu_offload, plan.peft.method == "lora")
    per_rank = per_rank_batch(plan, "hf", world)
    bf16 = loop.precision != "fp32"  # 2-byte compute: bf16-mixed or fp16-mixed
    gpu = torch.device("cuda")  # the engine's choices on the card planned for
    compiled = parallel.compile_mode(loop, gpu) != "none"
    out = []
    for layout in dict.fromkeys([own, *HF_LAYOUTS]):
        sharding, ckpt, offload, lora = layout
        layout_shape = hf.with_lora(plan, shape) if lora else shape
        variant = replace(loop, sharding=sharding, activation_checkpointing=ckpt, cpu_offload=offload)
        peft = replace(plan.peft, method="lora" if lora else "none")
        if sharding == "fsdp" and variant.param_dtype == "bf16":  # ddp's (and LoRA's); fsdp chooses its own
            variant = replace(variant, param_dtype="auto")
        est = hf.estimate(
            layout_shape,
            loop.seq_length,
            fsdp_ranks(plan, world) if sharding == "fsdp" else world,
            sharding,
            ckpt,
            offload=offload,
            lora=lora,
            bf16=bf16,
            bf16_params=precision.param_dtype(variant, peft, gpu) == "bf16",
            compiled=compiled,
            chunk=loop.loss_chunk_tokens,
            scratch=not plan.model.pretrained,
            fp16=loop.precision == "fp16-mixed",
            adafactor=plan.optim.name == "adafactor" and sharding == "ddp",
        )
        out.append(_row("hf", est, card, loop.micro_batch_size, per_rank, _hf_change(plan, *layout)))
    return out


def hf_validation_bytes(plan: CPTPlan, row: Row, shape: hf.Shape) -> tuple[int, int]:
    """(validation micro batch, bytes at its peak) for the plan's layout: what stays resident (weights and
    optimiser state; gradients are freed) plus what the validation micro batch adds."""
    micro = plan.validation.micro_batch_size or row.micro_batch
    est = row.estimate
    resident = est.params + est.optimizer + est.working
    compute = 2 if plan.loop.precision != "fp32" else 4
    return micro, resident + micro * hf.validation_bytes_per_sample(shape, plan.loop.seq_length, compute)


# --- megatron engine ---------------------------------------------------------------------------------------------


def megatron_rows(plan: CPTPlan, card: Card, shape: megatron.MegatronShape | None = None) -> list[Row]:
    """The plan's layout (from Bridge's built config when the check stage passes it), then recomputation and
    tensor parallelism."""
    micro = plan.loop.micro_batch_size
    shape = shape or megatron.MegatronShape.from_plan(plan, micro_batch=1 if micro == "auto" else micro)
    per_rank = per_rank_batch(plan, "megatron", 0)
    variants = [(shape, "")]
    if shape.recompute != "full":
        full = replace(shape, recompute="full", recompute_method="uniform", recompute_num_layers=1)
        variants.append((full, "loop.activation_checkpointing=true"))
    if shape.tp == 1 and shape.heads % 2 == 0 and shape.groups % 2 == 0:
        variants.append((replace(shape, tp=2, dp=max(shape.dp // 2, 1)), "cluster.tensor_parallel=2"))
    out = []
    for variant, change in variants:
        est = megatron.estimate(variant)
        variant_per_rank = (
            plan.loop.global_batch_size // variant.dp if change.startswith("cluster.") else per_rank
        )
        out.append(_row("megatron", est, card, micro, variant_per_rank, change))
    return out


# --- what the engines and check stages call ----------------------------------------------------------------------


def rows(plan: CPTPlan, engine: str, world: int | None = None, megatron_shape=None) -> list[Row]:
    card = Card.of(plan)
    if engine == "megatron":
        return megatron_rows(plan, card, megatron_shape)
    return hf_rows(plan, world or engine_world(plan, "hf"), card)


def resolve_micro_batch(plan: CPTPlan, engine: str, world: int | None = None) -> int:
    """Replace `loop.micro_batch_size=auto` in `plan` by the largest micro batch the planner fits on the plan's
    card with its margin; returns the micro batch either way. DoesNotFit when not even one sample fits."""
    if plan.loop.micro_batch_size != "auto":
        return plan.loop.micro_batch_size
    own = rows(plan, engine, world)[0]
    if own.largest < 1:
        raise DoesNotFit(refusal(plan, engine, rows(plan, engine, world)))
    plan.loop.micro_batch_size = own.largest
    return own.largest


def refusal(plan: CPTPlan, engine: str, answers: list[Row], what: str | None = None) -> str:
    """Why the plan's layout does not fit, and the layouts (with their micro batch) that do."""
    own, card = answers[0], Card.of(plan)
    est = own.estimate
    parts = ", ".join(
        f"{name} {gib(value)}"
        for name, value in (
            ("parameters", est.params),
            ("gradients", est.grads),
            ("optimizer", est.optimizer),
            ("working", est.working),
            (f"activations x {own.micro_batch}", est.per_micro_batch(own.micro_batch)),
        )
        if value
    )
    if est.load > est.static() + est.per_micro_batch(own.micro_batch):
        parts += f"; loading the model peaks at {gib(est.load)}"
    what = what or f"loop.micro_batch_size={plan.loop.micro_batch_size}"
    lines = [
        f"{what} does not fit one {card.describe()}: the {engine} engine's layout ({est.layout}) needs "
        f"{gib(own.total)} per GPU ({parts})."
    ]
    options = []
    if 0 < own.largest < own.micro_batch:
        options.append(f"loop.micro_batch_size={own.largest} ({gib(est.total(own.largest))})")
    for row in answers[1:]:
        if row.largest >= 1:  # each alternative at the largest micro batch it fits with the margin
            options.append(
                f"{row.change} (micro batch up to {row.largest}: {gib(row.estimate.total(row.largest))})"
            )
    if options:
        lines.append("What fits: " + "; ".join(options[:4]) + ".")
    else:
        lines.append("No layout the planner knows fits this card.")
    lines.append(
        "python -m morphcpt.train.memory shows every layout; on a larger card set cluster.gpu_memory "
        "(GPU_MEMORY in .env)."
    )
    return "\n".join(lines)


def _check_bf16(plan: CPTPlan, engine: str, world: int | None) -> None:
    """bf16-mixed on a card without bf16: refused, with what fits under fp16-mixed (hf engine)."""
    try:
        precision.check_bf16(plan.loop, plan.cluster.gpu_type)
    except PlanError as refused:
        if engine != "hf":
            raise
        fp16 = copy.deepcopy(plan)
        fp16.loop.precision = "fp16-mixed"
        if fp16.loop.param_dtype == "bf16":
            fp16.loop.param_dtype = "auto"
        try:
            summary = check_fits(fp16, engine, world)
            then = f"with it this plan fits ({summary['layout']}, micro batch {summary['micro_batch']}: {summary['estimate_gib']} GiB)."
        except DoesNotFit as also:
            then = "with it: " + str(also)
        raise PlanError(f"{refused}; {then}") from None


def check_fits(plan: CPTPlan, engine: str, world: int | None = None, megatron_shape=None) -> dict:
    """The plan's layout on its card: a summary dict when it fits, DoesNotFit (with what fits) when it does not.
    hf plans also check the validation micro batch."""
    _check_bf16(plan, engine, world)
    resolve_micro_batch(plan, engine, world)
    answers = rows(plan, engine, world, megatron_shape)
    own, card = answers[0], Card.of(plan)
    if not own.fits:
        raise DoesNotFit(refusal(plan, engine, answers))
    summary = {
        "card": card.describe(),
        "layout": own.estimate.layout,
        "micro_batch": own.micro_batch,
        "estimate_gib": round(own.total / 2**30, 2),
        "usable_gib": round(card.usable / 2**30, 2),
        "margin": round(own.margin, 3),
        "largest_micro_batch": own.largest,
    }
    if engine == "hf":
        shape = hf.model_shape(plan)
        micro, peak = hf_validation_bytes(plan, own, shape)
        summary["validation"] = {"micro_batch": micro, "estimate_gib": round(peak / 2**30, 2)}
        if peak > card.usable:
            compute = 2 if plan.loop.precision != "fp32" else 4
            sample = hf.validation_bytes_per_sample(shape, plan.loop.seq_length, compute)
            room = (card.usable - (peak - micro * sample)) // sample
            raise DoesNotFit(
                f"validation.micro_batch_size={micro} does not fit one {card.describe()}: validation needs "
                f"{gib(peak)} per GPU; set validation.micro_batch_size={max(int(room), 1)} or less."
            )
    return summary


def check_device(plan: CPTPlan, device) -> None:
    """The GPU this rank runs on has at least the memory the plan planned for (cards report about 1 % less than
    their nominal size to torch: an A100-SXM4-40GB shows 39.6 GiB). DoesNotFit naming both when it has not."""
    import torch

    props = torch.cuda.get_device_properties(device)
    card = Card.of(plan)
    if props.total_memory < 0.95 * card.bytes:
        raise DoesNotFit(
            f"cluster.gpu_memory={plan.cluster.gpu_memory} but this GPU ({props.name}) has "
            f"{gib(props.total_memory)}: set cluster.gpu_memory (GPU_MEMORY in .env) to the card the job runs on"
        )


# --- the command -------------------------------------------------------------------------------------------------


def table(plan: CPTPlan, engine: str, answers: list[Row]) -> list[str]:
    micro = plan.loop.micro_batch_size
    lines = [
        f"{'layout':22} {'params':>7} {'grads':>7} {'optim':>7} {'working':>7} {'act/smp':>7} {'load':>7} "
        f"{'@mbs':>5} {'total':>7} {'free':>5} {'max mbs':>7}  change"
    ]
    for row in answers:
        est = row.estimate
        lines.append(
            f"{est.layout:22} {est.params / 2**30:7.2f} {est.grads / 2**30:7.2f} {est.optimizer / 2**30:7.2f} "
            f"{est.working / 2**30:7.2f} {(est.activations_per_sample + est.logits_per_sample) / 2**30:7.2f} "
            f"{est.load / 2**30:7.2f} "
            f"{row.micro_batch:5d} "
            f"{row.total / 2**30:7.2f} {row.margin:5.0%} {row.largest:7d}  {row.change or '(the plan)'}"
        )
    if micro == "auto":
        lines.append("(micro batch auto: each row at the largest micro batch that fits with the margin)")
    return lines


def card_notes(plan: CPTPlan) -> list[str]:
    """What the table cannot say by itself about the plan's card: an unknown card, and bf16 on one without it."""
    facts = gpu_type(plan.cluster.gpu_type)
    if facts is None:
        known = ", ".join(GPU_TYPES)
        return [
            f"# note: cluster.gpu_type={plan.cluster.gpu_type} is not a card the planner knows ({known}): memory is "
            "planned from cluster.gpu_memory alone; whether it computes in bf16 is not checked"
        ]
    if not facts.bf16 and plan.loop.precision == "bf16-mixed":
        return [
            f"# {plan.cluster.gpu_type} has no bf16: every layout below stops at start under loop.precision="
            "bf16-mixed; add loop.precision=fp16-mixed (hf engine) to plan one that runs"
        ]
    return []


def world_size(text: str) -> int:
    """`gpus=N`: ranks, a whole number >= 1, or a `PlanError` naming it."""
    if not text.strip().isdigit() or int(text) < 1:
        raise PlanError(f"gpus= must be a whole number of GPUs, 1 or more; got {text!r}")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    with reported("python -m morphcpt.train.memory"):
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    from morphcpt.plan.compose import load_plan

    args = list(sys.argv[1:] if argv is None else argv)
    legacy = {"gpu_memory=": "cluster.gpu_memory=", "gpus=": None}  # older spellings of the card and ranks
    world = None
    overrides = []
    for arg in args:
        if arg.startswith("gpus="):
            world = world_size(arg.split("=", 1)[1])
        elif arg.startswith("gpu_memory="):
            overrides.append(legacy["gpu_memory="] + arg.split("=", 1)[1])
        else:
            overrides.append(arg)
    plan = load_plan(overrides)
    card = Card.of(plan)
    notes = card_notes(plan)
    engines = (
        ["hf"]
        if plan.data.scheme == "eeve"
        else [plan.engine] + [e for e in ("hf", "megatron") if e != plan.engine]
    )
    hf_world = world or engine_world(plan, "hf")
    shape = hf.model_shape(plan)
    print(
        f"# {plan.run_name} ({plan.model.name}): {shape.params / 1e9:.3f}B parameters ({shape.layers} layers, "
        f"vocab {shape.vocab}), seq {plan.loop.seq_length}, global batch {plan.loop.global_batch_size}, "
        f"{plan.loop.precision}; one {card.describe()}; GiB per GPU, free = share of the usable memory left"
    )
    if shape.note:
        print(f"# note: {shape.note}")
    for note in notes:
        print(note)
    for engine in engines:
        if engine == "megatron":
            header = f"\n## megatron engine, {plan.cluster.nodes} node(s) x {plan.cluster.gpus_per_node} GPUs"
            try:
                mshape = megatron.MegatronShape.from_plan(
                    plan, micro_batch=1 if plan.loop.micro_batch_size == "auto" else None
                )
            # e.g. a global batch the cluster's data-parallel ranks cannot split
            except ValueError as refused:
                if plan.engine == "megatron":
                    raise PlanError(f"the megatron engine cannot lay out this plan: {refused}") from None
                print(f"{header}: not planned ({refused})")
                continue
            print(f"{header}: {mshape.describe()}")
            answers = megatron_rows(plan, card, mshape)
        else:
            shards = fsdp_ranks(plan, hf_world)
            print(
                f"\n## hf engine, {hf_world} rank(s) on {plan.cluster.nodes} node(s); fsdp: one copy sharded over "
                f"{shards} rank(s)" + (f", {hf_world // shards} copies (HSDP)" if shards < hf_world else "")
            )
            answers = hf_rows(plan, hf_world, card, shape)
            micro, peak = hf_validation_bytes(plan, answers[0], shape)
            print(f"(validation at micro batch {micro}: {gib(peak)})")
        print("\n".join(table(plan, engine, answers)))
        if notes and "no bf16" in notes[0]:
            print(
                f"the plan's layout cannot run on {plan.cluster.gpu_type}: it has no bf16 (see the note above)"
            )
        elif not answers[0].fits:
            print(
                f"the plan's layout does not fit; {answers[0].largest and 'a smaller micro batch does' or 'see the changes above'}"
            )
    if plan.data.scheme == "eeve":
        print("\n(megatron: not wired for EEVE; its stages run with the hf engine)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
