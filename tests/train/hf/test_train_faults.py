"""Training under faults (issue #14): a tokenizer that does not match the data, empty chunks, corrupt or
truncated checkpoints (fallback to the previous intact one), model folders that are missing or broken, and the
exit status of an interrupted run."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest
import torch

from morphcpt.modeling import checkpoint_files
from morphcpt.modeling.models import WeightLoadError, load_strict
from morphcpt.preprocess import compose_config, run
from morphcpt.tokenization.vocabulary import Vocabulary
from morphcpt.train import exit_status, load_plan
from morphcpt.train.data import DataNotReady, TokenizerMismatch, build_datasets
from morphcpt.train.hf import checkpoints
from morphcpt.train.hf.engine import RunResult, train
from morphcpt.train.hf.metrics import read_metrics
from train_helpers import write_data

SMALL = [
    "loop.seq_length=32",
    "loop.global_batch_size=4",
    "loop.micro_batch_size=2",
    "optim.warmup_steps=1",
    "validation.interval=2",
    "validation.max_batches=2",
    "checkpoint.interval=2",
    "checkpoint.keep=3",
]


@pytest.fixture(scope="module")
def data_root(tmp_path_factory, sample_corpus):
    """Two vanilla chunks of the sample and a third chunk that is empty (more chunks than lines)."""
    root = tmp_path_factory.mktemp("data")
    write_data(root, sample_corpus, limit=160, num_chunks=2)
    empty = root / "jsonl" / "chunk_03.jsonl"
    empty.write_bytes(b"")
    run(compose_config([f"input={empty}", f"output_dir={root}", "index_offset=160", "progress=false"]))
    return root


def plan_for(data_root, out, *extra):
    return load_plan(
        [
            "recipe=demo_base",
            f"data.root={data_root}",
            f"output_root={out}",
            "data.num_chunks=2",
            *SMALL,
            *extra,
        ]
    )


@pytest.fixture(scope="module")
def other_tokenizer(tmp_path_factory, sample_tokenizer_dir):
    """The sample tokenizer with two pieces' ids swapped: the same size, another vocabulary."""
    folder = tmp_path_factory.mktemp("other_tokenizer")
    for file in sample_tokenizer_dir.iterdir():
        if file.name != "tokenizer.model":  # the SentencePiece model would be converted back, unswapped
            shutil.copy(file, folder / file.name)
    spec = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    pieces = spec["model"]["vocab"]
    a, b = "▁ang", "▁ng"
    pieces[a], pieces[b] = pieces[b], pieces[a]
    (folder / "tokenizer.json").write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    return folder


def test_training_refuses_data_from_another_tokenizer_naming_both(
    data_root, tmp_path, other_tokenizer, vocab
):
    other = Vocabulary.load(other_tokenizer)
    assert other.size == vocab.size and other.fingerprint != vocab.fingerprint
    plan = plan_for(data_root, tmp_path, f"model.tokenizer={other_tokenizer}", "loop.steps=2")
    with pytest.raises(TokenizerMismatch) as error:
        train(plan)
    message = str(error.value)
    assert str(other_tokenizer) in message and other.fingerprint[:12] in message  # what training uses
    assert vocab.fingerprint[:12] in message and "chunk_01_text_document" in message  # what the data used
    assert not list(tmp_path.rglob("step_*"))


def test_empty_chunks_are_left_out_of_the_blend_with_a_note(data_root, tmp_path, vocab, caplog):
    plan = plan_for(data_root, tmp_path, "data.num_chunks=3", "loop.steps=2")
    with caplog.at_level(logging.WARNING, logger="morphcpt.train.data"):
        data = build_datasets(plan.data, plan.loop, vocab, tmp_path / "cache")
    assert [p.name for p in data.prefixes] == ["chunk_01_text_document", "chunk_02_text_document"]
    assert "chunk_03_text_document holds no documents" in caplog.text
    assert train(plan).final_step == 2  # megatron-core never sees the empty file


