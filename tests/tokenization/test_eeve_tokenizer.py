"""EEVE vocabulary expansion: exactly N new pieces in the base conventions, used by tokenization itself (vocabulary
and merges, not added tokens), old ids unchanged, lossless on the whole corpus; clear errors on bad input; the
eeve scheme through the preprocess stage."""

from __future__ import annotations

import json
import shutil

import pytest
from transformers import AutoTokenizer

from morphcpt.morphology import get_language_pack
from morphcpt.tokenization.eeve import (
    Expansion,
    ExpansionError,
    _Rules,
    count_runs,
    expand,
    morpheme_pieces,
    word_runs,
)
from morphcpt.tokenization.vocabulary import WORD_START, Vocabulary
from train_helpers import read_texts

NUM_NEW = 64


@pytest.fixture(scope="module")
def expanded(tmp_path_factory, sample_corpus, sample_tokenizer_dir):
    out = tmp_path_factory.mktemp("eeve") / "tokenizer"
    expansion = expand(sample_corpus, sample_tokenizer_dir, out, num_new=NUM_NEW)
    return out, expansion


def test_exactly_n_new_pieces_after_every_old_id(expanded, vocab):
    folder, expansion = expanded
    new = Vocabulary.load(folder)
    assert new.size == vocab.size + NUM_NEW == expansion.first_new_id + NUM_NEW
    assert new.pieces[: vocab.size] == vocab.pieces  # old ids keep their meaning
    assert new.pieces[vocab.size :] == expansion.pieces
    assert Expansion.load(folder).pieces == expansion.pieces


def test_new_pieces_follow_base_conventions(expanded, vocab):
    _, expansion = expanded
    assert len(set(expansion.pieces)) == NUM_NEW
    for piece in expansion.pieces:
        assert vocab.piece_id(piece) is None  # never a piece the base already has
        body = piece.removeprefix(WORD_START)
        assert body and body.isalpha() and WORD_START not in body, piece  # letters; ▁ only as a word start
    for (left, right), piece in zip(expansion.merges, expansion.pieces, strict=True):
        assert left + right == piece


def test_new_pieces_are_vocabulary_and_merges_not_added_tokens(expanded, sample_corpus, vocab):
    folder, expansion = expanded
    data = json.loads((folder / "tokenizer.json").read_text())
    added = {token["content"] for token in data["added_tokens"]}
    assert not added & set(expansion.pieces)
    assert all(
        data["model"]["vocab"][p] == expansion.first_new_id + k for k, p in enumerate(expansion.pieces)
    )
    assert [list(m) for m in data["model"]["merges"][-NUM_NEW:]] == [list(m) for m in expansion.merges]
    assert data["model"]["byte_fallback"] is True
    # Tokenization itself uses them: the corpus needs fewer tokens, and new ids appear.
    new = Vocabulary.load(folder)
    texts = read_texts(sample_corpus)
    used = {i for ids in new.encode_batch(texts) for i in ids if i >= expansion.first_new_id}
    assert len(used) > NUM_NEW // 2
    assert expansion.expanded_tokens < expansion.base_tokens


def test_lossless_on_the_whole_corpus_and_odd_text(expanded, sample_corpus):
    folder, _ = expanded
    tokenizer = AutoTokenizer.from_pretrained(folder)
    texts = read_texts(sample_corpus) + ["  dalawang  espasyo\n\ttab 123 ☃ 🙂 naglalaro-laro", "é\u0301"]
    for text in texts:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        assert tokenizer.decode(ids, skip_special_tokens=True) == text


def test_old_text_without_new_pieces_tokenizes_as_before(expanded, vocab):
    folder, expansion = expanded
    new = Vocabulary.load(folder)
    # Digits and punctuation never merge: their ids are the base ids.
    assert new.encode("2024, 3.14!") == vocab.encode("2024, 3.14!")
    # A new piece's text alone encodes to the new id: every base merge applies first, then the new ones.
    for k, piece in enumerate(expansion.pieces[:10]):
        assert new.encode(piece.replace(WORD_START, " ")) == [expansion.first_new_id + k]


def test_base_pieces_are_the_base_tokenization_of_each_new_piece(expanded, vocab):
    _, expansion = expanded
    for piece, pieces in zip(expansion.pieces, expansion.base_pieces, strict=True):
        assert len(pieces) >= 2 and vocab.decode(pieces) == piece.replace(WORD_START, " ")


