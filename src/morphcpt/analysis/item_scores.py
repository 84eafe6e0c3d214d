"""Which per-item score a comparison uses: right/wrong accuracy, or a continuous score of the gold answer.

Result files hold per item `acc` and `acc_norm` (MCQ) or `exact`, `prefix`, `contains` (GEN), 1 right / 0 wrong,
and, from the evaluation that writes them, continuous scores of the gold answer under the model:

- `gold_prob` (MCQ): the gold option's share of a softmax over the options' per-byte log-likelihoods (chance is
  1/options; higher is better);
- `gold_margin` (MCQ): the gold's per-byte log-likelihood minus the best distractor's, nats per byte (higher);
- `gold_bpb` (GEN): bits per UTF-8 byte of the gold answer (lower is better).

A continuous score moves with the model's belief where the argmax does not, so it separates arms with fewer items
and seeds (Magnusson et al. 2025, DataDecide; Heineman et al. 2025, Signal and Noise). Result files written before
these fields load as they are: `available` is then False and the report falls back to `FALLBACK` of the mode.
Comparisons are always "A minus B, higher is better": `oriented` flips a lower-is-better score.

    metric_mode("gold_prob")        # "mcq"
    value(prediction, "gold_bpb")   # None where the file predates it
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from morphcpt.evaluate import continuous
from morphcpt.evaluate.continuous import CONTINUOUS_METRICS  # the evaluation writes them; one list of names

BINARY_METRICS = {"mcq": ("acc", "acc_norm"), "gen": ("exact", "prefix", "contains")}
FALLBACK = {"mcq": "acc_norm", "gen": "exact"}  # acc_norm does not depend on how options are tokenized
UNITS = {
    "acc": "pp",
    "acc_norm": "pp",
    "exact": "pp",
    "prefix": "pp",
    "contains": "pp",
    "gold_prob": "pp",
    "gold_margin": "nats/byte",
    "gold_bpb": "bits/byte",
}
_MODE = {"gold_prob": "mcq", "gold_margin": "mcq", "gold_bpb": "gen"}


def metric_mode(metric: str) -> str:
    """The mode whose result files hold `metric`."""
    for mode, names in BINARY_METRICS.items():
        if metric in names:
            return mode
    if metric in _MODE:
        return _MODE[metric]
    known = [*BINARY_METRICS["mcq"], *BINARY_METRICS["gen"], *CONTINUOUS_METRICS]
    raise ValueError(f"unknown metric {metric!r}; one of {', '.join(known)}")


def metrics_of(mode: str) -> tuple[str, ...]:
    """Every metric of a mode, continuous ones last."""
    return (*BINARY_METRICS[mode], *(m for m in CONTINUOUS_METRICS if _MODE[m] == mode))


def is_binary(metric: str) -> bool:
    return metric not in CONTINUOUS_METRICS


def lower_is_better(metric: str) -> bool:
    return CONTINUOUS_METRICS.get(metric) == "lower"


def value(prediction: Mapping, metric: str) -> float | None:
    """The item's score on `metric`, or None where the result file predates it (or it is undefined there)."""
    found = prediction.get(metric)
    if found is None:
        return None
    found = float(found)
    return found if math.isfinite(found) else None


def oriented(scores, metric: str):
    """Scores turned so that higher is better (bits per byte negated): every difference reads A better when > 0."""
    return -scores if lower_is_better(metric) else scores


def available(predictions: Iterable[Mapping], metric: str) -> bool:
    """True when every prediction has the metric (a continuous score of a file that predates it does not)."""
    predictions = list(predictions)
    return bool(predictions) and all(value(p, metric) is not None for p in predictions)


def unit_scale(metric: str) -> float:
    """What a difference is multiplied by for printing: 100 for proportions (pp), 1 for nats or bits."""
    return 100.0 if metric in ("acc", "acc_norm", "exact", "prefix", "contains", "gold_prob") else 1.0


def fmt(metric: str, x: float, signed: bool = True, digits: int | None = None) -> str:
    """A difference or level in the metric's printed unit (pp for proportions, nats/bits per byte otherwise)."""
    if digits is None:
        digits = 1 if unit_scale(metric) == 100 else 3
    return f"{unit_scale(metric) * x:{'+' if signed else ''}.{digits}f}"


# ------------------------------------------------------- continuous scores from the log-likelihoods of old files


def from_logprobs(logprobs: Sequence[float], options: Sequence[str], answer: str) -> dict[str, float | None]:
    """gold_prob and gold_margin of one MCQ item from its options' summed log-likelihoods (a result file's
    `logprobs`), per UTF-8 byte of each option as written, as the evaluation defines them. For measuring the
    variance of these scores on result files that predate them (benchmarks/primary_power.py), not for the report,
    which uses only what the evaluation recorded."""
    per_byte = continuous.byte_normalised(logprobs, options)
    gold = [i for i, o in enumerate(options) if o == answer]
    return {
        "gold_prob": continuous.gold_probability(per_byte, gold),
        "gold_margin": continuous.gold_margin(per_byte, gold),
    }
