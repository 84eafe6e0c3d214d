"""A user's own tokenizer: `morphcpt import-tokenizer` on SentencePiece models (unigram and BPE, the default
normaliser, dummy prefix, no pad), a byte-level BPE tokenizer.json (GPT-2 style) and a folder; exact bytes and
decoding on byte-level vocabularies (so validation bits per byte are exact); clear refusals; and a user's
SentencePiece model trained from scratch and evaluated end to end."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from morphcpt.tokenization.import_tokenizer import IMPORT_FILE, TokenizerImportError, import_tokenizer
from morphcpt.tokenization.vocabulary import TokenizerNotFound, TokenizerUnfit, Vocabulary
from suite_paths import OFFICIAL
from train_helpers import read_texts


@pytest.fixture(scope="module")
def texts(sample_corpus) -> list[str]:
    return read_texts(sample_corpus, limit=400)


def sentencepiece_model(folder: Path, texts: list[str], name: str, **options) -> Path:
    """A SentencePiece model trained as a user would, with the library's defaults unless `options` say."""
    import sentencepiece as spm

    corpus = folder / f"{name}.txt"
    corpus.write_text("\n".join(t.replace("\n", " ") for t in texts[40:]), encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(folder / name), vocab_size=800, minloglevel=2, **options
    )
    return folder / f"{name}.model"


@pytest.fixture(scope="module")
def user_models(tmp_path_factory, texts) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("spm")
    return {
        "unigram": sentencepiece_model(folder, texts, "multilingual", byte_fallback=True),
        "bpe": sentencepiece_model(folder, texts, "bpe", model_type="bpe", byte_fallback=True, pad_id=3),
        "no_fallback": sentencepiece_model(folder, texts, "lossy"),
    }


