"""Corpus preparation from several sources: every file type, normalisation and deduplication counted, token
budgets (deterministic, never exceeded), the manifest, a streamed Hub source (faked), and the clear errors."""

from __future__ import annotations

import json
import sys
import types
import unicodedata

import numpy as np
import pyarrow.parquet as pq
import pytest

from morphcpt import paths
from morphcpt.corpus.assemble import PrepareConfig, PrepareError, main, manifest_path, prepare
from morphcpt.corpus.budget import TokenCounter, format_count, parse_count, select_within_budget
from morphcpt.corpus.sources import SourceError, SourceSpec, read_source

SCRATCH = paths.DATA_DIR / "scratch"
FIXTURES = [
    f"{SCRATCH / 'tl_ui.txt'}?txt=block",
    f"{SCRATCH / 'tl_chromium.csv'}?column=body",
    str(SCRATCH / "tl_jokes.parquet"),
    f"{SCRATCH / 'en_docs.jsonl'}?lang=en",
]


def _rows(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _prepare(tmp_path, sources, name="corpus.jsonl", **kw):
    kw.setdefault("progress", False)
    return prepare(PrepareConfig(sources=list(sources), output=tmp_path / name, **kw))


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("10M", 10**7),
        ("100M", 10**8),
        ("1B", 10**9),
        ("10B", 10**10),
        ("250k", 250_000),
        ("1.5B", 1_500_000_000),
        ("12345", 12345),
        ("1e6", 10**6),
    ],
)
def test_token_counts_parse(text, count):
    assert parse_count(text) == count


@pytest.mark.parametrize("bad", ["", "ten", "10X", "-5", "0"])
def test_bad_token_counts_are_refused(bad):
    with pytest.raises(ValueError):
        parse_count(bad)


def test_budget_selection_never_exceeds_and_fills_with_smaller_documents():
    keys = np.array([3, 1, 2, 0], dtype=np.uint64)
    tokens = np.array([5, 8, 2, 4])
    keep = select_within_budget(keys, tokens, 11)  # key order: 4 (fits), 8 (no), 2 (fits), 5 (fits) = 11
    assert keep.tolist() == [True, False, True, True]
    assert tokens[keep].sum() == 11
    assert format_count(12_345_678) == "12.3M"
    rng = np.random.default_rng(0)
    keys, tokens = rng.integers(0, 2**63, 500, dtype=np.uint64), rng.integers(1, 400, 500)
    for budget in (1, 999, 50_000, int(tokens.sum())):
        keep = select_within_budget(keys, tokens, budget)
        left = budget - tokens[keep].sum()
        assert left >= 0  # never over, and no passed-over document would still have fitted:
        assert not any(tokens[i] <= left for i in np.flatnonzero(~keep))


def test_fixtures_of_every_type_become_one_tagged_corpus(tmp_path):
    manifest = _prepare(tmp_path, FIXTURES, lang="tl")
    rows = _rows(tmp_path / "corpus.jsonl")
    by_source = {s["name"]: s for s in manifest["sources"]}
    assert len(by_source) == 4 and all(
        s["selected_documents"] == s["documents"] > 0 for s in by_source.values()
    )
    # each source's documents really come from its file: the csv's body column, the parquet's text column
    csv_texts = {r["text"] for r in rows if r["source"].endswith("tl_chromium.csv")}
    assert (
        "chromium" not in "".join(csv_texts)
        and len(csv_texts) == by_source[str(SCRATCH / "tl_chromium.csv")]["documents"]
    )
    parquet = pq.read_table(SCRATCH / "tl_jokes.parquet").column("text").to_pylist()
    assert {r["text"] for r in rows if r["source"].endswith(".parquet")} <= {
        unicodedata.normalize("NFC", t) for t in parquet
    }
    assert {r["lang"] for r in rows if r["source"].endswith("en_docs.jsonl")} == {"en"}
    assert {r["lang"] for r in rows if not r["source"].endswith("en_docs.jsonl")} == {"tl"}
    assert manifest["documents"] == len(rows) == len({r["text"] for r in rows})
    assert manifest["tokens"] == sum(s["selected_tokens"] for s in manifest["sources"])
    assert json.loads(manifest_path(tmp_path / "corpus.jsonl").read_text()) == manifest
    # txt: one document per file, or per blank-line block
    blocks = (SCRATCH / "tl_ui.txt").read_text(encoding="utf-8").strip().split("\n\n")
    assert by_source[str(SCRATCH / "tl_ui.txt")]["records"] == len(blocks)
    assert len(list(read_source(SourceSpec.parse(str(SCRATCH / "tl_ui.txt"))))) == 1


