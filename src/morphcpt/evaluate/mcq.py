"""MCQ scoring by log-likelihood: the option the model finds most probable after the prompt is its answer.

Each option is scored as the continuation `" " + option` of the prompt (trailing spaces of the prompt dropped so
the separator is never doubled), as lm-evaluation-harness 0.4.x does with `target_delimiter: " "`. Items whose
options carry their own separator (`Item.delimiter == ""`: the question rows of langgame and multi-digit addition,
" make" after "... Answer:", "455" after "341+114=") are scored as the prompt followed by the option exactly as
written, as lm-eval does with `target_delimiter: ""`. Two predictions per item, each exactly lm-eval's:

* `acc`: the option with the highest summed log-probability;
* `acc_norm`: the highest summed log-probability divided by the option's length in characters — the option
  alone, not the delimiter (lm-eval's `lls / len(choice)`). It does not depend on how finely the tokenizer cuts
  the option, which matters when comparing tokenization schemes.

Beside them, two continuous scores from the same log-likelihoods, with no extra forward pass (`continuous`):
`gold_prob`, the gold option's share of a softmax over per-byte log-likelihoods, and `gold_margin`, the gold's
per-byte log-likelihood minus the best distractor's (nats per byte).

Correctness is always the predicted option's text against the item's recorded answer, never a position, so an
item that lists the right answer twice counts either copy (the lm-eval export lists every such index as gold).
Scores within `TIE_TOLERANCE` of the best count as tied (an indifferent model, duplicated options, or float noise
from batch composition); ties are broken by a pseudo-random choice seeded by the item id, so no position is
favoured and reruns agree, and tied items are flagged. lm-eval takes the first of exactly equal scores instead.

The scorer talks to a `LogLikelihoodModel`, so an oracle, a constant model and `hf.HFCausalLM` share it.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

from morphcpt.evaluate.continuous import byte_normalised, gold_margin, gold_probability
from morphcpt.evaluate.items import Item

MCQ_METRICS = ("acc", "acc_norm")
# Summed log-probabilities of one text differ in fp32 by up to ~5e-5 between batch compositions on Gemma 3 270M
# (and from lm-eval's, its softmax in float64; float64 on both sides agrees to 1e-13): scores closer than this to
# the best are one tie, not a win decided by float noise.
TIE_TOLERANCE = 1e-4


class LogLikelihoodModel(Protocol):
    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[float]:
        """Summed log-probability of each `(context, continuation)`'s continuation given its context."""
        ...


def continuation_request(item: Item, text: str, language: str = "en") -> tuple[str, str]:
    """(context, continuation) scoring `text` (an option, or a GEN item's answer) after the item's prompt."""
    context = item.prompt(language)
    if item.delimiter:  # with no delimiter, a trailing space of the prompt is part of the text
        context = context.rstrip(" \t")
    return context, item.delimiter + text


def mcq_requests(item: Item, language: str = "en") -> list[tuple[str, str]]:
    return [continuation_request(item, option, language) for option in item.options]


def choose(scores: Sequence[float], key: str) -> tuple[int, bool]:
    """(index of the best score, whether it was tied); NaN never wins, scores within `TIE_TOLERANCE` of the best
    are tied and go to a seeded random pick."""
    clean = [-math.inf if math.isnan(s) else s for s in scores]
    best = max(clean)
    winners = [i for i, s in enumerate(clean) if s == best or best - s <= TIE_TOLERANCE]
    if len(winners) == 1:
        return winners[0], False
    seed = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    return random.Random(seed).choice(winners), True


@dataclass(frozen=True)
class McqPrediction:
    id: str
    task: str
    category: str
    subcategory: str
    level: int | None
    fingerprint: str
    options: list[str]
    answer: str
    correct_index: int
    logprobs: list[float]
    pred: int
    pred_norm: int
    acc: bool
    acc_norm: bool
    tied: bool
    tied_norm: bool
    gold_prob: float | None  # per-byte softmax share of the gold option (`continuous`)
    gold_margin: float | None  # gold minus the best distractor, nats per byte

    def to_json(self) -> dict:
        return asdict(self)


def score_mcq(
    model: LogLikelihoodModel, items: Sequence[Item], *, language: str = "en"
) -> list[McqPrediction]:
    """Score every option of every item with one call to the model (which batches as it likes)."""
    requests = [request for item in items for request in mcq_requests(item, language)]
    logprobs = model.loglikelihood(requests)
    if len(logprobs) != len(requests):
        raise RuntimeError(f"model returned {len(logprobs)} scores for {len(requests)} requests")
    predictions, offset = [], 0
    for item in items:
        span = slice(offset, offset + len(item.options))
        offset += len(item.options)
        scores = [float(s) for s in logprobs[span]]
        # lm-eval's acc_norm: by the option's length as written, not the delimiter's (the loader rejects empty
        # options); an option's own leading space counts, as it does in lm-eval with target_delimiter "".
        per_char = [s / len(option) for s, option in zip(scores, item.options, strict=True)]
        pred, tied = choose(scores, item.id)
        pred_norm, tied_norm = choose(per_char, item.id)
        per_byte = byte_normalised(scores, item.options)
        predictions.append(
            McqPrediction(
                **item.identity(),
                options=list(item.options),
                correct_index=item.correct_index,
                logprobs=scores,
                pred=pred,
                pred_norm=pred_norm,
                acc=item.options[pred] == item.answer,
                acc_norm=item.options[pred_norm] == item.answer,
                tied=tied,
                tied_norm=tied_norm,
                gold_prob=gold_probability(per_byte, item.gold_indices),
                gold_margin=gold_margin(per_byte, item.gold_indices),
            )
        )
    return predictions
