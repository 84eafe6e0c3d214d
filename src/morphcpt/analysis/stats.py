"""Statistics for per-item benchmark scores: confidence intervals and paired model comparisons.

Every score here is per item (1 right, 0 wrong), so a score is a proportion and its interval is Wilson's score
interval: unlike a percentile bootstrap it does not collapse to [0, 0] at 0 % or [1, 1] at 100 % (ten wrong
answers out of ten do not prove the model can never answer). Two models answered the *same* items, so comparisons are
paired: McNemar's exact test looks only at the items where the two disagree; the paired bootstrap resamples
items and reads a confidence interval for the accuracy difference and a two-sided p-value off the resampled
differences. Holm's step-down adjustment keeps a family of comparisons honest.

    mean, low, high = wilson_ci(correct)
    test = mcnemar_exact(correct_a, correct_b)            # McNemar(a_only=..., b_only=..., p_value=...)
    diff = paired_bootstrap(correct_a, correct_b)          # PairedDifference(diff, low, high, p_value)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

N_BOOT = 10_000
_CHUNK = 1_000  # replicates drawn at once: bounds memory at CHUNK x (distinct values)


def _as_array(values: Sequence[float] | np.ndarray) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size == 0:
        raise ValueError("expected a non-empty 1-D sequence of per-item scores")
    return array


def _bootstrap_means(values: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """Means of `n_boot` resamples of `values` with replacement. A resample's mean depends only on how often
    each distinct value was drawn, and those counts are multinomial: drawing them is the same bootstrap, and for
    right/wrong scores (two distinct values) it costs O(n_boot) instead of O(n_boot x n)."""
    distinct, counts = np.unique(values, return_counts=True)
    probabilities = counts / values.size
    means = np.empty(n_boot)
    for start in range(0, n_boot, _CHUNK):
        size = min(_CHUNK, n_boot - start)
        draws = rng.multinomial(values.size, probabilities, size=size)
        means[start : start + size] = draws @ distinct / values.size
    return means


def bootstrap_ci(
    values: Sequence[float] | np.ndarray, *, n_boot: int = N_BOOT, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float, float]:
    """(mean, lower, upper): percentile bootstrap interval of the mean over items."""
    array = _as_array(values)
    means = _bootstrap_means(array, n_boot, np.random.default_rng(seed))
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(array.mean()), float(low), float(high)


def wilson_ci(
    values: Sequence[float] | np.ndarray, *, confidence: float = 0.95
) -> tuple[float, float, float]:
    """(proportion, lower, upper): Wilson score interval of a proportion of right (1) and wrong (0) answers."""
    array = _as_array(values)
    if not np.all((array == 0) | (array == 1)):
        raise ValueError("a Wilson interval needs right/wrong (1/0) scores")
    n, p = array.size, float(array.mean())
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # the interval always contains p; clamping to it removes float rounding (p = 1 gave 0.9999999999999999 above
    # it, a negative error bar that matplotlib refuses)
    return p, min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half))


@dataclass(frozen=True)
class McNemar:
    n: int
    a_only: int  # items model A gets right and model B wrong
    b_only: int
    p_value: float


def mcnemar_exact(a: Sequence[bool] | np.ndarray, b: Sequence[bool] | np.ndarray) -> McNemar:
    """Exact (binomial) McNemar test on paired right/wrong outcomes; two-sided."""
    a, b = _as_array(a).astype(bool), _as_array(b).astype(bool)
    if a.shape != b.shape:
        raise ValueError("paired tests need the same items for both models")
    a_only, b_only = int(np.sum(a & ~b)), int(np.sum(~a & b))
    discordant = a_only + b_only
    # Under the null each discordant item is a fair coin; the binomial(n, 1/2) is symmetric, so the two-sided
    # p-value is twice the smaller tail. Exact integers: no underflow however many items disagree.
    tail = sum(math.comb(discordant, k) for k in range(min(a_only, b_only) + 1))
    p_value = 1.0 if discordant == 0 else min(1.0, 2 * tail / 2**discordant)
    return McNemar(n=int(a.size), a_only=a_only, b_only=b_only, p_value=p_value)


@dataclass(frozen=True)
class PairedDifference:
    diff: float  # mean(a) - mean(b)
    low: float
    high: float
    p_value: float


def paired_bootstrap(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    n_boot: int = N_BOOT,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedDifference:
    """Difference of means with a paired percentile interval; the p-value is how often a resampled difference,
    re-centred on zero (the null), is at least as far from zero as the observed one."""
    a, b = _as_array(a), _as_array(b)
    if a.shape != b.shape:
        raise ValueError("paired tests need the same items for both models")
    differences = a - b
    observed = float(differences.mean())
    means = _bootstrap_means(differences, n_boot, np.random.default_rng(seed))
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    extreme = np.sum(np.abs(means - observed) >= abs(observed) - 1e-12)
    p_value = 1.0 if observed == 0 else float((extreme + 1) / (n_boot + 1))
    return PairedDifference(diff=observed, low=float(low), high=float(high), p_value=min(1.0, p_value))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the input order."""
    order = np.argsort(p_values)
    adjusted = np.empty(len(p_values))
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, (len(p_values) - rank) * p_values[index])
        adjusted[index] = min(1.0, running)
    return adjusted.tolist()
