"""Memory on the cards the sibling uses name: the base loaded once, in the dtype it trains in (one copy in host
memory at a time; an fp32 model's storage becomes its masters); LoRA's frozen base in bf16 with fp32 adapters and no
gradient for the frozen output layer; fp16 autocast with a dynamic loss scale that resumes exactly; the planner
counts the load peak and each option; every use on the card its document names fits or is refused before
anything is allocated, naming what fits (`morphcpt.train.memory.recipe_table`)."""

from __future__ import annotations

import gc
import weakref

import pytest
import torch

from morphcpt.modeling import models
from morphcpt.plan.schema import PlanError
from morphcpt.train import load_plan
from morphcpt.train.hf import optim, precision
from morphcpt.train.hf.engine import train
from morphcpt.train.memory import hf, planner, recipe_table
from train_helpers import tiny_plan, write_data
from train_helpers import train_losses as losses


@pytest.fixture(scope="module")
def data_root(tmp_path_factory, sample_corpus):
    return write_data(tmp_path_factory.mktemp("data"), sample_corpus, limit=200, num_chunks=1)


def plan_for(data_root, out, *extra):
    return tiny_plan(data_root, out, "checkpoint.async_save=false", *extra)  # saved before the run goes on


def param_bytes(model: torch.nn.Module) -> int:
    return sum(p.numel() * p.element_size() for p in model.parameters())


# --- loading ---------------------------------------------------------------------------------------------------


def test_the_base_loads_one_copy_at_a_time_into_its_training_dtype(tiny_gemma3, monkeypatch):
    loaded: list[weakref.ref] = []
    strict = models.load_strict

    def load_strict(source):
        gc.collect()
        assert all(ref() is None for ref in loaded), "a second copy loaded while the first was alive"
        model = strict(source)
        loaded.append(weakref.ref(model))
        return model

    monkeypatch.setattr(models, "load_strict", load_strict)
    model = models.load_pretrained(tiny_gemma3, dtype=torch.bfloat16)
    assert len(loaded) == 2  # the reference and the model, verified against each other
    assert {p.dtype for p in model.parameters()} == {torch.bfloat16}
    assert {b.dtype for b in model.buffers() if b.is_floating_point()} == {torch.float32}  # rotary tables
    fp32 = strict(tiny_gemma3)
    for (name, p), q in zip(model.named_parameters(), fp32.parameters(), strict=True):
        assert torch.equal(p, q.bfloat16()), name
    assert param_bytes(model) * 2 == param_bytes(fp32)


def test_an_fp32_models_storage_becomes_its_masters_without_a_copy():
    model = models.build_model(models.tiny_config(256), seed=0)
    before = {p.data_ptr(): p.detach().clone() for p in model.parameters()}
    master = optim.MasterWeights(model, [{"params": list(model.parameters())}])
    assert {m.data_ptr() for m in master.masters} == set(before)  # the same storage, not a clone
    for param, m in zip(master.params, master.masters, strict=True):
        assert m.dtype == torch.float32 and param.dtype == torch.bfloat16
        assert torch.equal(m, before[m.data_ptr()]) and torch.equal(param, m.bfloat16())


def test_placement_follows_the_layout():
    gpu = torch.device("cuda")
    plan = load_plan(["recipe=cpt_baseline", "engine=hf"])
    assert precision.load_placement(plan.loop, plan.peft, gpu) == (gpu, torch.float32)  # masters from it
    plan = load_plan(["recipe=cpt_baseline", "engine=hf", "peft.method=lora"])
    assert precision.load_placement(plan.loop, plan.peft, gpu) == (gpu, torch.bfloat16)
    plan = load_plan(["recipe=cpt_baseline", "engine=hf", "loop.sharding=fsdp"])
    assert precision.load_placement(plan.loop, plan.peft, gpu) == (torch.device("cpu"), torch.float32)
    plan = load_plan(["recipe=cpt_baseline", "engine=hf", "peft.method=lora"])
    assert precision.load_placement(plan.loop, plan.peft, torch.device("cpu")) == (
        torch.device("cpu"),
        torch.float32,
    )


# --- LoRA's bf16 base ------------------------------------------------------------------------------------------


def test_a_frozen_output_layer_gets_no_gradient_and_the_same_hidden_gradient():
    from morphcpt.modeling.loss import chunked_cross_entropy

    torch.manual_seed(0)
    hidden = torch.randn(2, 8, 16, requires_grad=True)
    weight = torch.randn(50, 16)
    labels = torch.randint(0, 50, (2, 8))
    frozen, _ = chunked_cross_entropy(hidden, weight, labels, torch.ones(2, 8), chunk=5)
    (frozen_grad,) = torch.autograd.grad(frozen, hidden)
    trained = weight.clone().requires_grad_(True)
    total, _ = chunked_cross_entropy(hidden, trained, labels, torch.ones(2, 8), chunk=5)
    total.backward()
    assert torch.equal(frozen_grad, hidden.grad) and trained.grad is not None


