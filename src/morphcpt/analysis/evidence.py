"""Where the numbers of the research question come from: one run per arm, or several seeds per arm.

    evidence = build_evidence(results, scores, comparisons)   # SeedEvidence when an arm has two or more seeds
    diff = evidence.difference("patok", "baseline", "hierarchical-level2", "mcq", "en", confidence=0.99)
    acc = evidence.accuracy("patok", "hierarchical-level2", "mcq", "en")

`ItemEvidence` (one run per arm) compares the arms' runs over items: McNemar's score test with Tango's interval
(`stats.paired_difference`), accuracies with Wilson intervals. It cannot see seed variance, and says so.
`SeedEvidence` (an arm with two or more seeds) compares over items and seeds together (`replicates.difference`)
on the items every run of both arms answered, and gives each arm's accuracy as the mean over its seeds with an
interval that includes the seed variance (`replicates.accuracy`, run variance pooled over the arms of a group).
Where nothing varies at all (every run of both arms answers every item alike, as tiny models near chance do), the
variance estimate is 0 and its interval would be a point read as certainty: seed 0's item-level interval (Tango's,
Wilson's) stands in for it.
Both give the primary metric of each mode (MCQ acc_norm, GEN exact).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from morphcpt.analysis import replicates
from morphcpt.analysis.results import PRIMARY_METRIC, ModelInfo, TaskResult, replicate_sets
from morphcpt.analysis.stats import PairedDifference, paired_difference, wilson_ci
from morphcpt.analysis.tables import ComparisonRow, ScoreRow, grouped_predictions

ARMS = ("baseline", "stochastok", "patok", "eeve")


@dataclass(frozen=True)
class ArmAccuracy:
    """One arm's accuracy on a group: its run's, or the mean over its seeds."""

    mean: float
    low: float
    high: float
    n: int  # items
    seeds: int
    chance: float | None  # MCQ: expected accuracy of guessing
    run_sd: float | None = None  # spread of the seeds' accuracies (None with one run)

    def cell(self) -> str:
        return f"{100 * self.mean:.1f} [{100 * self.low:.1f}, {100 * self.high:.1f}]"


class ItemEvidence:
    """One run per arm: item-level comparisons from the comparison table, Wilson accuracies from the scores."""

    seeded = False
    method = "McNemar's score test with Tango's interval, over items"

    def __init__(self, scores: Sequence[ScoreRow], comparisons: Sequence[ComparisonRow], roles):
        self.scores, self.comparisons, self.roles = scores, comparisons, roles
        self.seeds = {role: 1 for role in roles}

    def _row(self, a: str, b: str, group: str, mode: str, language: str):
        for row in self.comparisons:
            if (row.group, row.mode, row.language, row.metric) != (
                group,
                mode,
                language,
                PRIMARY_METRIC[mode],
            ):
                continue
            if (row.model_a, row.model_b) == (a, b):
                return row.a_only, row.b_only, row.n, row.mean_a, row.mean_b
            if (row.model_a, row.model_b) == (b, a):
                return row.b_only, row.a_only, row.n, row.mean_b, row.mean_a
        return None

    def difference(self, role_a, role_b, group, mode, language, confidence):
        """(difference, mean A, mean B) or None when the two arms share no items on the group."""
        if role_a not in self.roles or role_b not in self.roles:
            return None
        found = self._row(self.roles[role_a].name, self.roles[role_b].name, group, mode, language)
        if found is None:
            return None
        a_only, b_only, n, mean_a, mean_b = found
        return paired_difference(a_only, b_only, n, confidence=confidence), mean_a, mean_b

    def accuracy(self, role, group, mode, language) -> ArmAccuracy | None:
        if role not in self.roles:
            return None
        key = (self.roles[role].name, group, mode, language, PRIMARY_METRIC[mode])
        row = next((s for s in self.scores if (s.model, s.group, s.mode, s.language, s.metric) == key), None)
        return None if row is None else ArmAccuracy(row.mean, row.low, row.high, row.n, 1, row.chance)


class SeedEvidence:
    """Several seeds per arm: comparisons and accuracies over items and seeds."""

    seeded = True
    method = "a t test over items and seeds (item and seed variance), Satterthwaite degrees of freedom"

    def __init__(self, results: Sequence[TaskResult], sets: dict[str, list[ModelInfo]]):
        self.sets = {role: runs for role, runs in sets.items() if role in ARMS}
        self.roles = {role: runs[0] for role, runs in self.sets.items()}
        self.seeds = {role: len(runs) for role, runs in self.sets.items()}
        self.groups = grouped_predictions(results)

    def runs_table(self, roles: Sequence[str], group: str, mode: str, language: str):
        """{role: (seeds, items) scores} on the items every run of `roles` answered (same id and fingerprint),
        and the chance level of those items; None when some run has no results on the group."""
        metric = PRIMARY_METRIC[mode]
        per_run: dict[str, list[dict]] = {}
        for role in roles:
            for model in self.sets[role]:
                found = next(
                    (
                        predictions
                        for (m, lang, _, g, kind), predictions in self.groups[model.name].items()
                        if (m, lang, g) == (mode, language, group) and kind in ("benchmark", "task")
                    ),
                    None,
                )
                if found is None:
                    return None
                per_run[model.name] = {p["id"]: p for p in found}
        runs = list(per_run.values())
        shared = sorted(set.intersection(*(set(run) for run in runs)))
        shared = [i for i in shared if len({run[i]["fingerprint"] for run in runs}) == 1]
        if len(shared) < 2:
            return None
        table = {
            role: np.array([[float(per_run[m.name][i][metric]) for i in shared] for m in self.sets[role]])
            for role in roles
        }
        first = runs[0]
        chance = (
            float(
                np.mean(
                    [first[i]["options"].count(first[i]["answer"]) / len(first[i]["options"]) for i in shared]
                )
            )
            if "options" in first[shared[0]]
            else None
        )
        return table, chance

    def difference(self, role_a, role_b, group, mode, language, confidence):
        if role_a not in self.sets or role_b not in self.sets:
            return None
        found = self.runs_table([role_a, role_b], group, mode, language)
        if found is None:
            return None
        table, _ = found
        a, b = table[role_a], table[role_b]
        if a.shape[0] + b.shape[0] < 3:  # one run each: nothing to estimate the seed variance from
            return self._item_level(a[0], b[0], confidence)
        diff = replicates.difference(a, b, confidence=confidence)
        if diff.se == 0:  # no variation over seeds or items to estimate from: seed 0's item-level interval
            return self._item_level(a[0], b[0], confidence)
        return diff, float(a.mean(axis=1).mean()), float(b.mean(axis=1).mean())

    @staticmethod
    def _item_level(a: np.ndarray, b: np.ndarray, confidence: float):
        a_only, b_only = int(np.sum((a == 1) & (b == 0))), int(np.sum((a == 0) & (b == 1)))
        diff: PairedDifference = paired_difference(a_only, b_only, a.size, confidence=confidence)
        return diff, float(a.mean()), float(b.mean())

    def accuracy(self, role, group, mode, language) -> ArmAccuracy | None:
        if role not in self.sets:
            return None
        present = [
            r for r in ARMS if r in self.sets and self.runs_table([r], group, mode, language) is not None
        ]
        if role not in present:
            return None
        table, chance = self.runs_table([role], group, mode, language)
        pooled = replicates.pooled_run_variance(
            self.runs_table([r], group, mode, language)[0][r] for r in present
        )
        runs = table[role]
        if pooled[1] < 1:
            return None
        acc = replicates.accuracy(runs, run_variance=pooled)
        if acc.se == 0:  # every run alike on every item (0 % or 100 %, say): the item-level Wilson interval
            _, low, high = wilson_ci(runs[0])
            return ArmAccuracy(acc.mean, low, high, acc.n, acc.seeds, chance, acc.run_sd)
        return ArmAccuracy(acc.mean, acc.low, acc.high, acc.n, acc.seeds, chance, acc.run_sd)


def build_evidence(results, scores, comparisons, roles: dict[str, ModelInfo]):
    """SeedEvidence when any arm has two or more seeds, else ItemEvidence."""
    sets = {role: runs for role, runs in replicate_sets(results).items() if role in ARMS}
    if any(len(runs) > 1 for runs in sets.values()):
        return SeedEvidence(results, sets)
    return ItemEvidence(scores, comparisons, roles)
