"""The memory planner (`python -m morphcpt.train.memory`): its estimate against the measured peak of real steps
on the tiny model, how the layouts divide memory, the largest micro batch, the command's report; its answers for
the user's recipes on their 40 GB card (both engines), the refusal and what it suggests, `auto`, and GPU_MEMORY
travelling from .env to the plan."""

from __future__ import annotations

import pytest
import torch

from morphcpt import paths
from morphcpt.modeling.models import build_model
from morphcpt.plan import card
from morphcpt.plan.compose import load_plan
from morphcpt.train.hf.parallel import enable_activation_checkpointing
from morphcpt.train.memory import estimate, hf, planner
from morphcpt.train.memory.megatron import MegatronShape

# The estimate's stated accuracy on the tiny model (fp32 on CPU, no flash attention): within 15% of the
# measured peak (it was within 7% at every shape below when written).
TOLERANCE = 0.15


@pytest.fixture(scope="module")
def tiny(vocab):
    plan = load_plan(["recipe=demo_base", f"model.tokenizer={paths.SAMPLE_TOKENIZER_DIR}"])
    return plan, planner.model_shape(plan, vocab.size), planner.model_config(plan, vocab.size)


@pytest.mark.slow
@pytest.mark.parametrize("checkpointing", [False, True])
def test_estimate_matches_the_measured_peak_of_the_tiny_model(tiny, checkpointing):
    _, shape, config = tiny
    model = build_model(config, seed=0).train()
    if checkpointing:
        enable_activation_checkpointing(model)
    optimizer = torch.optim.AdamW(model.parameters())
    for micro, seq in ((2, 64), (4, 128), (8, 256)):
        measured = planner.measured_bytes(model, optimizer, torch.randint(0, shape.vocab, (micro, seq)))
        assert measured["held"] == pytest.approx(12 * shape.params, rel=1e-3)  # fp32 weights + 2 Adam moments
        est = planner.estimate(shape, seq, 1, "ddp", checkpointing=checkpointing, bf16=False, flash=False)
        assert est.total(micro) == pytest.approx(measured["peak"], rel=TOLERANCE), (micro, seq, measured)