def test_normalisation_and_duplicates_are_counted(tmp_path):
    decomposed = "Magandang umaga" + "\u0301"  # a combining accent: NFC composes it
    lines = [
        {"text": "Kumain ka na ba?\r\nOo."},
        {"text": "May\x00 kontrol\x07 na titik"},
        {"text": decomposed},
        {"text": "Kumain ka na ba?\nOo."},  # a duplicate once line ends are normalised
        {"text": "\x01\x02"},  # empty once control characters are removed
    ]
    source = tmp_path / "a.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in lines))
    manifest = _prepare(tmp_path, [str(source)], order="source")
    stats = manifest["sources"][0]
    assert stats["line_ends_normalised"] == 1 and stats["duplicates"] == 1
    assert stats["control_chars_removed"] == 4 and stats["documents_with_control_chars"] == 2
    assert stats["nfc_normalised"] == 1 and stats["bad_records"] == {"empty_text": 1}
    texts = [r["text"] for r in _rows(tmp_path / "corpus.jsonl")]
    assert texts == [
        "Kumain ka na ba?\nOo.",
        "May kontrol na titik",
        unicodedata.normalize("NFC", decomposed),
    ]


def test_bad_records_are_counted_by_reason_and_strict_names_file_and_line(tmp_path):
    manifest = _prepare(tmp_path, [str(paths.DATA_DIR / "sample" / "tl_sample_bad.jsonl")])
    stats = manifest["sources"][0]
    assert stats["bad_records"] == {
        "invalid_json": 1,
        "invalid_utf8": 1,
        "missing_text": 1,
        "non_string_text": 2,
        "not_object": 1,
        "empty_text": 1,
    }
    assert stats["bad_examples"]["invalid_json"] == [f"{paths.DATA_DIR / 'sample' / 'tl_sample_bad.jsonl'}:2"]
    assert stats["documents"] == 4
    with pytest.raises(SourceError, match=r"tl_sample_bad.jsonl:2: invalid_json"):
        _prepare(tmp_path, [str(paths.DATA_DIR / "sample" / "tl_sample_bad.jsonl")], strict=True)


def test_budget_sample_is_deterministic_within_budget_and_mixes_sources(tmp_path):
    first = _prepare(tmp_path, FIXTURES, name="a.jsonl", max_tokens="20k", seed=3)
    again = _prepare(tmp_path, list(reversed(FIXTURES)), name="b.jsonl", max_tokens="20k", seed=3)
    other = _prepare(tmp_path, FIXTURES, name="c.jsonl", max_tokens="20k", seed=4)
    assert 19_000 < first["tokens"] <= 20_000
    assert first["sha256"] == again["sha256"]  # the order of the sources does not matter
    assert first["sha256"] != other["sha256"]
    assert (
        sum(s["selected_documents"] > 0 for s in first["sources"]) == 4
    )  # pooled: every source keeps a share


def test_weights_and_per_source_budgets(tmp_path):
    sources = [
        f"{SCRATCH / 'tl_ui.txt'}?txt=block&weight=3",
        f"{SCRATCH / 'tl_chromium.csv'}?column=body&weight=1",
        f"{SCRATCH / 'en_docs.jsonl'}?max_tokens=500",
    ]
    manifest = _prepare(tmp_path, sources, max_tokens="8500")
    ui, web, en = manifest["sources"]
    assert en["selected_tokens"] <= 500 and en["selected_tokens"] > 400
    assert 5_900 < ui["selected_tokens"] <= 6_000 and 1_900 < web["selected_tokens"] <= 2_000


def test_token_counts_use_the_target_tokenizer(tmp_path, sample_tokenizer_dir):
    import sentencepiece as spm

    manifest = _prepare(tmp_path, [str(SCRATCH / "tl_jokes.parquet")], tokenizer=sample_tokenizer_dir)
    model = spm.SentencePieceProcessor(model_file=str(sample_tokenizer_dir / "tokenizer.model"))
    assert manifest["tokens"] == sum(len(model.encode(r["text"])) for r in _rows(tmp_path / "corpus.jsonl"))
    estimate = TokenCounter.estimate(4.0)
    assert estimate("abcdefghi", 9) == 3


