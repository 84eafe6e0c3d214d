"""A new language from scratch: the tokenizer options (language balance, byte fallback), the model-size presets
with the trained tokenizer's vocabulary, token budgets that set the steps, perplexity beside bits per byte,
SIGINT saving like SIGTERM, the PBS job, and docs/from-scratch.md's walk-through end to end on the shipped fixtures."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time

import pytest
import torch

from morphcpt import paths
from morphcpt.chain.jobs import SETTINGS, derived_settings, render_template
from morphcpt.modeling import checkpoint_files
from morphcpt.modeling.models import config_from_plan, gemma3_1b_config
from morphcpt.tokenization.train_tokenizer import language_shares, train_sentencepiece_tokenizer
from morphcpt.tokenization.vocabulary import Vocabulary
from morphcpt.train import load_plan
from morphcpt.train.hf.metrics import read_metrics

SCRATCH = paths.DATA_DIR / "scratch"


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    from morphcpt.corpus.assemble import PrepareConfig, prepare

    out = tmp_path_factory.mktemp("scratch") / "corpus.jsonl"
    sources = [
        f"{SCRATCH / 'tl_ui.txt'}?txt=block",
        f"{SCRATCH / 'tl_chromium.csv'}?column=body",
        str(SCRATCH / "tl_jokes.parquet"),
        f"{SCRATCH / 'en_docs.jsonl'}?lang=en",
    ]
    prepare(PrepareConfig(sources=sources, output=out, lang="tl", progress=False))
    return out


def test_language_balance_gives_each_language_about_the_same_bytes(corpus, tmp_path):
    shares = language_shares([corpus])
    sizes = {}
    for line in corpus.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        sizes[row["lang"]] = sizes.get(row["lang"], 0) + len(row["text"].encode())
    assert set(shares) == {"en", "tl"} and shares["en"] == 1.0 and 0 < shares["tl"] < 0.5
    from morphcpt.tokenization.train_tokenizer import balanced_texts

    kept_tl = sum(
        len(t.encode()) for t in balanced_texts([corpus], shares) if t not in _texts_of(corpus, "en")
    )
    assert 0.6 < kept_tl / sizes["en"] < 1.4  # a seeded sample, so about equal, not exactly
    assert list(balanced_texts([corpus], shares)) == list(balanced_texts([corpus], shares))
    natural, smoothed = language_shares([corpus], alpha=1.0), language_shares([corpus], alpha=0.3)
    assert natural == {"en": 1.0, "tl": 1.0}
    assert smoothed["en"] == 1.0 and shares["tl"] < smoothed["tl"] < 1.0
    kept = {lang: sizes[lang] * smoothed[lang] for lang in sizes}  # in proportion to size**0.3
    assert kept["tl"] / kept["en"] == pytest.approx((sizes["tl"] / sizes["en"]) ** 0.3)


def _texts_of(corpus, lang):
    rows = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines()]
    return {row["text"] for row in rows if row.get("lang") == lang}


def test_byte_fallback_keeps_unseen_characters_lossless_and_can_be_switched_off(corpus, tmp_path):
    with_bytes = Vocabulary.load(train_sentencepiece_tokenizer(corpus, tmp_path / "bytes", 600))
    without = Vocabulary.load(
        train_sentencepiece_tokenizer(corpus, tmp_path / "nobytes", 400, byte_fallback=False)
    )
    unseen = "Ang ☃ at ᜊᜌ᜔ᜊᜌᜒᜈ᜔"  # a snowman and Baybayin script: not in the fixtures
    assert len(with_bytes.byte_values) == 256 and with_bytes.decode(with_bytes.encode(unseen)) == unseen
    assert not without.byte_values and without.size == 400
    assert 3 in without.encode(unseen)  # <unk>
    balanced = train_sentencepiece_tokenizer(corpus, tmp_path / "balanced", 600, balance_languages=True)
    assert Vocabulary.load(balanced).size == 600


@pytest.mark.parametrize("preset", ["scratch_tiny", "scratch_100m", "scratch_1b"])
def test_presets_take_the_vocabulary_of_the_trained_tokenizer(preset, sample_tokenizer_dir):
    plan = load_plan(
        ["recipe=pretrain_scratch", f"model={preset}", f"model.tokenizer={sample_tokenizer_dir}"]
    )
    vocab = Vocabulary.load(sample_tokenizer_dir)
    assert plan.model.pretrained is None and plan.model.vocab_size is None
    config = config_from_plan(plan.model, plan.model.vocab_size or vocab.size)
    with torch.device("meta"):
        from transformers import Gemma3ForCausalLM

        model = Gemma3ForCausalLM(config)
    assert model.get_input_embeddings().weight.shape[0] == vocab.size == 4096
    layers = sum(p.numel() for n, p in model.named_parameters() if "layers." in n)
    expected = {"scratch_tiny": (0.2e6, 0.3e6), "scratch_100m": (80e6, 90e6), "scratch_1b": (0.65e9, 0.75e9)}
    low, high = expected[preset]
    assert low < layers < high
    if preset == "scratch_1b":  # the released 1B shape, with our own vocabulary
        reference = gemma3_1b_config(vocab.size).to_dict()
        assert {k: v for k, v in config.to_dict().items() if k != "transformers_version"} == {
            k: v for k, v in reference.items() if k != "transformers_version"
        }


def test_a_preset_without_a_tokenizer_is_an_error():
    with pytest.raises(ValueError, match=r"needs model.tokenizer=DIR"):
        load_plan(["recipe=pretrain_scratch"])


@pytest.mark.parametrize(("budget", "steps"), [("10M", 20), ("100M", 191), ("1B", 1908), ("10B", 19074)])
def test_a_token_budget_sets_the_steps(budget, steps, sample_tokenizer_dir):
    overrides = [
        "recipe=pretrain_scratch",
        f"model.tokenizer={sample_tokenizer_dir}",
        f"loop.train_tokens={budget}",
    ]
    if budget == "10M":
        overrides.append("optim.warmup_steps=5")
    plan = load_plan(overrides)
    tokens_per_step = plan.loop.global_batch_size * plan.loop.seq_length
    tokens = int(budget[:-1]) * {"M": 10**6, "B": 10**9}[budget[-1]]
    assert plan.loop.steps == steps
    assert (steps - 1) * tokens_per_step < tokens <= steps * tokens_per_step  # the fewest steps that cover it
    cpu = load_plan(
        ["recipe=pretrain_scratch_cpu", f"model.tokenizer={sample_tokenizer_dir}", "loop.train_tokens=10000"]
    )
    assert cpu.loop.steps == 10  # ceil(10000 / (16 x 64))


def test_the_docs_walkthrough_plan_matches_its_export_path(sample_tokenizer_dir, tmp_path):
    readme = (paths.REPO_ROOT / "docs" / "from-scratch.md").read_text(encoding="utf-8")
    plan = load_plan(
        ["recipe=pretrain_scratch_cpu", f"model.tokenizer={sample_tokenizer_dir}", f"output_root={tmp_path}"]
    )
    assert plan.loop.steps == 98 and "100k-token budget (98 steps)" in readme
    assert f"--run-dir outputs/scratch/runs/{plan.run_name} " in readme


def test_pretrain_scratch_job_renders_to_valid_bash(tmp_path):
    settings = derived_settings(
        {**SETTINGS, "PROJECT_DIR": "/p", "DATA_ROOT": "/d", "SCRATCH_MODEL": "scratch_1b"}
    )
    text = (paths.REPO_ROOT / "job_templates" / "pretrain_scratch.pbs").read_text()
    script = tmp_path / "pretrain_scratch.pbs"
    script.write_text(render_template(text, settings, source="pretrain_scratch.pbs"))
    subprocess.run(["bash", "-n", str(script)], check=True)
    body = script.read_text()
    assert 'torchrun_nodes.sh --nodes "1" --gpus "8" --log-dir' in body and "-- -m morphcpt.train" in body
    assert '"recipe=pretrain_scratch" "model=scratch_1b" "model.tokenizer=/d/tokenizer"' in body
    assert '"loop.train_tokens=1B"' in body and "training/nemo/before_walltime.sh --walltime" in body


@pytest.mark.slow
def test_sigint_writes_a_checkpoint_like_sigterm(tmp_path, sample_corpus):
    from train_helpers import write_data

    data_root = write_data(tmp_path / "data", sample_corpus, limit=200)
    overrides = [
        "recipe=demo_base",
        f"data.root={data_root}",
        f"output_root={tmp_path}",
        "run_name=interrupted",
    ]
    overrides += [
        "loop.steps=400",
        "loop.seq_length=32",
        "loop.global_batch_size=4",
        "loop.micro_batch_size=2",
    ]
    overrides += ["validation.interval=1000", "checkpoint.interval=1000"]
    proc = subprocess.Popen([sys.executable, "-m", "morphcpt.train", *overrides], stderr=subprocess.DEVNULL)
    run_dir = tmp_path / "runs" / "interrupted"
    deadline = time.time() + 240
    while len(read_metrics(run_dir)) < 2 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGINT)
    # an interrupted run exits non-zero (143, as for SIGTERM) so a job script can tell it from a finished one
    assert proc.wait(timeout=120) == 128 + signal.SIGTERM
    stopped = max(r["step"] for r in read_metrics(run_dir))
    assert 2 <= stopped < 400
    assert (
        checkpoint_files.read_meta(checkpoint_files.latest_checkpoint(run_dir / "checkpoints"))["step"]
        == stopped
    )


@pytest.mark.slow
def test_walkthrough_from_sources_to_generated_text(corpus, tmp_path, capsys):
    """docs/from-scratch.md's commands, with a shorter training: corpus -> tokenizer -> preprocess -> train -> generate."""
    from morphcpt.corpus.split import split_jsonl
    from morphcpt.evaluate.generate_text import main as generate
    from morphcpt.export import export_run
    from morphcpt.preprocess import compose_config, run
    from morphcpt.tokenization.train_tokenizer import main as train_tokenizer
    from morphcpt.train.hf.engine import train

    tokenizer = tmp_path / "tokenizer"
    train_tokenizer([str(corpus), "--out-dir", str(tokenizer), "--vocab-size", "1000", "--balance-languages"])
    split_jsonl(corpus, tmp_path / "chunks", 1, holdout_lines=40)
    common = [f"output_dir={tmp_path / 'processed'}", f"tokenizer={tokenizer}", "progress=false"]
    run(compose_config(["scheme=vanilla", f"input={tmp_path / 'chunks' / 'chunk_01.jsonl'}", *common]))
    run(compose_config(["validation=true", f"input={tmp_path / 'chunks' / 'validation.jsonl'}", *common]))
    plan = load_plan(
        [
            "recipe=pretrain_scratch_cpu",
            f"model.tokenizer={tokenizer}",
            f"data.root={tmp_path / 'processed'}",
            f"output_root={tmp_path}",
            "loop.train_tokens=8k",
            "validation.interval=4",
            "logging.progress_bar=false",
        ]
    )
    result = train(plan)
    assert result.final_step == plan.loop.steps == 8 and not result.interrupted
    validations = [row for row in read_metrics(result.run_dir) if row["kind"] == "val"]
    assert [row["step"] for row in validations] == [4, 8]
    for row in validations:
        assert row["val_ppl"] == pytest.approx(math.exp(row["val_loss"]))
        assert 0 < row["val_bpb"] < row["val_loss"]
    assert validations[1]["val_loss"] < validations[0]["val_loss"]
    export = export_run(result.run_dir, output=tmp_path / "export").output
    model_config = json.loads((export / "config.json").read_text())
    assert model_config["vocab_size"] == Vocabulary.load(tokenizer).size == 1000
    capsys.readouterr()
    assert (
        generate(["--model", str(export), "--prompt", "Ang mga", "--max-new-tokens", "8", "--device", "cpu"])
        == 0
    )
    out = capsys.readouterr()
    assert out.out.startswith("Ang mga") and len(out.out.strip()) > len("Ang mga")
    assert "tokens/s]" in out.err
