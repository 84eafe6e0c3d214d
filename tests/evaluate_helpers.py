"""What the evaluation tests share (tests/evaluate/): synthetic MCQ items, option shuffling, the fake models
behind the scorer protocols (an oracle, an indifferent, a position-biased and a content-only model) and the
hand-written files of the official release."""

from __future__ import annotations

import random
from pathlib import Path

from morphcpt.evaluate.items import Item, load_benchmark
from suite_paths import DATA

# One hand-written file per file of the official release (data/benchmarks/ of the earlier public pipeline), in
# the same row shapes, with our own rows (see data/NOTICE).
OFFICIAL = DATA / "official"


def synthetic_items(
    n: int, *, correct_at: int | None = None, n_options: int = 4, seed: int = 0
) -> list[Item]:
    """MCQ items with distinct options; the answer sits at `correct_at`, or anywhere when None."""
    rng = random.Random(seed)
    syllables = ["ka", "ma", "pa", "ta", "la", "ng", "si", "bu", "ha", "yo", "in", "um", "an"]
    items = []
    for i in range(n):
        options: list[str] = []
        while len(options) < n_options:
            word = "".join(rng.choice(syllables) for _ in range(rng.randint(1, 4)))
            if word not in options:
                options.append(word)
        index = rng.randrange(n_options) if correct_at is None else correct_at
        items.append(
            Item(
                id=f"syn-{seed}-{i}",
                benchmark="hierarchical",
                subset="level2",
                mode="mcq",
                category="decomposition",
                subcategory="root_extraction",
                prompt_en=f"What is the root of item {i} ({options[index]}-form)?",
                prompt_tl=f"Ano ang salitang-ugat ng aytem {i}?",
                answer=options[index],
                options=tuple(options),
                correct_index=index,
                level=2,
            )
        )
    return items


def shuffled(item: Item, rng: random.Random) -> Item:
    options = list(item.options)
    rng.shuffle(options)
    return Item(**{**item.__dict__, "options": tuple(options), "correct_index": options.index(item.answer)})


class OracleModel:
    """Prefers the recorded answer of whatever item a prompt belongs to; never ties."""

    def __init__(self, items, language: str = "en"):
        self.answers: dict[str, set[str]] = {}  # prompt -> the right continuations (delimiter + answer)
        for item in items:
            self.answers.setdefault(item.prompt(language).rstrip(), set()).add(item.delimiter + item.answer)
        self.calls = 0

    def loglikelihood(self, requests):
        self.calls += len(requests)
        return [
            -1.0 if continuation in self.answers[context.rstrip()] else -20.0 - len(continuation)
            for context, continuation in requests
        ]

    def generate(self, prompts, max_new_tokens=50):
        return [f" {sorted(self.answers[p.rstrip()])[0].strip()}\nnext line" for p in prompts]


class ConstantModel:
    """Indifferent to the options: every continuation is equally likely."""

    def loglikelihood(self, requests):
        return [0.0] * len(requests)


class FirstOptionModel:
    """Always prefers whichever option it is shown first (position A)."""

    def __init__(self, items, language: str = "en"):
        self.first = {item.prompt(language).rstrip(): item.options[0] for item in items}

    def loglikelihood(self, requests):
        return [0.0 if k[1:] == self.first[c] else -5.0 for c, k in requests]


class ContentModel:
    """Scores a continuation by its text alone (a fixed pseudo-random value), whatever its position."""

    def loglikelihood(self, requests):
        return [-random.Random(f"{c}|{k}").random() * 10 for c, k in requests]


def all_items(root: Path, name: str, mode: str) -> list[Item]:
    return [item for items in load_benchmark(name, mode, root).values() for item in items]
