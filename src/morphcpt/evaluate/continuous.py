"""Continuous per-item scores: how much probability the model gives the gold answer, per UTF-8 byte.

Accuracy on 4-option items near chance is a coin flip per item; these scores move with the model's belief even
when the argmax does not, so small differences between arms show with fewer items and seeds (DataDecide, Signal and
Noise). Every score is per UTF-8 byte of the text as written, so it does not depend on how a tokenizer cuts that
text and is comparable across vanilla, StochasTok, Patok and EEVE models.

* `gold_prob` (MCQ): a softmax over the options' per-byte log-likelihoods (an option's summed log-likelihood, as
  `mcq.score_mcq` already has it, divided by the option's byte length as written, the text acc_norm divides in
  characters); the gold option's share. Chance is 1/len(options) (an answer listed twice gets both copies' mass).
* `gold_margin` (MCQ): the gold's per-byte log-likelihood minus the best distractor's, in nats per byte; > 0 when
  the gold wins.
* `gold_bpb` (GEN): bits per UTF-8 byte of the gold answer, teacher-forced after the prompt as the MCQ path would
  score it (`mcq.mcq_requests`' continuation: the item's delimiter + the answer), divided by the answer's bytes as
  written (the delimiter's log-likelihood counts, its byte does not: the same convention as acc_norm).

`CONTINUOUS_METRICS` maps each score to the direction that is better. Result files written before these fields
existed load as they are: the fields are then absent (`value(prediction, name)` gives None).

    per_byte = byte_normalised(logprobs, options)
    gold_probability(per_byte, gold_indices)        # 0.25 for four tied options
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

CONTINUOUS_METRICS = {"gold_prob": "higher", "gold_margin": "higher", "gold_bpb": "lower"}
MCQ_CONTINUOUS = ("gold_prob", "gold_margin")
GEN_CONTINUOUS = ("gold_bpb",)


def utf8_bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def byte_normalised(logprobs: Sequence[float], options: Sequence[str]) -> list[float]:
    """Each option's summed log-likelihood per UTF-8 byte of the option as written; NaN counts as -inf."""
    return [
        -math.inf if math.isnan(s) else s / utf8_bytes(option)
        for s, option in zip(logprobs, options, strict=True)
    ]


def gold_probability(per_byte: Sequence[float], gold: Sequence[int]) -> float | None:
    """The gold options' share of a softmax over `per_byte`; None when no option has a finite score."""
    top = max(per_byte)
    if top == -math.inf:
        return None
    weights = [math.exp(s - top) for s in per_byte]
    return sum(weights[i] for i in gold) / sum(weights)


def gold_margin(per_byte: Sequence[float], gold: Sequence[int]) -> float | None:
    """Best gold score minus best distractor score; None when every option is the answer or a score is not finite."""
    distractors = [s for i, s in enumerate(per_byte) if i not in gold]
    if not distractors:
        return None
    margin = max(per_byte[i] for i in gold) - max(distractors)
    return margin if math.isfinite(margin) else None


def bits_per_byte(logprob: float, text: str) -> float | None:
    """-logprob / ln 2 / bytes(text); None for a NaN log-likelihood or an empty text."""
    size = utf8_bytes(text)
    if size == 0 or math.isnan(logprob):
        return None
    return -logprob / math.log(2) / size


def value(prediction: Mapping, name: str) -> float | None:
    """A continuous score of a result file's prediction, or None where the file predates it (or it is undefined)."""
    found = prediction.get(name)
    return None if found is None else float(found)