def test_morpheme_candidates_never_cut_across_a_morpheme_boundary(vocab, sample_corpus):
    pack = get_language_pack("fil")
    rules = _Rules(vocab)
    checked = 0
    for ids in vocab.encode_batch(read_texts(sample_corpus, 200)):
        for run in word_runs(ids, rules):
            text = "".join(vocab.pieces[i] for i in run)
            offset = 1 if text.startswith(WORD_START) else 0
            cuts = {b + offset for b in pack.boundaries(text[offset:])}
            start = 0
            for piece in morpheme_pieces(run, vocab, pack):
                # every inner join of a candidate stretch is not a morpheme boundary
                at = text.index("".join(vocab.pieces[i] for i in piece), start)
                joins = {at + len("".join(vocab.pieces[i] for i in piece[:j])) for j in range(1, len(piece))}
                assert not joins & cuts, (text, piece)
                start = at
                checked += 1
    assert checked > 100


def test_morpheme_candidates_give_another_vocabulary(tmp_path, sample_corpus, sample_tokenizer_dir, expanded):
    _, frequent = expanded
    morphemes = expand(
        sample_corpus, sample_tokenizer_dir, tmp_path / "m", num_new=NUM_NEW, candidates="morphemes"
    )
    assert morphemes.candidates == "morphemes" and morphemes.num_new == NUM_NEW
    assert morphemes.pieces != frequent.pieces


def test_clear_errors(tmp_path, sample_corpus, sample_tokenizer_dir):
    with pytest.raises(ExpansionError, match="positive"):
        expand(sample_corpus, sample_tokenizer_dir, tmp_path / "a", num_new=0)
    with pytest.raises(ExpansionError, match="offers only"):
        expand(sample_corpus, sample_tokenizer_dir, tmp_path / "b", num_new=1_000_000)
    covered = tmp_path / "digits.jsonl"
    covered.write_text("".join(json.dumps({"text": f"{n} {n + 1}, {n * 7}."}) + "\n" for n in range(50)))
    with pytest.raises(ExpansionError, match="already covers"):
        expand(covered, sample_tokenizer_dir, tmp_path / "c", num_new=4)
    no_bytes = tmp_path / "no_bytes"
    shutil.copytree(sample_tokenizer_dir, no_bytes)
    data = json.loads((no_bytes / "tokenizer.json").read_text())
    data["model"]["byte_fallback"] = False
    (no_bytes / "tokenizer.json").write_text(json.dumps(data))
    with pytest.raises(ExpansionError, match="byte fallback"):
        expand(sample_corpus, no_bytes, tmp_path / "d", num_new=4)
    assert not (tmp_path / "d").exists()


def test_counting_sees_every_document(vocab, sample_corpus):
    texts = read_texts(sample_corpus, 50)
    _, documents, nbytes, tokens = count_runs(iter(texts), vocab, _Rules(vocab), "frequent")
    assert (documents, nbytes) == (50, sum(len(t.encode()) for t in texts))
    assert tokens == sum(len(ids) for ids in vocab.encode_batch(texts))


def test_eeve_scheme_needs_the_expanded_tokenizer_and_writes_its_own_validation(
    tmp_path, expanded, sample_corpus, vocab
):
    from morphcpt.indexed import iter_documents
    from morphcpt.preprocess import compose_config, run

    folder, expansion = expanded
    lines = sample_corpus.read_text(encoding="utf-8").splitlines(keepends=True)[:30]
    (tmp_path / "validation.jsonl").write_text("".join(lines), encoding="utf-8")
    common = [f"input={tmp_path / 'validation.jsonl'}", f"output_dir={tmp_path / 'out'}", "progress=false"]
    with pytest.raises(ValueError, match="EEVE-expanded"):
        run(compose_config(["scheme=eeve", *common]))  # the shipped (base) tokenizer
    run(compose_config(["validation=true", *common]))
    stats = run(compose_config(["validation=true", "scheme=eeve", f"tokenizer={folder}", *common]))
    assert stats["prefix"] == "validation_eeve_text_document" and stats["dtype"] == "uint16"
    new, texts = Vocabulary.load(folder), read_texts(tmp_path / "validation.jsonl")
    canonical = list(iter_documents(tmp_path / "out" / "validation" / "validation_text_document"))
    eeve = list(iter_documents(tmp_path / "out" / "validation" / "validation_eeve_text_document"))
    assert len(eeve) == len(canonical) == len(texts)
    for ids, base_ids, text in zip(eeve, canonical, texts, strict=True):
        assert ids[0] == new.bos_id and ids[-1] == new.eos_id and new.decode(ids.tolist()) == text
        assert ids.tolist() == [new.bos_id, *new.encode(text), new.eos_id]
        assert vocab.decode(base_ids.tolist()) == text  # the canonical set is untouched
    assert sum(map(len, eeve)) < sum(map(len, canonical))
    # bits per byte divide by the same bytes: the two validation sets spell the same text
    from morphcpt.train.data import byte_table, dataset_bytes

    folder_out = tmp_path / "out" / "validation"
    eeve_tokens, eeve_bytes = dataset_bytes(folder_out / "validation_eeve_text_document", byte_table(new))
    base_tokens, base_bytes = dataset_bytes(folder_out / "validation_text_document", byte_table(vocab))
    assert eeve_bytes == base_bytes == sum(len(t.encode()) for t in texts) and eeve_tokens < base_tokens
    assert any(i >= expansion.first_new_id for ids in eeve for i in ids.tolist())


