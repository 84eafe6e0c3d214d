"""Export: a hf-engine checkpoint becomes a Hugging Face folder that loads with AutoModelForCausalLM, carries its
tokenizer and metadata, and computes the checkpoint's logits; parity checks catch a model that does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from morphcpt.export import METADATA_FILE, export_run, main
from morphcpt.modeling.logit_parity import ParityError, compare_logits, prompt_ids
from morphcpt.train import load_plan
from morphcpt.train.hf.engine import train
from train_helpers import write_data


@pytest.fixture(scope="module")
def run(tmp_path_factory, sample_corpus):
    root = tmp_path_factory.mktemp("export")
    data = write_data(root / "data", sample_corpus, limit=200, schemes=("patok",))
    plan = load_plan(
        [
            "recipe=demo_base",
            "data.scheme=patok",
            f"data.root={data}",
            f"output_root={root / 'out'}",
            "loop.steps=4",
            "loop.seq_length=32",
            "loop.global_batch_size=4",
            "loop.micro_batch_size=4",
            "optim.warmup_steps=1",
            "validation.interval=2",
            "validation.max_batches=2",
            "checkpoint.interval=2",
            "checkpoint.keep=2",
            "logging.tensorboard=false",
        ]
    )
    return plan, train(plan)


def test_export_loads_with_tokenizer_metadata_and_same_logits(run):
    plan, result = run
    exported = export_run(result.run_dir)
    assert exported.output == Path(plan.output_root) / "exports" / "demo-base"
    assert exported.step == 4 and exported.parity["max_abs_diff"] == 0.0
    meta = json.loads((exported.output / METADATA_FILE).read_text())
    assert {"scheme", "step", "base_model", "data", "config_hash", "engine", "created"} <= set(meta)
    assert (meta["scheme"], meta["step"], meta["engine"], meta["config_hash"]) == (
        "patok",
        4,
        "hf",
        plan.config_hash(),
    )
    assert meta["validation"]["step"] == 4
    model = AutoModelForCausalLM.from_pretrained(exported.output).eval()
    tokenizer = AutoTokenizer.from_pretrained(exported.output)
    source = AutoModelForCausalLM.from_pretrained(result.checkpoint_dir / "model").eval()
    ids, mask = prompt_ids(tokenizer)
    with torch.no_grad():
        parity = compare_logits(model(input_ids=ids).logits, source(input_ids=ids).logits, mask=mask)
    assert parity.ok() and parity.max_abs_diff == 0.0
    assert not exported.output.with_name("demo-base.tmp").exists()


def test_export_of_an_earlier_step_from_the_command_line(run, tmp_path, capsys):
    _, result = run
    assert main(["--run-dir", str(result.run_dir), "--step", "2", "--output", str(tmp_path / "step2")]) == 0
    assert json.loads((tmp_path / "step2" / METADATA_FILE).read_text())["step"] == 2
    assert "exported step 2" in capsys.readouterr().out
    with pytest.raises(FileNotFoundError):
        export_run(result.run_dir, step=3)


def test_parity_detects_a_different_model():
    torch.manual_seed(0)
    logits = torch.randn(2, 5, 50)
    assert compare_logits(logits, logits.clone()).ok()
    nudged = logits.clone()
    nudged[0, 0, 0] += 1e-2
    with pytest.raises(ParityError, match="max"):
        compare_logits(nudged, logits, tolerance="exact").check("nudged")
    assert compare_logits(nudged, logits, tolerance="bf16").ok()
    with pytest.raises(ParityError, match="top-1"):
        compare_logits(torch.randn(2, 5, 50), logits, tolerance="bf16").check("random")
