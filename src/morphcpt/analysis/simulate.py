"""Simulated benchmark results of two arms with several seeds each: does a test hold its level, and what power?

    python benchmarks/replicates.py [--experiments 2000]          # the tables in benchmarks/RESULTS.md
    outcome = rejection_rate(Regime(items=100, seeds=2, seed_sd=0.25), experiments=1000)

Each simulated experiment is a full design: two arms, `seeds` training runs each, every run scored right/wrong on
the same `items`. On the logit scale, for arm a, seed s and item i:

    logit P(right) = base + shift [arm A only] + item_i + armitem_ai + seed_as + churn_asi

with independent normal effects: item difficulty (sd `item_sd`, shared by both arms), an arm-by-item effect
(`arm_item_sd`: items one arm happens to suit), the seed's effect on a whole run (`seed_sd`), and run-by-item
noise (`churn_sd`: two seeds of one arm disagreeing on an item, on top of the coin flip). `shift` = 0 is the null
(no true difference); a positive shift plants one. The test is the one the report uses: `replicates.difference`
with two or more seeds, McNemar's score test (`stats.paired_difference`) on one run per arm.

Default scales: items spread over most of the accuracy range (sd 1.5 on the logit scale), base accuracy about
62 %, and, as in fine-tuning literature, a seed-to-seed spread of a run's accuracy of 0 to about 5 pp
(`seed_sd` 0, 0.1, 0.25 on the logit scale give about 0, 1.5 and 4 pp at 100 items, churn included).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from morphcpt.analysis import replicates, stats


@dataclass(frozen=True)
class Regime:
    items: int = 100
    seeds: int = 2  # per arm
    seed_sd: float = 0.0
    item_sd: float = 1.5
    arm_item_sd: float = 0.5
    churn_sd: float = 0.7
    base: float = 0.5
    shift: float = 0.0  # planted difference, added to arm A's logit

    def label(self) -> str:
        return (
            f"{self.items} items, {self.seeds} seed{'s' if self.seeds > 1 else ''}, seed sd {self.seed_sd:g}, "
            f"arm x item sd {self.arm_item_sd:g}, churn sd {self.churn_sd:g}"
        )


def simulate(regime: Regime, experiments: int, rng: np.random.Generator) -> np.ndarray:
    """Right (1) / wrong (0) scores, shape (experiments, 2 arms, seeds, items); arm 0 is A (the shifted one)."""
    shape = (experiments, 2, regime.seeds, regime.items)
    item = rng.normal(0, regime.item_sd, (experiments, 1, 1, regime.items))
    arm_item = rng.normal(0, regime.arm_item_sd, (experiments, 2, 1, regime.items))
    seed = rng.normal(0, regime.seed_sd, (experiments, 2, regime.seeds, 1))
    churn = rng.normal(0, regime.churn_sd, shape)
    shift = np.array([regime.shift, 0.0]).reshape(1, 2, 1, 1)
    logit = regime.base + shift + item + arm_item + seed + churn
    return (rng.random(shape) < 1 / (1 + np.exp(-logit))).astype(np.int8)


@dataclass(frozen=True)
class Outcome:
    regime: Regime
    experiments: int
    rejections: int
    mean_difference: float  # mean over experiments of the observed accuracy difference A - B

    @property
    def rate(self) -> float:
        return self.rejections / self.experiments

    def interval(self) -> tuple[float, float]:
        """Wilson 95 % interval of the rejection rate (the simulation's own uncertainty)."""
        _, low, high = stats.wilson_ci([1] * self.rejections + [0] * (self.experiments - self.rejections))
        return low, high


def p_value(scores: np.ndarray) -> float:
    """The report's test on one simulated experiment, (2, seeds, items): over items and seeds, or McNemar's
    score test when there is one run per arm."""
    if scores.shape[1] > 1:
        return replicates.difference(scores[0], scores[1]).p_value
    test = stats.mcnemar_score(scores[0, 0], scores[1, 0])
    return test.p_value


def rejection_rate(regime: Regime, experiments: int = 1000, seed: int = 0, alpha: float = 0.05) -> Outcome:
    """How often the test rejects at `alpha` over `experiments` simulated designs (the false-positive rate when
    regime.shift is 0, the power otherwise). Simulated in batches to bound memory."""
    rng = np.random.default_rng(seed)
    rejections, differences = 0, []
    for start in range(0, experiments, 250):
        batch = simulate(regime, min(250, experiments - start), rng)
        for scores in batch:
            rejections += p_value(scores) < alpha
        differences.append(batch[:, 0].mean(axis=(1, 2)) - batch[:, 1].mean(axis=(1, 2)))
    return Outcome(regime, experiments, int(rejections), float(np.concatenate(differences).mean()))


def null_and_planted(regime: Regime, shifts=(0.0, 0.1, 0.25, 0.5), experiments: int = 1000, seed: int = 0):
    """The false-positive rate (shift 0) and the power at each planted shift, for one regime."""
    return [
        rejection_rate(replace(regime, shift=shift), experiments, seed + k) for k, shift in enumerate(shifts)
    ]


# ------------------------------------------------------------------ option-level simulation (continuous metrics)


@dataclass(frozen=True)
class OptionRegime:
    """Runs of several arms scored on the same MCQ items, simulated on the options' per-byte log-likelihoods, so
    that acc_norm, gold_prob and gold_margin come from the same simulated runs and can be compared. Scales are
    nats per byte. For arm a, seed s, checkpoint c, item i and option o:

        ll = base_io + shift_a gold_io + armitem_aio + seed_as gold_io + churn_asio + checkpoint_asci o

    `base` is a real model's per-item per-byte log-likelihoods (benchmarks/primary_power.py) or a synthetic set;
    `seed_sd` is a run's whole-benchmark luck at the gold answer, `churn_sd` a run's own noise on each option,
    `arm_item_sd` items one arm happens to suit, `checkpoint_sd` the noise between a run's saved checkpoints."""

    seeds: int = 3
    arms: int = 4
    checkpoints: int = 1
    seed_sd: float = 0.05
    arm_item_sd: float = 0.15
    churn_sd: float = 0.3
    checkpoint_sd: float = 0.15

    def label(self) -> str:
        return (
            f"{self.arms} arms x {self.seeds} seeds, {self.checkpoints} checkpoint(s); sd (nats/byte): seed "
            f"{self.seed_sd:g}, arm x item {self.arm_item_sd:g}, churn {self.churn_sd:g}, checkpoint {self.checkpoint_sd:g}"
        )


def simulate_options(
    regime: OptionRegime,
    base: np.ndarray,
    gold: np.ndarray,
    shifts,
    experiments: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Per-byte log-likelihoods, shape (experiments, arms, seeds, checkpoints, items, options). `base` and `gold`
    are (items, options); `shifts` one planted gold shift per arm (0 everywhere: the null)."""
    e, a, s, c = experiments, regime.arms, regime.seeds, regime.checkpoints
    items, options = base.shape
    g = gold.astype(float)
    shift = np.asarray(shifts, dtype=float).reshape(1, a, 1, 1, 1, 1)
    ll = base + shift * g
    ll = ll + rng.normal(0, regime.arm_item_sd, (e, a, 1, 1, items, options))
    ll = ll + rng.normal(0, regime.seed_sd, (e, a, s, 1, 1, 1)) * g
    ll = ll + rng.normal(0, regime.churn_sd, (e, a, s, 1, items, options))
    return ll + rng.normal(0, regime.checkpoint_sd, (e, a, s, c, items, options))


def seed_t_pvalues(
    scores: np.ndarray, a: int, b: int, pool: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """(difference, p) of the report's t test over items and seeds of arm a minus arm b for every simulated
    experiment at once; `scores` (experiments, arms, seeds, items); run and churn variances pooled over the arms in
    `pool` (the report pools over every arm; `(a, b)` is the test before pooling). The same formulas as
    `replicates.difference(..., pooled=...)`, vectorised (tests/analysis/test_primary.py checks they agree)."""
    e, _, s, n = scores.shape
    run_means = scores.mean(axis=3)  # (e, arms, seeds)
    per_item = scores[:, a].mean(axis=1) - scores[:, b].mean(axis=1)  # (e, items)
    item = per_item.var(axis=1, ddof=1)
    picked = scores[:, list(pool)]
    run_ss = ((run_means[:, list(pool)] - run_means[:, list(pool)].mean(axis=2, keepdims=True)) ** 2).sum(
        axis=(1, 2)
    )
    residual = picked - picked.mean(axis=3, keepdims=True) - picked.mean(axis=2, keepdims=True)
    residual = residual + picked.mean(axis=(2, 3), keepdims=True)
    df = len(pool) * (s - 1)
    run, churn = run_ss / df, (residual**2).sum(axis=(1, 2, 3)) / (df * (n - 1))
    h = 2 / s
    variance, t_df = replicates.variance_and_df(item, run, churn, n=n, h=h, run_df=df, item_weight=h)
    diff = per_item.mean(axis=1)
    from scipy import stats as scipy_stats

    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.nan_to_num(2 * scipy_stats.t.sf(np.abs(diff) / np.sqrt(variance), t_df), nan=1.0)
    return diff, p
