"""Bad input to the newer commands is one sentence saying what is wrong and what would work: a tokenizer asked of
a corpus too small for it, the same source given twice or an output inside an input folder when preparing a
corpus, and a generation longer than the model's context."""

from __future__ import annotations

import json

import pytest

from morphcpt.corpus.assemble import PrepareConfig, prepare
from morphcpt.corpus.assemble import main as prepare_main
from morphcpt.tokenization import train_tokenizer as tt


def lines(sample_corpus, n: int) -> str:
    return "".join(sample_corpus.read_text(encoding="utf-8").splitlines(keepends=True)[:n])


@pytest.mark.parametrize(
    "content, size, says",
    [
        ("", 2000, "holds no text to train on (0 lines"),
        (
            '{"text": ""}\n{"nope": 1}\nnot json\n',
            2000,
            "holds no text to train on (3 lines, 3 empty or unreadable",
        ),
        (None, 2000, "--vocab-size 2000 is more than this corpus can fill: at most 4"),
        (None, 100, "--vocab-size 100 is too small for this corpus: it needs at least 2"),
    ],
)
def test_a_corpus_too_small_for_the_tokenizer_says_what_size_it_allows(
    tmp_path, sample_corpus, capsys, content, size, says
):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(lines(sample_corpus, 1) if content is None else content, encoding="utf-8")
    with pytest.raises(SystemExit) as exit_:
        tt.main([str(corpus), "--out-dir", str(tmp_path / "tok"), "--vocab-size", str(size)])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and says in err and str(corpus) in err
    assert "Traceback" not in err and not (tmp_path / "tok").exists()


def test_the_size_a_corpus_allows_is_one_that_trains(tmp_path, sample_corpus, capsys):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(lines(sample_corpus, 1), encoding="utf-8")
    with pytest.raises(SystemExit):
        tt.main([str(corpus), "--out-dir", str(tmp_path / "tok"), "--vocab-size", "2000"])
    allowed = int(capsys.readouterr().err.split("at most ")[1].split()[0])
    assert tt.main([str(corpus), "--out-dir", str(tmp_path / "tok"), "--vocab-size", str(allowed)]) is None


def test_a_missing_corpus_or_a_size_below_one_is_named(tmp_path, capsys):
    with pytest.raises(SystemExit):
        tt.main([str(tmp_path / "nope.jsonl"), "--out-dir", str(tmp_path / "tok"), "--vocab-size", "300"])
    err = capsys.readouterr().err
    assert f"error: {tmp_path / 'nope.jsonl'}: no such file" in err and err.count("nope.jsonl") == 1
    with pytest.raises(SystemExit):
        tt.main([str(tmp_path / "nope.jsonl"), "--out-dir", str(tmp_path / "tok"), "--vocab-size", "0"])
    assert "--vocab-size must be at least 1" in capsys.readouterr().err


# --- prepare_corpus -------------------------------------------------------------------------------------------


def test_the_same_source_twice_is_read_once_with_a_warning(tmp_path, sample_corpus, capsys):
    """It used to fail the whole run: the second copy held only duplicates, 'an empty source'."""
    source = tmp_path / "a.jsonl"
    source.write_text(lines(sample_corpus, 20), encoding="utf-8")
    spelled_again = f"{tmp_path}/./a.jsonl?lang=tl"
    assert (
        prepare_main([str(source), spelled_again, "--output", str(tmp_path / "out.jsonl"), "--no-progress"])
        == 0
    )
    out = capsys.readouterr()
    assert "a.jsonl" in out.err and "already read" in out.err
    manifest = json.loads((tmp_path / "out.jsonl.manifest.json").read_text())
    assert manifest["documents"] == 20 and manifest["sources"][1]["skipped"]


def test_a_folder_source_given_with_one_of_its_files_reads_that_file_once(tmp_path, sample_corpus):
    folder = tmp_path / "texts"
    folder.mkdir()
    (folder / "a.jsonl").write_text(lines(sample_corpus, 10), encoding="utf-8")
    (folder / "b.txt").write_text("Isang maikling teksto.\n", encoding="utf-8")
    manifest = prepare(
        PrepareConfig(
            sources=[str(folder), str(folder / "a.jsonl")], output=tmp_path / "out.jsonl", progress=False
        )
    )
    assert manifest["documents"] == 11


def test_an_output_inside_an_input_folder_leaves_its_own_files_out_on_rerun(tmp_path, sample_corpus, capsys):
    folder = tmp_path / "texts"
    folder.mkdir()
    (folder / "a.jsonl").write_text(lines(sample_corpus, 10), encoding="utf-8")
    args = [str(folder), "--output", str(folder / "corpus.jsonl"), "--no-progress"]
    assert prepare_main(args) == 0
    first = (folder / "corpus.jsonl").read_bytes()
    assert (
        prepare_main(args) == 0
    )  # used to read its own corpus and manifest back in, and fail on the manifest
    assert (folder / "corpus.jsonl").read_bytes() == first
    assert "left out of the sources: the output" in capsys.readouterr().err


# --- generate_text --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_context(tmp_path_factory, sample_tokenizer_dir):
    from morphcpt.modeling.models import save_tiny_gemma3

    return save_tiny_gemma3(
        sample_tokenizer_dir, tmp_path_factory.mktemp("ctx"), seed=0, max_position_embeddings=16
    )


def test_more_new_tokens_than_the_context_holds_is_refused_before_loading(small_context, capsys):
    from morphcpt.evaluate.generate_text import main

    with pytest.raises(SystemExit) as exit_:
        main(["--model", str(small_context), "--prompt", "Ang", "--max-new-tokens", "40", "--device", "cpu"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert "--max-new-tokens 40" in err and "16 positions" in err and "at most 15" in err


def test_a_prompt_and_continuation_past_the_context_are_clamped_with_a_note(small_context):
    """It used to cut the prompt to its last token without a word."""
    import io

    from morphcpt.evaluate.generate_text import SamplingConfig, TextGenerator

    generator = TextGenerator.load(small_context, device="cpu")
    notes = io.StringIO()
    generator.notes = notes
    prompt = "Ang mga bata ay kumain"
    length = len(generator.tokenizer(prompt)["input_ids"])
    result = generator.generate([prompt], SamplingConfig(max_new_tokens=14, temperature=0))[0]
    assert result.new_tokens <= 16 - length
    assert f"{length} prompt tokens" in notes.getvalue() and f"{16 - length} new tokens" in notes.getvalue()
    with pytest.raises(ValueError, match=r"the prompt has \d+ tokens; the model.s context is 16"):
        generator.generate([prompt * 4], SamplingConfig(max_new_tokens=2, temperature=0))
