"""Evaluation given what the training plan's Step 6 gives it: a run folder, its checkpoints/, one checkpoint.

hf engine: the run's latest verified checkpoint (or the named one) is exported once, with the parity check, into
the run's export folder, and scores exactly as its export does; the next evaluation reuses that export. megatron
engine outside the container: one sentence naming the export job to submit. Anything else: one sentence."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from morphcpt.evaluate import resolve
from morphcpt.evaluate.resolve import ModelResolutionError, locate, resolve_models
from morphcpt.evaluate.runner import EvalConfig, main, run_evaluation
from morphcpt.indexed import file_digest
from morphcpt.plan.compose import plan_to_yaml
from morphcpt.train import load_plan
from morphcpt.train.hf.engine import train
from suite_paths import OFFICIAL
from train_helpers import write_data


@pytest.fixture(scope="module")
def run(tmp_path_factory, sample_corpus):
    """A 4-step hf-engine run (checkpoints at steps 2 and 4) with no export yet."""
    root = tmp_path_factory.mktemp("eval_runs")
    data = write_data(root / "data", sample_corpus, limit=120)
    plan = load_plan(
        [
            "recipe=demo_base",
            f"data.root={data}",
            f"output_root={root / 'out'}",
            "run_name=tiny-vanilla",
            "model.num_layers=2",
            "loop.steps=4",
            "loop.seq_length=32",
            "loop.global_batch_size=4",
            "loop.micro_batch_size=4",
            "optim.warmup_steps=1",
            "validation.interval=4",
            "validation.max_batches=1",
            "checkpoint.interval=2",
            "checkpoint.keep=2",
            "logging.tensorboard=false",
        ]
    )
    train(plan)
    return plan


@pytest.fixture(scope="module")
def benchmarks(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bench")
    (root / "pacute").mkdir()
    for mode in ("mcq", "gen"):
        shutil.copy(OFFICIAL / f"affixation_{mode}.jsonl", root / "pacute")
    return root


def _evaluate(model: str, benchmarks: Path, out: Path) -> dict:
    cfg = EvalConfig(
        models=[model],
        benchmarks=["pacute-affixation"],
        eval_mode="both",
        benchmark_dir=benchmarks,
        output_dir=out,
        device="cpu",
        max_new_tokens=4,
    )
    results = {}
    for path in run_evaluation(cfg):
        data = json.loads(path.read_text())
        results[data["mode"]] = data
    return results


def _scores(result: dict) -> list[dict]:
    """Every item's prediction: options' log-likelihoods, choices, generated text, right or wrong."""
    return result["predictions"]


def test_a_run_its_checkpoints_and_a_checkpoint_score_as_their_export(run, benchmarks, tmp_path):
    run_dir = Path(run.run_dir)
    export = Path(run.output_root) / "exports" / "tiny-vanilla-step4"
    by_run = _evaluate(str(run_dir), benchmarks, tmp_path / "run")
    assert (export / "config.json").is_file()  # exported first, where the next evaluation finds it
    meta = json.loads((export / "morphcpt_metadata.json").read_text())
    assert meta["step"] == 4 and meta["parity"]["max_abs_diff"] == 0.0
    model = by_run["mcq"]["model"]
    assert model["name"] == "tiny-vanilla-step4" and model["step"] == 4  # results name the run and the step
    assert model["metadata"]["evaluated_from"]["run_dir"] == str(run_dir)
    assert model["metadata"]["evaluated_from"]["exported_now"] is True
    exported_at = (export / "model.safetensors").stat().st_mtime_ns

    by_export = _evaluate(str(export), benchmarks, tmp_path / "export")
    for given in (run_dir / "checkpoints", run_dir / "checkpoints" / "step_00000004"):
        again = _evaluate(str(given), benchmarks, tmp_path / given.name)
        for mode in ("mcq", "gen"):
            assert _scores(again[mode]) == _scores(by_run[mode]) == _scores(by_export[mode])
        assert again["mcq"]["model"]["metadata"]["evaluated_from"]["exported_now"] is False
    assert (export / "model.safetensors").stat().st_mtime_ns == exported_at  # reused, not exported again

    earlier = resolve_models([str(run_dir / "checkpoints" / "step_00000002")])[0]
    assert (earlier.name, earlier.metadata["step"]) == ("tiny-vanilla-step2", 2)
    assert Path(earlier.path).name == "tiny-vanilla-step2"


def test_a_broken_named_checkpoint_is_refused_with_the_reason(run, tmp_path):
    copy = tmp_path / "runs" / "tiny"
    shutil.copytree(run.run_dir, copy)  # a moved run folder still resolves (its plan recorded the old place)
    assert locate(str(copy)).checkpoint == copy / "checkpoints" / "step_00000004"
    (copy / "checkpoints" / "step_00000004" / "trainer.pt").write_bytes(b"truncated")
    with pytest.raises(ModelResolutionError, match="step_00000004 is not usable: trainer.pt has 9 bytes"):
        locate(str(copy / "checkpoints" / "step_00000004"))
    assert locate(str(copy)).step == 2  # the latest *verified* checkpoint


def _megatron_run(tmp_path: Path, iterations: list[int], tracker: int | None) -> Path:
    plan = load_plan(
        [
            "recipe=cpt_baseline",
            f"output_root={tmp_path / 'out'}",
            f"run_dir={tmp_path / 'logs' / 'baseline'}",
        ]
    )
    run_dir = Path(plan.run_dir)
    (run_dir / "checkpoints").mkdir(parents=True)
    (run_dir / "config.yaml").write_text(plan_to_yaml(plan))
    for iteration in iterations:
        folder = run_dir / "checkpoints" / f"iter_{iteration:07d}"
        folder.mkdir()
        (folder / "metadata.json").write_text("{}")
    if tracker is not None:
        (run_dir / "checkpoints" / "latest_checkpointed_iteration.txt").write_text(str(tracker))
    return run_dir


def test_a_megatron_run_outside_the_container_names_the_export_job(tmp_path, benchmarks, capsys):
    run_dir = _megatron_run(tmp_path, [5000, 10000, 11000], tracker=10000)
    never = resolve.bridge_available  # megatron.bridge is not installed here
    assert not never()
    with pytest.raises(ModelResolutionError) as refused:
        resolve_models([str(run_dir)], can_export_megatron=never)
    message = str(refused.value)
    assert f"qsub -v RUN_DIR={run_dir},STEP=10000 jobs/export_baseline.pbs" in message
    assert (
        "gemma3-1b-baseline-step10000" in message
    )  # where the job writes it, and this command then finds it
    argv = ["--models", str(run_dir / "checkpoints"), "--benchmark-dir", str(benchmarks), "--benchmarks"]
    argv += ["pacute-affixation"]
    assert main([*argv, "--output-dir", str(tmp_path / "r")]) == 1
    assert "needs the NeMo container on a GPU node" in capsys.readouterr().err
    with pytest.raises(ModelResolutionError, match="newer than the run's last complete checkpoint"):
        locate(str(run_dir / "checkpoints" / "iter_0011000"))

    calls = []

    def exporter(run_dir, step, output):  # inside the container: the export runs first
        calls.append(step)
        Path(output).mkdir(parents=True)
        (Path(output) / "config.json").write_text("{}")
        return type("Exported", (), {"output": output})

    found = resolve_models([str(run_dir / "checkpoints" / "iter_0005000")], exporter, lambda: True)
    assert calls == [5000] and found[0].name == "gemma3-1b-baseline-step5000"


def test_folders_that_are_no_model_get_one_sentence(tmp_path, monkeypatch):
    with pytest.raises(ModelResolutionError, match="neither an exported model .* nor a training run"):
        locate(str(tmp_path))
    (tmp_path / "out" / "runs" / "gemma3-1b-patok").mkdir(parents=True)
    monkeypatch.setenv("OUTPUT_ROOT", str(tmp_path / "out"))
    with pytest.raises(
        FileNotFoundError, match="a run named gemma3-1b-patok is at .*out/runs/gemma3-1b-patok"
    ):
        locate("/logs/checkpoints/gemma3-1b-patok")  # the plan's path; the jobs keep runs under OUTPUT_ROOT
    empty = _megatron_run(tmp_path / "m", [], tracker=None)
    with pytest.raises(ModelResolutionError, match="no complete Megatron checkpoint yet"):
        locate(str(empty))
    assert locate("google/gemma-3-1b-pt").path == "google/gemma-3-1b-pt"


def test_a_named_checkpoint_from_another_run_is_refused(run, tmp_path):
    copy = tmp_path / "runs" / "tiny"
    shutil.copytree(run.run_dir, copy)
    own = copy / "checkpoints" / "step_00000004"
    renamed = copy / "checkpoints" / "step_00000020"  # another step's folder name over step 4's contents
    shutil.copytree(own, renamed)
    with pytest.raises(ModelResolutionError, match="folder says step 20 but its meta.json records step 4"):
        locate(str(renamed))
    foreign = copy / "checkpoints" / "step_00000006"  # copied in from a run of another plan
    shutil.copytree(own, foreign)
    meta = json.loads((foreign / "meta.json").read_text())
    (foreign / "meta.json").write_text(json.dumps({**meta, "step": 6, "config_hash": "0123456789abcdef"}))
    manifest = json.loads((foreign / "files.json").read_text())  # its own run wrote a manifest that matches
    manifest["meta.json"] = file_digest(foreign / "meta.json")
    (foreign / "files.json").write_text(json.dumps(manifest))
    for named in (foreign, copy / "checkpoints" / "step_00000004"):
        if named == foreign:
            with pytest.raises(ModelResolutionError, match="written by another plan"):
                resolve_models([str(named)], exporter=lambda *a, **k: pytest.fail("exported"))
        else:
            assert locate(str(named)).step == 4  # its own checkpoint still resolves
