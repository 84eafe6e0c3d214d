"""The scheme audit: same documents compared by index, expected differences between the schemes."""

from __future__ import annotations

import json

import pytest

from morphcpt import audit
from morphcpt.preprocess import compose_config, run


def preprocess(input_path, output_dir, scheme, *overrides):
    base = [f"scheme={scheme}", f"input={input_path}", f"output_dir={output_dir}", "progress=false"]
    return run(compose_config([*base, *overrides]))


@pytest.fixture(scope="module")
def output_dir(tmp_path_factory, sample_corpus):
    root = tmp_path_factory.mktemp("audit")
    corpus = root / "sample.jsonl"
    corpus.write_bytes(b"".join(sample_corpus.read_bytes().splitlines(keepends=True)[:150]))
    for scheme in ("vanilla", "stochastok", "patok"):
        preprocess(corpus, root / "processed", scheme)
    return root / "processed"


def test_schemes_differ_from_vanilla_as_expected(output_dir):
    result = audit.audit(output_dir, max_documents=None)
    rows = {row["scheme"]: row for row in result["rows"]}
    assert [row["scheme"] for row in result["rows"]] == ["vanilla", "stochastok", "patok"]
    assert len({row["documents"] for row in rows.values()}) == 1
    assert rows["vanilla"]["expansion"] == 0 and rows["vanilla"]["changed_share"] == 0
    for scheme in ("stochastok", "patok"):
        assert rows[scheme]["expansion"] > 0 and rows[scheme]["changed_share"] > 0.5
    # Patok is built to put token boundaries on morpheme boundaries far more often than the others.
    assert rows["patok"]["boundary_precision"] > rows["vanilla"]["boundary_precision"] + 0.05
    assert rows["patok"]["boundary_precision"] > rows["stochastok"]["boundary_precision"] + 0.05
    markers = audit.completed_chunks(output_dir / "patok")
    assert rows["patok"]["tokens"] == sum(m["tokens"] for m in markers.values())
    assert all(row["text_differs"] == 0 for row in rows.values())
    # Against the hand-written gold set too (only its words count): patok's gain is not an artefact of being
    # scored by the analyser it cuts at.
    assert (
        len({row["gold_boundaries"] for row in rows.values()}) == 1
        and rows["vanilla"]["gold_boundaries"] > 100
    )
    assert rows["patok"]["gold_precision"] > rows["vanilla"]["gold_precision"] + 0.05
    pieces = result["example"]["pieces"]
    assert len({tuple(p) for p in pieces.values()}) == 3
    assert len({"".join(p) for p in pieces.values()}) == 1  # same text, cut three ways


def test_an_altered_text_is_counted(output_dir, tmp_path):
    """The audit's lossless check can fail: a patok document with one token changed is reported."""
    import shutil

    copy = tmp_path / "out"
    shutil.copytree(output_dir, copy)
    prefix = copy / "patok" / audit.completed_chunks(copy / "patok")["sample"]["prefix"]
    data = bytearray((prefix.parent / (prefix.name + ".bin")).read_bytes())
    dtype_size = 2  # the sample tokenizer's ids are uint16
    data[dtype_size * 5 : dtype_size * 6] = (7).to_bytes(2, "little")
    (prefix.parent / (prefix.name + ".bin")).write_bytes(bytes(data))
    rows = {row["scheme"]: row for row in audit.audit(copy, max_documents=0)["rows"]}
    assert rows["patok"]["text_differs"] == 1 and rows["stochastok"]["text_differs"] == 0


def test_table_and_cli(output_dir, tmp_path, capsys):
    assert audit.main([str(output_dir), "--max-documents", "20", "--json", str(tmp_path / "a.json")]) == 0
    printed = capsys.readouterr().out
    assert printed.index("vanilla") < printed.index("stochastok") < printed.index("patok")
    assert json.loads((tmp_path / "a.json").read_text())["chunks"] == ["sample"]


def test_schemes_must_hold_the_same_documents(tmp_path, sample_corpus):
    lines = sample_corpus.read_bytes().splitlines(keepends=True)
    (tmp_path / "a.jsonl").write_bytes(b"".join(lines[:5]))
    (tmp_path / "b.jsonl").write_bytes(b"".join(lines[:4]))
    preprocess(tmp_path / "a.jsonl", tmp_path / "out", "vanilla", "name=c")
    with pytest.raises(FileNotFoundError, match="vanilla"):
        audit.audit(tmp_path / "out" / "vanilla")
    preprocess(tmp_path / "b.jsonl", tmp_path / "out", "stochastok", "name=c")
    with pytest.raises(ValueError, match="different numbers of documents"):
        audit.audit(tmp_path / "out")


def test_text_is_compared_with_the_source_so_a_lossy_tokenizer_is_caught(tmp_path, monkeypatch):
    """A tokenizer that loses text (here: a literal "▁" read as a space, as before the fix) loses it in every
    scheme alike; only a comparison with the source text, not with vanilla's decoding, can see it."""
    from morphcpt.tokenization.vocabulary import Vocabulary

    corpus = tmp_path / "marks.jsonl"
    texts = ["walang marka dito", "may \u2581 marka", "dalawa\u2581\u2581 pa"]
    corpus.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    for scheme in ("vanilla", "stochastok"):
        preprocess(corpus, tmp_path / "kept", scheme)
    rows = audit.audit(tmp_path / "kept", max_documents=0)["rows"]
    assert [row["text_differs"] for row in rows] == [0, 0]

    def lossy(self, text):
        return self.encoder.encode(text, add_special_tokens=False).ids

    monkeypatch.setattr(Vocabulary, "_encode_keeping_word_start", lossy)
    for scheme in ("vanilla", "stochastok"):
        preprocess(corpus, tmp_path / "lost", scheme)
    result = audit.audit(tmp_path / "lost", max_documents=0)
    assert [row["text_differs"] for row in result["rows"]] == [2, 2]
    assert "against the source JSONL" in audit.format_table(result)
    # Without the source, the audit says what it compared with instead.
    corpus.unlink()
    result = audit.audit(tmp_path / "lost", max_documents=0)
    assert result["text_compared_with"] == {"marks": "vanilla"}
    assert "against vanilla's decoding for marks" in audit.format_table(result)
