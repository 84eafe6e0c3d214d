"""Vocabulary: sizes and specials as Gemma lays them out, canonical encoding, exact decoding, piece spellings."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from morphcpt.tokenization.vocabulary import WORD_START, Vocabulary, _fingerprint

EDGE_TEXTS = [
    "",
    " ",
    "   ",
    "\n",
    "\n\n\t\n",
    "  two  spaces  ",
    "2024-06-12 at 10:45",
    "😀 🇵🇭 emoji ✓",
    "ñ é ü — “quotes”",
    "literal <eos> and <bos> and <pad> text",
    "Kumain ka na ba?\nOo, kumain na ako.",
]


@pytest.fixture(scope="module")
def sample_texts(sample_corpus) -> list[str]:
    with open(sample_corpus, encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f][:300]


def test_layout_is_gemma_like(vocab):
    assert (vocab.pad_id, vocab.eos_id, vocab.bos_id, vocab.unk_id) == (0, 1, 2, 3)
    assert len(vocab.pieces) == vocab.size
    assert vocab.size <= len(vocab.tokenizer)
    assert {0, 1, 2, 3} <= vocab.special_ids
    assert len(vocab.byte_values) == 256
    assert sorted(vocab.byte_values.values()) == list(range(256))
    assert all(vocab.is_byte(i) and not vocab.is_special(i) for i in vocab.byte_values)


def test_size_ignores_added_tokens_past_the_model(tmp_path, sample_tokenizer_dir, vocab):
    """Gemma 3 carries an added token beyond its 262,144 pieces: len(tokenizer) > embedding rows."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(sample_tokenizer_dir)
    tokenizer.add_special_tokens({"additional_special_tokens": ["<image_soft_token>"]})
    tokenizer.save_pretrained(tmp_path)
    bigger = Vocabulary.load(tmp_path)
    assert len(bigger.tokenizer) == vocab.size + 1
    assert bigger.size == vocab.size
    assert bigger.fingerprint == vocab.fingerprint
    ids = bigger.encode("an <image_soft_token> here")
    assert max(ids) < bigger.size
    assert bigger.decode(ids) == "an <image_soft_token> here"


def test_encode_is_canonical_without_bos_and_keeps_special_text(vocab, sample_texts):
    for text in sample_texts[:50] + EDGE_TEXTS:
        ids = vocab.encode(text)
        expected = vocab.tokenizer(text, add_special_tokens=False, split_special_tokens=True)["input_ids"]
        assert ids == expected
        assert not any(vocab.is_special(i) for i in ids)
    assert vocab.encode_batch(sample_texts[:50]) == [vocab.encode(t) for t in sample_texts[:50]]
    # what the tokenizer would do by default: the literal text becomes the special token
    assert vocab.eos_id in vocab.tokenizer("<eos>", add_special_tokens=False)["input_ids"]


def test_decode_is_exact_and_matches_the_tokenizer(vocab, sample_texts):
    for text in sample_texts + EDGE_TEXTS:
        ids = vocab.encode(text)
        assert vocab.decode(ids) == text
        assert vocab.decode(ids) == vocab.tokenizer.decode(ids, skip_special_tokens=True)


def test_decode_of_arbitrary_ids_matches_the_tokenizer(vocab):
    """Specials dropped, invalid byte runs replaced as the tokenizer's ByteFallback decoder does."""
    rng = np.random.default_rng(0)
    byte_ids = sorted(vocab.byte_values)
    for _ in range(200):
        ids = rng.integers(0, vocab.size, size=12).tolist()
        ids[rng.integers(0, 12)] = vocab.eos_id
        ids[3:6] = rng.choice(byte_ids, size=3).tolist()  # usually an invalid UTF-8 run
        assert vocab.decode(ids) == vocab.tokenizer.decode(ids, skip_special_tokens=True)


def test_spell_plain_is_decode_of_ids_without_specials_or_bytes(vocab):
    """Every plain piece on its own, and random runs of them: the same text as `decode`."""
    plain = [i for i in range(vocab.size) if not vocab.is_special(i) and not vocab.is_byte(i)]
    assert all(vocab.spell_plain([i]) == vocab.decode([i]) for i in plain)
    rng = np.random.default_rng(1)
    for _ in range(200):
        ids = rng.choice(plain, size=int(rng.integers(1, 12))).tolist()
        assert vocab.spell_plain(ids) == vocab.decode(ids)


