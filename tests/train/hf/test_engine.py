"""The hf engine on CPU with the tiny Gemma 3: trains, validates (loss and bits per byte), checkpoints, resumes
bit-for-bit, stops cleanly on SIGTERM, loads pretrained weights only when they load completely."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time

import pytest
import torch
from safetensors.torch import load_file, save_file

from morphcpt.modeling import checkpoint_files
from morphcpt.modeling.models import WeightLoadError, build_model, load_pretrained, tiny_config
from morphcpt.plan.schema import OptimPlan
from morphcpt.train import load_plan
from morphcpt.train.data import DataNotReady, build_datasets, check_ready, collate, dataset_bytes, fingerprint
from morphcpt.train.hf.engine import train
from morphcpt.train.hf.metrics import read_metrics
from morphcpt.train.hf.optim import lr_multiplier, param_groups
from train_helpers import read_texts, write_data

SMALL = [
    "data.num_chunks=2",
    "loop.steps=6",
    "loop.seq_length=32",
    "loop.global_batch_size=4",
    "loop.micro_batch_size=2",
    "optim.warmup_steps=2",
    "validation.interval=3",
    "validation.max_batches=4",
    "checkpoint.interval=4",
]


@pytest.fixture(scope="module")
def data_root(tmp_path_factory, sample_corpus):
    root = tmp_path_factory.mktemp("data")
    return write_data(
        root, sample_corpus, limit=400, schemes=("vanilla", "stochastok", "patok"), num_chunks=2
    )


def small_plan(data_root, out, *extra):
    return load_plan(["recipe=demo_base", f"data.root={data_root}", f"output_root={out}", *SMALL, *extra])


@pytest.fixture(scope="module")
def straight_run(tmp_path_factory, data_root):
    plan = small_plan(data_root, tmp_path_factory.mktemp("out"), "run_name=straight")
    return plan, train(plan)


def test_run_folder_records_config_metadata_and_data(straight_run):
    plan, result = straight_run
    run_dir = result.run_dir
    assert (result.final_step, result.interrupted) == (6, False)
    assert {"config.yaml", "metadata.json", "data_fingerprint.json", "metrics.jsonl", "tensorboard"} <= {
        p.name for p in run_dir.iterdir()
    }
    assert list((run_dir / "tensorboard").glob("events.out.tfevents.*"))
    meta = json.loads((run_dir / "metadata.json").read_text())
    assert (meta["engine"], meta["scheme"], meta["config_hash"]) == ("hf", "vanilla", plan.config_hash())
    rows = read_metrics(run_dir)
    train_rows = [r for r in rows if r["kind"] == "train"]
    assert [r["step"] for r in train_rows] == [1, 2, 3, 4, 5, 6]
    assert all(r["tokens_per_s"] > 0 and r["peak_memory_mb"] > 0 and r["grad_norm"] > 0 for r in train_rows)
    assert [r["step"] for r in rows if r["kind"] == "val"] == [3, 6]
    # warmup then cosine decay to min_lr
    lrs = [r["lr"] for r in train_rows]
    assert lrs[0] < lrs[1] == pytest.approx(plan.optim.lr) and lrs[1] > lrs[2] > lrs[-1]
    assert lrs[-1] == pytest.approx(plan.optim.min_lr)
    assert result.checkpoint_dir == checkpoint_files.latest_checkpoint(plan.checkpoint_dir)
    assert (result.checkpoint_dir / "model" / "tokenizer.json").exists()


@pytest.mark.slow
def test_killed_and_resumed_run_matches_the_uninterrupted_one(straight_run, data_root, tmp_path):
    _, straight = straight_run
    first = train(small_plan(data_root, tmp_path, "run_name=resumed", "loop.max_steps_per_run=3"))
    assert (first.final_step, first.interrupted) == (3, True)
    assert first.checkpoint_dir.name == "step_00000003"
    second = train(small_plan(data_root, tmp_path, "run_name=resumed"))
    assert (second.final_step, second.interrupted) == (6, False)

    def numbers(run_dir):
        keep = ("kind", "step", "loss", "lr", "grad_norm", "consumed_samples", "val_loss", "val_bpb")
        return [{k: v for k, v in row.items() if k in keep} for row in read_metrics(run_dir)]

    assert numbers(second.run_dir) == numbers(straight.run_dir)  # bit-for-bit: floats compared exactly
    meta = json.loads((second.run_dir / "metadata.json").read_text())
    assert [r["from"] for r in meta["resumes"]] == ["step_00000003"]


def test_resume_refuses_a_different_plan(straight_run, data_root):
    plan, _ = straight_run
    with pytest.raises(RuntimeError, match="another plan"):
        train(small_plan(data_root, plan.output_root, "run_name=straight", "optim.lr=1e-2"))


def test_bits_per_byte_uses_the_bytes_of_the_text(straight_run, data_root, vocab, sample_corpus):
    _, result = straight_run
    tokens, nbytes = dataset_bytes(data_root / "validation" / "validation_text_document", _table(vocab))
    assert nbytes == sum(
        len(t.encode("utf-8")) for t in read_texts(sample_corpus, 40)
    )  # bos/eos spell nothing
    val = [r for r in read_metrics(result.run_dir) if r["kind"] == "val"][-1]
    assert val["val_bpb"] == pytest.approx(
        val["val_loss"] * val["val_tokens"] / math.log(2) / val["val_bytes"]
    )
    assert 0 < val["val_bytes"] <= nbytes and val["val_tokens"] < tokens


def _table(vocab):
    from morphcpt.train.data import byte_table

    return byte_table(vocab)


def test_fingerprint_tells_the_schemes_apart(data_root, vocab, tmp_path):
    prints = {}
    for scheme in ("vanilla", "stochastok", "patok"):
        plan = small_plan(data_root, tmp_path, f"data.scheme={scheme}")
        prints[scheme] = fingerprint(build_datasets(plan.data, plan.loop, vocab, tmp_path / scheme), 64)
    assert len({p["first_samples_sha256"] for p in prints.values()}) == 3
    # the same text cut into more tokens: more tokens per byte than the canonical ids
    assert prints["stochastok"]["expansion_vs_validation"] > prints["vanilla"]["expansion_vs_validation"]
    assert prints["patok"]["expansion_vs_validation"] > prints["vanilla"]["expansion_vs_validation"]
    assert all("/patok/" in key or "/validation/" in key for key in prints["patok"]["indexes"])


def test_missing_data_is_reported_with_the_fix(data_root, tmp_path):
    plan = small_plan(data_root, tmp_path, "data.num_chunks=3", "data.scheme=patok")
    with pytest.raises(DataNotReady, match="chunk_03_text_document") as err:
        check_ready(plan.data)
    assert "preprocess" in str(err.value)


@pytest.mark.slow
def test_gradient_accumulation_matches_the_full_batch(data_root, tmp_path):
    accumulated = train(
        small_plan(data_root, tmp_path, "run_name=acc", "loop.steps=3", "loop.micro_batch_size=1")
    )
    full = train(small_plan(data_root, tmp_path, "run_name=full", "loop.steps=3", "loop.micro_batch_size=4"))
    losses = [
        [r["loss"] for r in read_metrics(run.run_dir) if r["kind"] == "train"] for run in (accumulated, full)
    ]
    assert losses[0] == pytest.approx(losses[1], rel=1e-5)


@pytest.mark.slow
def test_cpt_starts_from_the_pretrained_weights(tiny_gemma3, data_root, vocab, tmp_path):
    plan = small_plan(
        data_root, tmp_path, f"model.pretrained={tiny_gemma3}", "model.tokenizer=null", "loop.steps=3"
    )
    result = train(plan)
    data = build_datasets(plan.data, plan.loop, vocab, tmp_path / "cache")
    batch = collate(data.train, range(plan.loop.global_batch_size))
    model = load_pretrained(tiny_gemma3).eval()
    with torch.no_grad():
        logits = model(input_ids=batch["tokens"]).logits
    expected = torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten()).item()
    first = next(r for r in read_metrics(result.run_dir) if r["kind"] == "train")
    assert first["loss"] == pytest.approx(expected, rel=1e-5)


def test_partial_or_resized_weights_are_refused(vocab, tmp_path):
    model = build_model(tiny_config(vocab.size), seed=1)
    model.save_pretrained(tmp_path / "ok")
    assert load_pretrained(tmp_path / "ok", vocab_size=vocab.size) is not None
    with pytest.raises(WeightLoadError, match="vocab_size"):
        load_pretrained(tmp_path / "ok", vocab_size=vocab.size * 2)
    model.save_pretrained(tmp_path / "partial")
    weights = load_file(tmp_path / "partial" / "model.safetensors")
    weights.pop("model.layers.0.mlp.down_proj.weight")
    save_file(weights, tmp_path / "partial" / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(WeightLoadError, match="down_proj"):
        load_pretrained(tmp_path / "partial")


def test_a_dequantized_folder_still_marked_gguf_loads_and_saves(vocab, tmp_path):
    """A folder of weights dequantized from a GGUF file whose config.json kept `quantization_config: gguf` (as a
    hand conversion of the real Gemma 3 270M did): the hf engine trains from it, and its checkpoints must still
    save and export (transformers refuses to save a model it believes GGUF-quantized)."""
    build_model(tiny_config(vocab.size), seed=1).save_pretrained(tmp_path / "base")
    config = json.loads((tmp_path / "base" / "config.json").read_text())
    config["quantization_config"] = {"dequantize": False, "gguf_file": "m.gguf", "quant_method": "gguf"}
    (tmp_path / "base" / "config.json").write_text(json.dumps(config))
    model = load_pretrained(tmp_path / "base", vocab_size=vocab.size)
    model.save_pretrained(tmp_path / "saved")  # refused before: "The model is quantized with gguf"
    assert "quantization_config" not in json.loads((tmp_path / "saved" / "config.json").read_text())
    assert torch.equal(
        load_file(tmp_path / "saved" / "model.safetensors")["model.embed_tokens.weight"],
        load_file(tmp_path / "base" / "model.safetensors")["model.embed_tokens.weight"],
    )


def test_schedule_and_weight_decay_groups(vocab):
    optim = OptimPlan(lr=1.0, min_lr=0.1, warmup_steps=4)
    lrs = [lr_multiplier(s, optim, 20) for s in range(20)]
    assert lrs[:4] == [0.25, 0.5, 0.75, 1.0]
    assert all(a > b for a, b in zip(lrs[3:], lrs[4:], strict=False)) and lrs[-1] == pytest.approx(0.1)
    model = build_model(tiny_config(vocab.size), seed=0)
    decay, no_decay = param_groups(model, 0.1)
    assert any(
        p is model.get_input_embeddings().weight for p in decay["params"]
    )  # tied with the output layer
    assert all(p.ndim == 1 for p in no_decay["params"]) and no_decay["weight_decay"] == 0.0
    assert len(decay["params"]) + len(no_decay["params"]) == len(list(model.parameters()))


@pytest.mark.slow
def test_sigterm_writes_a_checkpoint_and_the_run_resumes(data_root, tmp_path):
    overrides = ["recipe=demo_base", f"data.root={data_root}", f"output_root={tmp_path}", *SMALL]
    overrides += ["run_name=killed", "loop.steps=400", "validation.interval=1000", "checkpoint.interval=1000"]
    proc = subprocess.Popen([sys.executable, "-m", "morphcpt.train", *overrides], stderr=subprocess.DEVNULL)
    run_dir = tmp_path / "runs" / "killed"
    deadline = time.time() + 240
    while len(read_metrics(run_dir)) < 2 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=120) == 143  # 128 + SIGTERM: a job script can tell it was interrupted
    stopped = max(r["step"] for r in read_metrics(run_dir))
    assert 2 <= stopped < 400
    latest = checkpoint_files.latest_checkpoint(run_dir / "checkpoints")
    assert checkpoint_files.read_meta(latest)["step"] == stopped
    resumed = train(load_plan([*overrides, f"loop.max_steps_per_run={2}"]))
    steps = [r["step"] for r in read_metrics(run_dir) if r["kind"] == "train"]
    assert steps == list(range(1, stopped + 3)) and resumed.final_step == stopped + 2


def test_wandb_offline_never_writes_the_key(data_root, tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_API_KEY", "wandb-key-that-must-not-leak")
    plan = small_plan(data_root, tmp_path, "run_name=wb", "loop.steps=3", "logging.wandb=true")
    plan.logging.wandb_mode = "offline"
    try:
        import wandb  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install"):
            train(plan)
        return
    train(plan)
    leaked = [
        p for p in tmp_path.rglob("*") if p.is_file() and b"wandb-key-that-must-not-leak" in p.read_bytes()
    ]
    assert leaked == []


@pytest.mark.slow
def test_two_ranks_under_torchrun_match_one_process(straight_run, data_root, tmp_path):
    _, straight = straight_run
    overrides = [
        "recipe=demo_base",
        f"data.root={data_root}",
        f"output_root={tmp_path}",
        *SMALL,
        "run_name=ddp",
    ]
    torchrun = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "-m",
        "morphcpt.train",
    ]
    done = subprocess.run([*torchrun, *overrides], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    run_dir = tmp_path / "runs" / "ddp"
    assert {
        p.name for p in checkpoint_files.latest_checkpoint(run_dir / "checkpoints").glob("rng_rank*.pt")
    } == {
        "rng_rank0.pt",
        "rng_rank1.pt",
    }
    two, one = read_metrics(run_dir), read_metrics(straight.run_dir)
    assert [r["step"] for r in two] == [r["step"] for r in one]
    for a, b in zip(two, one, strict=True):
        assert a.get("loss", a.get("val_loss")) == pytest.approx(b.get("loss", b.get("val_loss")), rel=1e-5)


def test_reference_shape_is_gemma3_1b():
    from morphcpt.modeling.models import gemma3_1b_config

    config = gemma3_1b_config()
    model = build_model(config, seed=0, device="meta")  # not 4 GB of weights drawn on the CPU
    assert next(model.parameters()).is_meta
    assert 0.99e9 < sum(p.numel() for p in model.parameters()) < 1.01e9
    assert config.layer_types.count("full_attention") == 4 and config.layer_types[5] == "full_attention"


@pytest.mark.slow
def test_any_causal_lm_continues_pretraining_and_exports(data_root, vocab, tmp_path, sample_tokenizer_dir):
    # not a Gemma: a tiny Llama, loaded through AutoModelForCausalLM by folder
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from morphcpt.export import export_run

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=vocab.size, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=256, bos_token_id=vocab.bos_id, eos_token_id=vocab.eos_id,
        pad_token_id=vocab.pad_id,
    )  # fmt: skip
    LlamaForCausalLM(config).save_pretrained(tmp_path / "llama")
    AutoTokenizer.from_pretrained(sample_tokenizer_dir).save_pretrained(tmp_path / "llama")
    plan = small_plan(
        data_root, tmp_path / "out", f"model.pretrained={tmp_path / 'llama'}", "model.tokenizer=null",
        "loop.steps=3", "run_name=llama",
    )  # fmt: skip
    result = train(plan)
    assert result.final_step == 3 and math.isfinite(result.val_loss)
    exported = export_run(result.run_dir, output=tmp_path / "export").output
    model = AutoModelForCausalLM.from_pretrained(exported)
    assert type(model).__name__ == "LlamaForCausalLM"
    trained = load_file(result.checkpoint_dir / "model" / "model.safetensors")
    start = load_file(tmp_path / "llama" / "model.safetensors")
    assert not torch.equal(
        trained["model.layers.0.mlp.down_proj.weight"], start["model.layers.0.mlp.down_proj.weight"]
    )


def test_the_pilot_recipe_trains_a_replicate_on_its_token_budget(tmp_path, sample_corpus):
    """The pilot recipe on the hf engine (tiny model standing in for gemma-3-270m): the token budget sets the
    steps, seed 1 reads patok's seed1/ ids, and the run and its export carry the seed."""
    from morphcpt.export import export_run
    from morphcpt.preprocess import compose_config
    from morphcpt.preprocess import run as preprocess

    root = write_data(tmp_path / "data", sample_corpus, limit=160, schemes=("vanilla", "patok"))
    chunk = root / "jsonl" / "chunk_01.jsonl"
    preprocess(
        compose_config(
            [
                "scheme=patok",
                f"input={chunk}",
                "index_offset=40",
                f"output_dir={root}",
                "progress=false",
                "replicate=1",
            ]
        )
    )
    plan = load_plan(
        [
            "recipe=pilot_patok",
            "engine=hf",
            "model=tiny",
            "data.replicate=1",
            f"data.root={root}",
            f"output_root={tmp_path / 'out'}",
            "data.num_chunks=1",
            "loop.train_tokens=256",
            "loop.seq_length=32",
            "loop.global_batch_size=4",
            "loop.micro_batch_size=4",
            "loop.precision=fp32",
            "optim.warmup_steps=1",
            "validation.interval=2",
            "validation.max_batches=2",
            "checkpoint.interval=2",
            "logging.wandb=false",
        ]
    )
    assert plan.loop.steps == 2 and plan.run_name == "gemma3-270m-patok-seed1"
    result = train(plan)
    assert result.final_step == 2
    indexes = json.loads((result.run_dir / "data_fingerprint.json").read_text())["indexes"]
    assert any("/patok/seed1/" in key for key in indexes)
    exported = export_run(result.run_dir, output=tmp_path / "export").output
    meta = json.loads((exported / "morphcpt_metadata.json").read_text())
    assert (meta["replicate"], meta["run_name"], meta["scheme"]) == (1, "gemma3-270m-patok-seed1", "patok")
