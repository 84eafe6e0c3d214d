"""Statistics over items and seeds: each arm is several training runs (its seeds), all scored on the same items.

    diff = difference(runs_a, runs_b, confidence=1 - 0.05 / 3)   # runs_x: (seeds, items) array of 1/0 scores
    acc = accuracy(runs_a)                                        # mean over seeds, interval with seed variance

Why not McNemar: a run's score on an item is its seed's luck as much as its arm's skill. Items are shared, so
item difficulty cancels in a difference, but two runs of the same arm disagree on many items ("churn") and may
differ as a whole (one seed's data order suited the benchmark better). A test that resamples items of one run
per arm treats that run as the arm: with a realistic seed effect its false-positive rate is 10-40 %, not 5 %
(`benchmarks/replicates.py`). Here both items and seeds are random, and the difference of the arms' mean
accuracies D = mean_s acc(A, s) - mean_s acc(B, s) is tested with a t statistic whose variance has both parts.

The variance (a linear mixed model on the 0/1 scores, moments only, no distribution assumed for the items):
score(arm a, seed s, item i) = mu_a + item_i + (arm x item)_ai + seed_as + churn_asi, so
Var(D) = tau^2 / n + h (sigma_seed^2 + sigma_churn^2 / n), with h = 1/S_A + 1/S_B and
- tau^2: variance over items of the arm-by-item effect (items where one arm is systematically better),
- sigma_seed^2: variance of a run's accuracy from its seed beyond what churn explains,
- sigma_churn^2: run-by-item residual (the same arm's seeds disagreeing on an item).
Three mean squares estimate them (balanced or not): Q_item, the variance over items of the per-item difference of
seed-averaged scores (E = tau^2 + h sigma_churn^2, n-1 df); Q_run, the variance of run accuracies within an arm,
pooled over the two arms (E = sigma_seed^2 + sigma_churn^2 / n, k = S_A + S_B - 2 df: the arms are assumed to share
one seed variance); Q_churn, the pooled run-by-item residual (E = sigma_churn^2). The estimate is
V = max(Q_item - h Q_churn, 0) / n + h Q_run: the item part (floored at 0, as tau^2 cannot be negative) plus the
whole run-to-run variance of the arm means, which carries the seed part whatever its size.

Degrees of freedom: Satterthwaite's, from the two parts (the item part with its own Satterthwaite df, the run part
with k), except that the run part enters the df formula at Q_run k / chi2_k(0.3), its 70 % upper confidence
bound: with observed-value Satterthwaite an unluckily small Q_run shrinks the variance *and* raises the df at
once, and the test rejected up to 7.8 % with 2 seeds (k = 2) in the normal model; with the bound it stays at
4.0-5.4 % over every split of the variance (k = 2, 4, 8; `DF_QUANTILE`). With many seeds the bound approaches
Q_run and the rule becomes plain Satterthwaite. The item part counts only where it exceeds one standard error of
its own estimate (`ITEM_THRESHOLD`): floored at 0 instead, its positive noise kept the variance from ever being
small and the test fell to 3.2-3.8 % with 2 seeds and 100 items. On right/wrong data simulated by a logistic model
with item, arm-by-item, seed and churn effects, the false-positive rate is 4.0-5.4 % over 54 regimes of 2-5 seeds
and 100-600 items (benchmarks/replicates.py; the table is in benchmarks/RESULTS.md).

With 2 seeds per arm the seed part has k = 2 df, so where it dominates the critical t is about 4.3, not 1.96: the
price of not knowing the seed variance. `morphcpt.analysis.power` says what more seeds buy.

Intervals and tests come from one statistic: the interval at 1 - alpha/m is D -+ t(1 - alpha/(2m), df) SE and the
p-value 2 P(T_df > |D| / SE), so an interval excludes 0 exactly when m p < alpha (Bonferroni), as in `stats`.
One run per arm has no seed variance to estimate: `stats.paired_difference` (McNemar/Tango over items) is used
instead for right/wrong scores, `item_difference` (a paired t over items) for continuous ones, and the report says
the seed variance is unknown.

Pooled over all arms: the arms share one seed variance and one churn by assumption, so `pooled_components` of every
arm's (seeds, items) table gives the run and churn mean squares with sum(S_arm - 1) degrees of freedom, and
`difference(..., pooled=...)` uses them instead of the two compared arms' own (3 seeds in each of 4 arms: 8 df
instead of 4). A pair of one run each is then testable too, when other arms have seeds.

The scores need not be right/wrong: the moments are those of any per-item score, and a continuous one (the gold
option's probability, its margin, bits per byte; `metrics`) is tested the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

DF_QUANTILE = 0.3  # the run variance enters the df formula at its (1 - DF_QUANTILE) upper confidence bound
ITEM_THRESHOLD = 1.0  # the item part counts where it exceeds this many standard errors of its own estimate
METHOD = "t over items and seeds"


@dataclass(frozen=True)
class Components:
    """Mean squares of two arms' runs on the same n items (module docstring), and what they estimate."""

    n: int
    seeds_a: int
    seeds_b: int
    item: float  # Q_item: variance over items of the per-item difference of seed-averaged scores
    run: float  # Q_run: pooled variance of run accuracies within arms (0 when no arm has two seeds)
    churn: float  # Q_churn: pooled run-by-item residual mean square
    pooled_df: int | None = None  # the run mean square's df when pooled over more arms than the two compared

    @property
    def h(self) -> float:
        return 1 / self.seeds_a + 1 / self.seeds_b

    @property
    def run_df(self) -> int:
        return self.seeds_a + self.seeds_b - 2 if self.pooled_df is None else self.pooled_df

    @property
    def churn_df(self) -> int:
        return self.run_df * (self.n - 1)

    @property
    def tau2(self) -> float:
        """Arm-by-item variance tau^2 (floored at 0)."""
        return max(self.item - self.h * self.churn, 0.0)

    @property
    def seed_var(self) -> float:
        """Seed variance of a run's accuracy beyond churn, sigma_seed^2 (floored at 0)."""
        return max(self.run - self.churn / self.n, 0.0)


