"""GEN scoring: greedy decoding with a stop rule, then exact / prefix / contains match after normalisation.

Stop rule: the answer is the first line of the continuation once leading whitespace is dropped (a model that
opens with a newline is not cut off before it says anything); decoding stops there, at `<eos>`, or after
`max_new_tokens` (~50). Normalisation keeps what the tasks test — case (uppercase tasks), diacritics, hyphens and
inner spacing ("s i l a") — and drops what they do not: Unicode composition form, runs of whitespace, and
quotes or sentence punctuation around the answer.

    predictions = score_gen(model, items, language="en", max_new_tokens=50)
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

from morphcpt.evaluate.items import Item

EDGE_CHARACTERS = " \t\"'“”‘’«».,;:!?"
GEN_METRICS = ("exact", "prefix", "contains")


class GenerativeModel(Protocol):
    def generate(self, prompts: Sequence[str], max_new_tokens: int = 50) -> list[str]:
        """Greedy continuation of each prompt (raw text; the scorer applies the stop rule)."""
        ...


def first_line(text: str) -> tuple[str, bool]:
    """(first line after leading whitespace, whether that line is finished by a newline)."""
    body = text.lstrip()
    line, newline, _ = body.partition("\n")
    return line.rstrip("\r"), bool(newline)


def _collapse(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", text)).strip()


def normalise(text: str) -> str:
    return _collapse(text).strip(EDGE_CHARACTERS)


@dataclass(frozen=True)
class GenPrediction:
    id: str
    task: str
    category: str
    subcategory: str
    level: int | None
    fingerprint: str
    answer: str
    output: str  # raw continuation
    prediction: str  # first line, as scored
    exact: bool
    prefix: bool
    contains: bool

    def to_json(self) -> dict:
        return asdict(self)


def match(prediction: str, answer: str) -> dict[str, bool]:
    got, want = normalise(prediction), normalise(answer)
    if not want:  # the answer is itself punctuation (e.g. an apostrophe): compare it as written
        got, want = _collapse(prediction), _collapse(answer)
    return {"exact": got == want, "prefix": got.startswith(want), "contains": want in got}


def score_gen(
    model: GenerativeModel, items: Sequence[Item], *, language: str = "en", max_new_tokens: int = 50
) -> list[GenPrediction]:
    outputs = model.generate([item.prompt(language) for item in items], max_new_tokens=max_new_tokens)
    predictions = []
    for item, output in zip(items, outputs, strict=True):
        line, _ = first_line(output)
        predictions.append(
            GenPrediction(
                **item.identity(),
                output=output,
                prediction=line,
                **match(line, item.answer),
            )
        )
    return predictions
