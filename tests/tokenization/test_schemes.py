"""Schemes and the split table: lossless on every document, seeded, expanding/aligning as designed, bounded."""

from __future__ import annotations

import collections
import itertools
import json
import math
import re

import numpy as np
import pytest
from omegaconf import OmegaConf

from morphcpt import paths
from morphcpt.morphology import get_language_pack
from morphcpt.tokenization import expansions
from morphcpt.tokenization.alignment import Alignment, morpheme_boundary_alignment
from morphcpt.tokenization.expansions import (
    Expander,
    SplitTable,
    build_split_table,
    cache_path,
    load_or_build_split_table,
    save_split_table,
)
from morphcpt.tokenization.schemes import SCHEMES as ALL_SCHEMES
from morphcpt.tokenization.schemes import SchemeConfig, build_scheme, document_rng, transform_documents
from morphcpt.tokenization.schemes.patok import PatokScheme

EDGE_TEXTS = [
    "",
    " ",
    "\n",
    "\n\n \n",
    "1234567890 3.14",
    "😀🇵🇭 emoji, ñ and é",
    "literal <eos> and <bos> text",
    "mag nag pag ka ma um in an han hin",  # nothing but affix-like words
    "magmag-magmag kumain-kumain ",
    "Pinag-aralan, pinagsisikapan; naglalaro! umuulan?",
    "a" * 300,
    # A literal "▁" (U+2581) is how the tokenizer spells a space inside pieces: it must survive as itself.
    "\u2581",
    "isang \u2581 marka\u2581\u2581 at \u2581magluto ng pagkain\u2581",
]

# The schemes over the base vocabulary; eeve needs its expanded tokenizer (tests/tokenization/test_eeve_tokenizer.py).
SCHEMES = [name for name in ALL_SCHEMES if name != "eeve"]


@pytest.fixture(scope="module")
def texts(sample_corpus) -> list[str]:
    with open(sample_corpus, encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f][:400] + EDGE_TEXTS


@pytest.fixture(scope="module")
def canonical(vocab, texts) -> list[list[int]]:
    return vocab.encode_batch(texts)


@pytest.fixture(scope="module")
def schemes(vocab) -> dict:
    return {name: build_scheme(SchemeConfig(name=name), vocab) for name in SCHEMES}


@pytest.fixture(scope="module")
def outputs(schemes, canonical) -> dict[str, list[list[int]]]:
    return {
        name: [s.transform(ids, document_rng(0, name, i)) for i, ids in enumerate(canonical)]
        for name, s in schemes.items()
    }


# --- split table -----------------------------------------------------------------------------------------


def test_split_table_is_every_cut_into_two_ordinary_pieces(vocab):
    table = build_split_table(vocab)
    ordinary = {
        p: i for i, p in enumerate(vocab.pieces) if i not in vocab.special_ids and i not in vocab.byte_values
    }
    for i, piece in enumerate(vocab.pieces):
        expected = []
        if piece in ordinary and ordinary[piece] == i:
            expected = [
                (ordinary[piece[:k]], ordinary[piece[k:]])
                for k in range(1, len(piece))
                if piece[:k] in ordinary and piece[k:] in ordinary
            ]
        assert table.pairs(i) == expected
    assert table.num_splittable() > vocab.size // 4


def test_split_table_cache_round_trip_keeps_expanding(tmp_path, vocab, canonical, monkeypatch):
    built = load_or_build_split_table(vocab, tmp_path)
    assert cache_path(tmp_path, vocab).exists()

    def no_rebuild(_):
        raise AssertionError("a valid cache must be loaded, not rebuilt")

    monkeypatch.setattr(expansions, "build_split_table", no_rebuild)
    loaded = load_or_build_split_table(vocab, tmp_path)
    for field in ("offsets", "left", "right"):
        assert np.array_equal(getattr(loaded, field), getattr(built, field))
        assert np.issubdtype(getattr(loaded, field).dtype, np.integer)
    scheme = build_scheme(SchemeConfig(name="stochastok", cache_dir=str(tmp_path)), vocab)
    changed = [scheme.transform(ids, document_rng(0, "x", i)) != ids for i, ids in enumerate(canonical)]
    assert np.mean(changed) > 0.5


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other_vocabulary", "inconsistent"])
def test_bad_cache_is_rebuilt_atomically(tmp_path, vocab, damage):
    good = build_split_table(vocab)
    path = cache_path(tmp_path, vocab)
    save_split_table(good, path)
    if damage == "garbage":
        path.write_bytes(b"not a zip file at all")
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:100])
    elif damage == "other_vocabulary":
        save_split_table(SplitTable(good.offsets, good.left, good.right, "0" * 64), path)
    else:
        save_split_table(SplitTable(good.offsets, good.left[:-1], good.right[:-1], good.fingerprint), path)
    table = load_or_build_split_table(vocab, tmp_path)
    assert np.array_equal(table.left, good.left) and np.array_equal(table.offsets, good.offsets)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # rewritten, no temporary left behind
    assert expansions.load_split_table(path, vocab) is not None


