"""Where the numbers of the research question come from: each arm's runs (seeds), each run's last checkpoints.

    evidence = Evidence(results, last_checkpoints=3)
    diff, mean_a, mean_b = evidence.difference("patok", "baseline", "hierarchical-level2", "mcq", "en", "gold_prob")
    level = evidence.level("patok", "hierarchical-level2", "mcq", "en", "acc_norm")

A *run* is one arm's training run with one seed (`results.role_of`, the `replicate`); it may have been evaluated
at several saved checkpoints (`checkpoint_step`). Each item's score of a run is its mean over the run's last k
checkpoints (`last_checkpoints`; k = 1: the last one), which takes the checkpoint-to-checkpoint noise out before any
test (Heineman et al. 2025). Tables are taken on the items every run involved answered (same id and fingerprint)
and that have the metric (a continuous score is absent from files that predate it).

Tests, by what the runs allow (the `method` of each difference says which one was used):
- some arm has two or more seeds: the t test over items and seeds (`replicates.difference`), with the run and churn
  variances pooled over every arm of the group (they share one seed variance by assumption), so even a pair of one
  run each is tested with the seed variance the other arms show;
- one run per arm everywhere: McNemar's score test with Tango's interval (`stats.paired_difference`) on
  right/wrong scores of one checkpoint, a paired t over items (`replicates.item_difference`) otherwise. Neither can
  see the seed variance, and the report says that these *runs* differ, not the arms.
Where nothing varies at all (every run of both arms answers every item alike), the variance estimate is 0 and its
interval would be a point read as certainty: seed 0's item-level interval stands in for it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import stats as scipy_stats

from morphcpt.analysis import replicates
from morphcpt.analysis.item_scores import is_binary, oriented, unit_scale, value
from morphcpt.analysis.results import TaskResult, role_of
from morphcpt.analysis.stats import paired_difference, wilson_ci

ARMS = ("baseline", "stochastok", "patok", "eeve")


@dataclass(frozen=True)
class ArmLevel:
    """One arm's (or the base model's) mean score on a group: its run's, or the mean over its seeds."""

    mean: float
    low: float
    high: float
    n: int  # items
    seeds: int
    chance: float | None  # MCQ: expected accuracy of guessing (also gold_prob's level under indifference)
    run_sd: float | None = None  # spread of the seeds' means (None with one run)
    metric: str = "acc_norm"

    def cell(self) -> str:
        s = unit_scale(self.metric)
        digits = 1 if s == 100 else 3
        return f"{s * self.mean:.{digits}f} [{s * self.low:.{digits}f}, {s * self.high:.{digits}f}]"


@dataclass(frozen=True)
class Run:
    role: str
    replicate: int
    checkpoints: tuple[tuple[float, tuple[TaskResult, ...]], ...]  # (step, results), oldest first


def _step(result: TaskResult) -> float:
    if result.checkpoint_step is not None:
        return float(result.checkpoint_step)
    return math.inf  # the final export


