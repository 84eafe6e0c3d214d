"""GEN scoring: greedy decoding with a stop rule, then exact / prefix / contains match (`answers.match`).

Stop rule: the answer is the first line of the continuation once leading whitespace is dropped (a model that
opens with a newline is not cut off before it says anything); decoding stops there, at `<eos>`, or after
`max_new_tokens` (~50). Cutting, normalisation and matching live in `answers`, which the exported lm-eval tasks
run too: exact keeps case, diacritics, hyphens, inner spacing and the answer's own punctuation; prefix and
contains only match on word boundaries.

Beside the match, `gold_bpb` (`continuous`): the gold answer's bits per UTF-8 byte, teacher-forced after the prompt
as the MCQ path scores an option (one log-likelihood request per item, all of a call's items in one batch). A
generator without `loglikelihood` (a replaying fake) gets None.

    predictions = score_gen(model, items, language="en", max_new_tokens=50)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

from morphcpt.evaluate.answers import GEN_METRICS, first_line, match
from morphcpt.evaluate.continuous import bits_per_byte
from morphcpt.evaluate.items import Item
from morphcpt.evaluate.mcq import continuation_request

__all__ = ["GEN_METRICS", "GenPrediction", "GenerativeModel", "score_gen"]


class GenerativeModel(Protocol):
    def generate(self, prompts: Sequence[str], max_new_tokens: int = 50) -> list[str]:
        """Greedy continuation of each prompt (raw text; the scorer applies the stop rule)."""
        ...


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
    gold_bpb: float | None  # bits per UTF-8 byte of the answer, teacher-forced (`continuous`)

    def to_json(self) -> dict:
        return asdict(self)


def score_gen(
    model: GenerativeModel, items: Sequence[Item], *, language: str = "en", max_new_tokens: int = 50
) -> list[GenPrediction]:
    outputs = model.generate([item.prompt(language) for item in items], max_new_tokens=max_new_tokens)
    bpb: list[float | None] = [None] * len(items)
    if hasattr(model, "loglikelihood"):
        gold = model.loglikelihood([continuation_request(item, item.answer, language) for item in items])
        if len(gold) != len(items):
            raise RuntimeError(f"model returned {len(gold)} scores for {len(items)} answers")
        bpb = [bits_per_byte(float(s), item.answer) for s, item in zip(gold, items, strict=True)]
    predictions = []
    for item, output, bits in zip(items, outputs, bpb, strict=True):
        line, _ = first_line(output)
        predictions.append(
            GenPrediction(
                **item.identity(),
                output=output,
                prediction=line,
                **match(line, item.answer),
                gold_bpb=bits,
            )
        )
    return predictions
