"""Confidence intervals of a proportion (`morphcpt.intervals`): Wilson's over independent items and the bootstrap
over clusters of items that share their fate."""

from __future__ import annotations

import numpy as np
import pytest

from morphcpt.intervals import cluster_bootstrap, wilson


def test_wilson_matches_the_benchmark_statistics_and_refuses_an_empty_count():
    from morphcpt.analysis.stats import wilson_ci

    for right, n in ((0, 10), (7, 10), (1934, 2012)):
        assert wilson(right, n) == wilson_ci([1] * right + [0] * (n - right))
    p, low, high = wilson(0, 10)
    assert p == 0.0 and low == 0.0 and high == pytest.approx(0.27754, abs=1e-4)
    for right, n in ((0, 0), (3, 2), (-1, 4)):
        with pytest.raises(ValueError, match="proportion"):
            wilson(right, n)


def test_cluster_bootstrap_brackets_the_pooled_proportion_and_is_reproducible():
    clusters = [(3, 3)] * 30 + [(1, 3)] * 5 + [(0, 2)] * 3
    pooled = sum(r for r, _ in clusters) / sum(t for _, t in clusters)
    low, high = cluster_bootstrap(clusters, n_boot=4_000)
    assert low < pooled < high
    assert cluster_bootstrap(clusters, n_boot=4_000) == (low, high)  # seeded
    assert cluster_bootstrap([(2, 2)] * 5, n_boot=500) == (1.0, 1.0)  # nothing to vary


def test_clusters_that_share_their_fate_widen_the_interval_beyond_wilson():
    # 40 lemmas of 5 forms each, 6 lemmas wholly wrong: as wide as 40 items, not 200
    clusters = [(5, 5)] * 34 + [(0, 5)] * 6
    low, high = cluster_bootstrap(clusters, n_boot=4_000)
    _, w_low, w_high = wilson(170, 200)
    assert high - low > 1.5 * (w_high - w_low)
    rng = np.random.default_rng(3)  # and it agrees with resampling the 40 lemmas by hand
    wrong = rng.integers(0, 40, size=(4_000, 40)) >= 34
    brute = 1 - wrong.mean(axis=1)
    assert low == pytest.approx(np.quantile(brute, 0.025), abs=0.03)
    assert high == pytest.approx(np.quantile(brute, 0.975), abs=0.03)


def test_cluster_bootstrap_refuses_empty_or_impossible_clusters():
    for clusters in ([], [(1, 0)], [(3, 2)]):
        with pytest.raises(ValueError, match="cluster"):
            cluster_bootstrap(clusters)
