"""The analyser's third-round patterns (issue #40), each on words chosen here, most over a small root lexicon so that
the pattern, not the shipped lists, decides (run: pytest tests/morphology/test_affix_classes.py). None of these
lemmas is in data/gold_heldout/classes_heldout.tsv, the held-out set of the same classes."""

from __future__ import annotations

import pytest

from morphcpt.morphology import FilipinoPack, get_language_pack

FIL = get_language_pack("fil")


def cut(pack: FilipinoPack, word: str) -> tuple[str, str]:
    analysis = pack.parse(word)
    return "|".join(m.text for m in analysis.morphs), analysis.root


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("nanglinlang", ("nang|linlang", "linlang")),  # ng kept before l
        ("manglalason", ("mang|la|lason", "lason")),
        ("nangbugbog", ("nang|bugbog", "bugbog")),  # ... and before b
        ("mambugbog", ("mam|bugbog", "bugbog")),  # the assimilated form still reads as before
    ],
)
def test_a_nasal_prefix_left_unassimilated_before_a_consonant(word, expected):
    pack = FilipinoPack(roots={"linlang", "lason", "bugbog"})
    assert cut(pack, word) == expected


def test_the_unassimilated_reading_gives_way_to_the_assimilated_one():
    # man|alo <- talo (n before t, t swallowed) is no mang + "lo"-reading, and pan|ahon stays a root when listed
    pack = FilipinoPack(roots={"talo", "alo", "panahon", "dahon"})
    assert cut(pack, "manalo")[0] == "man|alo"
    assert cut(pack, "panahon") == ("panahon", "panahon")


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("minabagal", ("m|in|a|bagal", "bagal")),  # ma- with -in-
        ("minamabagal", ("m|in|a|ma|bagal", "bagal")),  # ... repeating its ma
        ("kinagulatan", ("k|in|a|gulat|an", "gulat")),  # ka-...-an with -in-
        ("kinaiinisan", ("k|in|a|i|inis|an", "inis")),
        ("pinakapit", ("p|in|a|kapit", "kapit")),  # pa- with -in- before a ka- root
    ],
)
def test_a_prefix_with_the_infix_inside_it(word, expected):
    pack = FilipinoPack(roots={"bagal", "gulat", "inis", "kapit", "pinaka"})
    assert cut(pack, word) == expected


def test_kina_needs_its_suffix():
    pack = FilipinoPack(roots={"gulat"})
    assert cut(pack, "kinagulat")[0] != "k|in|a|gulat"


def test_the_superlative_takes_no_suffix():
    pack = FilipinoPack(roots={"pinaka", "tanda", "kasal", "sal"})
    assert cut(pack, "pinakamatanda") == ("pinaka|ma|tanda", "tanda")
    assert cut(pack, "pinakasalan") == ("p|in|a|kasal|an", "kasal")


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("nagre-rent", ("nag|re-|rent", "rent")),  # a one-syllable loan after its copy
        ("nagrerent", ("nag|re|rent", "rent")),
        ("nire-rent", ("ni|re-|rent", "rent")),
        ("nagshe-share", ("nag|she-|share", "share")),  # a digraph copied whole
        ("nagsheshare", ("nag|she|share", "share")),
        ("nagpla-plano", ("nag|pla-|plano", "plano")),  # a cluster copied, with a hyphen
    ],
)
def test_a_loans_copy_with_and_without_its_hyphen(word, expected):
    pack = FilipinoPack(roots={"rent", "share", "plano"})
    assert cut(pack, word) == expected


def test_a_one_syllable_word_needs_a_copy_to_be_a_root():
    pack = FilipinoPack(roots={"rent"})
    assert cut(pack, "nagrent")[0] == "nagrent"  # no copy: the two-syllable rule holds


def test_the_irregular_stem_of_dinig_after_pa():
    pack = FilipinoPack(roots={"dinig"})
    assert cut(pack, "pakinggan") == ("pa|kingg|an", "dinig")


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("namamangka", ("na|ma|mangka", "bangka")),  # the copy is the prefix's nasal and a
        ("nanananim", ("na|na|nanim", "tanim")),
        ("pananahimik", ("pa|na|nahimik", "tahimik")),
        ("namimigay", ("na|mi|migay", "bigay")),  # the copy of the base, as before
    ],
)
def test_nasal_substitution_with_a_copy(word, expected):
    pack = FilipinoPack(roots={"bangka", "tanim", "tahimik", "bigay"})
    assert cut(pack, word) == expected


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("gumagala", ("g|um|a|gala", "gala")),  # -um- with the copy: the verb
        ("palalakarin", ("pa|la|lakar|in", "lakad")),  # -in with the copy: the verb
        ("magagala", ("ma|ga|gala", "gala")),  # the plural adjective's copy
        ("kagagalahan", ("ka|gagala|han", "gagala")),  # no affix asks for the copy: the word
        ("gagala", ("gagala", "gagala")),
    ],
)
def test_a_short_root_whose_copy_is_another_word(word, expected):
    pack = FilipinoPack(roots={"gala", "gagala", "lakad", "lalakad"})
    assert cut(pack, word) == expected


@pytest.mark.parametrize("word", ["mining", "kinship", "nanotech", "mango", "pinnacle", "mangle", "ninja"])
def test_english_words_stay_whole_with_the_shipped_lexicon(word):
    assert cut(FIL, word)[0] == word