def test_expander_follows_the_stochastok_distribution():
    """Slots + linked list give the same output distribution as splitting positions of a growing list."""
    # id 0 -> (1, 2) | (3, 4); id 2 -> (3, 3); ids 1, 3, 4 have no pairs
    table = SplitTable(
        offsets=np.array([0, 2, 2, 3, 3, 3]),
        left=np.array([1, 3, 3], dtype=np.int32),
        right=np.array([2, 4, 3], dtype=np.int32),
        fingerprint="toy",
    )
    pairs = {0: [(1, 2), (3, 4)], 2: [(3, 3)]}

    def reference(ids, attempts, rng):
        ids = list(ids)
        for _ in range(attempts):
            j = int(rng.integers(len(ids)))
            if ids[j] in pairs:
                ids[j : j + 1] = pairs[ids[j]][int(rng.integers(len(pairs[ids[j]])))]
        return tuple(ids)

    expander, runs, ids = Expander(table), 20000, [0, 1, 0, 2]
    rng = np.random.default_rng(0)
    ours = collections.Counter(tuple(expander.expand(ids, 3, rng)) for _ in range(runs))
    theirs = collections.Counter(reference(ids, 3, rng) for _ in range(runs))
    total_variation = sum(abs(ours[k] - theirs[k]) for k in ours.keys() | theirs.keys()) / (2 * runs)
    assert total_variation < 0.03
    assert len(ours) > 10


# --- every scheme ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(SCHEMES))
def test_lossless_in_range_no_specials(name, vocab, texts, outputs):
    for text, out in zip(texts, outputs[name], strict=True):
        assert vocab.decode(out) == text
        assert all(0 <= i < vocab.size for i in out)
        assert not any(vocab.is_special(i) for i in out)


@pytest.mark.parametrize("name", list(SCHEMES))
def test_seeded_and_reproducible(name, schemes, canonical, outputs):
    scheme = schemes[name]
    again = [scheme.transform(ids, document_rng(0, name, i)) for i, ids in enumerate(canonical)]
    assert again == outputs[name]


def test_document_rng_is_stable_and_independent():
    draw = document_rng(1234, "patok", 42).integers(0, 2**32, size=3).tolist()
    assert draw == document_rng(1234, "patok", 42).integers(0, 2**32, size=3).tolist()
    assert draw == [1865840429, 4030282428, 3416840776]  # fixed forever: no Python hash() involved
    others = [
        document_rng(1235, "patok", 42),
        document_rng(1234, "stochastok", 42),
        document_rng(1234, "patok", 43),
    ]
    assert all(g.integers(0, 2**32, size=3).tolist() != draw for g in others)


@pytest.mark.parametrize("name", ["stochastok", "patok"])
def test_different_documents_get_different_randomness(name, schemes, canonical):
    long_docs = [ids for ids in canonical if len(ids) >= 100][:20]
    scheme = schemes[name]
    differ = [
        scheme.transform(ids, document_rng(0, name, 0)) != scheme.transform(ids, document_rng(0, name, 1))
        for ids in long_docs
    ]
    assert np.mean(differ) > 0.8


def test_vanilla_is_identity(canonical, outputs):
    assert outputs["vanilla"] == canonical