def _runs(scores: np.ndarray, name: str) -> np.ndarray:
    array = np.asarray(scores, dtype=float)
    if array.ndim != 2 or array.shape[0] < 1 or array.shape[1] < 2:
        raise ValueError(
            f"{name}: expected a (seeds, items) table with at least 2 items, got shape {array.shape}"
        )
    return array


def _residual_ss(runs: np.ndarray) -> float:
    """Sum of squares of the run-by-item residual of one arm's (seeds, items) table."""
    residual = runs - runs.mean(axis=1, keepdims=True) - runs.mean(axis=0, keepdims=True) + runs.mean()
    return float(np.sum(residual**2))


def components(runs_a, runs_b) -> Components:
    """The mean squares of two arms' (seeds, items) tables; the items (columns) must be the same."""
    a, b = _runs(runs_a, "arm A"), _runs(runs_b, "arm B")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"the arms must be scored on the same items: {a.shape[1]} and {b.shape[1]} columns")
    n = a.shape[1]
    per_item = a.mean(axis=0) - b.mean(axis=0)
    run_ss = sum(float(np.sum((x.mean(axis=1) - x.mean()) ** 2)) for x in (a, b))
    run_df = a.shape[0] + b.shape[0] - 2
    churn_ss = _residual_ss(a) + _residual_ss(b)
    return Components(
        n=n,
        seeds_a=a.shape[0],
        seeds_b=b.shape[0],
        item=float(np.var(per_item, ddof=1)),
        run=run_ss / run_df if run_df else 0.0,
        churn=churn_ss / (run_df * (n - 1)) if run_df else 0.0,
    )


