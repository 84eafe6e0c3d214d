"""The shipped recipes on the cards their documents name: what the memory planner says of each, before anything is
submitted or allocated (docs/eeve-and-sibling-uses.md shows the table; benchmarks/RESULTS.md records it).

    python -m morphcpt.train.memory.recipe_table                  # every recipe x card pair below
    python -m morphcpt.train.memory.recipe_table --all-cards      # every recipe on every card

A card profile is the pair of settings every plan takes, `cluster.gpu_type` and `cluster.gpu_memory`, with the
GPUs a typical machine has; `loop.micro_batch_size=auto` and the check stage's refusal follow from them. Each row
is the plan's own layout on that card: it fits (layout, micro batch, GiB), or the engine would refuse it before
allocating, naming the changes that fit (the planner's `refusal`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from morphcpt import paths


@dataclass(frozen=True)
class Profile:
    gpu_type: str
    gpu_memory: str
    gpus: int
    note: str

    def overrides(self) -> list[str]:
        return [
            f"cluster.gpu_type={self.gpu_type}",
            f"cluster.gpu_memory={self.gpu_memory}",
            "cluster.nodes=1",
            f"cluster.gpus_per_node={self.gpus}",
        ]


PROFILES = {
    "a100-40gb": Profile("A100", "40GB", 8, "the main experiment's node: 8x A100-SXM4-40GB"),
    "a10g-24gb": Profile("A10G", "24GB", 4, "AWS g5.12xlarge: 4x A10G 24 GB"),
    "rtx4090-24gb": Profile("RTX 4090", "24GB", 1, "one GeForce RTX 4090 24 GB"),
    "t4-16gb": Profile("T4", "16GB", 2, "Kaggle's 2x T4 16 GB (no bf16)"),
}

# A Llama-3.1-8B-shaped model (its published config), for the 8B-with-LoRA use; only its shape is read.
LLAMA3_8B = {
    "model_type": "llama",
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "rope_theta": 500000.0,
    "tie_word_embeddings": False,
}

GEMMA_VOCAB = 262144
SCRATCH = [f"model.tokenizer={paths.SAMPLE_TOKENIZER_DIR}", f"model.vocab_size={GEMMA_VOCAB}"]

# (use, plan overrides, the card profile its document names). `{llama8b}` is a folder with LLAMA3_8B's config.
USES = [
    ("CPT, vanilla/stochastok/patok (megatron)", ["recipe=cpt_baseline"], "a100-40gb"),
    ("CPT on the hf engine", ["recipe=cpt_baseline", "engine=hf"], "a100-40gb"),
    ("EEVE, 7 stages (hf)", ["recipe=eeve"], "a100-40gb"),
    ("from scratch 1B, Gemma vocab", ["recipe=pretrain_scratch", "model=scratch_1b", *SCRATCH], "a10g-24gb"),
    ("from scratch 1B, Gemma vocab", ["recipe=pretrain_scratch", "model=scratch_1b", *SCRATCH], "t4-16gb"),
    (
        "from scratch 1B on T4, fp16 + fsdp",
        [
            "recipe=pretrain_scratch",
            "model=scratch_1b",
            *SCRATCH,
            "loop.precision=fp16-mixed",
            "loop.sharding=fsdp",
            "loop.activation_checkpointing=true",
        ],
        "t4-16gb",
    ),
    ("from scratch 100M (the recipe's default)", ["recipe=pretrain_scratch", *SCRATCH], "t4-16gb"),
    (
        "8B LoRA (Llama-3.1-8B shape)",
        [
            "recipe=cpt_baseline",
            "engine=hf",
            "model.pretrained={llama8b}",
            "model.name=llama3-8b",
            "peft.method=lora",
        ],
        "rtx4090-24gb",
    ),
    (
        "8B LoRA + activation checkpointing",
        [
            "recipe=cpt_baseline",
            "engine=hf",
            "model.pretrained={llama8b}",
            "model.name=llama3-8b",
            "peft.method=lora",
            "loop.activation_checkpointing=true",
            "loop.micro_batch_size=auto",
        ],
        "rtx4090-24gb",
    ),
]


@dataclass
class Verdict:
    use: str
    card: str
    fits: bool
    layout: str
    micro_batch: int | str
    total_gib: float
    load_gib: float
    usable_gib: float
    said: str  # the refusal the engine gives, or "" when it fits


def verdict(use: str, overrides: list[str], card: str, model_dir: Path) -> Verdict:
    """The planner's answer for one use on one card profile (the engine's own check, nothing allocated)."""
    from morphcpt.plan.card import Card
    from morphcpt.plan.compose import load_plan
    from morphcpt.plan.schema import PlanError
    from morphcpt.train.memory import planner

    profile = PROFILES[card]
    plan = load_plan([o.replace("{llama8b}", str(model_dir)) for o in overrides] + profile.overrides())
    engine = "hf" if plan.data.scheme == "eeve" else plan.engine
    world = profile.gpus
    usable = Card.of(plan).usable / 2**30
    try:
        summary = planner.check_fits(plan, engine, world)
    except (planner.DoesNotFit, PlanError) as refused:
        own = None
        with contextlib.suppress(planner.DoesNotFit, PlanError):
            own = planner.rows(plan, engine, world)[0]
        return Verdict(
            use,
            card,
            False,
            own.estimate.layout if own else "-",
            plan.loop.micro_batch_size,
            round(own.total / 2**30, 1) if own else float("nan"),
            round(own.estimate.load / 2**30, 1) if own else float("nan"),
            round(usable, 1),
            str(refused),
        )
    own = planner.rows(plan, engine, world)[0]
    return Verdict(
        use,
        card,
        True,
        summary["layout"],
        summary["micro_batch"],
        summary["estimate_gib"],
        round(own.estimate.load / 2**30, 1),
        round(usable, 1),
        "",
    )


def verdicts(all_cards: bool = False) -> list[Verdict]:
    with tempfile.TemporaryDirectory() as folder:
        model_dir = Path(folder)
        (model_dir / "config.json").write_text(json.dumps(LLAMA3_8B))
        pairs = (
            [
                (use, o, card)
                for use, o, _ in dict.fromkeys((u, tuple(o), c) for u, o, c in USES)
                for card in PROFILES
            ]
            if all_cards
            else USES
        )
        return [verdict(use, list(o), card, model_dir) for use, o, card in pairs]


def table(rows: list[Verdict]) -> list[str]:
    lines = [
        "| use | card | verdict | layout | micro batch | GiB per GPU (load) | usable |",
        "|---|---|---|---|---|---|---|",
    ]
    for v in rows:
        kept = [
            line for line in v.said.splitlines() if not line.startswith("python -m morphcpt.train.memory")
        ]
        said = "fits" if v.fits else "refused: " + " ".join(kept)
        lines.append(
            f"| {v.use} | {v.card} | {said} | {v.layout} | {v.micro_batch} | {v.total_gib} ({v.load_gib}) | "
            f"{v.usable_gib} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m morphcpt.train.memory.recipe_table", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--all-cards", action="store_true", help="every use on every card profile")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    for name, profile in PROFILES.items():
        print(f"# {name}: {' '.join(profile.overrides())} ({profile.note})")
    print("\n".join(table(verdicts(args.all_cards))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
