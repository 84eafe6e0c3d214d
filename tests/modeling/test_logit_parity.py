"""Logit parity (morphcpt.modeling.logit_parity) at a real model's vocabulary width: identical logits pass, different
weights are refused, and the load check of `load_pretrained` does both on a 262,144-id model."""

from __future__ import annotations

import pytest
import torch

from morphcpt.modeling import models
from morphcpt.modeling.logit_parity import ParityError, compare_logits
from morphcpt.modeling.models import WeightLoadError, build_model, load_pretrained, tiny_config

GEMMA3_VOCAB = 262_144


def wide_logits(seed: int = 0) -> torch.Tensor:
    """Logits shaped like a real Gemma 3's: 262,144 ids a position around a large common offset, the case where
    an fp32 cosine of a vector with itself rounds visibly below 1."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(1, 16, GEMMA3_VOCAB, generator=generator) * 3 + 30


def test_identical_wide_logits_pass_the_exact_check():
    logits = wide_logits()
    fp32 = torch.nn.functional.cosine_similarity(logits[0], logits[0].clone(), dim=-1)
    assert fp32.min().item() < 0.999999  # the premise: fp32 alone refuses identical logits (issue #37)
    parity = compare_logits(logits.clone(), logits, tolerance="exact").check("identical")
    assert parity.max_abs_diff == 0.0
    assert abs(parity.cosine - 1) < 1e-12 and abs(parity.min_position_cosine - 1) < 1e-12


def test_fp32_rounding_at_the_logit_scale_passes_but_a_real_change_does_not():
    logits = wide_logits()
    rounded = logits + torch.randn_like(logits) * 1e-5  # a reordered fp32 sum's noise at |logit| ~ 45
    assert compare_logits(rounded, logits, tolerance="exact").ok()
    changed = logits.clone()
    changed[0, 2, 123] += 0.5
    with pytest.raises(ParityError, match="max"):
        compare_logits(changed, logits, tolerance="exact").check("changed")


def test_different_wide_logits_are_refused_by_both_tolerances():
    with pytest.raises(ParityError):
        compare_logits(wide_logits(1), wide_logits(0), tolerance="exact").check("other")
    with pytest.raises(ParityError, match="top-1"):
        compare_logits(wide_logits(1) - 30, wide_logits(0) - 30, tolerance="bf16").check("other")


def wide_model_dir(tmp_path, seed):
    config = tiny_config(
        vocab_size=GEMMA3_VOCAB, hidden_size=16, num_layers=2, head_dim=8, intermediate_size=32
    )
    model = build_model(config, seed=seed)
    folder = tmp_path / f"seed{seed}"
    model.save_pretrained(folder)
    return folder


def test_load_pretrained_accepts_a_wide_model_and_refuses_a_different_second_load(tmp_path, monkeypatch):
    same = wide_model_dir(tmp_path, seed=0)
    model = load_pretrained(same, vocab_size=GEMMA3_VOCAB)
    assert model.get_input_embeddings().weight.shape[0] == GEMMA3_VOCAB
    other = wide_model_dir(tmp_path, seed=1)
    loads = iter([same, other])  # the second "load" has different weights: nothing may pass it
    real_load = models.load_strict
    monkeypatch.setattr(models, "load_strict", lambda path: real_load(next(loads)))
    with pytest.raises(WeightLoadError, match="does not reproduce a fresh load"):
        load_pretrained(same, vocab_size=GEMMA3_VOCAB)
