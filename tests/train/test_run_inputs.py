"""A training run records its inputs by content and refuses to resume on inputs changed in place (a tokenizer
rebuilt into the same folder, data preprocessed again), naming what changed and what was made from the old ones;
an EEVE run does so before skipping any stage, and SIGTERM during an EEVE stage exits 143 and resumes."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest

from morphcpt import completion
from morphcpt.preprocess import compose_config, run
from morphcpt.train import exit_status, load_plan, run_inputs
from morphcpt.train.eeve import engine
from morphcpt.train.hf.engine import train

SMALL = [
    "loop.seq_length=32",
    "loop.global_batch_size=4",
    "loop.micro_batch_size=2",
    "optim.warmup_steps=1",
    "validation.interval=2",
    "validation.max_batches=2",
    "checkpoint.interval=2",
]


@pytest.fixture
def data(tmp_path, sample_corpus, sample_tokenizer_dir):
    """A copy of the sample tokenizer and one vanilla chunk + validation preprocessed with it."""
    tokenizer = tmp_path / "tokenizer"
    shutil.copytree(sample_tokenizer_dir, tokenizer)
    root = tmp_path / "data"
    lines = sample_corpus.read_text(encoding="utf-8").splitlines(keepends=True)
    for name, part, extra in (
        ("validation", lines[:40], ["validation=true"]),
        ("chunk_01", lines[40:160], []),
    ):
        (tmp_path / f"{name}.jsonl").write_text("".join(part), encoding="utf-8")
        common = [f"output_dir={root}", f"tokenizer={tokenizer}", "progress=false", "index_offset=0"]
        run(compose_config([f"input={tmp_path / f'{name}.jsonl'}", *common, *extra]))
    return tmp_path, tokenizer, root


def hf_plan(data, *extra):
    tmp, tokenizer, root = data
    return load_plan(
        ["recipe=demo_base", f"data.root={root}", f"output_root={tmp / 'out'}", "data.num_chunks=1"]
        + [f"model.tokenizer={tokenizer}", "loop.steps=4", "loop.max_steps_per_run=2", *SMALL, *extra]
    )


@pytest.mark.slow
def test_a_run_resumes_on_unchanged_inputs_and_records_them_by_content(data):
    plan = hf_plan(data)
    first = train(plan)
    assert first.interrupted and first.final_step == 2
    recorded = json.loads((Path(plan.run_dir) / run_inputs.FILE).read_text())["inputs"]
    assert set(recorded) == {"tokenizer", "data"}
    assert {"tokenizer.json", "tokenizer_config.json"} <= set(recorded["tokenizer"]["files"])
    assert "validation/validation_text_document.bin" in recorded["data"]["files"]
    assert train(plan).final_step == 4


@pytest.mark.slow
def test_a_tokenizer_changed_in_place_is_refused_on_resume(data):
    """Same folder, same pieces (the data still matches its fingerprint), other content: the old run resumed."""
    plan = hf_plan(data)
    train(plan)
    config = data[1] / "tokenizer_config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "model_max_length": 77}))
    with pytest.raises(run_inputs.InputsChanged) as error:
        train(plan)
    message = str(error.value)
    assert "tokenizer" in message and "tokenizer_config.json changed" in message
    assert str(plan.checkpoint_dir) in message and "run_name" in message


@pytest.mark.slow
def test_a_validation_set_preprocessed_again_is_refused_on_resume(data, sample_corpus):
    """The first-samples check could not see this: validation is not among the training samples."""
    tmp, tokenizer, root = data
    plan = hf_plan(data)
    train(plan)
    lines = sample_corpus.read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp / "validation.jsonl").write_text("".join(lines[200:240]), encoding="utf-8")
    common = [f"output_dir={root}", f"tokenizer={tokenizer}", "progress=false", "index_offset=0"]
    run(compose_config([f"input={tmp / 'validation.jsonl'}", "validation=true", *common]))
    with pytest.raises(run_inputs.InputsChanged, match="validation/validation_text_document.bin changed"):
        train(plan)


def test_changed_inputs_before_the_first_checkpoint_are_simply_recorded(data):
    plan = hf_plan(data, "loop.max_steps_per_run=null", "loop.steps=2")
    run_inputs.save(
        plan.run_dir, {"format": 1, "inputs": {"tokenizer": {"source": "elsewhere", "files": {}}}}
    )
    assert train(plan).final_step == 2  # nothing was made from the recorded inputs: nothing to refuse
    assert run_inputs.load(plan.run_dir)["inputs"]["tokenizer"]["source"] == str(data[1])


def test_unchanged_files_are_not_hashed_again(tmp_path, monkeypatch):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "weights.bin").write_bytes(b"x" * 1000)
    past = 1_600_000_000_000_000_000
    os.utime(folder / "weights.bin", ns=(past, past))
    first = run_inputs.folder_record(folder, "m", None)
    hashed = []
    monkeypatch.setattr(
        run_inputs, "file_digest", lambda path: hashed.append(path) or {"bytes": 0, "sha256": "new"}
    )
    assert run_inputs.folder_record(folder, "m", first) == first and hashed == []
    (folder / "weights.bin").write_bytes(b"y" * 1000)  # same size, new content (and mtime)
    assert run_inputs.folder_record(folder, "m", first)["files"]["weights.bin"]["sha256"] == "new"


# --- EEVE ------------------------------------------------------------------------------------------------------


def make_eeve(root: Path, lines: list[str], tokenizer_base: Path) -> None:
    """Expand the base tokenizer on `lines` into root/tokenizer and preprocess them (chunk + validation)."""
    from morphcpt.tokenization.eeve import expand

    (root / "validation.jsonl").write_text("".join(lines[:40]), encoding="utf-8")
    (root / "chunk_01.jsonl").write_text("".join(lines[40:]), encoding="utf-8")
    expand(root / "chunk_01.jsonl", tokenizer_base, root / "tokenizer", num_new=24)
    common = [
        f"output_dir={root / 'data'}",
        "progress=false",
        f"tokenizer={root / 'tokenizer'}",
        "scheme=eeve",
    ]
    run(compose_config([f"input={root / 'chunk_01.jsonl'}", "index_offset=40", *common]))
    run(compose_config(["validation=true", f"input={root / 'validation.jsonl'}", "index_offset=0", *common]))


def eeve_plan(root: Path, base: Path, *extra):
    return load_plan(
        ["recipe=demo_eeve", f"data.root={root / 'data'}", f"output_root={root / 'out'}"]
        + [f"model.pretrained={base}", f"model.tokenizer={root / 'tokenizer'}", "eeve.stages=[1,2]"]
        + ["eeve.steps=[1,1,1,1,1,2,1]", "eeve.warmup_steps=[0,0,0,0,0,0,0]", "validation.max_batches=1"]
        + [*SMALL[:3], *extra]
    )


@pytest.fixture
def eeve_run(tmp_path, sample_corpus, sample_tokenizer_dir, tiny_gemma3):
    lines = sample_corpus.read_text(encoding="utf-8").splitlines(keepends=True)
    make_eeve(tmp_path, lines[:200], sample_tokenizer_dir)
    plan = eeve_plan(tmp_path, tiny_gemma3)
    result = engine.run(plan)
    assert result.stages_run == [1, 2] and result.export is not None
    assert completion.export(result.export) is None  # the export lists its files, and they are there
    return tmp_path, plan, lines


@pytest.mark.slow
def test_an_eeve_tokenizer_rebuilt_in_place_is_refused_naming_what_was_made_from_it(
    eeve_run, sample_tokenizer_dir, capsys
):
    """The issue's case: rebuilt from other text into the same folder, data preprocessed again, rerun. It used
    to skip the finished stages and export the old resized model under the new tokenizer."""
    root, plan, lines = eeve_run
    shutil.rmtree(root / "data")
    make_eeve(root, lines[200:420], sample_tokenizer_dir)
    with pytest.raises(run_inputs.InputsChanged) as error:
        engine.run(plan)
    message = str(error.value)
    assert "tokenizer.json changed" in message and "eeve_expansion.json changed" in message
    for made in ("resized", "stages/stage1", "stages/stage2", "exports/"):
        assert made in message
    assert "already done" not in capsys.readouterr().out


@pytest.mark.slow
def test_eeve_data_preprocessed_again_keeps_the_resized_model_but_not_the_stages(eeve_run):
    root, plan, lines = eeve_run
    common = [
        f"output_dir={root / 'data'}",
        "progress=false",
        f"tokenizer={root / 'tokenizer'}",
        "scheme=eeve",
    ]
    (root / "chunk_01.jsonl").write_text("".join(lines[40:120]), encoding="utf-8")
    run(compose_config([f"input={root / 'chunk_01.jsonl'}", "index_offset=40", *common]))
    with pytest.raises(run_inputs.InputsChanged) as error:
        engine.run(plan)
    message = str(error.value)
    assert "eeve/chunk_01_text_document.bin changed" in message
    assert "stages/stage1" in message and "(the model resized" not in message
    # the way on the message gives: remove what was made from the old data, rerun
    shutil.rmtree(Path(plan.run_dir) / "stages")
    shutil.rmtree(root / "out" / "exports")
    assert engine.run(plan).stages_run == [1, 2]


@pytest.mark.slow
def test_a_finished_stage_whose_checkpoint_is_gone_runs_again(eeve_run, capsys):
    root, plan, _ = eeve_run
    export = root / "out" / "exports" / plan.run_name
    (export / "model.safetensors").unlink()
    assert completion.export(export) == f"{export / 'model.safetensors'} is missing"
    shutil.rmtree(root / "out" / "exports")
    stage2 = json.loads((engine.stage_dir(plan, 2) / engine.STAGE_DONE).read_text())
    shutil.rmtree(stage2["checkpoint"])
    result = engine.run(plan)
    assert "stage 2: marked done, but its checkpoint" in capsys.readouterr().out
    assert result.stages_run == [1, 2] and (Path(stage2["checkpoint"]) / "model" / "config.json").exists()
    # a cut-off stage marker and a resized model without its weights: made again, not a traceback
    marker = engine.stage_dir(plan, 1) / engine.STAGE_DONE
    marker.write_text(marker.read_text()[:40])
    next(Path(plan.run_dir, "resized").glob("*.safetensors")).unlink()
    shutil.rmtree(root / "out" / "exports")
    assert engine.run(plan).stages_run == [1, 2]
    out = capsys.readouterr().out
    assert "resizing again" in out and f"EEVE stage 1: {marker} " in out and "ends early" in out


@pytest.mark.slow
def test_sigterm_during_an_eeve_stage_exits_143_after_the_checkpoint_and_resumes(
    tmp_path, sample_corpus, sample_tokenizer_dir, tiny_gemma3, monkeypatch, capsys
):
    from morphcpt.train.hf.engine import optimizer_step

    lines = sample_corpus.read_text(encoding="utf-8").splitlines(keepends=True)
    make_eeve(tmp_path, lines[:200], sample_tokenizer_dir)
    plan = eeve_plan(tmp_path, tiny_gemma3, "eeve.stages=[1,6]", "checkpoint.interval=1000")
    step = optimizer_step
    calls = []

    def step_then_sigterm(*args, **kwargs):
        calls.append(1)
        out = step(*args, **kwargs)
        if len(calls) == 2:  # stage 6's first step: the job's walltime ends here
            os.kill(os.getpid(), signal.SIGTERM)
        return out

    monkeypatch.setattr("morphcpt.train.hf.engine.optimizer_step", step_then_sigterm)
    result = engine.run(plan)
    assert exit_status(result) == 143
    err = capsys.readouterr().err
    assert "EEVE stage 6 stopped by SIGTERM at step 1" in err and str(result.checkpoint_dir) in err
    assert result.checkpoint_dir.is_dir() and result.stages_run == [1]
    resumed = engine.run(plan)
    assert resumed.stages_run == [1, 6] and exit_status(resumed) == 0 and resumed.export is not None
    assert len(calls) == 3  # stage 6's second step only: the first was not done again


def test_a_megatron_job_refuses_to_resume_on_changed_inputs(data, monkeypatch, tiny_gemma3):
    """The cluster engine's prepare stage (every job) checks the same record before any import or training."""
    from morphcpt.train.megatron import compat, prepare

    tmp, tokenizer, root = data
    plan = load_plan(
        ["recipe=cpt_patok", f"output_root={tmp / 'out'}", f"data.root={root}", "data.scheme=vanilla"]
        + ["data.num_chunks=1", f"model.tokenizer={tokenizer}", f"model.pretrained={tiny_gemma3}"]
    )
    monkeypatch.setattr(prepare, "import_weights", lambda plan: None)
    monkeypatch.setattr(prepare, "verify_import", lambda plan: {"ok": True})
    monkeypatch.setattr(compat, "installed_version", lambda: "0.4.0")
    prepare.prepare(plan)
    plan.checkpoint_dir.mkdir(parents=True)
    (plan.checkpoint_dir / "latest_checkpointed_iteration.txt").write_text("100\n")
    prepare.prepare(plan)  # the next job: same inputs
    config = tokenizer / "tokenizer_config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "model_max_length": 77}))
    with pytest.raises(run_inputs.InputsChanged, match="tokenizer_config.json changed"):
        prepare.prepare(plan)


