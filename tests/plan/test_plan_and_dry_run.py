"""The training plan and the cluster engine's dry run: what would run on the cluster, checked without a GPU.

Megatron-Bridge is not installed here; these tests check the resolved plan and the exact overrides applied to
the Gemma 3 1B recipe, and that resolving them never imports megatron.bridge.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from hydra.errors import ConfigCompositionException

from morphcpt import paths
from morphcpt.modeling.logit_parity import LogitParity, compare_logits
from morphcpt.plan.compose import load_plan
from morphcpt.plan.recipes import cluster_runs
from morphcpt.train.megatron import config, engine, prepare

CLUSTER_RECIPES = {"cpt_baseline": "vanilla", "cpt_stochastok": "stochastok", "cpt_patok": "patok"}


def cluster_plan(recipe, tmp_path, *extra):
    return load_plan(
        [f"recipe={recipe}", f"output_root={tmp_path / 'out'}", f"data.root={tmp_path / 'data'}", *extra]
    )


@pytest.fixture(autouse=True)
def pbs_job(monkeypatch):
    # A job id in the environment must never leak into checkpoint paths (resubmitted jobs must find them).
    monkeypatch.setenv("PBS_JOBID", "4242.pbs-server")


@pytest.mark.parametrize("recipe", sorted(CLUSTER_RECIPES))
def test_cluster_dry_run_applies_the_users_plan(recipe, tmp_path):
    plan = cluster_plan(recipe, tmp_path)
    report = config.dry_run(plan)
    o = report["overrides"]
    scheme = CLUSTER_RECIPES[recipe]

    assert "megatron.bridge" not in sys.modules
    assert "gemma3_1b_pretrain_config" in report["recipe"]
    # recipe traps: vocabulary kept (no text tokenizer is needed for token ids: Bridge's NullTokenizer at the
    # model's size; the field 0.4 lacks is only set for 0.6), weight decay really 0.1, real data at 2048 tokens
    assert o["tokenizer.tokenizer_type"] == "NullTokenizer"
    assert o["tokenizer.vocab_size"] == o["model.vocab_size"] == 262144
    assert "tokenizer.use_tokenizer_vocab_size" not in o
    assert report["version_specific"]["0.6.x"] == {"tokenizer.use_tokenizer_vocab_size": False}
    assert o["checkpoint.most_recent_k"] == plan.checkpoint.keep == 3
    assert (
        o["optimizer.weight_decay"]
        == o["scheduler.start_weight_decay"]
        == o["scheduler.end_weight_decay"]
        == 0.1
    )
    assert o["scheduler.weight_decay_incr_style"] == "constant"
    assert o["model.seq_length"] == o["dataset.seq_length"] == 2048
    assert o["dataset.blend"] is None and o["dataset.split"] is None
    # the user's schedule
    assert (o["train.global_batch_size"], o["train.micro_batch_size"], o["train.train_iters"]) == (
        256,
        2,
        10000,
    )
    assert (o["optimizer.lr"], o["optimizer.min_lr"], o["optimizer.clip_grad"]) == (1e-4, 1e-5, 1.0)
    assert (o["scheduler.lr_warmup_iters"], o["scheduler.lr_decay_iters"]) == (500, 10000)
    assert o["scheduler.lr_decay_style"] == "cosine"
    assert (o["checkpoint.save_interval"], o["validation.eval_interval"], o["logger.log_interval"]) == (
        1000,
        500,
        10,
    )
    assert o["mixed_precision"] == "bf16_mixed"
    assert (o["logger.wandb_project"], o["logger.wandb_exp_name"]) == ("gemma3-seapile-cpt", plan.run_name)
    # data: the 20 chunks of this scheme (weighted, so a long run re-reads them), the canonical validation set
    train_split, valid_split, test_split = o["dataset.blend_per_split"]
    chunks, weights = train_split
    assert len(chunks) == len(set(chunks)) == 20 and weights == [1.0] * 20
    assert all(Path(c).parent == tmp_path / "data" / scheme and c.endswith("_text_document") for c in chunks)
    assert valid_split == [[str(tmp_path / "data" / "validation" / "validation_text_document")], None]
    assert test_split is None
    # checkpoints: a stable per-run folder, loaded and saved alike; the verified import to start from
    checkpoints = str(tmp_path / "out" / "runs" / plan.run_name / "checkpoints")
    assert o["checkpoint.save"] == o["checkpoint.load"] == checkpoints and "4242" not in checkpoints
    assert o["checkpoint.pretrained_checkpoint"] == str(tmp_path / "out" / "imports" / "gemma3-1b")
    assert o["train.exit_duration_in_mins"] == 24 * 60 - 20
    assert o["train.exit_signal_handler"] is True  # SIGTERM from PBS saves too
    assert report["layout"] == {"world_size": 8, "data_parallel": 8, "gradient_accumulation": 16}
    saved = Path(plan.run_dir) / "plan"
    assert (saved / "resolved_plan.yaml").read_text().count(f"scheme: {scheme}") == 1
    assert "checkpoint.pretrained_checkpoint" in (saved / "megatron_overrides.yaml").read_text()


def test_recipes_differ_only_in_scheme_and_run_name(tmp_path):
    reports = {r: config.overrides(cluster_plan(r, tmp_path)) for r in CLUSTER_RECIPES}
    base = reports["cpt_baseline"]
    for recipe, o in reports.items():
        differing = {k for k in o if o[k] != base[k]}
        if recipe != "cpt_baseline":
            assert differing == {
                "dataset.blend_per_split",
                "dataset.path_to_cache",
                "checkpoint.save",
                "checkpoint.load",
                "logger.tensorboard_dir",
                "logger.wandb_exp_name",
                "logger.wandb_save_dir",
            }
        assert o["dataset.blend_per_split"][1] == base["dataset.blend_per_split"][1]  # one validation set


def test_exit_duration_follows_walltime(tmp_path):
    plan = cluster_plan("cpt_patok", tmp_path, "cluster.walltime=12:30:00", "cluster.exit_margin_minutes=15")
    assert config.overrides(plan)["train.exit_duration_in_mins"] == 12 * 60 + 30 - 15
    assert config.walltime_minutes("02:00") == 120
    with pytest.raises(ValueError, match="no time"):
        config.exit_duration_minutes(cluster_plan("cpt_patok", tmp_path, "cluster.walltime=00:10:00"))


def test_exit_duration_deducts_what_the_job_used_before_pretrain(tmp_path):
    # Megatron's clock starts at pretrain(); the job's started at the top of the PBS script.
    def duration(elapsed):
        plan = cluster_plan("cpt_patok", tmp_path, f"cluster.elapsed_minutes={elapsed}")
        return config.overrides(plan)["train.exit_duration_in_mins"]

    assert duration(0) - duration(37) == 37
    assert duration(37) + 37 + 20 == 24 * 60  # the job still ends `exit_margin_minutes` before the walltime
    with pytest.raises(ValueError, match="no time to train"):
        duration(24 * 60 - 20)
    with pytest.raises(ValueError, match="elapsed_minutes"):
        duration(-5)


def test_gradient_accumulation_follows_gpus(tmp_path):
    plan = cluster_plan("cpt_patok", tmp_path, "cluster.gpus_per_node=4")
    assert config.parallel_layout(plan)["gradient_accumulation"] == 32
    with pytest.raises(ValueError, match="multiple"):
        config.parallel_layout(cluster_plan("cpt_patok", tmp_path, "cluster.gpus_per_node=3"))


def test_apply_overrides_sets_fields_and_rejects_unknown_ones():
    cfg = SimpleNamespace(
        train=SimpleNamespace(train_iters=1),
        dataset=SimpleNamespace(blend_per_split=None),
        mixed_precision=None,
    )
    config.apply_overrides(
        cfg,
        {
            "train.train_iters": 7,
            "mixed_precision": "bf16_mixed",
            "dataset.blend_per_split": [[["a"], [1.0]], None, None],
        },
    )
    assert cfg.train.train_iters == 7 and cfg.mixed_precision == "bf16_mixed"
    assert cfg.dataset.blend_per_split == [(["a"], [1.0]), None, None]
    with pytest.raises(AttributeError, match="train.no_such_field"):
        config.apply_overrides(cfg, {"train.no_such_field": 1})


def test_typos_and_bad_values_are_errors(tmp_path):
    with pytest.raises(ConfigCompositionException):
        cluster_plan("cpt_patok", tmp_path, "loop.stpes=3")
    with pytest.raises(ValueError, match="engine"):
        cluster_plan("cpt_patok", tmp_path, "engine=nemo")
    with pytest.raises(ValueError, match="micro"):
        cluster_plan("cpt_patok", tmp_path, "loop.micro_batch_size=3")
    with pytest.raises(ValueError, match="weights"):
        cluster_plan("cpt_patok", tmp_path, "data.weights=[1.0,2.0]")


def test_config_hash_tracks_what_is_trained(tmp_path):
    plan = cluster_plan("cpt_patok", tmp_path)
    assert cluster_plan(
        "cpt_patok", tmp_path, "logging.interval=1", "loop.max_steps_per_run=5"
    ).config_hash() == (plan.config_hash())
    assert cluster_plan("cpt_stochastok", tmp_path, "run_name=x").config_hash() != plan.config_hash()
    assert cluster_plan("cpt_patok", tmp_path, "optim.lr=2e-4").config_hash() != plan.config_hash()


def test_cluster_runs_name_the_job_variants():
    runs = [(r["VARIANT"], r["RECIPE"], r["RUN_NAME"], r["SCHEME"], r["REPLICATE"]) for r in cluster_runs()]
    assert runs == [
        ("baseline", "cpt_baseline", "gemma3-1b-baseline", "vanilla", "0"),
        ("patok", "cpt_patok", "gemma3-1b-patok", "patok", "0"),
        ("stochastok", "cpt_stochastok", "gemma3-1b-stochastok", "stochastok", "0"),
    ]
    seeded = [(r["VARIANT"], r["RUN_NAME"], r["REPLICATE"]) for r in cluster_runs(seeds=2)]
    assert seeded[:2] == [
        ("baseline", "gemma3-1b-baseline", "0"),
        ("baseline_seed1", "gemma3-1b-baseline-seed1", "1"),
    ]
    assert len(seeded) == 6


def test_cluster_runs_compose_each_recipe_once_until_the_config_tree_changes(tmp_path, monkeypatch):
    """One chain submission asks for the recipes a dozen times; an edited recipe is read again."""
    import inspect
    import shutil

    recipes = inspect.getmodule(cluster_runs)
    conf = tmp_path / "conf"
    shutil.copytree(paths.CONF_DIR, conf)
    monkeypatch.setattr(paths, "CONF_DIR", conf)
    composed = []
    monkeypatch.setattr(
        recipes, "load_plan", lambda overrides: composed.append(overrides) or load_plan(overrides)
    )
    first = cluster_runs(seeds=2)
    assert cluster_runs(seeds=2) == first and cluster_runs(seeds=3)[:2] == first[:2]
    assert sorted(o[0] for o in composed) == [
        "recipe=cpt_baseline",
        "recipe=cpt_patok",
        "recipe=cpt_stochastok",
    ]
    recipe = conf / "recipe" / "cpt_patok.yaml"
    recipe.write_text(
        recipe.read_text().replace("run_name: gemma3-1b-patok", "run_name: gemma3-1b-patok-edited")
    )
    assert [r["RUN_NAME"] for r in cluster_runs() if r["SCHEME"] == "patok"] == ["gemma3-1b-patok-edited"]


def test_a_replicate_is_its_own_run_with_its_own_seeds_and_data(tmp_path):
    """Seed k of an arm: -seed<k> run (folder, export, W&B), data.seed and loop.seed k above the arm's, the
    scheme's seed<k>/ ids where they depend on the seed; seed 0 keeps today's plan, paths and config hash."""
    zero = cluster_plan("cpt_patok", tmp_path)
    assert zero.data.replicate == 0 and zero.run_name == "gemma3-1b-patok"
    assert zero.data.chunk_prefixes()[0].parent == tmp_path / "data" / "patok"
    one = cluster_plan("cpt_patok", tmp_path, "data.replicate=1")
    assert one.run_name == "gemma3-1b-patok-seed1" and one.run_dir.endswith("/runs/gemma3-1b-patok-seed1")
    assert (one.data.seed, one.loop.seed) == (zero.data.seed + 1, zero.loop.seed + 1)
    assert one.data.chunk_prefixes()[0].parent == tmp_path / "data" / "patok" / "seed1"
    assert one.data.validation_prefix() == zero.data.validation_prefix()  # one held-out set for every run
    assert one.config_hash() != zero.config_hash()
    vanilla = cluster_plan("cpt_baseline", tmp_path, "data.replicate=2")
    assert vanilla.data.chunk_prefixes()[0].parent == tmp_path / "data" / "vanilla"  # same ids, other order
    # seed 0's hash is the one runs had before replicates existed (computed on main without them): they resume
    fixed = load_plan(["recipe=cpt_patok", "output_root=/x/out", "data.root=/x/data"])
    assert fixed.config_hash() == "7a8b54c731de74b4"
    with pytest.raises(ValueError, match="data.replicate must be 0 or more"):
        cluster_plan("cpt_patok", tmp_path, "data.replicate=-1")


def test_demo_recipes_use_the_tiny_model_on_cpu(tmp_path):
    base = load_plan(["recipe=demo_base", f"output_root={tmp_path}"])
    cpt = load_plan(["recipe=demo_cpt", "data.scheme=patok", f"output_root={tmp_path}"])
    assert base.engine == cpt.engine == "hf"
    assert base.model.pretrained is None and base.model.tokenizer == str(paths.SAMPLE_TOKENIZER_DIR)
    assert (
        cpt.model.pretrained == str(tmp_path / "exports" / "demo-base") and cpt.run_name == "demo-cpt-patok"
    )
    assert base.model.hidden_size <= 128 and base.model.num_layers % base.model.global_every == 0


def test_run_cpt_dry_run_from_the_command_line(tmp_path):
    script = paths.REPO_ROOT / "training" / "nemo" / "run_cpt.py"
    result = subprocess.run(
        [sys.executable, str(script), "recipe=cpt_stochastok", "dry_run=true", f"output_root={tmp_path}"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "scheduler.start_weight_decay: 0.1" in result.stdout
    assert (tmp_path / "runs" / "gemma3-1b-stochastok" / "plan" / "megatron_overrides.yaml").exists()


def test_training_refuses_unverified_weights(tmp_path):
    plan = cluster_plan("cpt_patok", tmp_path, "cluster.stage=train")
    with pytest.raises(config.WeightVerificationError, match="stage=prepare"):
        engine.run(plan)


def test_weights_are_imported_once(tmp_path, monkeypatch):
    calls = []

    class AutoBridge:
        @staticmethod
        def import_ckpt(hf_model_id, megatron_path, torch_dtype):
            calls.append(hf_model_id)
            (Path(megatron_path) / "iter_0000000").mkdir(parents=True)

    monkeypatch.setitem(sys.modules, "megatron.bridge", SimpleNamespace(AutoBridge=AutoBridge))
    plan = cluster_plan("cpt_patok", tmp_path)
    stale = Path(plan.cluster.import_dir)
    (stale / "half_written").mkdir(parents=True)  # an interrupted import: no marker
    assert prepare.import_weights(plan) == prepare.import_weights(plan) == stale
    assert calls == ["google/gemma-3-1b-pt"]
    assert sorted(p.name for p in stale.iterdir()) == ["import.done.json", "iter_0000000"]


def test_a_job_that_loses_the_import_race_keeps_the_winners_import(tmp_path, monkeypatch):
    plan = cluster_plan("cpt_patok", tmp_path)
    target = Path(plan.cluster.import_dir)

    class AutoBridge:
        @staticmethod
        def import_ckpt(hf_model_id, megatron_path, torch_dtype):
            (Path(megatron_path) / "iter_0000000").mkdir(parents=True)
            # Meanwhile another variant's job finishes its own import of the same weights.
            (target / "iter_0000000").mkdir(parents=True)
            (target / config.IMPORT_MARKER).write_text('{"source": "winner"}')

    monkeypatch.setitem(sys.modules, "megatron.bridge", SimpleNamespace(AutoBridge=AutoBridge))
    assert prepare.import_weights(plan) == target
    assert (target / config.IMPORT_MARKER).read_text() == '{"source": "winner"}'
    assert [p.name for p in target.parent.iterdir()] == [target.name]  # no staging folder left behind


def bf16_parity(cosine, min_position_cosine, top1):
    return LogitParity(
        max_abs_diff=1.0,
        mean_abs_diff=0.1,
        cosine=cosine,
        min_position_cosine=min_position_cosine,
        top1_agreement=top1,
        tolerance="bf16",
    )


@pytest.mark.parametrize(
    "bad",
    [bf16_parity(0.2, 0.1, 0.1), bf16_parity(0.999, 0.5, 1.0), bf16_parity(0.999, 0.999, 0.5)],
    ids=["garbage", "one-bad-position", "tokens-disagree"],
)
def test_weight_verification_fails_loudly_and_marks_nothing(bad, tmp_path, monkeypatch):
    plan = cluster_plan("cpt_patok", tmp_path, "cluster.stage=prepare")
    target = Path(plan.cluster.import_dir)
    target.mkdir(parents=True)
    monkeypatch.setattr(prepare, "megatron_hf_parity", lambda *args: bad)
    with pytest.raises(config.WeightVerificationError, match="do not reproduce"):
        prepare.verify_import(plan)
    assert not (target / config.VERIFIED_MARKER).exists()
    with pytest.raises(config.WeightVerificationError, match="stage=prepare"):
        config.train(plan)  # and training still refuses these weights


def test_weight_verification_passes_once_and_is_recorded(tmp_path, monkeypatch):
    plan = cluster_plan("cpt_patok", tmp_path, "cluster.stage=prepare")
    target = Path(plan.cluster.import_dir)
    target.mkdir(parents=True)
    calls = []

    def parity(hf_reference, megatron_dir, hf_dir, tokenizer_dir):
        calls.append((hf_reference, Path(megatron_dir), hf_dir, tokenizer_dir))
        return bf16_parity(0.9995, 0.998, 1.0)

    monkeypatch.setattr(prepare, "megatron_hf_parity", parity)
    first = prepare.verify_import(plan)
    assert prepare.verify_import(plan) == first  # the marker answers later jobs
    assert calls == [("google/gemma-3-1b-pt", target, "google/gemma-3-1b-pt", "google/gemma-3-1b-pt")]
    assert (target / config.VERIFIED_MARKER).exists()
    assert first["source"] == "google/gemma-3-1b-pt" and first["min_position_cosine"] == 0.998


def test_bf16_parity_does_not_let_one_bad_position_average_out():
    torch.manual_seed(0)
    logits = torch.randn(2, 100, 64)
    close = logits + 0.01 * torch.randn_like(logits)
    assert compare_logits(close, logits, tolerance="bf16").ok()
    broken = close.clone()
    broken[1, 7] = torch.randn(64)  # one badly converted position out of 200
    parity = compare_logits(broken, logits, tolerance="bf16")
    # the mean and the top-1 agreement alone would accept it
    assert parity.cosine >= 0.99 and parity.top1_agreement >= 0.95
    assert parity.min_position_cosine < 0.5 and not parity.ok()