def test_piece_ids_use_the_vocabulary_spelling(vocab):
    word_initial = [p for p in vocab.pieces if p.startswith(WORD_START) and len(p) > 2]
    assert word_initial, "a SentencePiece vocabulary marks word starts with ▁"
    piece = word_initial[0]
    assert vocab.piece_id(piece) == vocab.pieces.index(piece)
    assert vocab.piece_id(" " + piece[1:]) is None
    assert vocab.is_byte(vocab.piece_id("<0x41>"))
    assert vocab.is_special(vocab.piece_id("<eos>"))


def test_fingerprint_is_stable_and_sees_every_piece(vocab, sample_tokenizer_dir):
    assert Vocabulary.load(sample_tokenizer_dir).fingerprint == vocab.fingerprint
    named = (vocab.pad_id, vocab.eos_id, vocab.bos_id, vocab.unk_id)
    assert _fingerprint(vocab.pieces, set(vocab.special_ids), named) == vocab.fingerprint
    changed = [*vocab.pieces[:-1], vocab.pieces[-1] + "x"]
    assert _fingerprint(changed, set(vocab.special_ids), named) != vocab.fingerprint


def test_a_missing_tokenizer_folder_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="tokenizer folder not found"):
        Vocabulary.load(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="tokenizer folder not found"):
        Vocabulary.load("/no/such/tokenizer")


@pytest.mark.parametrize(
    "text", ["\u2581", "a\u2581b", " \u2581 ", "\u2581\u2581kumain \u2581 na\u2581", "x" * 50 + "\u2581"]
)
def test_a_literal_word_start_mark_in_text_is_kept(vocab, text):
    ids = vocab.encode(text)
    assert vocab.decode(ids) == text
    assert vocab.tokenizer.decode(ids, skip_special_tokens=True) == text  # the tokenizer's own decoder agrees
    assert vocab.encode_batch(["plain text", text, "more plain"])[1] == ids
    # Only the mark itself changes: the text around it is tokenized as without it.
    parts = text.split("\u2581")
    mark = [vocab.piece_id(f"<0x{b:02X}>") for b in "\u2581".encode()]
    expected = []
    for n, part in enumerate(parts):
        expected += (mark if n else []) + (vocab.encode(part) if part else [])
    assert ids == expected


def test_the_cached_vocabulary_is_the_loaded_one_and_a_bad_entry_is_rebuilt(
    tmp_path, monkeypatch, sample_tokenizer_dir, sample_texts, caplog
):
    from transformers import AutoTokenizer

    monkeypatch.setenv("MORPHCPT_CACHE_DIR", str(tmp_path))
    direct = Vocabulary(AutoTokenizer.from_pretrained(sample_tokenizer_dir))  # no cache involved
    cold = Vocabulary.load(sample_tokenizer_dir)
    (entry,) = (tmp_path / "vocab").glob("*.pkl")
    warm = Vocabulary.load(sample_tokenizer_dir)
    assert warm._tokenizer is None  # read from the cache: no Hugging Face tokenizer was loaded
    for vocab in (cold, warm, copy.deepcopy(warm)):  # deepcopy: what a worker process receives
        assert vocab.fingerprint == direct.fingerprint and vocab.pieces == direct.pieces
        assert vocab.special_ids == direct.special_ids and vocab.byte_values == direct.byte_values
        assert vocab.piece_bytes == direct.piece_bytes
        assert vocab.encode_batch(sample_texts) == direct.encode_batch(sample_texts)
    assert warm.tokenizer.decode([5, 6, 7]) == direct.tokenizer.decode([5, 6, 7])  # loaded when asked for
    entry.write_bytes(b"not a pickle")
    rebuilt = Vocabulary.load(sample_tokenizer_dir)
    assert rebuilt.fingerprint == direct.fingerprint and "unreadable" in caplog.text
    monkeypatch.setenv("MORPHCPT_CACHE_DIR", "off")
    entry.unlink()
    assert Vocabulary.load(sample_tokenizer_dir).fingerprint == direct.fingerprint
    assert not list((tmp_path / "vocab").glob("*.pkl"))  # off: nothing written


def test_a_changed_tokenizer_file_gets_its_own_cache_entry(tmp_path, monkeypatch, sample_tokenizer_dir):
    import shutil

    monkeypatch.setenv("MORPHCPT_CACHE_DIR", str(tmp_path / "cache"))
    folder = shutil.copytree(sample_tokenizer_dir, tmp_path / "tok")
    Vocabulary.load(folder)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    (folder / "tokenizer_config.json").write_text(json.dumps({**config, "model_max_length": 77}))
    Vocabulary.load(folder)
    assert len(list((tmp_path / "cache" / "vocab").glob("*.pkl"))) == 2
