"""Arms with several seeds: the test over items and seeds (calibration checked coarsely here; the full simulation
is benchmarks/replicates.py), the report's design section, and the power command on a pilot's results."""

from __future__ import annotations

import numpy as np
import pytest

from analysis_helpers import IndifferentModel, SkilledModel, all_items, evaluate, write_benchmarks
from morphcpt.analysis import power, replicates
from morphcpt.analysis.report import build_report
from morphcpt.analysis.simulate import Regime, rejection_rate, simulate
from morphcpt.analysis.stats import bonferroni


def test_the_difference_is_the_difference_of_the_arms_mean_accuracies_and_its_interval_holds_it():
    rng = np.random.default_rng(0)
    a, b = (rng.random((3, 80)) < 0.6).astype(float), (rng.random((2, 80)) < 0.5).astype(float)
    d = replicates.difference(a, b)
    assert d.diff == pytest.approx(a.mean(axis=1).mean() - b.mean(axis=1).mean())
    assert d.low < d.diff < d.high and d.df > 1 and (d.seeds_a, d.seeds_b, d.n) == (3, 2, 80)
    with pytest.raises(ValueError, match="seed variance cannot be estimated"):
        replicates.difference(a[:1], b[:1])
    with pytest.raises(ValueError, match="same items"):
        replicates.difference(a, b[:, :50])


def test_the_interval_excludes_zero_exactly_when_the_adjusted_p_is_below_alpha():
    rng = np.random.default_rng(1)
    for trial in range(300):
        shift = rng.uniform(-0.2, 0.2)
        a = (rng.random((2, 60)) < 0.5 + shift).astype(float)
        b = (rng.random((2 + trial % 2, 60)) < 0.5).astype(float)
        for family in (1, 3, 6):
            d = replicates.difference(a, b, confidence=1 - 0.05 / family)
            assert d.excludes_zero == (bonferroni(d.p_value, family) < 0.05)


def test_seed_variance_is_seen_and_one_run_per_arm_would_have_missed_it():
    """Coarse calibration (300 simulated experiments; the full table, 4,000 per regime, is benchmarks/RESULTS.md):
    with a seed effect of about 4 pp on a run's accuracy and no true difference, the test over items and seeds
    stays near 5 % while McNemar on one run per arm rejects several times as often."""
    seeded = Regime(items=300, seeds=2, seed_sd=0.25)
    assert 0.01 <= rejection_rate(seeded, experiments=300, seed=3).rate <= 0.10
    one_run = rejection_rate(Regime(items=300, seeds=1, seed_sd=0.25), experiments=300, seed=4)
    assert one_run.rate > 0.15


def test_a_planted_difference_is_found():
    planted = rejection_rate(Regime(items=300, seeds=3, seed_sd=0.1, shift=0.8), experiments=100, seed=5)
    assert planted.rate > 0.8 and planted.mean_difference > 0.05


def test_variance_components_recover_a_seed_effect():
    """Many simulated runs of one design: the estimated seed variance (floored at 0, so slightly above 0 on
    average without a seed effect) is several times larger with a seed effect of about 5 pp."""
    rng = np.random.default_rng(6)
    without, with_seed = (
        np.mean(
            [
                replicates.components(y[0], y[1]).seed_var
                for y in simulate(Regime(items=200, seeds=3, seed_sd=sd), 60, rng)
            ]
        )
        for sd in (0.0, 0.3)
    )
    assert with_seed > 5 * without and with_seed > 0.05**2 / 2


def test_more_seeds_and_more_items_detect_smaller_differences():
    v = power.Variances(tau2=0.02, seed=0.0004, churn=0.15, items=100, seeds=2, seed_df=2)
    two, three, more_items = (
        power.mdd(v, 2, 100, 0.01),
        power.mdd(v, 3, 100, 0.01),
        power.mdd(v, 3, 400, 0.01),
    )
    assert two > three > more_items > 0
    assert power.reject_rate(v, 3, 100, three, 0.01) == pytest.approx(0.8, abs=0.02)
    assert v.seed_upper().seed > v.seed


