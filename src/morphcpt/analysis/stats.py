"""Statistics for per-item benchmark scores: confidence intervals and paired model comparisons.

Every score here is per item (1 right, 0 wrong), so a score is a proportion and its interval is Wilson's score
interval: unlike a percentile bootstrap it does not collapse to [0, 0] at 0 % or [1, 1] at 100 % (ten wrong
answers out of ten do not prove the model can never answer).

Two models answered the *same* items, so comparisons are paired, and the test and the interval of one comparison
come from one method, so they cannot disagree: McNemar's exact test looks only at the d items where the two
disagree; A is right on b of them, and under "no difference" b ~ Binomial(d, 1/2). Its interval inverts that test:
the Clopper-Pearson interval [t_lo, t_hi] for t = P(A is the one right | they disagree) is exactly the set of t
the same two-sided exact test does not reject, and the accuracy difference is (d / n)(2t - 1). So the interval
excludes 0 (t = 1/2) exactly when p < alpha. The interval is conditional on the d disagreements observed (a
stretch of items where the models always agree gives a difference of exactly 0 there).

Several comparisons: Bonferroni. The adjusted p is min(1, m p) and the simultaneous interval is the one at
confidence 1 - alpha/m, so again the interval excludes 0 exactly when the adjusted p < alpha. Holm's step-down
rejects at least as often, but the simultaneous intervals that agree with its decisions stop at 0 for every
comparison it rejects (they say "above 0" and nothing more), so the report does not use it.

    mean, low, high = wilson_ci(correct)
    test = mcnemar_exact(correct_a, correct_b)            # McNemar(a_only=..., b_only=..., p_value=...)
    diff = paired_difference(test.a_only, test.b_only, test.n, confidence=1 - 0.05 / 3)   # 3 comparisons
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from scipy.stats import beta

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
    return McNemar(n=int(a.size), a_only=a_only, b_only=b_only, p_value=_mcnemar_p(a_only, b_only))


def _mcnemar_p(a_only: int, b_only: int) -> float:
    # Under the null each discordant item is a fair coin; the binomial(d, 1/2) is symmetric, so the two-sided
    # p-value is twice the smaller tail. Exact integers: no underflow however many items disagree.
    disagree = a_only + b_only
    if disagree == 0:
        return 1.0
    tail = sum(math.comb(disagree, k) for k in range(min(a_only, b_only) + 1))
    return min(1.0, 2 * tail / 2**disagree)


@dataclass(frozen=True)
class PairedDifference:
    """Accuracy of A minus accuracy of B on the same n items, with McNemar's exact p and the interval that
    inverts it at `confidence`."""

    n: int
    a_only: int
    b_only: int
    diff: float  # (a_only - b_only) / n = mean(a) - mean(b)
    low: float
    high: float
    p_value: float
    confidence: float

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


def paired_difference(a_only: int, b_only: int, n: int, *, confidence: float = 0.95) -> PairedDifference:
    """McNemar's exact test on the disagreements and the Clopper-Pearson interval that inverts it, mapped to the
    accuracy difference (module docstring); `confidence` 1 - alpha/m gives the Bonferroni simultaneous one."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if min(a_only, b_only) < 0 or a_only + b_only > n or n < 1:
        raise ValueError(f"impossible counts: {a_only} and {b_only} disagreements out of {n} items")
    disagree = a_only + b_only
    p_value = _mcnemar_p(a_only, b_only)
    if disagree == 0:
        return PairedDifference(n, 0, 0, 0.0, 0.0, 0.0, p_value, confidence)
    alpha = 1 - confidence
    t_low = 0.0 if a_only == 0 else float(beta.ppf(alpha / 2, a_only, b_only + 1))
    t_high = 1.0 if b_only == 0 else float(beta.ppf(1 - alpha / 2, a_only + 1, b_only))
    scale = disagree / n
    return PairedDifference(
        n,
        a_only,
        b_only,
        (a_only - b_only) / n,
        scale * (2 * t_low - 1),
        scale * (2 * t_high - 1),
        p_value,
        confidence,
    )


def bonferroni(p_value: float, family: int) -> float:
    """Bonferroni-adjusted p of one of `family` comparisons."""
    return min(1.0, p_value * family)