@dataclass(frozen=True)
class Pooled:
    """Run and churn mean squares pooled over every arm's (seeds, items) table (module docstring)."""

    run: float
    churn: float
    df: int  # sum over arms of (seeds - 1)
    arms: int


def pooled_components(tables) -> Pooled:
    run_ss = churn_ss = 0.0
    df = arms = 0
    n = None
    for table in tables:
        runs = _runs(table, "arm")
        n = runs.shape[1] if n is None else n
        if runs.shape[1] != n:
            raise ValueError("pooling needs every arm on the same items")
        run_ss += float(np.sum((runs.mean(axis=1) - runs.mean()) ** 2))
        churn_ss += _residual_ss(runs)
        df += runs.shape[0] - 1
        arms += 1
    if not df:
        return Pooled(0.0, 0.0, 0, arms)
    return Pooled(run_ss / df, churn_ss / (df * (n - 1)), df, arms)


def variance_and_df(
    item: np.ndarray | float,
    run: np.ndarray | float,
    churn: np.ndarray | float,
    *,
    n: int,
    h: float,
    run_df: int,
    item_weight: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Variance of D and its degrees of freedom from the three mean squares (module docstring); arrays work too
    (the power simulation calls this with thousands at once). `item_weight` is h for a difference of two arms and
    1/S for one arm's accuracy (where the churn in the item variance is divided by S)."""
    item, run, churn = (np.asarray(x, dtype=float) for x in (item, run, churn))
    churn_df = run_df * (n - 1)
    raw = (item - item_weight * churn) / n
    item_part = np.where(raw > ITEM_THRESHOLD * (item / n) * math.sqrt(2 / (n - 1)), raw, 0.0)
    run_part = h * run
    bound = run_part * run_df / scipy_stats.chi2.ppf(DF_QUANTILE, run_df)
    with np.errstate(divide="ignore", invalid="ignore"):
        item_terms = (item / n) ** 2 / (n - 1) + (item_weight * churn / n) ** 2 / churn_df
        denominator = np.where(item_part > 0, item_terms, 0.0) + bound**2 / run_df
        df = np.where(denominator > 0, (item_part + bound) ** 2 / denominator, np.inf)
    return item_part + run_part, df


@dataclass(frozen=True)
class SeedDifference:
    """Mean accuracy of arm A minus arm B over their seeds, on the same n items, at `confidence`."""

    n: int
    seeds_a: int
    seeds_b: int
    diff: float
    se: float
    df: float
    low: float
    high: float
    p_value: float
    confidence: float
    parts: Components | None
    method: str = METHOD

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


def difference(runs_a, runs_b, *, confidence: float = 0.95, pooled: Pooled | None = None) -> SeedDifference:
    """The t test over items and seeds of mean(A) - mean(B), and the interval that inverts it (module docstring).
    Needs a seed variance: an arm with two seeds, or `pooled` over arms with some; with one run per arm and
    nothing to pool use `stats.paired_difference` or `item_difference`."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    a, b = _runs(runs_a, "arm A"), _runs(runs_b, "arm B")
    parts = components(a, b)
    if pooled is not None and pooled.df >= 1:
        parts = Components(
            parts.n, parts.seeds_a, parts.seeds_b, parts.item, pooled.run, pooled.churn, pooled.df
        )
    if parts.run_df < 1:
        raise ValueError(
            "one run per arm: the seed variance cannot be estimated; compare over items "
            "(morphcpt.analysis.stats.paired_difference) and say that the seed variance is unknown"
        )
    diff = float(a.mean(axis=1).mean() - b.mean(axis=1).mean())
    return _t_result(diff, parts, confidence)


def _t_result(diff: float, parts: Components, confidence: float) -> SeedDifference:
    variance, df = variance_and_df(
        parts.item, parts.run, parts.churn, n=parts.n, h=parts.h, run_df=parts.run_df, item_weight=parts.h
    )
    se, df = math.sqrt(float(variance)), float(df)
    if se == 0:  # every run answered every item alike: nothing varies, nothing to test
        p_value, half = (1.0 if diff == 0 else 0.0), 0.0
    else:
        p_value = float(2 * scipy_stats.t.sf(abs(diff) / se, df))
        half = float(scipy_stats.t.ppf(1 - (1 - confidence) / 2, df)) * se
    return SeedDifference(
        parts.n,
        parts.seeds_a,
        parts.seeds_b,
        diff,
        se,
        df,
        diff - half,
        diff + half,
        p_value,
        confidence,
        parts,
    )


ITEM_METHOD = "paired t over items"


def item_difference(a, b, *, confidence: float = 0.95) -> SeedDifference:
    """One run per arm, continuous scores: a paired t test over items of mean(a) - mean(b) (n - 1 df) and the
    interval that inverts it. Like McNemar for right/wrong scores, it cannot see the seed variance."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or a.size < 2:
        raise ValueError("a paired t test needs the same items (two or more) for both runs")
    per_item = a - b
    diff, n = float(per_item.mean()), a.size
    se, df = float(per_item.std(ddof=1) / math.sqrt(n)), float(n - 1)
    if se == 0:
        p_value, half = (1.0 if diff == 0 else 0.0), 0.0
    else:
        p_value = float(2 * scipy_stats.t.sf(abs(diff) / se, df))
        half = float(scipy_stats.t.ppf(1 - (1 - confidence) / 2, df)) * se
    return SeedDifference(
        n, 1, 1, diff, se, df, diff - half, diff + half, p_value, confidence, None, ITEM_METHOD
    )


@dataclass(frozen=True)
class SeedAccuracy:
    """One arm's accuracy as the mean over its seeds, with an interval over items and seeds."""

    seeds: int
    n: int
    mean: float
    low: float
    high: float
    se: float
    df: float
    run_sd: float  # standard deviation of the run accuracies (the seed-to-seed spread a reader sees)


def pooled_run_variance(tables) -> tuple[float, int]:
    """(variance of run accuracies within arms, pooled over `tables`, and its df): several arms share one seed
    variance, as the difference test assumes, which gives one arm's interval more than S - 1 df."""
    ss = df = 0
    for table in tables:
        runs = _runs(table, "arm")
        ss += float(np.sum((runs.mean(axis=1) - runs.mean()) ** 2))
        df += runs.shape[0] - 1
    return (ss / df if df else 0.0), df


def accuracy(
    runs, *, confidence: float = 0.95, run_variance: tuple[float, int] | None = None, bounded: bool = True
) -> SeedAccuracy:
    """Mean accuracy over seeds with a t interval whose variance has an item part and a seed part (module
    docstring; h = 1/S). `run_variance` (from `pooled_run_variance`) replaces the arm's own run variance."""
    table = _runs(runs, "arm")
    seeds, n = table.shape
    run, run_df = run_variance if run_variance is not None else pooled_run_variance([table])
    if run_df < 1:
        raise ValueError("one run: the seed variance cannot be estimated (use a Wilson interval over items)")
    churn = _residual_ss(table) / ((seeds - 1) * (n - 1)) if seeds > 1 else 0.0
    variance, df = variance_and_df(
        np.var(table.mean(axis=0), ddof=1), run, churn, n=n, h=1 / seeds, run_df=run_df, item_weight=1 / seeds
    )
    mean, se, df = float(table.mean()), math.sqrt(float(variance)), float(df)
    half = float(scipy_stats.t.ppf(1 - (1 - confidence) / 2, df)) * se if se > 0 else 0.0
    return SeedAccuracy(
        seeds,
        n,
        mean,
        max(0.0, mean - half) if bounded else mean - half,
        min(1.0, mean + half) if bounded else mean + half,
        se,
        df,
        float(np.std(table.mean(axis=1), ddof=1)) if seeds > 1 else 0.0,
    )
