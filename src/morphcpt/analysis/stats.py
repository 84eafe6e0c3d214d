"""Statistics for per-item benchmark scores: confidence intervals and paired model comparisons.

Every score here is per item (1 right, 0 wrong), so a score is a proportion and its interval is Wilson's score
interval: unlike a percentile bootstrap it does not collapse to [0, 0] at 0 % or [1, 1] at 100 % (ten wrong
answers out of ten do not prove the model can never answer).

Two models answered the *same* items, so comparisons are paired, and the test and the interval of one comparison
come from one method, so they cannot disagree. Of the n items, A alone is right on b and B alone on c. The test is
McNemar's asymptotic test without continuity correction, z = (b - c) / sqrt(b + c), which is the score test of
"no difference"; the interval is Tango's (1998) score interval for the difference of paired proportions, the set
of differences D0 that the same score test, at D0 instead of 0, does not reject. At D0 = 0 Tango's statistic is
McNemar's z, so the interval excludes 0 exactly when p < alpha. Fagerland, Lydersen & Laake (2013, BMC Med Res
Methodol 13:91; 2014, Stat Med 33:2850) recommend both for paired binomial data: the exact conditional McNemar
test is needlessly conservative, and the interval that inverts it is conditional on the disagreements observed
(it collapsed to "+0.0 [+0.0, +0.0]" when the models never disagreed). Tango's interval is unconditional: with no
disagreement on n items it is about +-z^2 / (n + z^2), not a point.

Several comparisons: Bonferroni. The adjusted p is min(1, m p) and the simultaneous interval is the one at
confidence 1 - alpha/m, so again the interval excludes 0 exactly when the adjusted p < alpha. Holm's step-down
rejects at least as often, but the simultaneous intervals that agree with its decisions stop at 0 for every
comparison it rejects (they say "above 0" and nothing more), so the report does not use it.

Runs of one arm with several seeds are compared over items and seeds together in `morphcpt.analysis.replicates`;
what is here is the item-level analysis of one run per arm.

    mean, low, high = wilson_ci(correct)
    test = mcnemar_score(correct_a, correct_b)            # McNemar(a_only=..., b_only=..., p_value=...)
    diff = paired_difference(test.a_only, test.b_only, test.n, confidence=1 - 0.05 / 3)   # 3 comparisons
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from scipy.optimize import brentq

# one resampling for every bootstrap
from morphcpt.intervals import CHUNK, N_BOOT, percentile_interval, wilson


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
    for start in range(0, n_boot, CHUNK):
        size = min(CHUNK, n_boot - start)
        draws = rng.multinomial(values.size, probabilities, size=size)
        means[start : start + size] = draws @ distinct / values.size
    return means


def bootstrap_ci(
    values: Sequence[float] | np.ndarray, *, n_boot: int = N_BOOT, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float, float]:
    """(mean, lower, upper): percentile bootstrap interval of the mean over items."""
    array = _as_array(values)
    means = _bootstrap_means(array, n_boot, np.random.default_rng(seed))
    return float(array.mean()), *percentile_interval(means, confidence)


def wilson_ci(
    values: Sequence[float] | np.ndarray, *, confidence: float = 0.95
) -> tuple[float, float, float]:
    """(proportion, lower, upper): Wilson score interval of a proportion of right (1) and wrong (0) answers
    (`intervals.wilson`)."""
    array = _as_array(values)
    if not np.all((array == 0) | (array == 1)):
        raise ValueError("a Wilson interval needs right/wrong (1/0) scores")
    return wilson(int(array.sum()), array.size, confidence=confidence)


@dataclass(frozen=True)
class McNemar:
    n: int
    a_only: int  # items model A gets right and model B wrong
    b_only: int
    p_value: float


def discordant(a: Sequence[bool] | np.ndarray, b: Sequence[bool] | np.ndarray) -> tuple[int, int, int]:
    """(n, items only A got right, items only B got right) of paired right/wrong outcomes."""
    a, b = _as_array(a).astype(bool), _as_array(b).astype(bool)
    if a.shape != b.shape:
        raise ValueError("paired tests need the same items for both models")
    return int(a.size), int(np.sum(a & ~b)), int(np.sum(~a & b))


def mcnemar_exact(a: Sequence[bool] | np.ndarray, b: Sequence[bool] | np.ndarray) -> McNemar:
    """Exact (binomial) McNemar test on paired right/wrong outcomes; two-sided."""
    n, a_only, b_only = discordant(a, b)
    return McNemar(n=n, a_only=a_only, b_only=b_only, p_value=_mcnemar_p(a_only, b_only))


def _mcnemar_p(a_only: int, b_only: int) -> float:
    # Under the null each discordant item is a fair coin; the binomial(d, 1/2) is symmetric, so the two-sided
    # p-value is twice the smaller tail. Exact integers: no underflow however many items disagree.
    disagree = a_only + b_only
    if disagree == 0:
        return 1.0
    tail = sum(math.comb(disagree, k) for k in range(min(a_only, b_only) + 1))
    return min(1.0, 2 * tail / 2**disagree)


def mcnemar_score(a: Sequence[bool] | np.ndarray, b: Sequence[bool] | np.ndarray) -> McNemar:
    """McNemar's asymptotic test without continuity correction (the score test) on paired right/wrong outcomes.
    Only the disagreements are counted: the exact binomial p (big-integer sums, 1.8 s at 10k disagreements) is
    not computed here."""
    n, a_only, b_only = discordant(a, b)
    return McNemar(n, a_only, b_only, _score_p(a_only, b_only))


def _score_p(a_only: int, b_only: int) -> float:
    disagree = a_only + b_only
    if disagree == 0:
        return 1.0
    # erfc, not 2 * NormalDist().cdf(-z): the cdf is 1 + erf(-z / sqrt 2), which rounds to 0 below about 1e-17
    return normal_two_sided(abs(a_only - b_only) / math.sqrt(disagree))


def normal_two_sided(z: float) -> float:
    """Two-sided p of a standard normal statistic, exact in the far tail (erfc underflows only near 1e-308)."""
    return math.erfc(abs(z) / math.sqrt(2))


@dataclass(frozen=True)
class PairedDifference:
    """Accuracy of A minus accuracy of B on the same n items, with McNemar's score-test p and Tango's interval,
    which inverts that test, at `confidence`."""

    n: int
    a_only: int
    b_only: int
    diff: float  # (a_only - b_only) / n = mean(a) - mean(b)
    low: float
    high: float
    p_value: float
    confidence: float
    method: str = "McNemar score test, Tango interval"

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


def _tango_statistic(delta: float, a_only: int, b_only: int, n: int) -> float:
    """Tango's score statistic for "the difference is `delta`": (b - c - n delta) over its standard error under
    that hypothesis, with P(only B right) at its maximum-likelihood value given `delta` (a quadratic's root)."""
    quad_a = 2 * n
    quad_b = -a_only - b_only + (2 * n - a_only + b_only) * delta
    quad_c = -b_only * delta * (1 - delta)
    p_b_only = (math.sqrt(max(quad_b * quad_b - 4 * quad_a * quad_c, 0.0)) - quad_b) / (2 * quad_a)
    variance = n * (2 * p_b_only + delta * (1 - delta))
    excess = a_only - b_only - n * delta
    if variance <= 0:  # no disagreement and delta 0: nothing to standardise, and nothing to reject
        return 0.0 if excess == 0 else math.copysign(math.inf, excess)
    return excess / math.sqrt(variance)


def paired_difference(a_only: int, b_only: int, n: int, *, confidence: float = 0.95) -> PairedDifference:
    """McNemar's score test on the disagreements and Tango's score interval that inverts it (module docstring);
    `confidence` 1 - alpha/m gives the Bonferroni simultaneous one."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if min(a_only, b_only) < 0 or a_only + b_only > n or n < 1:
        raise ValueError(f"impossible counts: {a_only} and {b_only} disagreements out of {n} items")
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    diff = (a_only - b_only) / n
    p_value = _score_p(a_only, b_only)
    # The statistic falls as delta rises; the interval is where it lies within +-z. The ends -1 and +1 are
    # excluded (the variance vanishes there), as in Fagerland et al.'s reference implementation.
    edge = 1 - 1e-12
    low = -1.0 if diff <= -edge else _root(lambda d: _tango_statistic(d, a_only, b_only, n) - z, -edge, diff)
    high = 1.0 if diff >= edge else _root(lambda d: _tango_statistic(d, a_only, b_only, n) + z, diff, edge)
    return PairedDifference(n, a_only, b_only, diff, low, high, p_value, confidence)


def _root(function, low: float, high: float) -> float:
    if function(low) * function(high) > 0:  # no sign change: the bound is the edge itself
        return low if abs(function(low)) < abs(function(high)) else high
    return float(brentq(function, low, high, xtol=1e-15, rtol=4 * np.finfo(float).eps))


def bonferroni(p_value: float, family: int) -> float:
    """Bonferroni-adjusted p of one of `family` comparisons."""
    return min(1.0, p_value * family)
