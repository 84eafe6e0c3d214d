"""Confidence intervals for a proportion of right answers, shared by the analyser's gold-set scores
(`morphology.evaluate`) and the model benchmarks' statistics (`analysis.stats`).

- `wilson`: Wilson's score interval, for items drawn independently (it does not collapse to a point at 0 % or 100 %).
- `cluster_bootstrap`: a percentile bootstrap over clusters of items, for items that come in groups which share
  their fate (the forms of one verb lemma in a paradigm gold set: a root the analyser does not know fails in most
  of them, so the forms are not independent and Wilson's interval is too narrow).
- `percentile_interval`: the central share of any bootstrap's draws (this one's and `analysis.stats.bootstrap_ci`'s).

    p, low, high = wilson(1934, 2012)
    low, high = cluster_bootstrap([(right, total) for each lemma])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

N_BOOT = 10_000
# resamples drawn at once: bounds a bootstrap's memory at CHUNK x (clusters, or distinct values)
CHUNK = 1_000


def wilson(right: int, n: int, *, confidence: float = 0.95) -> tuple[float, float, float]:
    """(proportion, lower, upper): Wilson's score interval for `right` of `n` items."""
    if n <= 0 or not 0 <= right <= n:
        raise ValueError(f"a proportion needs 0 <= right <= n and n > 0, got {right} of {n}")
    p = right / n
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # the interval always contains p; clamping to it removes float rounding (p = 1 gave 0.9999999999999999 above
    # it, a negative error bar that matplotlib refuses)
    return p, min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half))


def cluster_bootstrap(
    clusters: Sequence[tuple[int, int]], *, n_boot: int = N_BOOT, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """(lower, upper): percentile bootstrap interval of the pooled proportion right/total when whole clusters, given
    as (right, total), are resampled with replacement."""
    if not clusters or any(total <= 0 or not 0 <= right <= total for right, total in clusters):
        raise ValueError(
            "a cluster bootstrap needs clusters of (right, total) with 0 <= right <= total, total > 0"
        )
    right = np.array([r for r, _ in clusters], dtype=float)
    total = np.array([t for _, t in clusters], dtype=float)
    rng = np.random.default_rng(seed)
    ratios = np.empty(n_boot)
    for start in range(0, n_boot, CHUNK):
        size = min(CHUNK, n_boot - start)
        drawn = rng.integers(0, len(clusters), size=(size, len(clusters)))
        ratios[start : start + size] = right[drawn].sum(axis=1) / total[drawn].sum(axis=1)
    return percentile_interval(ratios, confidence)


def percentile_interval(draws: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """(lower, upper): the central `confidence` share of a bootstrap's `draws`."""
    tail = (1 - confidence) / 2
    low, high = np.quantile(draws, [tail, 1 - tail])
    return float(low), float(high)