def collect_runs(results: Sequence[TaskResult]) -> dict[str, list[Run]]:
    """Role -> its runs in seed order, each with its evaluated checkpoints in step order. Models of one run
    exported at several steps under several names count as checkpoints of that run (their `step`)."""
    found: dict[tuple[str, int], dict[float, list[TaskResult]]] = {}
    for result in results:
        role = role_of(result.model)
        if role is None:
            continue
        step = _step(result)
        if step == math.inf and result.model.step is not None:
            step = float(result.model.step)
        found.setdefault((role, result.model.replicate), {}).setdefault(step, []).append(result)
    runs: dict[str, list[Run]] = {}
    for (role, replicate), steps in sorted(found.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        ordered = tuple((step, tuple(steps[step])) for step in sorted(steps))
        runs.setdefault(role, []).append(Run(role, replicate, ordered))
    return runs


def _group_predictions(
    results: Sequence[TaskResult], group: str, mode: str, language: str
) -> dict[str, dict]:
    found: dict[str, dict] = {}
    for r in results:
        if r.mode == mode and r.language == language and group in (r.benchmark, r.task):
            for p in r.predictions:
                found[p["id"]] = p
    return found


class Evidence:
    """Every arm's runs on every group, metric and checkpoint window (module docstring)."""

    def __init__(self, results: Sequence[TaskResult], last_checkpoints: int = 1):
        if last_checkpoints < 1:
            raise ValueError(f"last_checkpoints must be 1 or more, got {last_checkpoints}")
        self.last_checkpoints = last_checkpoints
        self.runs = collect_runs(results)
        self.sets = {role: runs for role, runs in self.runs.items() if role in ARMS}
        self.seeds = {role: len(self.sets[role]) for role in ARMS if role in self.sets}
        self._tables: dict[tuple, object] = {}

    @property
    def seeded(self) -> bool:
        return any(k > 1 for k in self.seeds.values())

    @cached_property
    def checkpoints_used(self) -> int:
        """The most checkpoints any run had to average (at most `last_checkpoints`)."""
        return max(
            (min(len(run.checkpoints), self.last_checkpoints) for runs in self.runs.values() for run in runs),
            default=1,
        )

    def _run_items(self, run: Run, group: str, mode: str, language: str, window: int | None = None):
        checkpoints = run.checkpoints[-(window or self.last_checkpoints) :]
        return [(step, _group_predictions(res, group, mode, language)) for step, res in checkpoints]

    def table(self, roles: Sequence[str], group: str, mode: str, language: str, metric: str):
        """({role: (runs, items) scores averaged over each run's last checkpoints, oriented higher-better}, item
        ids, chance) on the items every checkpoint of every run of `roles` answered with the metric; None when
        some run lacks the group or fewer than two items are shared."""
        key = (tuple(roles), group, mode, language, metric)
        if key in self._tables:
            return self._tables[key]
        per_run = []
        if any(role not in self.runs for role in roles):
            self._tables[key] = None
            return None
        for role in roles:
            for run in self.runs[role]:
                checkpoints = [c for _, c in self._run_items(run, group, mode, language) if c]
                if not checkpoints:
                    self._tables[key] = None
                    return None
                per_run.append((role, checkpoints))
        if not per_run:
            self._tables[key] = None
            return None
        every = [c for _, checkpoints in per_run for c in checkpoints]
        shared = sorted(set.intersection(*(set(c) for c in every)))
        shared = [
            i
            for i in shared
            if len({c[i]["fingerprint"] for c in every}) == 1
            and all(value(c[i], metric) is not None for c in every)
        ]
        if len(shared) < 2:
            self._tables[key] = None
            return None
        tables: dict[str, list] = {}
        for role, checkpoints in per_run:
            scores = np.mean([[value(c[i], metric) for i in shared] for c in checkpoints], axis=0)
            tables.setdefault(role, []).append(oriented(scores, metric))
        first = every[0]
        chance = (
            float(
                np.mean(
                    [first[i]["options"].count(first[i]["answer"]) / len(first[i]["options"]) for i in shared]
                )
            )
            if "options" in first[shared[0]]
            else None
        )
        found = ({role: np.array(rows) for role, rows in tables.items()}, shared, chance)
        self._tables[key] = found
        return found

    def arms_on(self, group: str, mode: str, language: str, metric: str) -> list[str]:
        return [
            r for r in ARMS if r in self.sets and self.table([r], group, mode, language, metric) is not None
        ]

    def pooled(self, group: str, mode: str, language: str, metric: str) -> replicates.Pooled:
        """Run and churn variances pooled over every arm evaluated on the group (on the items they share)."""
        arms = self.arms_on(group, mode, language, metric)
        found = self.table(arms, group, mode, language, metric) if arms else None
        if found is None:
            return replicates.Pooled(0.0, 0.0, 0, 0)
        return replicates.pooled_components(found[0][r] for r in arms)

    def single_checkpoint_binary(self, metric: str) -> bool:
        return is_binary(metric) and self.checkpoints_used == 1

    def difference(self, role_a, role_b, group, mode, language, metric, confidence=0.95):
        """(difference, mean A, mean B) or None when the two share no items on the group (module docstring)."""
        if role_a not in self.runs or role_b not in self.runs:
            return None
        found = self.table([role_a, role_b], group, mode, language, metric)
        if found is None:
            return None
        a, b = found[0][role_a], found[0][role_b]
        means = float(a.mean(axis=1).mean()), float(b.mean(axis=1).mean())
        pooled = self.pooled(group, mode, language, metric)
        if a.shape[0] + b.shape[0] >= 3 or pooled.df >= 1:
            diff = replicates.difference(a, b, confidence=confidence, pooled=pooled if pooled.df else None)
            if diff.se > 0 or not self.single_checkpoint_binary(metric):
                return diff, *means
        if self.single_checkpoint_binary(metric):
            a_only, b_only = int(np.sum((a[0] == 1) & (b[0] == 0))), int(np.sum((a[0] == 0) & (b[0] == 1)))
            return paired_difference(a_only, b_only, a.shape[1], confidence=confidence), *means
        return replicates.item_difference(a[0], b[0], confidence=confidence), *means

    def level(self, role, group, mode, language, metric, confidence=0.95) -> ArmLevel | None:
        """An arm's mean over its seeds with an interval over items and seeds (seed variance pooled over the
        arms); one run with no seeds anywhere, or the base model: an interval over items."""
        found = self.table([role], group, mode, language, metric)
        if found is None:
            return None
        runs, chance = found[0][role], found[2]
        sign = -1.0 if oriented(1.0, metric) < 0 else 1.0
        pooled = self.pooled(group, mode, language, metric)
        bounded = unit_scale(metric) == 100
        if role in ARMS and pooled.df >= 1:
            acc = replicates.accuracy(runs, run_variance=(pooled.run, pooled.df), bounded=bounded)
            if acc.se > 0:
                low, high = sorted((sign * acc.low, sign * acc.high))
                return ArmLevel(sign * acc.mean, low, high, acc.n, acc.seeds, chance, acc.run_sd, metric)
        scores = sign * runs[0]
        if self.single_checkpoint_binary(metric):
            mean, low, high = wilson_ci(scores)
        else:
            mean = float(scores.mean())
            half = float(scipy_stats.t.ppf(1 - (1 - confidence) / 2, scores.size - 1) * scores.std(ddof=1))
            half /= math.sqrt(scores.size)
            low, high = mean - half, mean + half
        spread = float(np.std(runs.mean(axis=1), ddof=1)) if runs.shape[0] > 1 else None
        return ArmLevel(
            float(sign * runs.mean()), low, high, runs.shape[1], runs.shape[0], chance, spread, metric
        )

    def curve(self, role, group, mode, language, metric) -> list[tuple[float, float]]:
        """(step, mean over the run's items and the arm's seeds) at every evaluated checkpoint (no averaging)."""
        by_step: dict[float, list[float]] = {}
        for run in self.runs.get(role, []):
            for step, results in run.checkpoints:
                items = _group_predictions(results, group, mode, language)
                scores = [v for p in items.values() if (v := value(p, metric)) is not None]
                if scores:
                    by_step.setdefault(step, []).append(float(np.mean(scores)))
        return [(step, float(np.mean(v))) for step, v in sorted(by_step.items())]

    def signal_and_noise(self, group, mode, language, metric) -> dict | None:
        """Signal: the spread (sd) of the arms' means; noise: the sd of a run's mean over its last checkpoints
        and over seeds (pooled over the arms); their ratio (Heineman et al. 2025). None with fewer than two arms."""
        arms = self.arms_on(group, mode, language, metric)
        if len(arms) < 2:
            return None
        means = [self.table([r], group, mode, language, metric)[0][r].mean() for r in arms]
        signal = float(np.std(means, ddof=1))
        seed = self.pooled(group, mode, language, metric)
        seed_sd = math.sqrt(seed.run) if seed.df else None
        ss, df = 0.0, 0
        for role in arms:
            for run in self.runs[role]:
                window = [c for _, c in self._run_items(run, group, mode, language) if c]
                per_checkpoint = [
                    np.mean([v for p in c.values() if (v := value(p, metric)) is not None] or [np.nan])
                    for c in window
                ]
                per_checkpoint = [x for x in per_checkpoint if np.isfinite(x)]
                if len(per_checkpoint) > 1:
                    ss += float(np.sum((np.array(per_checkpoint) - np.mean(per_checkpoint)) ** 2))
                    df += len(per_checkpoint) - 1
        checkpoint_sd = math.sqrt(ss / df) if df else None
        parts = [x for x in (seed_sd, checkpoint_sd) if x is not None]
        noise = math.sqrt(sum(x * x for x in parts)) if parts else None
        return {
            "metric": metric,
            "arms": len(arms),
            "signal": signal,
            "seed_sd": seed_sd,
            "checkpoint_sd": checkpoint_sd,
            "noise": noise,
            "snr": signal / noise if noise else None,
        }
