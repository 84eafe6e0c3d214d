"""A results folder is read as one experiment or refused: two folders that are the same seed of the same arm,
and runs of the arms scored on different items, are refused naming both (never a report where one silently wins
or the comparison quietly shrinks); a cut result file is one line from the analysis script."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from analysis_helpers import SkilledModel, all_items, evaluate, write_benchmarks
from morphcpt import paths
from morphcpt.analysis import power
from morphcpt.analysis.report import build_report
from morphcpt.analysis.results import ResultsError, load_results, replicate_sets


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    root = tmp_path_factory.mktemp("seeded")
    write_benchmarks(root / "benchmarks", scale=0.3)
    items = all_items(root / "benchmarks")
    models = {}
    for k in (0, 1):
        suffix = f"-seed{k}" if k else ""
        for scheme in ("vanilla", "patok"):
            meta = {
                "scheme": scheme,
                "replicate": k,
                "run_name": f"{scheme}{suffix}",
                "config_hash": "h",
                "step": 4,
            }
            models[f"{scheme}{suffix}"] = (meta, SkilledModel(items, {}, hash(scheme) % 97 + k))
    evaluate(root, root / "results", models)
    return root / "results"


def copy_of(results, tmp_path):
    shutil.copytree(results, tmp_path / "results")
    return tmp_path / "results"


def rewrite(folder, change):
    for path in folder.glob("*.json"):
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data))


def test_the_folder_reads_as_it_is(seeded):
    assert [len(runs) for runs in replicate_sets(load_results(seeded)).values()] == [2, 2]


def test_a_second_folder_for_the_same_arm_and_seed_is_refused_naming_both(seeded, tmp_path):
    results = copy_of(seeded, tmp_path)
    shutil.copytree(results / "vanilla-seed1", results / "vanilla-rerun")

    def another_run(data):
        data["model"]["name"] = "vanilla-rerun"
        data["model"]["metadata"]["run_name"] = "vanilla-rerun"

    rewrite(results / "vanilla-rerun", another_run)
    for reader in (load_results, lambda r: build_report(r, tmp_path / "out", plots=False)):
        with pytest.raises(
            ResultsError, match=r"seed 1 of baseline: .*vanilla-(seed1|rerun).* and .*vanilla-"
        ):
            reader(results)
    assert power.main(["--pilot", str(results)]) != 0


def test_the_same_step_of_a_run_twice_is_refused_and_two_steps_of_one_run_are_kept(seeded, tmp_path):
    results = copy_of(seeded, tmp_path)
    shutil.copytree(results / "patok", results / "patok-copy")
    rewrite(results / "patok-copy", lambda d: d["model"].update(name="patok-copy"))
    with pytest.raises(ResultsError, match="seed 0 of patok"):
        load_results(results)
    rewrite(results / "patok-copy", lambda d: d["model"].update(step=8))  # the same run, a later checkpoint
    sets = replicate_sets(load_results(results))
    assert [m.name for m in sets["patok"]] == ["patok-copy", "patok-seed1"]


def test_seeds_scored_on_different_items_are_refused(seeded, tmp_path):
    results = copy_of(seeded, tmp_path)
    path = results / "patok-seed1" / "hierarchical-level2_mcq.json"
    data = json.loads(path.read_text())
    data["predictions"] = data["predictions"][:40]
    path.write_text(json.dumps(data))
    with pytest.raises(
        ResultsError, match=r"hierarchical-level2 MCQ \(en\) was scored on different items: .* 40 "
    ):
        build_report(results, tmp_path / "out", plots=False)
    assert not (tmp_path / "out" / "report.md").exists()


@pytest.mark.parametrize("damage", ["cut", "empty", "no predictions"])
def test_a_damaged_result_file_is_one_line_from_the_script(seeded, tmp_path, damage):
    results = copy_of(seeded, tmp_path)
    path = results / "vanilla" / "pacute-affixation_mcq.json"
    raw = path.read_bytes()
    if damage == "no predictions":
        data = json.loads(raw)
        del data["predictions"]
        raw = json.dumps(data).encode()
    path.write_bytes({"cut": raw[: len(raw) // 2], "empty": b""}.get(damage, raw))
    done = subprocess.run(
        [
            sys.executable,
            str(paths.REPO_ROOT / "scripts" / "analyze_inference_results.py"),
            "--results-dir",
            str(results),
            "--no-plots",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-1500:]
    assert "pacute-affixation_mcq.json" in done.stderr.strip().splitlines()[-1]