def test_stochastok_expands_most_documents_within_budget(canonical, outputs):
    normal = [(ids, out) for ids, out in zip(canonical, outputs["stochastok"], strict=True) if len(ids) >= 30]
    assert np.mean([out != ids for ids, out in normal]) > 0.8
    for ids, out in zip(canonical, outputs["stochastok"], strict=True):
        assert len(ids) <= len(out) <= len(ids) + int(len(ids) * 0.1)


def test_config_files_build_their_scheme(vocab):
    for name in SCHEMES:
        node = OmegaConf.load(paths.CONF_DIR / "scheme" / f"{name}.yaml")
        assert build_scheme(node, vocab).name == name
    with pytest.raises(ValueError, match="unknown scheme config keys"):
        build_scheme({"name": "patok", "expand_propp": 0.2}, vocab)
    with pytest.raises(ValueError, match="unknown scheme"):
        build_scheme({"name": "bpe-dropout"}, vocab)


# --- patok -----------------------------------------------------------------------------------------------


def test_patok_changes_most_documents_and_aligns_with_morphemes(vocab, canonical, outputs):
    pack = get_language_pack("fil")
    normal = [i for i, ids in enumerate(canonical) if len(ids) >= 30]
    assert np.mean([outputs["patok"][i] != canonical[i] for i in normal]) > 0.6
    align = {
        name: sum((morpheme_boundary_alignment(vocab, out, pack) for out in outs), Alignment())
        for name, outs in outputs.items()
    }
    for other in ("vanilla", "stochastok"):
        assert align["patok"].precision > 1.5 * align[other].precision
        assert align["patok"].recall > 2.0 * align[other].recall


def test_patok_finds_affix_tokens_in_the_vocabulary_spelling(vocab):
    scheme = PatokScheme(SchemeConfig(name="patok"), vocab)
    pack = scheme.pack
    prefixed = [("mag", "luto"), ("nag", "laro"), ("pag", "kain"), ("ma", "ganda"), ("ka", "ibigan")]
    found = 0
    for prefix, root in prefixed:
        word = prefix + root
        if vocab.piece_id("\u2581" + prefix) is None or pack.analyze(word)[0].kind != "prefix":
            continue
        ids = [vocab.piece_id("\u2581" + prefix), *vocab.encode(root)]
        info = scheme.word_info(tuple(ids))
        assert info.affix_flags[0], (word, [vocab.pieces[i] for i in ids])
        found += 1
    assert found >= 2
    bansa = scheme.word_info(tuple(vocab.encode(" bansa")))
    assert not any(bansa.affix_flags) and not bansa.cuts  # no "an" inside "bansa"


def test_patok_keeps_affix_tokens_through_expansion(vocab):
    """With expansion only (and every attempt allowed), affix tokens are never split."""
    cfg = SchemeConfig(name="patok", contract_prop=0.0, expand_prop=5.0, affix_awareness=1.0)
    scheme = PatokScheme(cfg, vocab)
    prefix_id = vocab.piece_id("\u2581mag")
    assert prefix_id is not None
    ids = []
    for root in ["luto", "laro", "linis", "aral", "sulat"] * 20:
        ids += [prefix_id, *vocab.encode(root)]
    out = scheme.transform(ids, document_rng(0, "patok", 0))
    assert vocab.decode(out) == vocab.decode(ids)
    assert out.count(prefix_id) == ids.count(prefix_id)
    assert len(out) > len(ids)


def test_patok_transform_many_equals_one_document_at_a_time(vocab, canonical, outputs):
    """Batches of any size (with empty documents and adversarial ones inside) give every document the ids that
    `transform` gives it alone; a generator shared by two documents is refused (its draws would interleave)."""
    scheme = PatokScheme(SchemeConfig(name="patok"), vocab)
    docs = [*canonical, [], vocab.encode("mag " * 400)]
    expected = [*outputs["patok"], [], scheme.transform(docs[-1], document_rng(0, "patok", len(docs) - 1))]
    got, i = [], 0
    for size in itertools.cycle((1, 5, 64, 200)):
        if i >= len(docs):
            break
        rngs = [document_rng(0, "patok", j) for j in range(i, min(i + size, len(docs)))]
        got += scheme.transform_many(docs[i : i + size], rngs)
        i += size
    assert got == expected
    rng = document_rng(0, "patok", 0)
    with pytest.raises(ValueError, match="distinct generator"):
        scheme.transform_many(canonical[:2], [rng, rng])
    assert scheme.transform_many([], []) == []


