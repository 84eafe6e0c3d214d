"""Tests of the shipped sample data (corpus, bad-line sample, tokenizer) and of the code that rebuilds it.

The shipped tokenizer must behave like Gemma's (special ids, `<bos>` added, `▁` word starts, byte fallback) and
be lossless on every sample document; training must be reproducible. Run: pytest tests/test_sample_data.py
"""

from __future__ import annotations

import json
import random
import struct
import sys
from pathlib import Path

import pytest
import sentencepiece as spm

from morphcpt import paths
from morphcpt.tokenization.train_tokenizer import train_sentencepiece_tokenizer, training_segments

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))  # the build-time sample_data module

from localisation_formats import ftl_variants, parse_ftl, parse_properties, read_pak, resolve_ftl_terms  # noqa: E402
from sample_data import StringGroup, build_documents, clean_string  # noqa: E402

GEMMA_SPECIAL_IDS = {"pad": 0, "eos": 1, "bos": 2, "unk": 3}
TAGALOG_FUNCTION_WORDS = {"ang", "ng", "sa", "mga", "na", "ay", "at", "hindi"}


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def sample_texts() -> list[str]:
    lines = paths.SAMPLE_CORPUS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["text"] for line in lines]


@pytest.fixture(scope="module")
def hf_tokenizer():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(paths.SAMPLE_TOKENIZER_DIR)


def encode(tokenizer, text: str) -> list[int]:
    # split_special_tokens: a literal "<eos>" in a document is text, as SentencePiece treats it.
    return tokenizer(text, add_special_tokens=False, split_special_tokens=True)["input_ids"]


# --- the shipped corpus --------------------------------------------------------------------------------------


