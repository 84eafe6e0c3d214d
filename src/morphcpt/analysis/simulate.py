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