def test_transform_documents_keeps_each_generators_order(vocab, canonical, schemes):
    """Documents sharing a generator (the parts of one long text), interleaved with others: every scheme gives
    what `transform` gives one after another, patok through `transform_many`."""
    owner = [0, 1, 0, 2, 1, 0, 3]  # document -> whose generator
    docs = [canonical[i] for i in range(len(owner))]
    for name, scheme in schemes.items():
        shared = [document_rng(0, name, k) for k in range(4)]
        got = transform_documents(scheme, docs, [shared[k] for k in owner])
        fresh = [document_rng(0, name, k) for k in range(4)]
        assert got == [scheme.transform(ids, fresh[k]) for ids, k in zip(docs, owner, strict=True)], name


def test_patok_gaps_are_the_scalar_formula_exactly():
    """The vectorised draw gaps equal `1 + int(math.log1p(-x) / log_miss)` bit for bit, also where the quotient
    is an integer or within rounding of one (where numpy's SIMD log1p and the C library's may disagree)."""
    rng = np.random.default_rng(0)
    for p in (0.9, 0.5, 0.236, 0.01, 1e-4):
        log_miss = math.log1p(-p)
        near = [-math.expm1(k * log_miss) for k in range(40)]  # quotient k, up to rounding
        u = np.concatenate((rng.random(20000), near, np.nextafter(near, 1.0), np.nextafter(near, 0.0), [0.0]))
        u = u[u < 1.0]  # as from Generator.random
        expected = [1 + int(math.log1p(-x) / log_miss) for x in u.tolist()]
        assert PatokScheme._gaps(u, log_miss).tolist() == expected, p


def test_patok_output_does_not_depend_on_its_caches(vocab, canonical, outputs, monkeypatch):
    """Word states interned, looked up by packed ids or by tuple, and forgotten when the table is full: the ids
    are the same as with roomy caches, whatever the order documents come in."""
    tiny = PatokScheme(SchemeConfig(name="patok"), vocab, cache_size=8)  # resets every 16 states
    assert tiny.words.max_states == 16
    order = list(range(len(canonical)))[::-1]
    for i in order:
        assert tiny.transform(canonical[i], document_rng(0, "patok", i)) == outputs["patok"][i], i
    assert tiny.words.num_states() <= 16 + 4 * max(map(len, canonical))  # it did reset
    monkeypatch.setenv("MORPHCPT_NATIVE", "off")  # the Python lookup (the kernels hash groups whole)
    unpacked = PatokScheme(SchemeConfig(name="patok"), vocab)
    unpacked.words._pack = 1  # every group of two or more tokens by its tuple
    for i in order[:100]:
        assert unpacked.transform(canonical[i], document_rng(0, "patok", i)) == outputs["patok"][i], i


def test_patok_state_steps_spell_the_same_text(vocab, canonical, monkeypatch):
    """Every cached contraction step keeps the group's text and records its affix tokens as a fresh analysis
    would (a state derived from its parent's analysis, not re-analysed). The Python path's tables; the kernel's
    states: tests/tokenization/test_native.py."""
    monkeypatch.setenv("MORPHCPT_NATIVE", "off")
    scheme = PatokScheme(SchemeConfig(name="patok"), vocab)
    for i, ids in enumerate(canonical[:50]):
        scheme.transform(ids, document_rng(0, "patok", i))
    words = scheme.words
    assert len(words.states) > 100
    derived = 0
    for sid, state in enumerate(words.states):
        fresh = words._word_info(state)
        assert words.infos[sid].text == fresh.text and words.infos[sid].affix_flags == fresh.affix_flags
        assert words.masks[sid] == sum(1 << k for k, flag in enumerate(fresh.affix_flags) if flag)
        derived += words.infos[sid] is not words.word_info(state)
    assert derived > 0


