"""The pre-registered primary comparison, continuous scores, checkpoint averaging, the base model and forgetting
on the first screen, and the report defects of issue #38 (each test here failed on the code before it)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from morphcpt.analysis import plan as analysis_plan
from morphcpt.analysis import replicates, stats
from morphcpt.analysis.evidence import Evidence
from morphcpt.analysis.report import build_report
from morphcpt.analysis.results import load_results
from morphcpt.analysis.shift import accuracy_equivalent, shifted_means
from morphcpt.analysis.simulate import OptionRegime, seed_t_pvalues, simulate_options
from morphcpt.analysis.synthetic import write_results
from suite_paths import REPO

ROOT = REPO


def sections(report: str) -> tuple[str, str]:
    answer = report.split("## Answer", 1)[1].split("\n## ", 1)[0]
    design = report.split("## Design", 1)[1].split("\n## ", 1)[0]
    return answer, design


# ------------------------------------------------------------------------------------------------ the defects


def test_a_tiny_mcnemar_p_is_not_printed_as_zero():
    """2 P(Z < -z) via NormalDist().cdf rounded to 0 below about 1e-17; erfc keeps it."""
    p = stats.paired_difference(400, 0, 1000).p_value
    assert 0 < p < 1e-80
    assert stats.normal_two_sided(5.0) == pytest.approx(5.733e-7, rel=1e-3)


def test_the_score_test_does_not_compute_the_exact_p(monkeypatch):
    def refuse(*_):
        raise AssertionError("the exact McNemar p was computed (and would be thrown away)")

    monkeypatch.setattr(stats, "_mcnemar_p", refuse)
    rng = np.random.default_rng(0)
    a, b = rng.random(10_000) < 0.6, rng.random(10_000) < 0.5
    test = stats.mcnemar_score(a, b)
    assert test.a_only + test.b_only > 4000 and 0 <= test.p_value < 1


def test_the_readme_names_the_report_the_demo_writes(monkeypatch, tmp_path):
    from morphcpt import demo

    written = {}
    monkeypatch.setattr(
        "morphcpt.analysis.report.build_report",
        lambda results, out: written.setdefault("out", Path(out)) / "report.md",
    )
    path = demo.analyse(demo.DemoConfig(output_dir=Path("outputs/demo")), tmp_path)
    readme = (ROOT / "README.md").read_text()
    assert f"`{path.as_posix()}`" in readme


@pytest.fixture(scope="module")
def unequal(tmp_path_factory) -> str:
    """Patok 3 seeds, the other arms 1 (the issue's case), continuous scores present, a null."""
    root = tmp_path_factory.mktemp("unequal")
    write_results(
        root / "results", effect_pp=0.0, seeds=3, checkpoints=1, arm_seeds={"vanilla": 1, "stochastok": 1}
    )
    return build_report(root / "results", root / "analysis", plots=False).read_text()


def test_unequal_seeds_design_describes_the_t_test_it_uses(unequal):
    """Before: the Design section simulated McNemar (14.9 % false positives, MDE 11.8 pp) for a t test."""
    answer, design = sections(unequal)
    assert "Primary test: t over items and seeds, run and churn variances pooled over 3 arms (2 df)" in design
    assert "McNemar" not in design
    rate = float(design.split("these variances: ", 1)[1].split("%", 1)[0])
    assert 2.0 <= rate <= 8.0


def test_not_shown_says_what_the_design_could_have_detected(unequal):
    answer, _ = sections(unequal)
    assert "**Answer: not shown**" in answer
    assert "at this design (3 and 1 runs, 100 items) the test detects" in answer and "80% power" in answer


# ------------------------------------------------------------------- the plan, continuous scores, checkpoints


@pytest.fixture(scope="module")
def plus3(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("plus3")
    write_results(root / "results", effect_pp=8.0, seeds=3, checkpoints=3, forget=0.8)
    return root


def test_the_answer_rests_on_the_primary_metric_with_the_base_model_and_forgetting(plus3):
    report = build_report(plus3 / "results", plus3 / "a", plots=False).read_text()
    answer, design = sections(report)
    assert (
        "MCQ gold_prob (pre-registered primary): Patok − vanilla CPT" in answer
        and "tested alone at 0.05" in answer
    )
    assert "each difference is a t test over items and seeds (seed variance pooled over every arm)" in answer
    assert "| base model |" in answer and "vs base model" in answer
    assert (
        "**Forgetting: baseline, StochasTok CPT, Patok CPT lose more than 5 pp against the base model.**"
        in answer
    )
    assert "each item's score is averaged over a run's last 3 checkpoints" in answer
    assert "| gold_prob |" in design and "SNR" in design  # signal and noise per metric
    assert "## Along the checkpoints" in report and "step 800" in report


def test_a_primary_chosen_after_the_results_is_refused_and_reported(plus3, tmp_path):
    results = plus3 / "results"
    record = analysis_plan.register(results, "gold_prob")
    try:
        assert json.loads(record.read_text())["primary"] == "gold_prob"
        with pytest.raises(ValueError, match="already records primary 'gold_prob'"):
            analysis_plan.register(results, "acc_norm")
        report = build_report(results, tmp_path, plots=False, primary="acc_norm").read_text()
        answer, _ = sections(report)
        assert "**Note: the primary metric was pre-registered as gold_prob**" in answer
        assert "MCQ gold_prob (pre-registered primary)" in answer
    finally:
        record.unlink()


def test_old_result_files_fall_back_to_acc_norm(tmp_path):
    write_results(tmp_path / "results", effect_pp=0.0, seeds=2, checkpoints=1, continuous=False)
    answer, design = sections(build_report(tmp_path / "results", tmp_path / "a", plots=False).read_text())
    assert "MCQ acc_norm (the planned primary gold_prob is not in these results: fallback)" in answer
    assert "**The primary metric gold_prob is not in these results**" in design


def test_each_item_is_averaged_over_the_last_checkpoints(plus3):
    results = load_results(plus3 / "results")
    last = Evidence(results, last_checkpoints=1).table(
        ["patok"], "hierarchical-level2", "mcq", "en", "gold_prob"
    )
    three = Evidence(results, last_checkpoints=3).table(
        ["patok"], "hierarchical-level2", "mcq", "en", "gold_prob"
    )
    ids = three[1]
    by_step = {
        r.checkpoint_step: np.array([{p["id"]: p["gold_prob"] for p in r.predictions}[i] for i in ids])
        for r in results
        if r.model.name == "patok" and r.task == "hierarchical-level2"
    }
    assert sorted(by_step) == [800, 900, 1000]
    np.testing.assert_allclose(last[0]["patok"][0], by_step[1000])
    np.testing.assert_allclose(three[0]["patok"][0], np.mean([by_step[s] for s in (800, 900, 1000)], axis=0))


# ------------------------------------------------------------------------------------------- the statistics


def test_the_vectorised_simulation_test_is_the_reports_test():
    rng = np.random.default_rng(1)
    scores = rng.random((3, 4, 3, 30))
    diff, p = seed_t_pvalues(scores, 2, 0, pool=(0, 1, 2, 3))
    for e in range(3):
        pooled = replicates.pooled_components(scores[e, k] for k in range(4))
        one = replicates.difference(scores[e, 2], scores[e, 0], pooled=pooled)
        assert one.diff == pytest.approx(diff[e]) and one.p_value == pytest.approx(p[e])


def test_the_primary_test_holds_its_level_on_continuous_scores():
    """Coarse (600 designs; benchmarks/primary_power.py has the full table): gold_prob, 4 arms x 3 seeds, run and
    churn variances pooled over the arms, alpha 0.05."""
    rng = np.random.default_rng(2)
    base = rng.normal(-2, 1.2, (100, 4))
    gold = np.zeros((100, 4), dtype=bool)
    gold[np.arange(100), rng.integers(0, 4, 100)] = True
    base = base + gold
    ll = simulate_options(OptionRegime(seeds=3, seed_sd=0.1), base, gold, [0, 0, 0, 0], 600, rng)[:, :, :, 0]
    weights = np.exp(ll - ll.max(axis=-1, keepdims=True))
    gold_prob = (weights * gold).sum(axis=-1) / weights.sum(axis=-1)
    _, p = seed_t_pvalues(gold_prob, 2, 0, pool=(0, 1, 2, 3))
    assert 0.02 <= np.mean(p < 0.05) <= 0.09


def test_a_uniform_gold_shift_converts_a_metric_into_accuracy(plus3):
    predictions = json.loads((plus3 / "results" / "base" / "hierarchical-level2_mcq.json").read_text())[
        "predictions"
    ]
    assert accuracy_equivalent(predictions, "acc_norm", 0.03) == 0.03
    small = accuracy_equivalent(predictions, "gold_prob", 0.01)
    large = accuracy_equivalent(predictions, "gold_prob", 0.04)
    assert 0 <= small < large
    moved = shifted_means(predictions, 0.2)["gold_margin"] - shifted_means(predictions, 0.0)["gold_margin"]
    assert moved == pytest.approx(0.2)
    assert math.isfinite(large)