def test_every_corpus_format_prepare_reads_gives_the_same_pieces(
    tmp_path, sample_corpus, sample_tokenizer_dir
):
    """txt (one document per block), csv with a named column and parquet expand like the same texts in JSONL."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = [" ".join(t.split()) for t in read_texts(sample_corpus, 300)]
    jsonl = tmp_path / "corpus.jsonl"
    jsonl.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    (tmp_path / "corpus.txt").write_text("\n\n".join(texts) + "\n", encoding="utf-8")
    with open(tmp_path / "corpus.csv", "w", newline="", encoding="utf-8") as handle:
        import csv

        writer = csv.writer(handle)
        writer.writerow(["id", "body"])
        writer.writerows(enumerate(texts))
    pq.write_table(pa.table({"text": texts}), tmp_path / "corpus.parquet")
    want = expand(jsonl, sample_tokenizer_dir, tmp_path / "jsonl", num_new=16)
    for source in (f"{tmp_path / 'corpus.txt'}?txt=block", f"{tmp_path / 'corpus.csv'}?column=body"):
        assert expand(source, sample_tokenizer_dir, tmp_path / "out", num_new=16).pieces == want.pieces
    assert expand(tmp_path / "corpus.parquet", sample_tokenizer_dir, tmp_path / "out", num_new=16).pieces == (
        want.pieces
    )
    with pytest.raises(ExpansionError, match=r"corpus .*missing.txt: .*no such file"):
        expand(tmp_path / "missing.txt", sample_tokenizer_dir, tmp_path / "out", num_new=16)


def test_morpheme_candidates_refuse_other_languages(tmp_path, sample_corpus, sample_tokenizer_dir):
    with pytest.raises(ExpansionError, match=r"no(ne)? .*for 'nl'.*--candidates frequent"):
        expand(
            sample_corpus,
            sample_tokenizer_dir,
            tmp_path / "a",
            num_new=4,
            candidates="morphemes",
            language="nl",
        )
    lines = sample_corpus.read_text(encoding="utf-8").splitlines(keepends=True)[:60]
    mixed = tmp_path / "mixed.jsonl"
    tagged = [{**json.loads(line), "lang": "tl"} for line in lines[:50]]
    english = {"text": "The quick brown fox jumps over the lazy dog.", "lang": "en"}
    mixed.write_text("".join(json.dumps(row) + "\n" for row in [*tagged, english]), encoding="utf-8")
    with pytest.raises(ExpansionError, match=r"mixed.jsonl:51: a document tagged lang=en.*fil language pack"):
        expand(mixed, sample_tokenizer_dir, tmp_path / "b", num_new=4, candidates="morphemes")
    plain = tmp_path / "plain.txt"
    plain.write_text("\n\n".join(json.loads(line)["text"] for line in lines), encoding="utf-8")
    with pytest.raises(ExpansionError, match="tagged lang=en"):  # a source's own ?lang= tags its documents
        expand(
            f"{plain}?txt=block&lang=en",
            sample_tokenizer_dir,
            tmp_path / "c",
            num_new=4,
            candidates="morphemes",
        )
    frequent = expand(mixed, sample_tokenizer_dir, tmp_path / "d", num_new=4)  # frequent pieces: any language
    assert frequent.num_new == 4


def test_a_byte_level_base_is_refused_clearly(tmp_path, sample_corpus):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>"])
    tokenizer.train_from_iterator(read_texts(sample_corpus, 100), trainer)
    names = ("eos", "bos", "unk", "pad")
    wrapped = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, **{f"{n}_token": "<|endoftext|>" for n in names}
    )
    wrapped.save_pretrained(tmp_path / "gpt2ish")
    with pytest.raises(ExpansionError, match="byte-level BPE"):
        expand(sample_corpus, tmp_path / "gpt2ish", tmp_path / "out", num_new=4)