@pytest.mark.slow
def test_lora_on_a_bf16_base_trains_the_adapters_only_and_the_planner_counts_its_bytes(
    data_root, tmp_path, tiny_gemma3
):
    pytest.importorskip("peft")
    from morphcpt.modeling import lora

    extra = [
        f"model.pretrained={tiny_gemma3}",
        "model.tokenizer=null",
        "peft.method=lora",
        "loop.param_dtype=bf16",
    ]
    plan = plan_for(data_root, tmp_path, "run_name=lora_bf16", *extra)
    model = lora.apply_lora(models.load_pretrained(tiny_gemma3, dtype=torch.bfloat16), plan.peft, seed=0)
    adapters = {n: p for n, p in model.named_parameters() if p.requires_grad}
    assert adapters and {p.dtype for p in adapters.values()} == {torch.float32}
    assert {p.dtype for n, p in model.named_parameters() if n not in adapters} == {torch.bfloat16}
    shape = hf.with_lora(plan, hf.model_shape(plan))
    est = hf.estimate(shape, 32, 1, "ddp", lora=True, bf16_params=True)
    assert est.params == est.load == param_bytes(model)  # 2 bytes a base parameter, 4 an adapter one
    assert est.grads == 4 * sum(p.numel() for p in adapters.values())

    result = train(plan)
    assert result.final_step == 4 and all(x == x for x in losses(result.run_dir))  # finite
    from safetensors.torch import load_file

    base = load_file(result.checkpoint_dir / "model" / "model.safetensors")
    original = load_file(tiny_gemma3 / "model.safetensors")
    assert {t.dtype for t in base.values()} == {torch.bfloat16}
    assert all(torch.equal(base[k], original[k].bfloat16()) for k in base)  # the base never moved
    adapter = load_file(result.checkpoint_dir / "adapter" / "adapter_model.safetensors")
    assert {t.dtype for t in adapter.values()} == {torch.float32}


# --- fp16 with a loss scale ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_fp16_mixed_trains_like_fp32_with_a_loss_scale_that_resumes_exactly(data_root, tmp_path):
    fp32 = train(plan_for(data_root, tmp_path, "run_name=fp32", "loop.precision=fp32"))
    fp16 = train(plan_for(data_root, tmp_path, "run_name=fp16", "loop.precision=fp16-mixed"))
    worst = max(abs(y - x) / x for x, y in zip(losses(fp32.run_dir), losses(fp16.run_dir), strict=True))
    print(f"fp16-mixed vs fp32: largest relative loss difference over 4 steps {worst:.2e}")
    assert worst <= 1e-2
    trainer = torch.load(fp16.checkpoint_dir / "trainer.pt", weights_only=False)
    assert trainer["scheduler"]["grad_scaler"]["scale"] > 0
    stopped = train(
        plan_for(
            data_root,
            tmp_path,
            "run_name=fp16_resumed",
            "loop.precision=fp16-mixed",
            "loop.max_steps_per_run=2",
        )
    )
    assert stopped.interrupted
    resumed = train(plan_for(data_root, tmp_path, "run_name=fp16_resumed", "loop.precision=fp16-mixed"))
    assert losses(resumed.run_dir) == losses(fp16.run_dir)


def test_fp16_needs_the_hf_engine_and_fp32_parameters():
    with pytest.raises(PlanError, match="fp16-mixed .* engine=hf"):
        load_plan(["recipe=cpt_baseline", "loop.precision=fp16-mixed"])  # megatron
    with pytest.raises(PlanError, match="fp32 parameters"):
        load_plan(["recipe=cpt_baseline", "engine=hf", "loop.precision=fp16-mixed", "loop.param_dtype=bf16"])


# --- the planner -----------------------------------------------------------------------------------------------


def test_the_load_peak_is_counted_and_never_two_fp32_copies():
    plan = load_plan(["recipe=cpt_baseline", "engine=hf"])
    shape = hf.model_shape(plan)
    p = shape.params
    masters = hf.estimate(shape, 2048, 8, "ddp", bf16_params=True)
    assert masters.load == 6 * p < 8 * p and masters.host_load == 4 * p
    assert hf.estimate(shape, 2048, 8, "ddp").load == 4 * p
    fsdp = hf.estimate(shape, 2048, 8, "fsdp")
    assert fsdp.load == fsdp.params + 4 * max(shape.layer_params, shape.embedding)
    offload = hf.estimate(shape, 2048, 8, "fsdp", checkpointing=True, offload=True)
    assert offload.load == 4 * max(shape.layer_params, shape.embedding)
    # a load that does not fit the card leaves no micro batch, whatever the step needs
    tight = hf.estimate(shape, 2048, 8, "ddp")
    assert tight.largest_micro_batch(tight.load - 1) == 0 and tight.total(0) == max(
        tight.static(), tight.load
    )


def test_bf16_on_a_card_without_it_is_refused_naming_fp16_and_what_fits():
    plan = load_plan(["recipe=cpt_baseline", "engine=hf", "cluster.gpu_type=T4", "cluster.gpu_memory=16GB"])
    with pytest.raises(PlanError, match=r"T4 has no bf16: set loop.precision=fp16-mixed.*with it"):
        planner.check_fits(plan, "hf", 2)
    fp16 = load_plan(
        [
            "recipe=cpt_baseline",
            "engine=hf",
            "cluster.gpu_type=T4",
            "cluster.gpu_memory=16GB",
            "loop.precision=fp16-mixed",
        ]
    )
    rows = planner.rows(fp16, "hf", 2)
    assert rows[0].estimate.layout.startswith("ddp fp16")
    assert not any("bf16" in row.estimate.layout for row in rows)


def test_every_use_fits_the_card_its_document_names_or_is_refused_with_what_fits():
    verdicts = recipe_table.verdicts()
    assert len(verdicts) == len(recipe_table.USES)
    for v in verdicts:
        if not v.fits:
            assert "What fits:" in v.said or "this plan fits" in v.said, (v.use, v.card, v.said)
            assert "No layout the planner knows fits" not in v.said
    by_use = {(v.use, v.card): v for v in verdicts}
    assert by_use[("8B LoRA + activation checkpointing", "rtx4090-24gb")].fits  # the bf16 base makes it fit
    assert by_use[("from scratch 1B on T4, fp16 + fsdp", "t4-16gb")].fits
    assert by_use[("EEVE, 7 stages (hf)", "a100-40gb")].fits