def test_a_megatron_import_of_a_base_model_replaced_in_place_is_not_reused(
    tmp_path, monkeypatch, tiny_gemma3
):
    """The import is shared by every run and made once: reused after the base model changed, it would start new
    runs from the old weights."""
    import sys
    from types import SimpleNamespace

    from morphcpt.train.megatron import prepare
    from morphcpt.train.megatron.config import WeightVerificationError

    class AutoBridge:
        @staticmethod
        def import_ckpt(hf_model_id, megatron_path, torch_dtype):
            (Path(megatron_path) / "iter_0000000").mkdir(parents=True)

    monkeypatch.setitem(sys.modules, "megatron.bridge", SimpleNamespace(AutoBridge=AutoBridge))
    base = tmp_path / "base"
    shutil.copytree(tiny_gemma3, base)
    plan = load_plan(["recipe=cpt_patok", f"output_root={tmp_path / 'out'}", f"model.pretrained={base}"])
    target = prepare.import_weights(plan)
    assert prepare.import_weights(plan) == target  # unchanged: reused
    config = base / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "rms_norm_eps": 1e-5}))
    with pytest.raises(WeightVerificationError, match="config.json changed.*delete .*and rerun"):
        prepare.import_weights(plan)
    shutil.rmtree(target / "iter_0000000")
    with pytest.raises(WeightVerificationError, match="holds no iter_"):
        prepare.import_weights(plan)