def test_layouts_divide_memory_as_they_should(tiny):
    _, shape, _ = tiny
    ddp = planner.estimate(shape, 64, 4, "ddp")
    fsdp = planner.estimate(shape, 64, 4, "fsdp")
    assert (fsdp.params, fsdp.grads, fsdp.optimizer) == (ddp.params // 4, ddp.grads // 4, ddp.optimizer // 4)
    ckpt = planner.estimate(shape, 64, 4, "fsdp", checkpointing=True)
    assert ckpt.activations_per_sample < fsdp.activations_per_sample
    offload = planner.estimate(shape, 64, 4, "fsdp", offload=True)
    assert offload.params == offload.grads == offload.optimizer == 0 and offload.host == 16 * shape.params
    lora = planner.estimate(planner.Shape(**{**shape.__dict__, "lora": 1000}), 64, 1, "ddp", lora=True)
    assert (lora.params, lora.grads, lora.optimizer) == (ddp.params, 4000, 8000)


def test_largest_micro_batch_is_the_last_that_fits(tiny):
    _, shape, _ = tiny
    est = planner.estimate(shape, 64, 1, "ddp")
    usable = est.total(5) + est.activations_per_sample // 2
    assert est.largest_micro_batch(usable) == 5
    assert est.total(5) <= usable < est.total(6)
    # with the margin, and only micro batches that divide the per-rank batch
    assert est.largest_micro_batch(usable, margin=0.5) < 5
    assert estimate.fitting_micro_batch(est, usable, per_rank=8, margin=0.0) == 4
    assert estimate.fitting_micro_batch(est, est.static() // 2, per_rank=8) == 0


def test_the_command_reports_both_engines_for_the_1b_shape_offline(capsys):
    assert planner.main(["recipe=cpt_patok", "cluster.gpu_memory=80GB", "gpus=4"]) == 0
    out = capsys.readouterr().out
    assert "1.000B parameters (26 layers, vocab 262144), seq 2048" in out and "A100 80GB" in out
    megatron, hf = out.split("## megatron engine")[1].split("## hf engine")
    assert "distributed optimizer over DP 8" in megatron and "hf engine, 4 rank(s)" in "## hf engine" + hf
    rows = {line[:22].strip(): line[22:].split() for line in hf.splitlines() if line[:1].isalpha()}
    assert {"ddp bf16", "fsdp", "fsdp +ckpt", "fsdp +ckpt +offload", "ddp bf16 +lora"} <= rows.keys()
    # params GiB per GPU: bf16 weights (2 bytes) under ddp, fp32 shards (4 bytes / 4 ranks) under fsdp
    assert float(rows["fsdp"][0]) == pytest.approx(float(rows["ddp bf16"][0]) * 2 / 4, abs=0.01)


def _layout_rows(part: str) -> dict[str, dict[str, str]]:
    """The planner table's rows in one engine's part of the output, by layout, each cell by its column name."""
    lines = part.splitlines()
    header = next(line for line in lines if line.startswith("layout "))
    names = header[22:].split()
    return {
        line[:22].strip(): dict(
            zip(names, line[22:].split(), strict=False)
        )  # "max mbs" and "(the plan)" split alike
        for line in lines
        if line[:1].isalpha() and line != header and len(line) > 22
    }


def test_the_pilot_recipe_is_planned_at_the_270m_shape_offline(capsys):
    """The pilot (gemma-3-270m, same vocabulary) fits its default micro batch of 4 on a 40 GB card, on both
    engines, each at the 270M shape (not the 1B one)."""
    assert planner.main(["recipe=pilot_patok", "cluster.gpu_memory=40GB", "gpus=8"]) == 0
    out = capsys.readouterr().out
    assert "0.268B parameters (18 layers, vocab 262144), seq 2048" in out and "A100 40GB" in out
    megatron, hf = out.split("## megatron engine")[1].split("## hf engine")
    pilot = {"megatron": _layout_rows(megatron)["megatron"], "hf": _layout_rows(hf)["ddp bf16"]}
    for row in pilot.values():
        assert (
            int(row["@mbs"]) == 4 and int(row["max"]) >= 4
        )  # at the plan's micro batch 4, and 4 or more fit
    assert planner.main(["recipe=cpt_patok", "cluster.gpu_memory=40GB", "gpus=8"]) == 0
    big = capsys.readouterr().out.split("## megatron engine")[1].split("## hf engine")[0]
    # 0.27B, not 1B, weights per GPU
    assert float(pilot["megatron"]["params"]) < float(_layout_rows(big)["megatron"]["params"]) / 3


def test_gpu_memory_is_parsed_or_refused():
    assert card.parse_bytes("80GB") == card.parse_bytes("80GiB") == 80 * 2**30
    assert card.parse_bytes("512MB") == 512 * 2**20
    with pytest.raises(ValueError, match="gpu_memory must look like 40GB"):
        card.parse_bytes("lots")
    with pytest.raises(ValueError, match="cluster.gpu_memory must look like"):
        load_plan(["recipe=cpt_patok", "cluster.gpu_memory=forty"])


# Peak GPU memory of the hf engine measured on one H100 (torch 2.11, transformers 5.17), the 1B shape at seq 2048,
# before the engine's speed levers: fp32 weights under bf16 autocast, eager layers, the full fp32 logits (GiB, max
# allocated). That engine is gone, but its peaks still check the measured activation table: the test adds the
# full logits (fp32 logits, log-softmax and its gradient, 12 bytes x vocabulary per token) the engine then made.
H100_MEASURED = [
    ("ddp", False, 2, 42.4),
    ("ddp", True, 2, 28.8),
    ("fsdp", True, 4, 41.1),  # one rank
]


@pytest.mark.parametrize(("sharding", "checkpointing", "micro", "measured"), H100_MEASURED)
def test_the_activation_table_reproduces_the_h100_measurements(sharding, checkpointing, micro, measured):
    shape = planner.model_shape(load_plan(["recipe=cpt_patok"]))
    est = planner.estimate(shape, 2048, 1, sharding, checkpointing, bf16=True)
    loss_working, loss_per_sample, *_ = hf.loss_bytes(
        shape, 2048, hf.default_chunk(shape.vocab), 2, 4 if sharding == "ddp" else 2
    )
    full_logits = 12 * shape.vocab * 2048
    old_engine = est.total(micro) - loss_working + micro * (full_logits - loss_per_sample)
    assert old_engine / 2**30 == pytest.approx(measured, rel=0.10)


def test_the_estimate_uses_the_plans_vocabulary_not_the_tokenizers():
    """benchmarks/train.py once passed the sample tokenizer's 4,096 ids for a 262,144-row model (21.1 GB planned,
    42.4 GB measured)."""
    plan = load_plan(
        ["recipe=demo_base", "model.vocab_size=262144", f"model.tokenizer={paths.SAMPLE_TOKENIZER_DIR}"]
    )
    assert planner.model_shape(plan, vocab_size=4096).vocab == 262144
    sample = load_plan(["recipe=demo_base", f"model.tokenizer={paths.SAMPLE_TOKENIZER_DIR}"])
    assert planner.model_shape(sample).vocab == 4096  # no plan vocabulary: the tokenizer's


# --- the user's card -----------------------------------------------------------------------------------------

USER_RECIPES = ["cpt_baseline", "cpt_stochastok", "cpt_patok", "eeve"]


def test_the_plan_names_the_users_card_by_default():
    plan = load_plan(["recipe=cpt_patok"])
    assert (plan.cluster.gpu_memory, plan.cluster.gpu_type) == ("40GB", "A100")
    assert card.Card.of(plan).usable == 38 * 2**30


def _recipe(recipe: str):
    extra = [f"model.tokenizer={paths.SAMPLE_TOKENIZER_DIR}"] if recipe == "pretrain_scratch" else []
    return load_plan([f"recipe={recipe}", *extra])


@pytest.mark.parametrize("recipe", [*USER_RECIPES, "pretrain_scratch"])
def test_every_shipped_default_fits_40gb_with_margin_on_both_engines(recipe):
    engines = ["hf"] if recipe in ("eeve", "pretrain_scratch") else ["megatron", "hf"]
    for engine in engines:
        fit = planner.check_fits(_recipe(recipe), engine)
        assert fit["margin"] >= estimate.MARGIN and "A100 40GB" in fit["card"], (engine, fit)
        if recipe.startswith("cpt_"):
            assert fit["micro_batch"] == 2  # the user's plan, both engines
        if engine == "hf":
            assert fit["layout"] == "ddp bf16" and fit["validation"]["estimate_gib"] < fit["usable_gib"]


def test_the_megatron_estimate_counts_the_real_model_and_shards_the_optimizer():
    plan = load_plan(["recipe=cpt_patok"])
    shape = MegatronShape.from_plan(plan)
    # the parameters of Bridge's Gemma 3 1B spec are those of transformers' gemma-3-1b-pt (999,885,952)
    assert shape.params() == planner.model_shape(plan).params == 999_885_952
    est = planner.megatron.estimate(shape)
    assert est.params == 2 * shape.params() and est.grads == 4 * shape.params()
    assert est.optimizer == 12 * shape.params() // 8  # fp32 main weights + 2 moments over DP 8
    recompute = planner.megatron.estimate(
        MegatronShape.from_plan(load_plan(["recipe=cpt_patok", "loop.activation_checkpointing=true"]))
    )
    assert recompute.activations_per_sample < est.activations_per_sample


def test_a_plan_that_does_not_fit_is_refused_with_what_fits():
    plan = load_plan(["recipe=cpt_patok", "loop.micro_batch_size=8"])
    with pytest.raises(planner.DoesNotFit) as refused:
        planner.check_fits(plan, "megatron")
    message = str(refused.value)
    assert message.startswith("loop.micro_batch_size=8 does not fit one A100 40GB")
    assert "What fits: loop.micro_batch_size=4" in message and "loop.activation_checkpointing=true" in message
    assert "GPU_MEMORY in .env" in message
    # the same plan on an 80 GB card fits
    assert planner.check_fits(
        load_plan(["recipe=cpt_patok", "loop.micro_batch_size=8", "cluster.gpu_memory=80GB"]), "megatron"
    )


def test_the_hf_check_stage_refuses_before_any_gpu_with_the_layouts_that_fit(tmp_path, capsys):
    from morphcpt.train import run

    plan = load_plan(
        [
            "recipe=cpt_patok",
            "engine=hf",
            "cluster.stage=check",
            "loop.micro_batch_size=8",
            f"output_root={tmp_path}",
        ]
    )
    with pytest.raises(SystemExit) as stop:
        run(plan)
    assert stop.value.code == 1
    err = capsys.readouterr().err
    assert "hf check FAILED: loop.micro_batch_size=8 does not fit one A100 40GB" in err
    assert "loop.sharding=fsdp" in err and "loop.activation_checkpointing=true" in err


def test_auto_takes_the_largest_micro_batch_the_planner_fits():
    plan = load_plan(["recipe=cpt_patok", "loop.micro_batch_size=auto"])
    expected = planner.rows(plan, "megatron")[0].largest
    assert planner.resolve_micro_batch(plan, "megatron") == expected == plan.loop.micro_batch_size
    per_rank = plan.loop.global_batch_size // 8
    assert per_rank % expected == 0 and planner.check_fits(plan, "megatron")["margin"] >= estimate.MARGIN
    roomy = load_plan(["recipe=cpt_patok", "loop.micro_batch_size=auto", "cluster.gpu_memory=80GB"])
    assert planner.resolve_micro_batch(roomy, "megatron") > expected


def test_a_gpu_smaller_than_the_plan_says_is_refused(monkeypatch):
    import types

    card = types.SimpleNamespace(total_memory=int(39.59 * 2**30), name="NVIDIA A100-SXM4-40GB")
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: card)
    planner.check_device(load_plan(["recipe=cpt_patok"]), "cuda:0")  # 40GB plan on a 40GB card
    with pytest.raises(planner.DoesNotFit, match="cluster.gpu_memory=80GB but this GPU .* has 39.6 GiB"):
        planner.check_device(load_plan(["recipe=cpt_patok", "cluster.gpu_memory=80GB"]), "cuda:0")


def test_gpu_memory_in_env_reaches_every_training_job_and_its_plan(tmp_path):
    from morphcpt.chain import jobs, pipeline

    env = {"GPU_MEMORY": "80GB", "GPU_TYPE": "H100", "OUTPUT_ROOT": str(tmp_path / "out")}
    written = jobs.render_jobs(paths.REPO_ROOT / "job_templates", tmp_path / "jobs", env)
    training = [p for p in written if p.name.startswith(("run_cpt_", "pretrain_scratch"))]
    assert len(training) == 5  # three CPT variants, EEVE, from scratch
    for script in training:
        text = script.read_text()
        assert '"cluster.gpu_memory=80GB"' in text and '"cluster.gpu_type=H100"' in text, script.name
    # what the chain plans before it submits is what the job scripts pass
    settings = jobs.derived_settings({**jobs.SETTINGS, **env})
    stage = next(s for s in pipeline.build_stages(settings) if s.name == "cpt_patok")
    plan = load_plan(pipeline.training_plan_overrides(settings, stage))
    assert card.Card.of(plan).bytes == 80 * 2**30 and plan.cluster.gpu_type == "H100"


def test_the_planner_knows_the_nodes(monkeypatch, capsys):
    """Two nodes of 8: hf fsdp keeps one sharded copy per node (HSDP), so its state per GPU is one node's, unless
    loop.fsdp_shard_size spreads a copy over both; Megatron's distributed optimizer shards over DP 16."""
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)

    def fsdp_row(*overrides: str) -> planner.Row:
        plan = load_plan(["recipe=cpt_patok", "loop.sharding=fsdp", *overrides])
        return planner.rows(plan, "hf")[0]

    one, two = fsdp_row(), fsdp_row("cluster.nodes=2")
    assert two.estimate.optimizer == one.estimate.optimizer  # HSDP: sharded over one node's 8 GPUs either way
    spread = fsdp_row("cluster.nodes=2", "loop.fsdp_shard_size=16")
    assert spread.estimate.optimizer == pytest.approx(one.estimate.optimizer / 2, rel=1e-6)
    megatron_one = planner.rows(load_plan(["recipe=cpt_patok"]), "megatron")[0].estimate
    megatron_two = planner.rows(load_plan(["recipe=cpt_patok", "cluster.nodes=2"]), "megatron")[0].estimate
    assert megatron_two.optimizer == megatron_one.optimizer // 2
    assert planner.main(["recipe=cpt_patok", "cluster.nodes=2"]) == 0
    out = capsys.readouterr().out
    assert "## megatron engine, 2 node(s) x 8 GPUs" in out and "distributed optimizer over DP 16" in out
    assert (
        "## hf engine, 16 rank(s) on 2 node(s); fsdp: one copy sharded over 8 rank(s), 2 copies (HSDP)" in out
    )


