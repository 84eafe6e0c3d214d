"""EEVE staged training on the tiny Gemma 3: the resized model's initialisation, the seven stages with frozen
rows and tensors proven unchanged bit for bit, no optimiser state for frozen tensors, trainable counts, resume
inside a stage, skipping finished stages on rerun, a later start continuing from the last finished stage, an
export that transformers loads untied, and stages 1, 2 and 6 at 2 ranks (gloo) under ddp and fsdp."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from morphcpt.plan.schema import PlanError
from morphcpt.preprocess import compose_config, run
from morphcpt.tokenization.eeve import Expansion, expand
from morphcpt.train import load_plan
from morphcpt.train.eeve import engine
from morphcpt.train.eeve.engine import STAGE_DONE, stage_dir
from morphcpt.train.eeve.params import STAGE_TRAINS
from morphcpt.train.hf.metrics import read_metrics
from suite_paths import TESTS

pytestmark = pytest.mark.slow  # seven short training stages on the tiny model, about a minute and a half

NUM_NEW = 48
EMBED, HEAD = "model.embed_tokens.weight", "lm_head.weight"


@pytest.fixture(scope="module")
def setup(tmp_path_factory, sample_corpus, sample_tokenizer_dir, tiny_gemma3):
    """An expanded tokenizer and the eeve data (one chunk + validation_eeve), made by the real stages."""
    root = tmp_path_factory.mktemp("eeve_train")
    lines = sample_corpus.read_text(encoding="utf-8").splitlines(keepends=True)[:240]
    (root / "validation.jsonl").write_text("".join(lines[:40]), encoding="utf-8")
    (root / "chunk_01.jsonl").write_text("".join(lines[40:]), encoding="utf-8")
    tokenizer = root / "tokenizer"
    expand(root / "chunk_01.jsonl", sample_tokenizer_dir, tokenizer, num_new=NUM_NEW)
    common = [f"output_dir={root / 'data'}", "progress=false", f"tokenizer={tokenizer}", "scheme=eeve"]
    run(compose_config([f"input={root / 'chunk_01.jsonl'}", "index_offset=40", *common]))
    run(compose_config(["validation=true", f"input={root / 'validation.jsonl'}", "index_offset=0", *common]))
    return root, tokenizer, tiny_gemma3


def eeve_plan(setup, out: Path, *extra):
    root, tokenizer, base = setup
    return load_plan(
        [
            "recipe=demo_eeve",
            f"data.root={root / 'data'}",
            f"output_root={out}",
            f"model.pretrained={base}",
            f"model.tokenizer={tokenizer}",
            "loop.seq_length=32",
            "loop.global_batch_size=4",
            "loop.micro_batch_size=2",
            "validation.max_batches=2",
            "eeve.steps=[2,2,2,2,2,2,2]",
            "eeve.warmup_steps=[0,0,0,0,0,0,0]",
            *extra,
        ]
    )


@pytest.fixture(scope="module")
def straight(tmp_path_factory, setup):
    plan = eeve_plan(setup, tmp_path_factory.mktemp("straight"))
    return plan, engine.run(plan)


def weights(folder: Path) -> dict[str, torch.Tensor]:
    return load_file(folder / "model.safetensors")


def stage_weights(plan, stage: int) -> dict[str, torch.Tensor]:
    return weights(
        Path(json.loads((stage_dir(plan, stage) / STAGE_DONE).read_text())["checkpoint"]) / "model"
    )


def test_resize_initialises_new_rows_as_eeve_and_keeps_old_logits(straight, setup):
    plan, _ = straight
    _, tokenizer, base = setup
    expansion = Expansion.load(tokenizer)
    old, new = weights(base), weights(Path(plan.run_dir) / "resized")
    rows = old[EMBED].shape[0]
    assert new[EMBED].shape[0] == new[HEAD].shape[0] == rows + NUM_NEW
    assert torch.equal(new[EMBED][:rows], old[EMBED]) and torch.equal(
        new[HEAD][:rows], old[EMBED]
    )  # was tied
    for k, pieces in enumerate(expansion.base_pieces):
        row = expansion.first_new_id + k
        assert torch.equal(new[EMBED][row], old[EMBED][pieces].mean(0))
        assert torch.equal(new[HEAD][row], old[EMBED][pieces[0]])
    from transformers import AutoConfig, AutoModelForCausalLM

    assert AutoConfig.from_pretrained(Path(plan.run_dir) / "resized").tie_word_embeddings is False
    ids = torch.tensor([[2, 10, 200, 31, 7, 1000]])
    with torch.no_grad():
        before = AutoModelForCausalLM.from_pretrained(base).eval()(input_ids=ids).logits
        after = (
            AutoModelForCausalLM.from_pretrained(Path(plan.run_dir) / "resized").eval()(input_ids=ids).logits
        )
    assert torch.allclose(after[..., :rows], before, atol=1e-5)


@pytest.mark.parametrize("stage", range(1, 8))
def test_frozen_rows_and_tensors_are_bitwise_unchanged_and_trained_ones_move(straight, stage):
    plan, result = straight
    assert result.stages_run == [1, 2, 3, 4, 5, 6, 7] and not result.interrupted
    before = weights(Path(plan.run_dir) / "resized") if stage == 1 else stage_weights(plan, stage - 1)
    after = stage_weights(plan, stage)
    first_new = before[EMBED].shape[0] - NUM_NEW
    train_in, train_out, train_body = STAGE_TRAINS[stage]
    for key, mode in ((EMBED, train_in), (HEAD, train_out)):
        old_rows_same = torch.equal(after[key][:first_new], before[key][:first_new])
        new_rows_same = torch.equal(after[key][first_new:], before[key][first_new:])
        assert old_rows_same == (mode != "all"), (key, mode)
        assert new_rows_same == (mode is None), (key, mode)
    body = [k for k in before if k not in (EMBED, HEAD)]
    changed = [k for k in body if not torch.equal(before[k], after[k])]
    assert (len(changed) > 0) == train_body
    if train_body:
        assert len(changed) > len(body) // 2


def test_bf16_parameters_with_fp32_masters_keep_frozen_rows_bitwise(tmp_path, setup):
    """The GPU default (bf16 parameters, fp32 masters) under EEVE's masks: frozen rows and tensors are the fp32
    values they were, not bf16-rounded ones, and the trained ones move."""
    plan = eeve_plan(setup, tmp_path, "loop.param_dtype=bf16", "eeve.stages=[1,2,6]")
    assert engine.run(plan).stages_run == [1, 2, 6]
    before = weights(Path(plan.run_dir) / "resized")
    for stage in (1, 2, 6):
        after = stage_weights(plan, stage)
        assert {t.dtype for t in after.values()} == {torch.float32}
        first_new = before[EMBED].shape[0] - NUM_NEW
        train_in, train_out, train_body = STAGE_TRAINS[stage]
        for key, mode in ((EMBED, train_in), (HEAD, train_out)):
            assert torch.equal(after[key][:first_new], before[key][:first_new]) == (mode != "all"), (
                stage,
                key,
            )
            assert torch.equal(after[key][first_new:], before[key][first_new:]) == (mode is None), (
                stage,
                key,
            )
        body = [k for k in before if k not in (EMBED, HEAD)]
        assert any(not torch.equal(before[k], after[k]) for k in body) == train_body, stage
        before = after


@pytest.mark.parametrize("stage", [1, 4, 7])
def test_optimiser_holds_state_only_for_trained_tensors(straight, stage):
    plan, _ = straight
    checkpoint = Path(json.loads((stage_dir(plan, stage) / STAGE_DONE).read_text())["checkpoint"])
    state = torch.load(checkpoint / "trainer.pt", weights_only=False)["optimizer"]
    sizes = [p for g in state["param_groups"] for p in g["params"]]
    marker = json.loads((stage_dir(plan, stage) / STAGE_DONE).read_text())
    hidden = weights(checkpoint / "model")[EMBED].shape[1]
    if stage == 1:  # the embedding alone, decayed by rows, not by AdamW
        assert len(sizes) == len(state["state"]) == 1
        (group,) = state["param_groups"]
        assert group["weight_decay"] == 0.0 and group["row_decay"] > 0
        assert marker["trainable_parameters"] == NUM_NEW * hidden
    if stage == 4:
        assert len(sizes) == 1 and marker["trainable_parameters"] == (4096 + NUM_NEW) * hidden
    if stage == 7:
        body = sum(v.numel() for k, v in weights(checkpoint / "model").items() if k not in (EMBED, HEAD))
        assert marker["trainable_parameters"] == body
        assert len(state["state"]) == len(sizes) == len(weights(checkpoint / "model")) - 2
    assert marker["total_parameters"] == sum(v.numel() for v in weights(checkpoint / "model").values())


def test_export_names_eeve_and_loads_untied(straight):
    from transformers import AutoModelForCausalLM

    _, result = straight
    meta = json.loads((result.export / "morphcpt_metadata.json").read_text())
    assert meta["scheme"] == "eeve"
    assert meta["eeve"]["added_tokens"] == NUM_NEW and meta["eeve"]["stages"] == [1, 2, 3, 4, 5, 6, 7]
    assert meta["eeve"]["stage_steps"] == [2] * 7 and meta["run_name"] == "demo-cpt-eeve"
    model = AutoModelForCausalLM.from_pretrained(result.export)
    assert model.config.tie_word_embeddings is False
    assert not torch.equal(model.get_input_embeddings().weight, model.get_output_embeddings().weight)
    assert torch.equal(model.get_output_embeddings().weight, weights(result.export)[HEAD])
    assert model.get_input_embeddings().weight.shape[0] == 4096 + NUM_NEW


def test_rerun_skips_finished_stages(straight, monkeypatch, capsys):
    plan, result = straight
    markers = {k: (stage_dir(plan, k) / STAGE_DONE).read_text() for k in range(1, 8)}

    def no_training(*args, **kwargs):
        raise AssertionError("a finished stage was trained again")

    monkeypatch.setattr("morphcpt.train.hf.engine.train", no_training)
    again = engine.run(plan)
    assert again.stages_run == result.stages_run and again.export == result.export
    assert markers == {k: (stage_dir(plan, k) / STAGE_DONE).read_text() for k in range(1, 8)}
    assert "already done, skipped" in capsys.readouterr().out


def test_a_stage_resumes_where_it_stopped(tmp_path, setup, straight):
    straight_plan, _ = straight
    plan = eeve_plan(setup, tmp_path, "eeve.stages=[1,2]", "loop.max_steps_per_run=1")
    calls = 0
    while True:
        calls += 1
        result = engine.run(plan)
        if not result.interrupted:
            break
        assert calls < 10
    # Each call runs one step of a stage, so stage 1 ends in call 2, which then starts stage 2.
    assert calls == 3 and result.stages_run == [1, 2]
    for stage in (1, 2):
        got, want = stage_weights(plan, stage), stage_weights(straight_plan, stage)
        assert all(torch.equal(got[k], want[k]) for k in want)


def test_stage_list_out_of_order_and_wrong_engine(setup, tmp_path):
    with pytest.raises(ValueError, match="ascending"):
        eeve_plan(setup, tmp_path, "eeve.stages=[2,1]")
    with pytest.raises(ValueError, match="ascending"):
        eeve_plan(setup, tmp_path, "eeve.stages=[1,8]")
    with pytest.raises(ValueError, match="hf engine"):
        engine.run(eeve_plan(setup, tmp_path, "engine=megatron"))


def test_a_later_start_continues_from_the_last_finished_stage(tmp_path, setup, straight, capsys):
    straight_plan, _ = straight
    engine.run(eeve_plan(setup, tmp_path, "eeve.stages=[1,2]"))
    later = eeve_plan(setup, tmp_path, "eeve.stages=[3]")
    result = engine.run(later)
    assert "stages 1, 2 finished earlier" in capsys.readouterr().out
    got, want = stage_weights(later, 3), stage_weights(straight_plan, 3)
    assert all(torch.equal(got[k], want[k]) for k in want)  # what [1,2,3] in one go gives
    assert json.loads((result.export / "morphcpt_metadata.json").read_text())["eeve"]["stages"] == [1, 2, 3]
    (stage_dir(later, 2) / STAGE_DONE).unlink()  # stage 2 started, not finished: stage 4 would skip it
    with pytest.raises(PlanError, match=r"stage 2 was started .* but not finished.*eeve.stages=\[2,4\]"):
        engine.run(eeve_plan(setup, tmp_path, "eeve.stages=[4]"))


# --- 2 ranks ----------------------------------------------------------------------------------------------------

SCENARIOS = TESTS / "eeve_scenarios.py"
RANK_STAGES = (1, 2, 6)


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory, setup):
    """Stages 1, 2, 6 at 2 ranks under ddp and fsdp (tests/eeve_scenarios.py); the output root."""
    root, tokenizer, base = setup
    out = tmp_path_factory.mktemp("eeve_ranks")
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", str(SCENARIOS)]
    done = subprocess.run(
        [*command, str(root / "data"), str(tokenizer), str(base), str(out)],
        capture_output=True,
        text=True,
        timeout=500,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return out


@pytest.fixture(scope="module")
def one_rank(tmp_path_factory, setup):
    from eeve_scenarios import plan

    root, tokenizer, base = setup
    single = plan(str(root / "data"), str(tokenizer), str(base), str(tmp_path_factory.mktemp("eeve_one")))
    assert engine.run(single).stages_run == list(RANK_STAGES)
    return single


def losses(run_dir: Path) -> list[tuple[str, int, float]]:
    return [(r["kind"], r["step"], r.get("loss", r.get("val_loss"))) for r in read_metrics(run_dir)]


@pytest.mark.parametrize("layout", ["ddp", "fsdp"])
def test_two_ranks_leave_frozen_rows_bitwise_and_match_one_rank(two_ranks, one_rank, layout):
    from eeve_scenarios import plan

    root = two_ranks / layout
    ranked = plan("data", "tokenizer", "base", str(root))  # only its folders are read
    before = weights(Path(ranked.run_dir) / "resized")
    first_new = before[EMBED].shape[0] - NUM_NEW
    for stage in RANK_STAGES:
        after = stage_weights(ranked, stage)
        train_in, train_out, train_body = STAGE_TRAINS[stage]
        for key, mode in ((EMBED, train_in), (HEAD, train_out)):
            moved = (after[key] != before[key]).any(dim=1)
            assert int(moved[:first_new].sum()) == 0 or mode == "all", (stage, key)
            assert bool(moved[first_new:].all()) == (mode is not None), (stage, key)
        body = [k for k in before if k not in (EMBED, HEAD)]
        assert any(not torch.equal(before[k], after[k]) for k in body) == train_body
        got, want = losses(stage_dir(ranked, stage)), losses(stage_dir(one_rank, stage))
        assert [g[:2] for g in got] == [w[:2] for w in want] and got
        for (kind, step, a), (*_, b) in zip(got, want, strict=True):
            assert a == pytest.approx(b, rel=1e-5), (stage, kind, step)
        before = after