def test_patok_group_analysis_is_every_words_analysis(vocab, texts):
    """A group's cuts and affix extents are those of every `WORD_PATTERN` match in its text, shifted to where it
    starts (the fast path for one-word texts, and the per-word cache, give the same): on every group text of
    the sample and on texts where letters, digits and marks mix."""
    from morphcpt.tokenization.alignment import WORD_PATTERN
    from morphcpt.tokenization.schemes.patok_words import AFFIX_KINDS

    words = PatokScheme(SchemeConfig(name="patok"), vocab).words

    def reference(text):
        cuts, extents = [], set()
        for match in WORD_PATTERN.finditer(text):
            start = match.start()
            for k, (m_start, m_end, kind) in enumerate(words.pack.spans(match.group())):
                if k:
                    cuts.append(start + m_start)
                if kind in AFFIX_KINDS:
                    extents.add((start + m_start, start + m_end))
                    if m_start == 0 and start > 0 and text[start - 1] == " ":
                        extents.add((start - 1, start + m_end))
        return tuple(cuts), frozenset(extents)

    groups = {g for t in texts for g in re.findall(r" ?\S+| ", t)}
    odd = [
        "",
        " ",
        "kumain²",
        " x²kumain",
        "²",
        "Ⅻ",
        " ½",
        "mag-aral",
        " mag-aral,",
        "naglaro3 kumain",
        " _ma",
        " Ñino",
    ]
    for text in sorted(groups) + odd:
        assert words._analyse_text(text) == reference(text), text
    assert sum(bool(words._analyse_text(t)[0]) for t in groups) > 100  # words with cuts were among them


@pytest.mark.parametrize(
    "text",
    [
        "mag " * 3000,  # every token an affix token
        "pinagsisikapan" * 300,  # one enormous word
        "ma-" * 2000,
        "umuulan naglalaro " * 1500,
    ],
)
def test_patok_on_adversarial_input_works_per_distinct_word_not_per_token(vocab, text, span_steps):
    """Thousands of one repeated word (every token an affix token, one enormous word, ...): the draws are
    bounded by `max_attempts_factor`, and the work done in Python (word states, contraction steps) is per
    distinct state and step, a few dozen here, not per occurrence. (Speed: benchmarks/, not a timed test.)"""
    scheme = PatokScheme(SchemeConfig(name="patok", expand_prop=1.0, max_attempts_factor=10.0), vocab)
    ids = vocab.encode(text)
    out = scheme.transform(ids, document_rng(0, "patok", 0))
    assert vocab.decode(out) == text
    assert scheme.words.num_states() <= 16
    assert len(span_steps) <= 64


def test_alignment_definition(vocab):
    class Pack:
        def __init__(self, cuts):
            self.cuts = cuts

        def boundaries(self, word):
            return self.cuts.get(word, [])

    word_ids = vocab.encode(" kumain")
    ids = vocab.encode("12") + word_ids  # digits are no word: only "kumain" counts
    inner = []  # character offsets of in-word token boundaries of " kumain" (minus its space)
    pos = 0
    for i in word_ids[:-1]:
        pos += len(vocab.pieces[i])
        inner.append(pos - 1)
    exact = morpheme_boundary_alignment(vocab, ids, Pack({"kumain": inner}))
    assert (exact.token_boundaries, exact.matched) == (len(inner), len(inner))
    off = morpheme_boundary_alignment(
        vocab, ids, Pack({"kumain": [k for k in range(1, 6) if k not in inner]})
    )
    assert off.matched == 0 and off.morpheme_boundaries == 5 - len(inner)
    assert morpheme_boundary_alignment(vocab, ids, Pack({})).recall == 0.0
    total = exact + off
    assert total.token_boundaries == 2 * len(inner) and 0.0 <= total.precision <= 1.0


def test_words_a_gold_set_does_not_hold_count_for_neither_side(vocab):
    class Gold:
        def boundaries(self, word):
            return [1, 3] if word == "kumain" else None

    ids = vocab.encode("kumain pinakamaganda")
    alone = morpheme_boundary_alignment(vocab, vocab.encode("kumain"), Gold())
    both = morpheme_boundary_alignment(vocab, ids, Gold())
    assert alone.morpheme_boundaries == 2
    assert (both.token_boundaries, both.morpheme_boundaries, both.matched) == (
        alone.token_boundaries,
        alone.morpheme_boundaries,
        alone.matched,
    )