class SeededModel(SkilledModel):
    """A seed of an arm: its own luck per item (churn) and a whole-run offset (the seed effect)."""

    def __init__(self, items, skill, seed, offset):
        super().__init__(items, {task: s + offset for task, s in skill.items()}, seed)


@pytest.fixture(scope="module")
def seeded_results(tmp_path_factory):
    root = tmp_path_factory.mktemp("seeded")
    write_benchmarks(root / "benchmarks", scale=0.5)
    items = all_items(root / "benchmarks")
    base = {"hierarchical-level2": 0.5, "hierarchical-level0": 0.5, "pacute-affixation": 0.5}
    better = {**base, "hierarchical-level2": 0.7}
    models = {}
    for k, offset in enumerate((0.0, 0.04)):
        suffix = f"-seed{k}" if k else ""
        models[f"vanilla{suffix}"] = (
            {"scheme": "vanilla", "replicate": k},
            SeededModel(items, base, 10 + k, offset),
        )
        models[f"patok{suffix}"] = (
            {"scheme": "patok", "replicate": k},
            SeededModel(items, better, 20 + k, -offset),
        )
    evaluate(root, root / "results", models)
    return root


def test_the_report_of_seeded_arms_compares_over_items_and_seeds_and_shows_the_design(seeded_results):
    # the design on right/wrong scores (the evaluation also records gold_prob, the packaged primary)
    report = build_report(
        seeded_results / "results", seeded_results / "analysis", plots=False, primary="acc_norm"
    ).read_text()
    answer = report.split("## Design")[0]
    assert "Seeds per arm: baseline 2, Patok CPT 2" in answer and "t test over items and seeds" in answer
    assert "(2 seeds)" in answer  # the arm's accuracy is a mean over its seeds
    design = report.split("## Design")[1].split("## Details")[0]
    assert "baseline (vanilla CPT): 2 seeds" in design and "Variances (acc_norm)" in design
    assert "Primary test: t over items and seeds, run and churn variances pooled over 2 arms (2 df)" in design
    assert "Simulated false-positive rate" in design and "Minimum detectable difference" in design
    assert "t test over items and seeds (df" in report.split("## Details")[1]


def test_the_power_command_answers_from_a_pilot(seeded_results, capsys):
    assert (
        power.main(
            [
                "--pilot",
                str(seeded_results / "results"),
                "--seeds",
                "1",
                "2",
                "--items",
                "100",
                "--metric",
                "acc_norm",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "pilot: hierarchical-level2 MCQ" in out and "| 2 | 100 |" in out
    assert "McNemar (seed variance unseen)" in out and "to detect 5 (acc_norm)" in out


def test_the_power_command_refuses_a_pilot_without_seeds(tmp_path, capsys):
    root = tmp_path
    write_benchmarks(root / "benchmarks", scale=0.2)
    items = all_items(root / "benchmarks")
    evaluate(root, root / "results", {"vanilla": ({"scheme": "vanilla"}, SkilledModel(items, {}, 1))})
    assert power.main(["--pilot", str(root / "results")]) == 1
    assert "needs two or more seeds per arm" in capsys.readouterr().err


def test_runs_that_never_vary_get_item_level_intervals_not_points(tmp_path):
    """Tiny models near chance answer every item alike in every seed: the variance over items and seeds is 0,
    and a "+0.0 [+0.0, +0.0]" would read as certainty; seed 0's item-level intervals stand in."""
    write_benchmarks(tmp_path / "benchmarks", scale=0.2)
    models = {
        f"{scheme}{f'-seed{k}' if k else ''}": ({"scheme": scheme, "replicate": k}, IndifferentModel())
        for scheme in ("vanilla", "patok")
        for k in (0, 1)
    }
    evaluate(tmp_path, tmp_path / "results", models)
    report = build_report(
        tmp_path / "results", tmp_path / "analysis", plots=False, primary="acc_norm"
    ).read_text()
    answer = report.split("## Design")[0]
    # seeded, yet nothing varies: the method named is the item-level one actually used
    assert "Seeds per arm: baseline 2, Patok CPT 2" in answer and "McNemar's score test over items" in answer
    assert "[+0.0, +0.0]" not in answer and "0.0 [0.0, 0.0]" not in answer
