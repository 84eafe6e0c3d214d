"""The hf engine at scale, on CPU with gloo: FSDP2 at 2 ranks under torchrun computes what one process does,
activation checkpointing changes nothing, fsdp checkpoints (torch.distributed.checkpoint) resume exactly and on
another number of ranks, LoRA trains only its adapters and exports merged; bad layouts are clear errors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from morphcpt.modeling import checkpoint_files
from morphcpt.modeling.models import build_model, tiny_config
from morphcpt.train import load_plan
from morphcpt.train.hf.engine import train
from morphcpt.train.hf.metrics import read_metrics
from scale_scenarios import STEPS
from suite_paths import TESTS
from train_helpers import write_data

SCENARIOS = TESTS / "scale_scenarios.py"
KEEP = ("kind", "step", "loss", "lr", "grad_norm", "consumed_samples", "val_loss", "val_bpb")


def numbers(run_dir: Path) -> list[dict]:
    return [{k: v for k, v in row.items() if k in KEEP} for row in read_metrics(run_dir)]


def assert_close(got: list[dict], want: list[dict], rel: float) -> None:
    assert [(r["kind"], r["step"]) for r in got] == [(r["kind"], r["step"]) for r in want]
    for a, b in zip(got, want, strict=True):
        key = "loss" if a["kind"] == "train" else "val_loss"
        assert a[key] == pytest.approx(b[key], rel=rel), (a, b)


@pytest.fixture(scope="module")
def data_root(tmp_path_factory, sample_corpus):
    return write_data(tmp_path_factory.mktemp("data"), sample_corpus, limit=400, num_chunks=2)


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory, data_root, tiny_gemma3):
    """The runs of tests/scale_scenarios.py, launched once with 2 ranks; their output root."""
    out = tmp_path_factory.mktemp("scale")
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", str(SCENARIOS)]
    done = subprocess.run(
        [*command, str(data_root), str(out), str(tiny_gemma3)], capture_output=True, text=True, timeout=500
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return out


@pytest.fixture(scope="module")
def one_process(tmp_path_factory, data_root):
    plan = load_plan([*STEPS, f"data.root={data_root}", f"output_root={tmp_path_factory.mktemp('one')}"])
    return train(plan)


@pytest.mark.slow
def test_fsdp_at_two_ranks_matches_one_process_and_writes_shards(two_ranks, one_process):
    run = two_ranks / "runs" / "fsdp"
    assert_close(numbers(run), numbers(one_process.run_dir), rel=1e-5)
    latest = checkpoint_files.latest_checkpoint(run / "checkpoints")
    meta = checkpoint_files.read_meta(latest)
    assert (meta["sharding"], meta["world_size"]) == ("fsdp", 2)
    assert {p.name for p in (latest / "sharded").iterdir()} >= {".metadata", "__0_0.distcp", "__1_0.distcp"}
    assert torch.load(latest / "trainer.pt", weights_only=False)["optimizer"] is None  # it is in sharded/


@pytest.mark.slow
def test_fp16_with_a_sharded_loss_scale_at_two_ranks_matches_one_process(two_ranks, data_root, tmp_path):
    plan = load_plan(
        [*STEPS, f"data.root={data_root}", f"output_root={tmp_path}", "loop.precision=fp16-mixed"]
    )
    one = train(plan)
    # fp16 rounding differs with the order of the gradient sums (the shards' reduce-scatter vs one process)
    assert_close(numbers(two_ranks / "runs" / "fsdp_fp16"), numbers(one.run_dir), rel=1e-4)
    scaler = torch.load(one.checkpoint_dir / "trainer.pt", weights_only=False)["scheduler"]["grad_scaler"]
    assert scaler["scale"] > 0


@pytest.mark.slow
def test_activation_checkpointing_gives_the_same_losses(two_ranks):
    runs = two_ranks / "runs"
    assert_close(numbers(runs / "fsdp_ac"), numbers(runs / "fsdp"), rel=1e-6)


@pytest.mark.slow
def test_fsdp_resume_is_exact(two_ranks):
    runs = two_ranks / "runs"
    assert numbers(runs / "fsdp_resumed") == numbers(runs / "fsdp")  # floats compared exactly
    meta = json.loads((runs / "fsdp_resumed" / "metadata.json").read_text())
    assert [(r["from"], r["world_size"]) for r in meta["resumes"]] == [("step_00000002", 2)]


@pytest.mark.slow
def test_hsdp_replicas_compute_what_one_process_does_and_resume_as_one_copy(two_ranks):
    """Two replicas of a one-rank shard (the 2-D mesh of FSDP2 on several nodes), resumed as one copy over both."""
    runs = two_ranks / "runs"
    assert_close(numbers(runs / "hsdp"), numbers(runs / "fsdp"), rel=1e-5)
    meta = json.loads((runs / "hsdp" / "metadata.json").read_text())
    assert [(r["from"], r["world_size"]) for r in meta["resumes"]] == [("step_00000002", 2)]


def test_an_fsdp_shard_size_that_splits_no_copy_is_refused(monkeypatch):
    from morphcpt.plan.schema import LoopPlan
    from morphcpt.train.hf.parallel import ShardingError, fsdp_mesh

    monkeypatch.setattr(torch.distributed, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.distributed, "get_world_size", lambda: 6)
    with pytest.raises(ShardingError, match="fsdp_shard_size=4 does not divide the 6 ranks"):
        fsdp_mesh(LoopPlan(sharding="fsdp", fsdp_shard_size=4), torch.device("cpu"))
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "6")
    assert fsdp_mesh(LoopPlan(sharding="fsdp"), torch.device("cpu")) is None  # one node: plain FSDP


@pytest.mark.slow
def test_a_two_rank_fsdp_checkpoint_resumes_on_one_rank(two_ranks, data_root):
    """World size 1 with fsdp, resuming a 2-rank checkpoint: DCP reshards the optimiser state on load."""
    plan = load_plan(
        [
            *STEPS,
            f"data.root={data_root}",
            f"output_root={two_ranks}",
            "run_name=fsdp_reshard",
            "loop.sharding=fsdp",
        ]
    )
    result = train(plan)
    assert (result.final_step, result.interrupted) == (4, False)
    assert_close(numbers(result.run_dir), numbers(two_ranks / "runs" / "fsdp"), rel=1e-5)
    meta = json.loads((result.run_dir / "metadata.json").read_text())
    assert [(r["from"], r["world_size"]) for r in meta["resumes"]] == [("step_00000002", 1)]


@pytest.mark.slow
def test_a_checkpoint_of_another_layout_is_refused_naming_both(two_ranks, data_root, tmp_path):
    shutil.copytree(two_ranks / "runs" / "fsdp", tmp_path / "runs" / "fsdp")
    plan = load_plan(
        [*STEPS, f"data.root={data_root}", f"output_root={tmp_path}", "run_name=fsdp", "loop.steps=4"]
    )
    with pytest.raises(checkpoint_files.CheckpointError, match="loop.sharding=fsdp.*cannot be converted"):
        train(plan)  # the plan says ddp


@pytest.mark.slow
def test_lora_trains_only_the_adapters(two_ranks, tiny_gemma3):
    latest = checkpoint_files.latest_checkpoint(two_ranks / "runs" / "lora" / "checkpoints")
    base, start = (
        load_file(latest / "model" / "model.safetensors"),
        load_file(tiny_gemma3 / "model.safetensors"),
    )
    assert base.keys() == start.keys()
    assert all(torch.equal(base[k], start[k]) for k in start)  # bitwise unchanged
    adapter = load_file(latest / "adapter" / "adapter_model.safetensors")
    targets = {k.split(".lora_")[0].rsplit(".", 1)[-1] for k in adapter}
    assert targets == {"q_proj", "v_proj", "down_proj"}
    lora_b = [t for k, t in adapter.items() if "lora_B" in k]
    assert lora_b and all(t.abs().sum() > 0 for t in lora_b)  # PEFT starts B at zero: these were trained
    optimizer = torch.load(latest / "trainer.pt", weights_only=False)["optimizer"]
    assert len(optimizer["state"]) == len(adapter)  # Adam moments for the adapters only


@pytest.mark.slow
def test_lora_export_is_merged_and_matches_the_adapter_model(two_ranks, tmp_path):
    from transformers import AutoModelForCausalLM

    from morphcpt.export import export_run
    from morphcpt.modeling import lora
    from morphcpt.modeling.models import load_strict

    run = two_ranks / "runs" / "lora"
    result = export_run(run, output=tmp_path / "export")
    assert (
        result.parity["tolerance"] == "exact" and result.parity["max_abs_diff"] <= 1e-4
    )  # checked on export
    assert not any("lora" in k for k in load_file(result.output / "model.safetensors"))
    latest = checkpoint_files.latest_checkpoint(run / "checkpoints")
    adapted = lora.load_lora(load_strict(latest / "model"), latest / "adapter", trainable=False).eval()
    merged = AutoModelForCausalLM.from_pretrained(result.output, dtype=torch.float32).eval()
    ids = torch.arange(3, 40).view(1, -1)
    with torch.no_grad():
        torch.testing.assert_close(
            merged(input_ids=ids).logits, adapted(input_ids=ids).logits, rtol=0, atol=1e-4
        )
        plain = load_strict(latest / "model").eval()(input_ids=ids).logits
    assert not torch.allclose(plain, adapted(input_ids=ids).logits, atol=1e-4)  # the adapters did something


def tiny_model(vocab):
    return build_model(tiny_config(vocab.size), seed=0)


def test_lora_target_modules_that_do_not_exist_are_named(vocab):
    from morphcpt.modeling.lora import LoraError, apply_lora
    from morphcpt.plan.schema import PeftPlan

    with pytest.raises(LoraError, match=r"\['qkv_proj'\] are not modules of Gemma3ForCausalLM.*'q_proj'"):
        apply_lora(tiny_model(vocab), PeftPlan(method="lora", target_modules=["q_proj", "qkv_proj"]), seed=0)


def test_a_model_without_findable_layers_cannot_be_sharded(vocab):
    from morphcpt.plan.schema import LoopPlan
    from morphcpt.train.hf.parallel import ShardingError, shard

    model = tiny_model(vocab)
    model._no_split_modules = None  # what a custom model without transformers' layer list looks like
    for loop in (LoopPlan(sharding="fsdp"), LoopPlan(activation_checkpointing=True)):
        with pytest.raises(ShardingError, match="cannot find the decoder layers of Gemma3ForCausalLM"):
            shard(model, loop, torch.device("cpu"), bf16=False, world=1)


def test_offload_without_enough_host_memory_is_refused(vocab, monkeypatch):
    from morphcpt.plan.schema import LoopPlan
    from morphcpt.train.data import ensure_process_group
    from morphcpt.train.hf import parallel

    model = tiny_model(vocab)
    need = 16 * sum(p.numel() for p in model.parameters())
    monkeypatch.setattr(parallel, "host_memory_bytes", lambda: need)  # 90% of it is not enough
    loop = LoopPlan(sharding="fsdp", cpu_offload=True)
    with pytest.raises(parallel.ShardingError, match=r"cpu_offload=true needs about .* GiB of host memory"):
        parallel.shard(model, loop, torch.device("cpu"), bf16=False, world=1)
    monkeypatch.setattr(parallel, "host_memory_bytes", lambda: 2 * need)
    own = ensure_process_group(torch.device("cpu"))
    try:
        assert parallel.is_fsdp(parallel.shard(model, loop, torch.device("cpu"), bf16=False, world=1))
    finally:
        if own:
            torch.distributed.destroy_process_group()


def test_activation_checkpointing_is_switched_on_in_every_layer(vocab):
    from morphcpt.plan.schema import LoopPlan
    from morphcpt.train.hf.parallel import decoder_layers, shard

    model = tiny_model(vocab)
    shard(model, LoopPlan(activation_checkpointing=True), torch.device("cpu"), bf16=False, world=1)
    assert all(layer.gradient_checkpointing for layer in decoder_layers(model))


def test_layout_keys_are_checked_and_left_out_of_the_config_hash():
    base = load_plan(["recipe=demo_base"])
    for layout in ("loop.sharding=fsdp", "loop.activation_checkpointing=true"):
        assert load_plan(["recipe=demo_base", layout]).config_hash() == base.config_hash()  # may resume
    assert load_plan(["recipe=demo_base", "peft.method=lora"]).config_hash() != base.config_hash()
    for bad, why in (
        ("loop.sharding=zero3", "loop.sharding must be one of"),
        ("loop.cpu_offload=true", "cpu_offload=true needs loop.sharding=fsdp"),
        ("peft.method=qlora", "peft.method must be one of"),
    ):
        with pytest.raises(ValueError, match=why):
            load_plan(["recipe=demo_base", bad])
    with pytest.raises(ValueError, match="lora runs under loop.sharding=ddp"):
        load_plan(["recipe=demo_base", "peft.method=lora", "loop.sharding=fsdp"])
