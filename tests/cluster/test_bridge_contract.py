"""The cluster engine against the real Megatron-Bridge: every override is a field of the real ConfigContainer, the
real `runtime_config_update()`/`validate()` accept the plan, Bridge's tokenizer rule keeps 262,144 rows, Bridge's
own dataset builders read our indexed data, and the `check` stage passes on it and fails loudly when it must.

Runs only where megatron.bridge imports (`make test-cluster`); see conftest.py.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

from morphcpt import paths
from morphcpt.plan.compose import load_plan
from morphcpt.train.megatron import compat, config, engine

RECIPES = {"cpt_baseline": "vanilla", "cpt_stochastok": "stochastok", "cpt_patok": "patok"}
SAMPLE_LINES = 360  # a slice of the shipped sample: 2 chunks + held-out validation, all three schemes


@pytest.fixture(scope="session")
def processed(tmp_path_factory) -> Path:
    """Our own preprocessing (run here, on this environment's megatron-core) of a slice of the sample."""
    from morphcpt import preprocess
    from morphcpt.corpus.split import split_jsonl

    root = tmp_path_factory.mktemp("cluster-data")
    corpus = root / "corpus.jsonl"
    with open(paths.SAMPLE_CORPUS) as source:
        corpus.write_text("".join(line for _, line in zip(range(SAMPLE_LINES), source, strict=False)))
    split_jsonl(corpus, root / "chunks", 2, holdout_lines=60)
    out = root / "processed"
    common = [f"output_dir={out}", "workers=1", "progress=false"]
    for scheme in RECIPES.values():
        for chunk in sorted((root / "chunks").glob("chunk_*.jsonl")):
            preprocess.run(preprocess.compose_config([f"scheme={scheme}", f"input={chunk}", *common]))
    preprocess.run(
        preprocess.compose_config(["validation=true", f"input={root / 'chunks/validation.jsonl'}", *common])
    )
    return out


def plan_for(recipe: str, data_root: Path, tmp_path: Path, *extra: str):
    return load_plan(
        [
            f"recipe={recipe}",
            f"data.root={data_root}",
            "data.num_chunks=2",
            f"output_root={tmp_path / 'out'}",
            f"model.tokenizer={paths.SAMPLE_TOKENIZER_DIR}",
            *extra,
        ]
    )


def test_the_installed_release_is_supported_and_has_the_gemma3_recipe():
    version, api = compat.require_supported()
    name, function = compat.recipe(api)
    cfg = function()
    # the recipe traps our overrides exist for, as the real recipe has them
    assert cfg.model.vocab_size == 262144 and cfg.model.seq_length != 2048
    assert cfg.tokenizer.tokenizer_type == "NullTokenizer" and cfg.dataset.blend is None
    print(version, name)


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_every_override_is_a_field_of_the_real_config(recipe, tmp_path):
    plan = plan_for(recipe, tmp_path / "data", tmp_path)
    cfg = config.build_config(plan)  # apply_overrides raises on any field the release lacks
    assert cfg.tokenizer.tokenizer_type == "NullTokenizer" and cfg.tokenizer.vocab_size == 262144
    assert cfg.model.vocab_size == 262144 and cfg.model.seq_length == cfg.dataset.seq_length == 2048
    assert cfg.scheduler.start_weight_decay == cfg.scheduler.end_weight_decay == 0.1
    assert cfg.checkpoint.most_recent_k == 3 and cfg.checkpoint.save == cfg.checkpoint.load
    assert cfg.train.global_batch_size == 256 and cfg.train.micro_batch_size == 2


def test_the_settings_that_broke_the_cluster_path_really_break_this_release(tmp_path):
    """The two faults of the old overrides, reproduced on the real library (so the fix is not guessed)."""
    from megatron.bridge.training.setup import _validate_and_set_vocab_size

    version, api = compat.require_supported()
    cfg = compat.recipe(api)[1]()
    if api.series == (0, 4):  # the field first appears in 0.6: setting it was an AttributeError on every rank
        with pytest.raises(AttributeError, match="use_tokenizer_vocab_size"):
            config.apply_overrides(cfg, {"tokenizer.use_tokenizer_vocab_size": False}, version)
    else:
        assert hasattr(cfg.tokenizer, "use_tokenizer_vocab_size")
    # a HuggingFaceTokenizer of gemma-3-1b-pt has len() 262,145 against the model's 262,144 rows: refused
    with pytest.raises(ValueError, match="cannot be smaller"):
        _validate_and_set_vocab_size(262144, 262145)


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_check_stage_passes_on_our_processed_data(recipe, processed, tmp_path, capsys):
    plan = plan_for(recipe, processed, tmp_path)
    report = engine.run(load_plan([*_overrides(plan), "cluster.stage=check"]))
    out = capsys.readouterr().out
    assert f"cluster check: {plan.run_name} (scheme {RECIPES[recipe]}) — OK" in out
    assert report["megatron_bridge"] == compat.installed_version()
    assert report["layout"]["data_parallel"] == 8  # validated at the job's world size, not this process's 1
    assert report["tokenizer"] == {"type": "NullTokenizer", "vocab_size": 262144, "model_vocab_size": 262144}
    assert report["validated"]["weight_decay"] == [0.1, 0.1]
    assert report["validated"]["warmup_steps"] == 500 * 256  # Bridge counts the schedule in samples
    assert report["data"]["chunks"] == 2 and report["data"]["tokenizer_check"].startswith("matches")
    for split in ("train", "validation"):
        assert report["datasets"][split]["read"] > 0
        assert 0 < report["datasets"][split]["highest_id"] < report["data"]["data_vocab_size"]
    assert any("stand-in" in note for note in report["notes"])  # no import yet, and it says so
    assert (
        report["memory"]["micro_batch"] == 2 and report["memory"]["margin"] >= 0.10
    )  # the user's 40 GB card
    assert "memory      " in out and "A100 40GB" in out
    assert json.loads((Path(plan.run_dir) / "check.json").read_text())["data"] == report["data"]


def test_check_stage_validates_the_layout_of_every_node(processed, tmp_path, capsys):
    """Two nodes of 8 GPUs: Bridge's own runtime_config_update()/validate() run at world size 16, so the
    data-parallel size doubles and the gradient accumulation halves; three nodes cannot split the global batch."""
    base = _overrides(plan_for("cpt_patok", processed, tmp_path))
    report = engine.run(load_plan([*base, "cluster.stage=check", "cluster.nodes=2"]))
    assert report["layout"] == {"world_size": 16, "data_parallel": 16, "gradient_accumulation": 8}
    assert "16 GPUs, DP 16" in capsys.readouterr().out
    err = _check_fails([*base, "cluster.nodes=3"], capsys)
    assert "does not divide over 3 node(s) x 8 GPUs" in err and "micro batch x DP = 48" in err


def _overrides(plan) -> list[str]:
    return [
        f"recipe={'cpt_' + {'vanilla': 'baseline'}.get(plan.data.scheme, plan.data.scheme)}",
        f"data.root={plan.data.root}",
        f"data.num_chunks={plan.data.num_chunks}",
        f"output_root={plan.output_root}",
        f"model.tokenizer={plan.model.tokenizer}",
    ]


def _check_fails(plan_overrides: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as stop:
        engine.run(load_plan([*plan_overrides, "cluster.stage=check"]))
    assert stop.value.code == 1
    return capsys.readouterr().err


def test_check_stage_fails_loudly_on_missing_data(processed, tmp_path, capsys):
    base = _overrides(plan_for("cpt_patok", processed, tmp_path))
    err = _check_fails([*base, "data.num_chunks=3"], capsys)
    assert "cluster check FAILED" in err and "chunk_03" in err


def _with_fingerprints(processed: Path, target: Path, fingerprints: dict[str, str]) -> Path:
    """A copy of the processed data whose markers say other tokenizers wrote some files (name -> fingerprint)."""
    import shutil

    shutil.copytree(processed, target)
    for name, fingerprint in fingerprints.items():
        for marker in target.glob(f"*/{name}.done.json"):
            meta = json.loads(marker.read_text())
            meta["key"]["tokenizer_fingerprint"] = fingerprint
            marker.write_text(json.dumps(meta))
    return target


def test_check_stage_fails_loudly_on_data_from_another_tokenizer(processed, tmp_path, capsys):
    other = "f" * 64
    data = _with_fingerprints(
        processed, tmp_path / "d1", {"chunk_01": other, "chunk_02": other, "validation": other}
    )
    err = _check_fails(_overrides(plan_for("cpt_patok", data, tmp_path)), capsys)
    assert "another tokenizer than training uses" in err and "ffffffffffff" in err


def test_check_stage_fails_loudly_on_chunks_from_two_tokenizers(processed, tmp_path, capsys):
    data = _with_fingerprints(processed, tmp_path / "d2", {"chunk_02": "e" * 64})
    err = _check_fails(_overrides(plan_for("cpt_patok", data, tmp_path)), capsys)
    assert "not all written with one tokenizer" in err


def test_check_stage_fails_loudly_when_bridge_rejects_the_config(processed, tmp_path, capsys):
    base = _overrides(plan_for("cpt_patok", processed, tmp_path))
    err = _check_fails([*base, "cluster.ckpt_format=fsdp_dtensor"], capsys)
    assert "Megatron-Bridge rejects the configuration" in err


def test_check_stage_fails_loudly_on_too_small_a_model_vocabulary(processed, tmp_path, capsys):
    base = _overrides(plan_for("cpt_patok", processed, tmp_path))
    err = _check_fails([*base, "model.vocab_size=1000"], capsys)
    assert "more than the model's" in err or "embedding rows" in err


def test_an_unsupported_release_is_refused_with_the_fix(processed, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(compat, "installed_version", lambda: "0.3.1")
    err = _check_fails(_overrides(plan_for("cpt_patok", processed, tmp_path)), capsys)
    assert "0.3.1 is not a release" in err and "0.4.x" in err and "nemo:26.04" in err


@pytest.mark.parametrize("rank", ["0", "1"])
def test_progress_is_written_once_by_rank0_when_bridge_exits_on_duration(
    rank, processed, tmp_path, monkeypatch
):
    """Bridge ends a job at exit_duration_in_mins with a save and sys.exit(0): progress.json must still appear,
    written by rank 0 alone. The real pretrain() module is imported; only the function is replaced."""
    bridge_pretrain = pytest.importorskip(
        "megatron.bridge.training.pretrain",
        reason="needs nvidia-resiliency-ext (left out of the 0.6 environment)",
    )

    plan = plan_for("cpt_patok", processed, tmp_path)
    Path(plan.cluster.import_dir).mkdir(parents=True)
    (Path(plan.cluster.import_dir) / config.VERIFIED_MARKER).write_text("{}")
    seen = {}

    def pretrain(config, forward_step_func):
        seen["config"] = config
        plan.checkpoint_dir.mkdir(parents=True, exist_ok=True)
        (plan.checkpoint_dir / "latest_checkpointed_iteration.txt").write_text("3000\n")
        sys.exit(0)

    monkeypatch.setattr(bridge_pretrain, "pretrain", pretrain)
    monkeypatch.setenv("RANK", rank)
    monkeypatch.setenv(
        "WORLD_SIZE", "8"
    )  # as torchrun sets it (a plain process is refused with the commands)
    for name in ("WANDB_RUN_ID", "WANDB_RESUME", "WANDB_MODE"):
        monkeypatch.delenv(name, raising=False)
    config.train(plan)  # returns: exit 0 is a normal end of a job
    progress = Path(plan.run_dir) / "progress.json"
    assert seen["config"].tokenizer.tokenizer_type == "NullTokenizer"
    if rank == "1":
        assert not progress.exists()
    else:
        written = json.loads(progress.read_text())
        assert (written["iteration"], written["complete"]) == (3000, False) and "sys.exit(0)" in written[
            "exit"
        ]
    import os

    assert os.environ["WANDB_RUN_ID"] == config.wandb_run_id(plan) and os.environ["WANDB_RESUME"] == "allow"


def test_bridge_starts_wandb_without_an_id_of_its_own(processed, tmp_path, monkeypatch):
    """Our stable run id travels in WANDB_RUN_ID/WANDB_RESUME: that works only while Bridge's own wandb.init
    passes neither `id` nor `resume`. Bridge's real GlobalState starts W&B here against a recording stand-in."""
    from megatron.bridge.training.state import GlobalState

    calls = []
    monkeypatch.setitem(sys.modules, "wandb", types.SimpleNamespace(init=lambda **kw: calls.append(kw)))
    plan = plan_for("cpt_patok", processed, tmp_path)
    state = GlobalState()
    state.cfg = config.build_config(plan)
    assert state.wandb_logger is not None and len(calls) == 1
    assert "id" not in calls[0] and "resume" not in calls[0]
    assert calls[0]["project"] == "gemma3-seapile-cpt" and calls[0]["name"] == plan.run_name


def test_wandb_id_is_stable_across_jobs_and_differs_between_runs(tmp_path):
    first = plan_for("cpt_patok", tmp_path, tmp_path)
    again = plan_for("cpt_patok", tmp_path, tmp_path)
    other = plan_for("cpt_stochastok", tmp_path, tmp_path)
    assert config.wandb_run_id(first) == config.wandb_run_id(again) != config.wandb_run_id(other)


def test_empty_chunks_are_left_out_of_the_blend_bridge_builds(processed, tmp_path, capsys):
    """More chunks than lines makes empty chunks; megatron-core cannot open an empty dataset, so the blend the
    real builder receives must leave them out."""
    import shutil

    from morphcpt import preprocess

    data = tmp_path / "with-empty"
    shutil.copytree(processed, data)
    empty = tmp_path / "chunk_03.jsonl"
    empty.write_text("")
    preprocess.run(
        preprocess.compose_config(
            ["scheme=patok", f"input={empty}", f"output_dir={data}", "index_offset=0", "progress=false"]
        )
    )
    plan = plan_for("cpt_patok", data, tmp_path, "data.num_chunks=3")
    blend = config.training_blend(plan)["dataset.blend_per_split"][0][0]
    assert [Path(p).name for p in blend] == ["chunk_01_text_document", "chunk_02_text_document"]
    report = engine.run(load_plan([*_overrides(plan), "cluster.stage=check"]))
    assert report["datasets"]["train"]["read"] > 0


def test_the_pilot_model_is_the_recipe_with_the_270m_shape_and_passes_the_check(processed, tmp_path, capsys):
    """No release has a gemma-3-270m recipe: the 1B recipe's settings with the shape AutoBridge reads from the
    model's Hugging Face config (here gemma-3-270m's released shape, saved without weights)."""
    from morphcpt.modeling.models import gemma3_270m_config

    folder = tmp_path / "gemma-3-270m"
    hf_config = gemma3_270m_config()
    hf_config.architectures = ["Gemma3ForCausalLM"]
    hf_config.save_pretrained(folder)
    base = [
        "recipe=pilot_patok",
        f"data.root={processed}",
        "data.num_chunks=2",
        f"output_root={tmp_path / 'out'}",
        f"model.tokenizer={paths.SAMPLE_TOKENIZER_DIR}",
        f"model.pretrained={folder}",
    ]
    plan = load_plan(base)
    cfg = config.build_config(plan)
    recipe_model = compat.recipe(compat.require_supported()[1])[1]().model
    m = cfg.model
    assert (m.num_layers, m.hidden_size, m.ffn_hidden_size) == (18, 640, 2048)
    assert (m.num_attention_heads, m.num_query_groups, m.kv_channels, m.window_size) == (4, 1, 256, 512)
    assert m.vocab_size == 262144 and m.seq_length == 2048
    # the recipe's settings stay: kernels, precision
    assert (m.transformer_impl, m.bf16, m.params_dtype) == (
        recipe_model.transformer_impl,
        recipe_model.bf16,
        recipe_model.params_dtype,
    )
    assert cfg.train.train_iters == plan.loop.steps == 954  # 500M tokens at 256 x 2048 a step
    report = engine.run(load_plan([*base, "cluster.stage=check"]))
    assert "cluster check: gemma3-270m-patok (scheme patok) — OK" in capsys.readouterr().out
    assert report["validated"]["warmup_steps"] == 100 * 256


@pytest.mark.parametrize(
    "extra", [[], ["loop.activation_checkpointing=true"], ["loop.micro_batch_size=auto"]]
)
def test_the_planner_reads_the_config_bridge_validates(extra, tmp_path):
    """The memory planner's Megatron shape from the plan alone (what a login node without Bridge uses) is the one
    read from the real ConfigContainer after Bridge's own runtime_config_update(), recomputation included; the
    parameter count is transformers' gemma-3-1b-pt's."""
    import os
    import tempfile

    from megatron.bridge.training.config import runtime_config_update

    from morphcpt.train.memory.megatron import MegatronShape
    from morphcpt.train.memory.planner import resolve_micro_batch

    plan = plan_for("cpt_patok", tmp_path / "data", tmp_path, *extra)
    resolve_micro_batch(plan, "megatron")
    cfg = config.build_config(plan)
    cfg.checkpoint.pretrained_checkpoint = tempfile.mkdtemp()  # validate() wants the import folder to exist
    before = os.environ.get("WORLD_SIZE")
    os.environ["WORLD_SIZE"] = "8"
    try:
        runtime_config_update(cfg)
    finally:
        os.environ.pop("WORLD_SIZE") if before is None else os.environ.update(WORLD_SIZE=before)
    assert MegatronShape.from_config(cfg) == MegatronShape.from_plan(plan)
    assert MegatronShape.from_config(cfg).params() == 999_885_952
    if extra == ["loop.activation_checkpointing=true"]:
        assert (cfg.model.recompute_granularity, cfg.model.recompute_method) == ("full", "uniform")


def test_check_stage_refuses_a_plan_too_big_for_the_card(processed, tmp_path, capsys):
    base = _overrides(plan_for("cpt_patok", processed, tmp_path))
    err = _check_fails([*base, "cluster.gpu_memory=20GB"], capsys)
    assert "cluster check FAILED: loop.micro_batch_size=2 does not fit one A100 20GB" in err
    assert "loop.activation_checkpointing=true" in err and "loop.micro_batch_size=1" in err