def test_only_empty_chunks_is_a_clear_error(data_root, tmp_path, vocab):
    shutil.copytree(data_root / "validation", tmp_path / "validation")
    empty = tmp_path / "chunk_01.jsonl"
    empty.write_bytes(b"")
    run(compose_config([f"input={empty}", f"output_dir={tmp_path}", "index_offset=0", "progress=false"]))
    plan = plan_for(tmp_path, tmp_path / "out", "data.num_chunks=1", "loop.steps=2")
    with pytest.raises(DataNotReady, match="is empty: nothing to train on"):
        build_datasets(plan.data, plan.loop, vocab, tmp_path / "cache")


# ---------------------------------------------------------------------------------------------- checkpoints


def _corrupt(kind: str, step: Path) -> None:
    model = step / "model" / "model.safetensors"
    if kind == "truncated weights":
        model.write_bytes(model.read_bytes()[: model.stat().st_size // 2])
    elif kind == "flipped byte in weights":
        data = bytearray(model.read_bytes())
        data[len(data) // 2] ^= 0xFF
        model.write_bytes(bytes(data))
    elif kind == "empty trainer state":
        (step / "trainer.pt").write_bytes(b"")
    elif kind == "garbage trainer state":
        (step / "trainer.pt").write_bytes(b"not a torch file" * 10)
    elif kind == "missing rng state":
        (step / "rng_rank0.pt").unlink()
    elif kind == "missing meta":
        (step / "meta.json").unlink()
    elif kind == "garbage meta":
        (step / "meta.json").write_text("{")
    elif kind == "missing config":
        (step / "model" / "config.json").unlink()
    elif kind == "latest names a missing folder":
        shutil.rmtree(step)
    else:
        raise ValueError(kind)


CORRUPTIONS = [
    "truncated weights",
    "flipped byte in weights",
    "empty trainer state",
    "garbage trainer state",
    "missing rng state",
    "missing meta",
    "garbage meta",
    "missing config",
    "latest names a missing folder",
]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, data_root):
    out = tmp_path_factory.mktemp("out")
    plan = plan_for(data_root, out, "run_name=full", "loop.steps=4")
    result = train(plan)
    return plan, result


@pytest.mark.parametrize("kind", CORRUPTIONS)
def test_a_corrupt_latest_checkpoint_falls_back_to_the_previous_one(finished_run, tmp_path, kind, caplog):
    plan, _ = finished_run
    root = tmp_path / "checkpoints"
    shutil.copytree(plan.checkpoint_dir, root)
    assert (root / "latest").read_text() == "step_00000004"
    assert checkpoint_files.latest_checkpoint(root).name == "step_00000004"
    _corrupt(kind, root / "step_00000004")
    with caplog.at_level(logging.WARNING, logger="morphcpt.train.hf.checkpoints"):
        found = checkpoint_files.latest_checkpoint(root)
    assert found.name == "step_00000002"
    assert "step_00000004" in caplog.text  # the warning names the checkpoint it skipped


@pytest.mark.slow
def test_training_resumes_from_the_previous_checkpoint_and_matches_a_clean_run(
    finished_run, data_root, tmp_path
):
    plan, _ = finished_run
    resumed = plan_for(data_root, tmp_path, "run_name=full", "loop.steps=4")
    shutil.copytree(plan.run_dir, resumed.run_dir)
    _corrupt("truncated weights", resumed.checkpoint_dir / "step_00000004")
    result = train(resumed)
    assert result.final_step == 4 and not result.interrupted

    def numbers(run_dir):
        keep = ("kind", "step", "loss", "lr", "grad_norm", "val_loss")
        return [{k: v for k, v in row.items() if k in keep} for row in read_metrics(run_dir)]

    assert numbers(resumed.run_dir) == numbers(plan.run_dir)
    assert checkpoint_files.verify(resumed.checkpoint_dir / "step_00000004") is None


def test_exporting_a_chosen_corrupt_step_names_it(finished_run, data_root, tmp_path):
    from morphcpt.export import find_checkpoint

    plan, _ = finished_run
    copy = plan_for(data_root, tmp_path, "run_name=full", "loop.steps=4")
    shutil.copytree(plan.run_dir, copy.run_dir)
    _corrupt("truncated weights", copy.checkpoint_dir / "step_00000002")
    with pytest.raises(
        checkpoint_files.CheckpointError, match="step_00000002 is not usable: model/model.safetensors"
    ):
        find_checkpoint(copy, 2)
    assert find_checkpoint(copy, None)[1] == 4


def test_no_intact_checkpoint_is_an_error_listing_each(finished_run, tmp_path):
    plan, _ = finished_run
    root = tmp_path / "checkpoints"
    shutil.copytree(plan.checkpoint_dir, root)
    for step in ("step_00000002", "step_00000004"):
        _corrupt("empty trainer state", root / step)
    with pytest.raises(checkpoint_files.CheckpointError) as error:
        checkpoint_files.latest_checkpoint(root)
    assert "step_00000002" in str(error.value) and "step_00000004" in str(error.value)


def test_a_checkpoint_that_fails_its_check_never_becomes_latest(finished_run, monkeypatch, tmp_path):
    plan, _ = finished_run
    root = tmp_path / "checkpoints"
    shutil.copytree(plan.checkpoint_dir, root)
    model = load_strict(root / "step_00000004" / "model")
    real = checkpoints.manifest

    def misrecorded(folder):
        files = real(folder)
        files["trainer.pt"]["bytes"] += 1  # as if the file on disk were not what was written
        return files

    monkeypatch.setattr(checkpoints, "manifest", misrecorded)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    state = checkpoints.TrainerState(step=6, consumed_samples=24)
    tokenizer = Vocabulary.load(root / "step_00000004" / "model").tokenizer
    with pytest.raises(checkpoint_files.CheckpointError, match="step_00000006 failed its check"):
        checkpoints.save(root, model, tokenizer, optimizer, scheduler, state, {}, keep=3)
    assert (root / "latest").read_text() == "step_00000004"
    assert not (root / "step_00000006").exists()


def test_errors_loading_an_old_checkpoint_name_it(finished_run, tmp_path):
    plan, _ = finished_run
    step = tmp_path / "step_00000004"
    shutil.copytree(plan.checkpoint_dir / "step_00000004", step)
    (step / "files.json").unlink()  # as written before checksums existed: nothing to verify against
    (step / "trainer.pt").write_bytes(b"garbage")
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)
    with pytest.raises(checkpoint_files.CheckpointError, match=f"checkpoint {step}: cannot restore"):
        checkpoints.load_trainer(step, optimizer, scheduler)
    model = step / "model" / "model.safetensors"
    model.write_bytes(model.read_bytes()[:100])
    with pytest.raises(WeightLoadError, match=f"{step / 'model'}: cannot load the model"):
        load_strict(step / "model")


def test_a_missing_model_folder_is_one_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="model folder not found: .*nowhere") as error:
        load_strict(tmp_path / "nowhere")
    assert error.value.__cause__ is None and error.value.__context__ is None


# ----------------------------------------------------------------------------------------------- exit status


def test_an_interrupted_run_says_so_and_sigterm_exits_143(tmp_path, capsys):
    def result(**flags):
        return RunResult(tmp_path, 3, 1.0, 1.0, tmp_path / "step_00000003", **flags)

    assert exit_status(result(interrupted=False)) == 0
    assert exit_status(result(interrupted=True, signalled=True)) == 143
    assert "stopped by SIGTERM at step 3" in capsys.readouterr().err
    assert exit_status(result(interrupted=True)) == 0
    assert "stopped by loop.max_steps_per_run at step 3" in capsys.readouterr().err
