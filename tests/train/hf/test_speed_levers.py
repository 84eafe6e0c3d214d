"""The hf engine's speed levers on CPU: compiled and eager runs give the same losses; bf16 parameters with fp32
master weights train like fp32 and resume exactly; a checkpoint written in the background resumes exactly and is
the same files as one written in the foreground, and a failed one never becomes `latest`; `auto` runs the micro
batch the planner picks. (The chunked cross entropy itself: tests/modeling/test_loss.py.)"""

from __future__ import annotations

import json

import pytest
import torch

from morphcpt.modeling import checkpoint_files
from morphcpt.train.hf import checkpoints
from morphcpt.train.hf.engine import train
from morphcpt.train.memory import planner
from train_helpers import tiny_plan as plan_for
from train_helpers import train_losses as losses
from train_helpers import write_data

# Compiled and eager fp32 runs on CPU: inductor fuses and reorders float operations, so losses may differ in the
# last bits; the stated tolerance (relative, per step) is far below anything training could notice.
COMPILE_TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def data_root(tmp_path_factory, sample_corpus):
    return write_data(tmp_path_factory.mktemp("data"), sample_corpus, limit=200, num_chunks=1)


# --- the engine ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_compiled_and_eager_runs_give_the_same_losses(data_root, tmp_path):
    eager = train(plan_for(data_root, tmp_path, "run_name=eager", "loop.compile=none"))
    compiled = train(plan_for(data_root, tmp_path, "run_name=compiled", "loop.compile=layers"))
    a, b = losses(eager.run_dir), losses(compiled.run_dir)
    assert len(a) == len(b) == 4
    worst = max(abs(x - y) / abs(x) for x, y in zip(a, b, strict=True))
    print(f"compiled vs eager: largest relative loss difference over 4 steps {worst:.2e}")
    assert worst <= COMPILE_TOLERANCE
    assert compiled.val_loss == pytest.approx(eager.val_loss, rel=COMPILE_TOLERANCE)


@pytest.mark.slow
def test_bf16_parameters_with_fp32_masters_train_like_fp32_and_resume_exactly(data_root, tmp_path):
    fp32 = train(plan_for(data_root, tmp_path, "run_name=fp32", "loop.param_dtype=fp32"))
    bf16 = train(plan_for(data_root, tmp_path, "run_name=bf16", "loop.param_dtype=bf16"))
    for x, y in zip(losses(fp32.run_dir), losses(bf16.run_dir), strict=True):
        assert y == pytest.approx(x, rel=3e-2)  # bf16 compute; the updates come from fp32 masters
    # the checkpoint holds the fp32 masters, not the bf16 parameters
    from safetensors.torch import load_file

    weights = load_file(bf16.checkpoint_dir / "model" / "model.safetensors")
    assert {t.dtype for t in weights.values()} == {torch.float32}
    assert json.loads((bf16.checkpoint_dir / "model" / "config.json").read_text())["dtype"] == "float32"
    assert any(not torch.equal(t, t.bfloat16().float()) for t in weights.values())  # not bf16-rounded
    # stopped after 2 steps and resumed: the same losses, bit for bit
    stopped = train(
        plan_for(
            data_root, tmp_path, "run_name=bf16_resumed", "loop.param_dtype=bf16", "loop.max_steps_per_run=2"
        )
    )
    assert stopped.interrupted
    resumed = train(plan_for(data_root, tmp_path, "run_name=bf16_resumed", "loop.param_dtype=bf16"))
    assert losses(resumed.run_dir) == losses(bf16.run_dir)


@pytest.mark.slow
def test_a_checkpoint_written_in_the_background_resumes_exactly_and_is_the_same_files(data_root, tmp_path):
    sync = train(plan_for(data_root, tmp_path, "run_name=sync", "checkpoint.async_save=false"))
    stopped = train(plan_for(data_root, tmp_path, "run_name=async", "loop.max_steps_per_run=3"))
    assert stopped.interrupted and stopped.final_step == 3
    resumed = train(plan_for(data_root, tmp_path, "run_name=async"))
    assert losses(resumed.run_dir) == losses(sync.run_dir)
    assert checkpoint_files.verify(resumed.checkpoint_dir) is None
    written = json.loads((resumed.checkpoint_dir / checkpoint_files.FILES).read_text())
    expected = json.loads((sync.checkpoint_dir / checkpoint_files.FILES).read_text())
    same = ("model/model.safetensors", "rng_rank0.pt")
    assert {k: written[k]["sha256"] for k in same} == {k: expected[k]["sha256"] for k in same}
    times = [
        json.loads(line) for line in (resumed.run_dir / "checkpoint_times.jsonl").read_text().splitlines()
    ]
    assert [t["step"] for t in times if "stall_s" in t] == [2, 3, 4] and times[-1]["write_s"] > 0


def test_a_failed_background_write_is_raised_and_never_becomes_latest(data_root, tmp_path, monkeypatch):
    def broken(root, tmp, final, keep):
        raise OSError("disk full")

    monkeypatch.setattr(checkpoints, "finalize", broken)
    plan = plan_for(data_root, tmp_path, "run_name=broken", "loop.steps=2")
    with pytest.raises(
        checkpoint_files.CheckpointError, match=r"step_00000002 could not be written: disk full"
    ):
        train(plan)
    assert not (plan.checkpoint_dir / checkpoint_files.LATEST).exists()


def test_auto_trains_with_the_micro_batch_the_planner_picks(data_root, tmp_path):
    plan = plan_for(data_root, tmp_path, "run_name=auto", "loop.micro_batch_size=auto", "loop.steps=2")
    expected = planner.rows(plan, "hf", 1)[0].largest
    assert expected == 4  # the tiny model: the whole per-rank batch fits
    result = train(plan)
    assert f"micro_batch_size: {expected}" in (result.run_dir / "config.yaml").read_text()
    assert plan.loop.micro_batch_size == expected
