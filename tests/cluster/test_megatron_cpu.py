"""The megatron path run for real on a CPU: Megatron-Bridge imports a Gemma 3 into a Megatron model (the TE-free spec
of morphcpt.train.megatron.cpu), runs it, saves the Megatron checkpoint and exports it back to Hugging Face with
`AutoBridge.export_ckpt`; logits and weights are compared at both ends (morphcpt.train.megatron.roundtrip).

- Always (in the contract environment): a tiny random Gemma 3 whose sliding window (4) is shorter than the
  prompts, with a global layer, and random norm weights (a Gemma checkpoint's norms are not the zeros a fresh
  model starts with, so a swapped norm mapping shows).
- Opt-in, on a real pretrained Gemma 3: MORPHCPT_REAL_MODEL=<Hugging Face folder> (e.g. the 270M model
  `scripts/fetch_real_model.py` writes); skipped, saying so, when unset. Takes minutes on a CPU.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

REAL_MODEL = os.environ.get("MORPHCPT_REAL_MODEL")


def _check(report: dict, max_logit_diff: float) -> None:
    imported = report["import_parity"]
    # both sides compute in fp32: only the order of float operations differs
    assert imported["max_abs_diff"] < max_logit_diff, imported
    assert imported["top1_agreement"] == 1.0 and imported["min_position_cosine"] > 0.9999, imported
    weights = report["export_weights"]
    assert weights["only_in_original"] == [] and weights["only_in_export"] == [], weights
    assert weights["tensors_compared"] > 0 and weights["max_abs_diff"] == 0.0, (
        weights
    )  # a lossless round trip
    exported = report["export_parity"]
    assert exported["max_abs_diff"] == 0.0 and exported["top1_agreement"] == 1.0, exported


@pytest.fixture(scope="module")
def tiny_gemma3(tmp_path_factory) -> Path:
    import torch

    from morphcpt import paths
    from morphcpt.modeling.models import save_tiny_gemma3

    folder = save_tiny_gemma3(
        paths.SAMPLE_TOKENIZER_DIR,
        tmp_path_factory.mktemp("tiny-gemma3"),
        num_layers=6,
        global_every=6,  # Bridge's Gemma 3 provider fixes the 5 local : 1 global pattern
        sliding_window=4,
    )
    from safetensors.torch import load_file, save_file

    weights = load_file(folder / "model.safetensors")
    generator = torch.Generator().manual_seed(1)
    for name, tensor in weights.items():
        if "norm" in name:
            weights[name] = torch.randn(tensor.shape, generator=generator, dtype=tensor.dtype) * 0.5
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    return folder


def test_a_gemma3_imports_runs_and_exports_on_a_cpu(tiny_gemma3, tmp_path):
    from morphcpt.train.megatron.roundtrip import roundtrip

    report = roundtrip(tiny_gemma3, tmp_path)
    _check(report, max_logit_diff=1e-4)


def test_the_window_is_what_makes_the_logits_agree(tiny_gemma3, tmp_path, monkeypatch):
    """The sliding window really is applied: without it the tiny model's logits part from transformers'."""
    from morphcpt.train.megatron import cpu
    from morphcpt.train.megatron.roundtrip import roundtrip

    original = cpu.Gemma3CoreAttention.__init__

    def no_window(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.window = None

    monkeypatch.setattr(cpu.Gemma3CoreAttention, "__init__", no_window)
    report = roundtrip(tiny_gemma3, tmp_path)
    assert report["import_parity"]["max_abs_diff"] > 1e-3


@pytest.mark.skipif(
    not REAL_MODEL, reason="MORPHCPT_REAL_MODEL (a real Gemma 3 Hugging Face folder) is not set"
)
def test_a_real_gemma3_round_trips_through_megatron(tmp_path):
    from morphcpt.train.megatron.roundtrip import roundtrip

    if not Path(REAL_MODEL, "config.json").exists():
        pytest.fail(f"MORPHCPT_REAL_MODEL={REAL_MODEL} holds no config.json")
    report = roundtrip(REAL_MODEL, tmp_path)
    print("REPORT " + json.dumps(report))
    _check(report, max_logit_diff=1e-3)