@pytest.fixture(scope="module")
def byte_level_json(tmp_path_factory, texts) -> Path:
    """A tiny GPT-2 style byte-level BPE (the `tokenizers` library), saved as a bare tokenizer.json."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=700, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(texts[40:], trainer)
    path = tmp_path_factory.mktemp("byte_level") / "tokenizer.json"
    tokenizer.save(str(path))
    return path


@pytest.mark.parametrize("kind", ["unigram", "bpe"])
def test_a_sentencepiece_model_imports_lossless_and_segments_as_the_model_does(
    user_models, texts, kind, tmp_path
):
    import sentencepiece as spm

    report = import_tokenizer(user_models[kind], tmp_path / "tok")
    assert report.kind == "sentencepiece" and report.model == {"unigram": "Unigram", "bpe": "BPE"}[kind]
    said = " ".join(report.changes)
    assert "nmt_nfkc" in said and "dummy-prefix" in said
    named = {name: v["token"] for name, v in report.named.items()}
    assert named["eos"] == "</s>" and named["bos"] == "<s>" and named["unk"] == "<unk>"
    assert named["pad"] == ("<pad>" if kind == "bpe" else "</s>")  # the unigram model has no pad (pad_id -1)
    assert json.loads((tmp_path / "tok" / IMPORT_FILE).read_text())["named"]["pad"]["token"] == named["pad"]
    vocab = Vocabulary.load(tmp_path / "tok")
    model = spm.SentencePieceProcessor(model_file=str(user_models[kind]))
    lines = [" ".join(line.split()) for t in texts[:40] for line in t.splitlines() if line.strip()]
    plain = [line for line in lines if model.normalize(line) == "▁" + line.replace(" ", "▁")]
    # On text the model's normaliser leaves alone, the import gives the model's own pieces (its dummy prefix is
    # the space written here); unigram ties between equal-scored pieces may be broken the other way.
    same = sum(vocab.encode(" " + line) == model.encode(line) for line in plain)
    assert len(plain) > 50 and same >= len(plain) - 2
    for text in texts[:40]:
        ids = vocab.encode(text)
        assert vocab.decode(ids) == text
        assert sum(len(vocab.piece_bytes[i]) for i in ids) == len(text.encode("utf-8"))


def test_a_tokenizer_that_loses_text_is_refused_naming_the_characters(user_models, tmp_path):
    with pytest.raises(
        TokenizerImportError, match=r"does not give back .* check texts .* no byte fallback"
    ) as e:
        import_tokenizer(user_models["no_fallback"], tmp_path / "tok")
    assert not (tmp_path / "tok").exists()
    # characters it cannot spell come back as its unk: lost text, not a badly chosen unk token
    assert "characters that come back as something else" in str(e.value)
    assert "name one that no text encodes to" not in str(e.value)


def test_a_model_file_or_a_folder_without_a_pad_token_says_to_import_it(user_models, tmp_path):
    with pytest.raises(TokenizerNotFound, match="import-tokenizer"):
        Vocabulary.load(user_models["unigram"])
    folder = tmp_path / "as_is"
    folder.mkdir()
    (folder / "tokenizer.model").write_bytes(user_models["unigram"].read_bytes())
    with pytest.raises(TokenizerUnfit, match=r"no pad token.*morphcpt import-tokenizer"):
        Vocabulary.load(folder)
    imported = import_tokenizer(folder, tmp_path / "tok")  # the same folder imports
    assert imported.kind == "sentencepiece" and Vocabulary.load(tmp_path / "tok").size == 800


def test_byte_level_bpe_counts_bytes_and_decodes_exactly(byte_level_json, texts, tmp_path):
    report = import_tokenizer(byte_level_json, tmp_path / "tok")
    assert report.byte_level and not report.changes
    assert {v["token"] for v in report.named.values()} == {"<|endoftext|>"}  # GPT-2: one token for all four
    vocab = Vocabulary.load(tmp_path / "tok")
    hf = vocab.tokenizer
    extra = ["tab\there  two  spaces\n", "▁ is text here", "ñ, é, 日本語, 😀", " leading and trailing "]
    for text in [*texts[:40], *extra]:
        ids = vocab.encode(text)
        assert sum(len(vocab.piece_bytes[i]) for i in ids) == len(text.encode("utf-8"))
        assert vocab.decode(ids) == text == hf.decode(ids)
    rng = random.Random(0)  # any ids, invalid UTF-8 included: the same text as the tokenizer's own decoder
    for _ in range(300):
        ids = [rng.randrange(vocab.size) for _ in range(rng.randrange(1, 6))]
        assert vocab.decode(ids) == hf.decode(ids, skip_special_tokens=True)


def test_byte_level_validation_bytes_are_the_texts_bytes(byte_level_json, texts, tmp_path):
    """Bits per byte divides by the bytes the validation set's tokens spell: exactly its texts' UTF-8 bytes."""
    from morphcpt.preprocess import compose_config, run
    from morphcpt.train.data import byte_table, dataset_bytes

    import_tokenizer(byte_level_json, tmp_path / "tok")
    source = tmp_path / "validation.jsonl"
    source.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts[:40]), encoding="utf-8")
    run(
        compose_config(
            [
                "validation=true",
                f"input={source}",
                f"output_dir={tmp_path / 'data'}",
                f"tokenizer={tmp_path / 'tok'}",
                "progress=false",
            ]
        )
    )
    vocab = Vocabulary.load(tmp_path / "tok")
    tokens, nbytes = dataset_bytes(
        tmp_path / "data" / "validation" / "validation_text_document", byte_table(vocab)
    )
    assert nbytes == sum(len(t.encode("utf-8")) for t in texts[:40])
    assert tokens == sum(len(vocab.encode(t)) + 2 for t in texts[:40])  # each framed by bos ... eos


def test_named_tokens_come_from_the_flags_and_unknown_ones_are_refused(byte_level_json, tmp_path):
    with pytest.raises(TokenizerImportError, match=r"--eos '</s>' is not a token"):
        import_tokenizer(byte_level_json, tmp_path / "a", asked={"eos": "</s>"})
    report = import_tokenizer(byte_level_json, tmp_path / "b", asked={"eos": "<|endoftext|>"})
    assert report.named["eos"]["from"] == "--eos" and report.named["pad"]["from"].startswith("the eos token")
    with pytest.raises(TokenizerImportError, match=r"encodes to the pad token 'Ġ', which decoding drops"):
        import_tokenizer(byte_level_json, tmp_path / "b", asked={"pad": "Ġ"})  # the space itself
    with pytest.raises(TokenizerImportError, match="no such file"):
        import_tokenizer(tmp_path / "missing.model", tmp_path / "c")
    (tmp_path / "junk.model").write_bytes(b"not a model")
    with pytest.raises(TokenizerImportError, match="not a SentencePiece model"):
        import_tokenizer(tmp_path / "junk.model", tmp_path / "c")


def test_the_command_prints_what_it_did(user_models, tmp_path, capsys):
    from morphcpt.cli import main

    assert main(["import-tokenizer", str(user_models["bpe"]), "--out-dir", str(tmp_path / "tok")]) == 0
    out = capsys.readouterr().out
    assert "BPE tokenizer, 800 ids" in out and "changed: left out the model's text normaliser" in out
    assert "texts decode to themselves" in out
    with pytest.raises(SystemExit) as stopped:
        main(["import-tokenizer", str(user_models["no_fallback"]), "--out-dir", str(tmp_path / "bad")])
    assert stopped.value.code == 1 and "import-tokenizer: error:" in capsys.readouterr().err


@pytest.mark.slow
def test_a_users_sentencepiece_model_trains_and_evaluates_end_to_end(user_models, texts, tmp_path):
    """import -> preprocess -> pretrain a tiny model from scratch -> export -> evaluate, on CPU."""
    from morphcpt.evaluate.runner import EvalConfig, run_evaluation
    from morphcpt.export import export_run
    from morphcpt.preprocess import compose_config, run
    from morphcpt.train import load_plan
    from morphcpt.train.data import byte_table, dataset_bytes
    from morphcpt.train.hf.engine import train
    from morphcpt.train.hf.metrics import read_metrics

    tokenizer = tmp_path / "tokenizer"
    import_tokenizer(user_models["unigram"], tokenizer)
    for name, part in (("chunk_01", texts[40:]), ("validation", texts[:40])):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps({"text": t}) + "\n" for t in part), encoding="utf-8")
    common = [f"output_dir={tmp_path / 'data'}", f"tokenizer={tokenizer}", "progress=false"]
    run(compose_config([f"input={tmp_path / 'chunk_01.jsonl'}", "scheme=vanilla", *common]))
    run(compose_config([f"input={tmp_path / 'validation.jsonl'}", "validation=true", *common]))
    plan = load_plan(
        [
            "recipe=pretrain_scratch_cpu",
            f"model.tokenizer={tokenizer}",
            f"data.root={tmp_path / 'data'}",
            f"output_root={tmp_path}",
            "loop.train_tokens=8k",
            "validation.interval=4",
            "logging.progress_bar=false",
        ]
    )
    result = train(plan)
    assert result.final_step == 8 and not result.interrupted
    validations = [row for row in read_metrics(result.run_dir) if row["kind"] == "val"]
    assert validations[-1]["val_loss"] < validations[0]["val_loss"]
    # the validation set spells exactly its texts' bytes; the scored windows are a part of it
    validation = tmp_path / "data" / "validation" / "validation_text_document"
    text_bytes = sum(len(t.encode("utf-8")) for t in texts[:40])
    assert dataset_bytes(validation, byte_table(Vocabulary.load(tokenizer)))[1] == text_bytes
    assert 0 < validations[-1]["val_bytes"] <= text_bytes
    export = export_run(result.run_dir, output=tmp_path / "export").output
    config = json.loads((export / "config.json").read_text())
    vocab = Vocabulary.load(tokenizer)
    assert config["vocab_size"] == vocab.size and config["eos_token_id"] == vocab.eos_id
    assert (
        config["pad_token_id"] is None
    )  # the model has no pad of its own: no embedding row is frozen as one
    cfg = EvalConfig(
        models=[str(export)],
        benchmarks=["pacute-affixation"],
        benchmark_dir=OFFICIAL,
        output_dir=tmp_path / "results",
        batch_size=4,
        device="cpu",
        max_new_tokens=4,
    )
    written = run_evaluation(cfg)
    assert len(written) == 2
    for path in written:
        result = json.loads(Path(path).read_text())
        assert result["summary"]["overall"]["n"] == len(result["predictions"]) > 0
