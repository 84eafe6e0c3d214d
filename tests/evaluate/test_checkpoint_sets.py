"""Checkpoint averaging: `--last-checkpoints k` scores each of a run's last k checkpoints into
`<run_name>/ckpt-<step>/`, each exactly as its own export scores; `morphcpt.export --average-last k` writes the mean of
the last k checkpoints' weights as one model, with the steps it averaged in its metadata."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from morphcpt.evaluate.resolve import ModelResolutionError, resolve_models
from morphcpt.evaluate.runner import EvalConfig, main, run_evaluation
from morphcpt.export import METADATA_FILE, average_last
from morphcpt.export import main as export_main
from morphcpt.train.hf.engine import train
from suite_paths import OFFICIAL
from train_helpers import tiny_plan, write_data


@pytest.fixture(scope="module")
def run(tmp_path_factory, sample_corpus):
    """A 6-step hf-engine run keeping its checkpoints at steps 2, 4 and 6."""
    root = tmp_path_factory.mktemp("ckpt_sets")
    data = write_data(root / "data", sample_corpus, limit=120)
    plan = tiny_plan(
        data,
        root / "out",
        "run_name=tiny-sets",
        "model.num_layers=2",
        "loop.steps=6",
        "loop.micro_batch_size=4",
        "validation.interval=6",
        "validation.max_batches=1",
        "checkpoint.keep=3",
    )
    train(plan)
    return plan


@pytest.fixture(scope="module")
def benchmarks(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bench")
    for name in ("langgame_mcq", "multi_digit_addition_gen"):
        shutil.copy(OFFICIAL / f"{name}.jsonl", root)
    return root


def _config(models, benchmarks, out, **extra) -> EvalConfig:
    return EvalConfig(
        models=models,
        benchmarks=["controls"],
        eval_mode="both",
        benchmark_dir=benchmarks,
        output_dir=out,
        device="cpu",
        max_new_tokens=3,
        **extra,
    )


def test_each_of_the_last_checkpoints_is_scored_into_its_own_folder(run, benchmarks, tmp_path):
    run_dir = Path(run.run_dir)
    written = run_evaluation(_config([str(run_dir)], benchmarks, tmp_path / "sets", last_checkpoints=2))
    names = sorted(str(p.relative_to(tmp_path / "sets")) for p in written)
    assert names == [
        f"tiny-sets/ckpt-{step}/{task}"
        for step in (4, 6)
        for task in ("langgame_mcq.json", "multi_digit_addition_gen.json")
    ]
    by_step = {}
    for path in written:
        result = json.loads(path.read_text())
        assert result["checkpoint_set"]["steps"] == [4, 6] and result["model"]["name"] == "tiny-sets"
        assert result["model"]["step"] == result["checkpoint_set"]["step"]
        by_step[(result["checkpoint_set"]["step"], result["mode"])] = result["predictions"]
    assert by_step[(4, "mcq")] != by_step[(6, "mcq")]  # two models, not one scored twice
    # each member scores exactly as its own export, evaluated on its own
    export = Path(run.output_root) / "exports" / "tiny-sets-step4"
    (alone,) = [
        p
        for p in run_evaluation(_config([str(export)], benchmarks, tmp_path / "alone"))
        if p.name.endswith("mcq.json")
    ]
    assert json.loads(alone.read_text())["predictions"] == by_step[(4, "mcq")]
    assert json.loads(alone.read_text())["checkpoint_set"] is None


def test_the_command_line_takes_last_checkpoints_and_a_name(run, benchmarks, tmp_path, capsys):
    code = main(
        [
            "--models", str(Path(run.run_dir) / "checkpoints" / "step_00000004"),
            "--model-names", "vanilla-seed1",
            "--benchmarks", "langgame",
            "--eval-mode", "mcq",
            "--benchmark-dir", str(benchmarks),
            "--output-dir", str(tmp_path),
            "--device", "cpu",
            "--last-checkpoints", "2",
        ]
    )  # fmt: skip
    assert code == 0
    assert sorted(p.name for p in (tmp_path / "vanilla-seed1").iterdir()) == ["ckpt-2", "ckpt-4"]


def test_asking_for_more_checkpoints_than_the_run_kept_names_what_it_has(run):
    with pytest.raises(ModelResolutionError, match=r"kept 3 \(steps 2, 4, 6\).*checkpoint.keep=4"):
        resolve_models([str(run.run_dir)], last=4)
    with pytest.raises(ModelResolutionError, match="at least 1"):
        resolve_models([str(run.run_dir)], last=0)


def test_an_export_is_evaluated_once_whatever_k(run, benchmarks, tmp_path):
    export = Path(run.output_root) / "exports" / "tiny-sets-step6"
    if not export.is_dir():
        resolve_models([str(Path(run.run_dir) / "checkpoints" / "step_00000006")])
    (found,) = resolve_models([str(export)], last=3)
    assert found.checkpoint_set is None and found.name == "tiny-sets-step6"


def test_averaged_weights_are_the_mean_of_the_last_checkpoints(run, tmp_path):
    from morphcpt.modeling.models import load_strict

    result = average_last(run.run_dir, 3, tmp_path / "avg")
    meta = json.loads((tmp_path / "avg" / METADATA_FILE).read_text())
    assert meta["averaged_steps"] == [2, 4, 6] and meta["step"] == 6 == result.step
    assert meta["parity"]["max_abs_diff"] == 0.0
    members = [
        load_strict(Path(run.run_dir) / "checkpoints" / f"step_{s:08d}" / "model").state_dict()
        for s in (2, 4, 6)
    ]
    averaged = load_strict(tmp_path / "avg").state_dict()
    for name, tensor in averaged.items():
        mean = sum(m[name].double() for m in members) / 3
        assert torch.allclose(tensor.double(), mean, atol=1e-7), name
    assert any(not torch.equal(averaged[n], members[-1][n]) for n in averaged)  # not the newest alone


def test_the_export_command_averages_and_refuses_what_it_cannot(run, tmp_path, capsys):
    assert (
        export_main(["--run-dir", str(run.run_dir), "--average-last", "2", "--output", str(tmp_path / "a")])
        == 0
    )
    assert json.loads((tmp_path / "a" / METADATA_FILE).read_text())["averaged_steps"] == [4, 6]
    with pytest.raises(SystemExit):
        export_main(["--run-dir", str(run.run_dir), "--average-last", "2", "--step", "4"])
    with pytest.raises(SystemExit):
        export_main(["--run-dir", str(run.run_dir), "--average-last", "5"])
    assert "kept 3 intact checkpoints" in capsys.readouterr().err
