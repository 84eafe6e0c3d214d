"""fp16-mixed whose gradients overflow at every loss scale stops after `loop.max_skipped_steps` skipped steps in a
row, naming the overflow and bf16/fp32, instead of ending "complete" with nothing trained; skips that stop do not."""

from __future__ import annotations

import pytest

from morphcpt.plan.compose import load_plan
from morphcpt.plan.schema import PlanError
from morphcpt.train.hf.engine import TrainHooks, train
from morphcpt.train.hf.precision import Fp16Overflow
from train_helpers import tiny_plan, train_losses, write_data


@pytest.fixture(scope="module")
def data_root(tmp_path_factory, sample_corpus):
    return write_data(tmp_path_factory.mktemp("data"), sample_corpus, limit=120, num_chunks=1)


def overflowing(steps: int | None):
    """Hooks whose gradients are inf for the first `steps` backward passes (None: always), as a forward pass past
    fp16's 65,504 gives (Gemma 3's MLP output reaches 1.4e5)."""
    seen = {"n": 0}

    def poison(model):
        weight = next(p for p in model.parameters() if p.requires_grad)

        def hook(grad):
            seen["n"] += 1
            return grad * float("inf") if steps is None or seen["n"] <= steps else grad

        weight.register_hook(hook)

    return TrainHooks(freeze=poison)


@pytest.mark.slow
def test_every_step_overflowing_stops_the_run_naming_bf16_and_fp32(data_root, tmp_path):
    plan = tiny_plan(
        data_root,
        tmp_path,
        "loop.precision=fp16-mixed",
        "loop.max_skipped_steps=3",
        "loop.steps=6",
        "checkpoint.async_save=false",
    )
    with pytest.raises(Fp16Overflow, match=r"3 optimiser steps in a row were skipped .*bf16.*fp32"):
        train(plan, overflowing(None))


@pytest.mark.slow
def test_a_few_skipped_steps_at_the_start_train_on(data_root, tmp_path):
    plan = tiny_plan(
        data_root,
        tmp_path,
        "loop.precision=fp16-mixed",
        "loop.max_skipped_steps=3",
        "loop.steps=5",
        "checkpoint.async_save=false",
    )
    result = train(plan, overflowing(2 * 2))  # two steps of two micro batches each
    assert result.final_step == 5 and len(train_losses(result.run_dir)) == 5


def test_the_limit_is_a_whole_number():
    import torch

    from morphcpt.train.hf.precision import grad_scaler

    plan = load_plan(["recipe=demo_base", "loop.precision=fp16-mixed", "loop.max_skipped_steps=0"])
    with pytest.raises(PlanError, match="max_skipped_steps"):
        grad_scaler(plan.loop, torch.device("cpu"), fsdp=False)