def test_a_global_batch_megatron_cannot_split_is_a_note_for_hf_plans_and_an_error_for_megatron_ones(capsys):
    """An hf plan of one GPU at global batch 8 and micro batch 8 is planned for the hf engine; the megatron section,
    laid out over the cluster's 8 GPUs a node, cannot split that batch and says so in one line (it raised a
    traceback). The same plan on the megatron engine is refused with one message."""
    plan = ["recipe=pilot_patok", "engine=hf", "loop.global_batch_size=8", "loop.micro_batch_size=8"]
    assert planner.main([*plan, "cluster.gpu_memory=140GB", "gpus=1"]) == 0
    out = capsys.readouterr().out
    assert "## megatron engine, 1 node(s) x 8 GPUs: not planned (global batch 8 is not a multiple of" in out
    assert "## hf engine, 1 rank(s)" in out and "(the plan)" in out
    with pytest.raises(SystemExit) as exit_info:
        planner.main([*plan[:1], "engine=megatron", *plan[2:]])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "error: the megatron engine cannot lay out this plan: global batch 8 is not a multiple" in err


def test_a_loss_chunk_as_long_as_a_sample_holds_one_chunk_of_logits_whatever_the_micro_batch():
    """The chunked loss cuts the micro batch's tokens as one sequence, so its logits in flight are those of
    min(micro batch x seq, chunk) tokens. At seq 1,024 (the default chunk: 1,024 tokens of 262,144 logits) the estimate
    counted a whole chunk per sample: 25.03 GiB for the real pilot's runs on an H200, which peaked at 14.04 GiB
    (micro batch 8, bf16 parameters, not compiled; benchmarks/RESULTS.md)."""
    shape = planner.model_shape(load_plan(["recipe=pilot_patok"]))
    est = planner.estimate(shape, 1024, 1, "ddp", bf16=True, bf16_params=True)
    chunk_logits = hf.default_chunk(shape.vocab) * shape.vocab * (4 + 2)  # fp32 logits and their bf16 copy
    assert est.logits_cap == est.logits_per_sample == chunk_logits  # one sample fills the chunk
    assert est.total(8) - est.total(4) == 4 * est.activations_per_sample
    assert est.total(8) / 2**30 == pytest.approx(14.04, rel=0.10)
    short = planner.estimate(shape, 512, 1, "ddp", bf16=True, bf16_params=True)  # two samples fill a chunk
    assert short.total(2) - short.total(1) == short.activations_per_sample + short.logits_per_sample
    assert short.total(3) - short.total(2) == short.activations_per_sample
    long = planner.estimate(shape, 2048, 1, "ddp", bf16=True, bf16_params=True)  # the recipes: a fixed chunk
    assert long.logits_cap == long.logits_per_sample == 0 and long.working >= chunk_logits
    for e in (
        est,
        short,
        long,
    ):  # the largest micro batch is the last whose total fits, with and without a cap
        for limit in range(e.static() - 1, e.total(40), e.activations_per_sample // 3):
            largest = e.largest_micro_batch(limit)
            assert largest == 0 or e.total(largest) <= limit
            assert e.total(largest + 1) > limit
