"""The memory-light optimiser (`optim.name=adafactor`, hf engine under ddp): it trains the model, its state is
what the planner counts (a row and a column vector a matrix, not AdamW's two moments), a stopped run resumes to
the same losses, AdamW plans keep their config hash, and the plans it cannot run are refused with the fix."""

from __future__ import annotations

import pytest
import torch

from morphcpt.plan.schema import PlanError
from morphcpt.train import load_plan
from morphcpt.train.hf.engine import train
from morphcpt.train.memory import hf
from train_helpers import tiny_plan, write_data
from train_helpers import train_losses as losses


@pytest.fixture(scope="module")
def data_root(tmp_path_factory, sample_corpus):
    return write_data(tmp_path_factory.mktemp("data"), sample_corpus, limit=200, num_chunks=1)


def plan_for(data_root, out, *extra):
    return tiny_plan(data_root, out, "checkpoint.async_save=false", *extra)


@pytest.mark.slow
def test_adafactor_trains_its_factored_state_and_resumes_exactly(data_root, tmp_path):
    straight = train(plan_for(data_root, tmp_path, "run_name=adafactor", "optim.name=adafactor"))
    adamw = train(plan_for(data_root, tmp_path, "run_name=adamw"))
    ran = losses(straight.run_dir)
    assert len(ran) == 4 and ran != losses(adamw.run_dir)  # another optimiser did the steps
    trainer = torch.load(straight.checkpoint_dir / "trainer.pt", weights_only=False)
    state = trainer["optimizer"]["state"]
    assert state and all("exp_avg" not in s for s in state.values())  # no first moment: beta1 is None
    values = sum(t.numel() for s in state.values() for t in s.values() if torch.is_tensor(t) and t.dim() >= 1)
    shape = hf.model_shape(plan_for(data_root, tmp_path, "optim.name=adafactor"))
    assert (
        values == shape.factored < shape.params / 4
    )  # what the planner counts, far below AdamW's 2 x params
    stopped = train(
        plan_for(data_root, tmp_path, "run_name=resumed", "optim.name=adafactor", "loop.max_steps_per_run=2")
    )
    assert stopped.interrupted
    resumed = train(plan_for(data_root, tmp_path, "run_name=resumed", "optim.name=adafactor"))
    assert losses(resumed.run_dir) == ran


def test_the_planner_counts_adafactor_state_instead_of_adamw_moments():
    plan = load_plan(["recipe=cpt_baseline", "engine=hf", "optim.name=adafactor"])
    shape = hf.model_shape(plan)
    adamw = hf.estimate(shape, 2048, 8, "ddp", bf16_params=True)
    light = hf.estimate(shape, 2048, 8, "ddp", bf16_params=True, adafactor=True)
    assert adamw.optimizer - light.optimizer == 8 * shape.params - 4 * shape.factored
    assert light.optimizer == 4 * shape.params + 4 * shape.factored  # fp32 masters + the factored state


def test_adamw_plans_keep_their_hash_and_adafactor_is_refused_where_it_cannot_run():
    base = ["recipe=cpt_patok", "output_root=/x/out", "data.root=/x/data"]
    assert load_plan(base).config_hash() == load_plan([*base, "optim.name=adamw"]).config_hash()
    assert (
        load_plan([*base, "engine=hf", "optim.name=adafactor"]).config_hash() != load_plan(base).config_hash()
    )
    with pytest.raises(PlanError, match="optim.name must be one of"):
        load_plan([*base, "optim.name=sgd"])
    with pytest.raises(PlanError, match="hf engine only; the megatron engine"):
        load_plan([*base, "optim.name=adafactor"])  # the cpt recipes default to megatron
    with pytest.raises(PlanError, match="hf engine only; EEVE"):
        load_plan(["recipe=eeve", "optim.name=adafactor"])
    with pytest.raises(PlanError, match="loop.sharding=ddp"):
        load_plan([*base, "engine=hf", "optim.name=adafactor", "loop.sharding=fsdp"])