def test_budget_beyond_the_sources_says_how_much_there_is(tmp_path):
    with pytest.raises(PrepareError, match=r"more than the sources hold: [\d,]+ tokens"):
        _prepare(tmp_path, FIXTURES, max_tokens="10B")
    with pytest.raises(PrepareError, match=r"holds only [\d,]+ tokens"):
        _prepare(tmp_path, [f"{SCRATCH / 'en_docs.jsonl'}?max_tokens=1M"])


def test_clear_errors_for_unknown_type_missing_column_empty_source_and_bad_files(tmp_path):
    (tmp_path / "notes.docx").write_bytes(b"PK")
    with pytest.raises(SourceError, match=r"notes.docx: unknown file type '.docx'"):
        _prepare(tmp_path, [str(tmp_path / "notes.docx")])
    with pytest.raises(SourceError, match=r"no column 'text'; columns: id, body, origin"):
        _prepare(tmp_path, [str(SCRATCH / "tl_chromium.csv")])
    with pytest.raises(SourceError, match=r"no column 'body'; columns: text, origin"):
        _prepare(tmp_path, [f"{SCRATCH / 'tl_jokes.parquet'}?column=body"])
    (tmp_path / "empty.jsonl").write_text('{"text": ""}\n\n')
    with pytest.raises(PrepareError, match=r"empty.jsonl: empty source, no usable documents \(2 records"):
        _prepare(tmp_path, [str(tmp_path / "empty.jsonl")])
    with pytest.raises(SourceError, match="matches no readable files"):
        _prepare(tmp_path, [str(tmp_path / "nothing-*.txt")])
    (tmp_path / "broken.json").write_text('[\n  {"text": "a"},\n  {"text": }\n]')
    with pytest.raises(SourceError, match=r"broken.json:3: invalid JSON"):
        _prepare(tmp_path, [str(tmp_path / "broken.json")])
    (tmp_path / "ragged.csv").write_text("text,id\nmabuti,1\nmasama,2,3\n")
    with pytest.raises(SourceError, match=r"ragged.csv:3: 3 fields where the header has 2"):
        _prepare(tmp_path, [str(tmp_path / "ragged.csv")])
    with pytest.raises(SourceError, match="unknown setting"):
        SourceSpec.parse("a.txt?language=tl")


def test_json_tsv_and_folder_sources(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps({"data": [{"text": "isa"}, {"text": None}, "dalawa"]}))
    (folder / "b.tsv").write_text("text\tn\ntatlo\t3\napat\t4\n")
    (folder / "ignored.bin").write_bytes(b"\x00")
    manifest = _prepare(tmp_path, [str(folder)], order="source")
    assert [r["text"] for r in _rows(tmp_path / "corpus.jsonl")] == ["isa", "dalawa", "tatlo", "apat"]
    assert manifest["sources"][0]["bad_records"] == {"null_text": 1}


def test_hub_dataset_is_streamed_with_config_and_split(tmp_path, monkeypatch):
    calls = []

    def load_dataset(name, config, split, streaming):
        calls.append((name, config, split, streaming))
        return iter([{"text": "Hallo wereld"}, {"text": None}, {"text": "Goedemorgen"}])

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    manifest = _prepare(
        tmp_path, ["hf:wikimedia/wikipedia?config=20231101.nl&split=train&lang=nl"], order="source"
    )
    assert calls == [("wikimedia/wikipedia", "20231101.nl", "train", True)]
    assert [r["text"] for r in _rows(tmp_path / "corpus.jsonl")] == ["Hallo wereld", "Goedemorgen"]
    assert manifest["sources"][0]["bad_records"] == {"null_text": 1} and manifest["languages"] == {
        "nl": {"documents": 2, "tokens": 6}
    }
    monkeypatch.setitem(
        sys.modules, "datasets", types.SimpleNamespace(load_dataset=lambda *a, **k: iter([{"body": "x"}]))
    )
    with pytest.raises(SourceError, match="no column 'text'; columns: body"):
        _prepare(tmp_path, ["hf:some/dataset"])


def test_cli_prints_a_summary_and_exits_2_on_errors(tmp_path, capsys):
    assert (
        main([FIXTURES[2], "--output", str(tmp_path / "c.jsonl"), "--no-progress", "--max-tokens", "2k"]) == 0
    )
    assert "tokens" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        main([FIXTURES[2], "--output", str(tmp_path / "c.jsonl"), "--no-progress", "--max-tokens", "1B"])
    assert exit_info.value.code == 2
    assert "more than the sources hold" in capsys.readouterr().err