def test_sample_corpus_is_valid_nontrivial_tagalog():
    raw = paths.SAMPLE_CORPUS.read_bytes()
    assert 400_000 <= len(raw) < 3_000_000
    records = [json.loads(line) for line in raw.decode("utf-8").splitlines()]
    assert len(records) >= 1000
    assert all(
        isinstance(r["text"], str) and r["text"].strip() and isinstance(r["source"], str) for r in records
    )
    texts = [r["text"] for r in records]
    assert len(set(texts)) == len(texts)
    assert len({r["source"] for r in records}) >= 3
    lengths = sorted(len(t) for t in texts)
    assert lengths[len(lengths) // 10] * 10 < lengths[-len(lengths) // 10]  # varied document lengths
    tagalog = sum(bool(TAGALOG_FUNCTION_WORDS & set(t.lower().split())) for t in texts)
    assert tagalog / len(texts) > 0.6
    assert all(clean_string(text) is not None for text in texts)  # placeholders and markup were cleaned out


def test_bad_sample_has_every_kind_of_bad_line():
    lines = (paths.DATA_DIR / "sample" / "tl_sample_bad.jsonl").read_bytes().splitlines()
    kinds = []
    for raw in lines:
        try:
            record = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            kinds.append("invalid_utf8")
            continue
        except json.JSONDecodeError:
            kinds.append("invalid_json")
            continue
        if not isinstance(record, dict) or "text" not in record:
            kinds.append("missing_text")
        elif not isinstance(record["text"], str):
            kinds.append("non_string_text")
        elif not record["text"]:
            kinds.append("empty_text")
        elif len(record["text"].encode("utf-8")) > 100_000:
            kinds.append("long")
        elif "<eos>" in record["text"]:
            kinds.append("literal_eos")
        else:
            kinds.append("good")
    expected = {"invalid_utf8", "invalid_json", "missing_text", "non_string_text", "empty_text", "long"}
    assert expected | {"literal_eos", "good"} == set(kinds)
    assert kinds[0] == kinds[-1] == "good"


# --- the shipped tokenizer -----------------------------------------------------------------------------------


def test_tokenizer_has_gemma_special_ids_and_adds_only_bos(hf_tokenizer):
    for role, expected in GEMMA_SPECIAL_IDS.items():
        assert getattr(hf_tokenizer, f"{role}_token_id") == expected
    ids = hf_tokenizer("Kumusta ka?")["input_ids"]
    assert ids[0] == GEMMA_SPECIAL_IDS["bos"]
    assert GEMMA_SPECIAL_IDS["eos"] not in ids
    assert ids[1:] == encode(hf_tokenizer, "Kumusta ka?")


def test_tokenizer_matches_sentencepiece_and_round_trips_every_document(hf_tokenizer, sample_texts):
    sp = spm.SentencePieceProcessor(model_file=str(paths.SAMPLE_TOKENIZER_DIR / "tokenizer.model"))
    extra = ["Hello", " mag", "a  b\n\n\tc ", "2024", "😀 ✓ 漢字 Ω", "<eos> literal", "nag-aaral\u00a0siya"]
    for text in sample_texts + extra:
        ids = encode(hf_tokenizer, text)
        assert ids == sp.encode(text), text[:80]
        assert hf_tokenizer.decode(ids) == text, text[:80]


def test_tokenizer_has_every_byte_piece(hf_tokenizer):
    byte_ids = hf_tokenizer.convert_tokens_to_ids([f"<0x{b:02X}>" for b in range(256)])
    assert len(set(byte_ids)) == 256
    assert hf_tokenizer.unk_token_id not in byte_ids
    pieces = hf_tokenizer.convert_ids_to_tokens(encode(hf_tokenizer, "🙂"))
    assert pieces == ["<0xF0>", "<0x9F>", "<0x99>", "<0x82>"]


def test_tokenizer_marks_word_starts_without_dummy_prefix(hf_tokenizer):
    assert not hf_tokenizer.convert_ids_to_tokens(encode(hf_tokenizer, "mag"))[0].startswith("▁")
    assert hf_tokenizer.convert_ids_to_tokens(encode(hf_tokenizer, " mag"))[0].startswith("▁")
    pieces = hf_tokenizer.convert_ids_to_tokens(encode(hf_tokenizer, "Kumain ang bata sa 2024"))
    assert sum(p.startswith("▁") for p in pieces) == 4  # ang, bata, sa, and the space before the digits
    assert [p for p in pieces if p.isdigit()] == ["2", "0", "2", "4"]  # digits split


# --- training and rebuilding ---------------------------------------------------------------------------------


def test_training_is_deterministic_and_loadable(tmp_path, sample_texts):
    corpus = tmp_path / "slice.jsonl"
    corpus.write_text("".join(json.dumps({"text": t}) + "\n" for t in sample_texts[:300]), encoding="utf-8")
    first = train_sentencepiece_tokenizer(corpus, tmp_path / "a", vocab_size=700)
    second = train_sentencepiece_tokenizer(corpus, tmp_path / "b", vocab_size=700)
    for name in ("tokenizer.json", "tokenizer.model", "tokenizer_config.json"):
        assert (first / name).read_bytes() == (second / name).read_bytes()
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(first)
    assert len(tokenizer) == 700 and tokenizer.bos_token_id == GEMMA_SPECIAL_IDS["bos"]
    assert tokenizer.decode(encode(tokenizer, sample_texts[0])) == sample_texts[0]


def test_training_segments_cover_the_text_within_the_limit():
    rng = random.Random(0)
    text = "\n".join("ab cd é😀" * rng.randint(0, 40) for _ in range(50))
    segments = list(training_segments(text, max_bytes=64))
    assert "".join(segments) == text
    assert all(0 < len(s.encode("utf-8")) <= 64 for s in segments)


def test_clean_string_drops_placeholders_and_markup_and_strips_accelerators():
    for bad in [
        "Buksan ang %S",
        "May { $count } tab",
        "Pindutin ang $1",
        "<a>Tingnan</a>",
        "Oo &amp; Hindi",
        "D",
    ]:
        assert clean_string(bad) is None
    assert clean_string("  &Buksan ang file  ") == "Buksan ang file"
    assert clean_string("Mga Larawan && Video") == "Mga Larawan & Video"


def test_fluent_parsing_resolves_terms_and_unpacks_variants():
    ftl = (
        "# comment\n-brand = Firefox\nmsg = Buksan ang { -brand }\n    .tooltiptext = Isara\n"
        "sel =\n    { $n ->\n        [one] Isang tab\n       *[other] Maraming tab\n    }\n"
    )
    entries = dict(parse_ftl(ftl))
    assert resolve_ftl_terms(entries["msg"], {"-brand": "Firefox"}) == "Buksan ang Firefox"
    assert entries["msg.tooltiptext"] == "Isara"
    assert ftl_variants(entries["sel"]) == ["Isang tab", "Maraming tab"]
    assert list(parse_properties("a = Oo\\nHindi\nb = Mahaba \\\n   pa\n")) == [
        ("a", "Oo\nHindi"),
        ("b", "Mahaba pa"),
    ]


def test_read_pak_returns_each_resource():
    resources = {7: b"Bagong tab", 9: "Isara 😀".encode()}
    header = struct.pack("<IB3xHH", 5, 1, len(resources), 0)
    offset = len(header) + 6 * (len(resources) + 1)
    table, body = b"", b""
    for number, data in sorted(resources.items()):
        table += struct.pack("<HI", number, offset + len(body))
        body += data
    table += struct.pack("<HI", 0, offset + len(body))
    assert read_pak(header + table + body) == resources


def test_build_documents_deduplicates_and_is_seeded():
    groups = [
        StringGroup(
            "l10n", "a.ftl", tuple(f"Pangungusap bilang {i}" for i in range(40)) + ("Pangungusap bilang 0",)
        ),
        StringGroup("jokes", "1", ("Tanong: Bakit?", "Sagot: Kasi."), whole=True),
    ]
    first = build_documents(groups, keep=lambda text: True, seed=3)
    assert first == build_documents(groups, keep=lambda text: True, seed=3)
    lines = [line for doc in first for line in doc["text"].split("\n")]
    assert len(lines) == len(set(lines)) == 42
    assert {"text": "Tanong: Bakit?\nSagot: Kasi.", "source": "jokes"} in first
