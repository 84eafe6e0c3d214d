"""A synthetic results folder for the analysis tests, written by the real evaluation runner: benchmarks in our
layout (`write_benchmarks`), fake models of known accuracy (`SkilledModel`, `IndifferentModel`) scored on them
(`evaluate`), and the items they hold (`all_items`)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from morphcpt.evaluate.items import load_benchmark
from morphcpt.evaluate.runner import EvalConfig, run_evaluation


def write_benchmarks(root: Path, scale: float = 1.0) -> None:
    """Hierarchical levels 0 and 2 (MCQ and GEN) and PACUTE affixation (MCQ and GEN), in our layout."""
    rng = random.Random(0)
    (root / "hierarchical").mkdir(parents=True)
    (root / "pacute").mkdir()
    sizes = {("level0", "mcq"): 200, ("level2", "mcq"): 400, ("level2", "gen"): 200}
    for (level, mode), size in sizes.items():
        size = int(size * scale)
        with (root / "hierarchical" / f"{level}_{mode}.jsonl").open("w") as handle:
            for i in range(size):
                options = [f"{level}{mode}{i}opt{j}" for j in range(4)]
                answer = options[rng.randrange(4)]
                row = {
                    "id": f"{level}-{mode}-{i}",
                    "level": int(level[-1]),
                    "category": "decomposition",
                    "subcategory": "root_extraction" if i % 2 else "prefix_identification",
                    "prompt_en": f"Q {level} {mode} {i}?",
                    "prompt_tl": f"T {level} {i}?",
                    "answer": answer,
                }
                if mode == "mcq":
                    row["options"] = options
                handle.write(json.dumps(row) + "\n")
    with (root / "pacute" / "affixation_mcq.jsonl").open("w") as handle:
        for i in range(int(200 * scale)):
            options = [f"aff{i}x{j}" for j in range(4)]
            label = rng.randrange(4)
            prompt = {"text_en": f"Affix question {i}?", "text_tl": f"Tanong {i}?"}
            prompt.update({f"choice{j + 1}": option for j, option in enumerate(options)})
            row = {
                "category": "affixation",
                "subcategory": ["prefix", "infix"][i % 2],
                "prompts": [prompt],
                "label": "ABCD"[label],
            }
            handle.write(json.dumps(row) + "\n")
    with (root / "pacute" / "affixation_gen.jsonl").open("w") as handle:
        for i in range(50):
            prompt = {"text_en": f"Inflect {i}.", "text_tl": f"Ibanghay {i}."}
            row = {"category": "affixation", "subcategory": "infix", "prompts": [prompt], "label": f"anyo{i}"}
            handle.write(json.dumps(row) + "\n")


class SkilledModel:
    """Right on an item with probability `skill[task]`, decided per (seed, item); otherwise picks a fixed wrong
    option. Implements both scorer protocols."""

    def __init__(self, items, skill: dict[str, float], seed: int):
        self.items = {item.prompt().rstrip(): item for item in items}
        self.skill, self.seed = skill, seed

    def right(self, item) -> bool:
        return random.Random(f"{self.seed}|{item.id}").random() < self.skill.get(item.task, 0.5)

    def loglikelihood(self, requests):
        scores = []
        for context, continuation in requests:
            item = self.items[context]
            wrong = next((o for o in item.options if o != item.answer), "mali")  # a GEN item: its gold_bpb
            chosen = item.answer if self.right(item) else wrong
            scores.append(-1.0 if continuation[1:] == chosen else -9.0 - len(continuation))
        return scores

    def generate(self, prompts, max_new_tokens=50):
        return [f" {self.items[p].answer if self.right(self.items[p]) else 'mali'}" for p in prompts]


class IndifferentModel:
    def loglikelihood(self, requests):
        return [0.0] * len(requests)

    def generate(self, prompts, max_new_tokens=50):
        return ["hindi ko alam"] * len(prompts)


def evaluate(root: Path, out: Path, models: dict[str, tuple[dict, object]]) -> None:
    """Run the real runner with fake models; `models` maps a name to (export metadata, model)."""
    for name, (metadata, model) in models.items():
        folder = root / "models" / name
        folder.mkdir(parents=True)
        (folder / "morphcpt_metadata.json").write_text(json.dumps(metadata))
        (folder / "config.json").write_text("{}")  # an export folder (the fake model is never loaded from it)
        cfg = EvalConfig(
            models=[str(folder)],
            benchmarks=["pacute", "hierarchical"],
            eval_mode="both",
            benchmark_dir=root / "benchmarks",
            output_dir=out,
            batch_size=64,
        )
        run_evaluation(cfg, lambda spec, cfg, model=model: model)


def all_items(root: Path) -> list:
    return [
        item
        for name in ("pacute", "hierarchical")
        for mode in ("mcq", "gen")
        for items in load_benchmark(name, mode, root).values()
        for item in items
    ]
