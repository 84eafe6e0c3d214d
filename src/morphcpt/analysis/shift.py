"""What one uniform improvement of the gold answer does to every MCQ metric: the bridge from a continuous score's
unit to percentage points of accuracy.

An arm that is better at a task raises the gold option's log-likelihood against the distractors. Model it as
a shift s added to every item's gold per-byte log-likelihood (the summed log-likelihood of a gold option of b bytes
rises by s b): gold_margin rises by s exactly, gold_prob by an amount that depends on each item's options, and
acc_norm by the share of items whose argmax flips. Applied to a real model's per-item log-likelihoods (a result
file's `logprobs`), it converts a difference in gold_prob or gold_margin into the accuracy difference the same
improvement makes (`accuracy_equivalent`), and plants true differences in simulations
(`benchmarks/primary_power.py`).

    means = shifted_means(predictions, 0.1)          # {"acc_norm": ..., "gold_prob": ..., "gold_margin": ...}
    accuracy_equivalent(predictions, "gold_prob", 0.02)   # acc_norm gain of the shift that adds 2 pp of gold_prob
"""

from __future__ import annotations

import numpy as np

MCQ_SHIFTABLE = ("acc_norm", "gold_prob", "gold_margin")


def option_arrays(predictions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(summed log-likelihoods, byte lengths, character lengths, gold mask), each (items, options), from MCQ
    predictions with `logprobs`; items with another number of options than the first are left out."""
    width = len(predictions[0]["options"])
    rows = [p for p in predictions if len(p["options"]) == width and p.get("logprobs") is not None]
    if not rows:
        raise ValueError("no MCQ predictions with logprobs")
    logprobs = np.array([p["logprobs"] for p in rows], dtype=float)
    chars = np.array([[max(1, len(o)) for o in p["options"]] for p in rows], dtype=float)
    size = np.array([[max(1, len(o.encode("utf-8"))) for o in p["options"]] for p in rows], dtype=float)
    gold = np.array([[o == p["answer"] for o in p["options"]] for p in rows])
    return np.nan_to_num(logprobs, nan=-np.inf), size, chars, gold


def metrics_from_arrays(logprobs, size, chars, gold) -> dict[str, np.ndarray]:
    """Per-item acc_norm, gold_prob and gold_margin (any leading batch axes) from option arrays. acc_norm takes the
    highest log-likelihood per character (ties count as wrong here: a simulation's scores do not tie)."""
    per_byte = logprobs / size
    per_char = logprobs / chars
    best = per_char.max(axis=-1, keepdims=True)
    acc_norm = np.any(gold & (per_char == best), axis=-1).astype(float)
    top = per_byte.max(axis=-1, keepdims=True)
    weights = np.exp(per_byte - top)
    gold_prob = (weights * gold).sum(axis=-1) / weights.sum(axis=-1)
    gold_best = np.where(gold, per_byte, -np.inf).max(axis=-1)
    distractor_best = np.where(gold, -np.inf, per_byte).max(axis=-1)
    return {"acc_norm": acc_norm, "gold_prob": gold_prob, "gold_margin": gold_best - distractor_best}


def shifted_means(predictions, shift: float) -> dict[str, float]:
    logprobs, size, chars, gold = option_arrays(predictions)
    scores = metrics_from_arrays(logprobs + shift * size * gold, size, chars, gold)
    return {name: float(np.mean(v)) for name, v in scores.items()}


def accuracy_equivalent(predictions, metric: str, delta: float) -> float:
    """The acc_norm gain (a proportion) of the uniform shift that raises the mean of `metric` by `delta`."""
    if metric == "acc_norm":
        return delta
    if metric not in MCQ_SHIFTABLE:
        raise ValueError(f"{metric}: no accuracy equivalent (only {', '.join(MCQ_SHIFTABLE)})")
    start = shifted_means(predictions, 0.0)
    low, high = 0.0, 1.0
    while shifted_means(predictions, high)[metric] - start[metric] < delta:
        high *= 2
        if high > 1e3:
            return float("inf")
    for _ in range(40):
        middle = (low + high) / 2
        if shifted_means(predictions, middle)[metric] - start[metric] < delta:
            low = middle
        else:
            high = middle
    return shifted_means(predictions, high)["acc_norm"] - start["acc_norm"]
