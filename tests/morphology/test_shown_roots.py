"""The analyser's last guess for a word with no reading (issue #40): a root no list holds as a root, read where the
lists hold another verbal form of it (`fallback.shown_root_reading`). Over a small root lexicon with chosen list
words, so that the pattern, not the shipped lists, decides; the roots are in no held-out set
(data/gold_heldout/*heldout*.tsv)."""

from __future__ import annotations

import pytest

from morphcpt.morphology import FilipinoPack
from morphology_helpers import FIL, cut


def _pack(*listed: str) -> FilipinoPack:
    pack = FilipinoPack(roots={"kain", "gawa", "gulat"})
    pack._known = frozenset(listed)
    return pack


@pytest.mark.parametrize(
    ("word", "listed", "expected"),
    [
        ("naghamlay", "hinamlay", ("nag|hamlay", "hamlay")),  # a verbal prefix
        ("ipaghamlay", "humamlay", ("ipag|hamlay", "hamlay")),
        ("nagpasulbo", "isulbo", ("nagpa|sulbo", "sulbo")),  # the longest prefix whose root fits
        ("humamlay", "ihamlay", ("h|um|amlay", "hamlay")),  # -um- after the first consonant
        ("umisbok", "magisbok", ("um|isbok", "isbok")),  # or before a first vowel
        ("hinamlayan", "maghamlay", ("h|in|amlay|an", "hamlay")),  # -in- and -an
        ("tinilapukan", "magtilapok", ("t|in|ilapuk|an", "tilapok")),  # the u before -an lowered to o
        ("ihinamlay", "naghamlay", ("i|h|in|amlay", "hamlay")),  # i- before -in-
        ("tilapukin", "tumilapok", ("tilapuk|in", "tilapok")),  # -in alone
        ("paghamlayan", "hinamlay", ("pag|hamlay|an", "hamlay")),  # pag- and -an
    ],
)
def test_a_root_its_other_forms_show(word, listed, expected):
    assert cut(_pack(listed), word) == expected


@pytest.mark.parametrize(
    ("word", "listed"),
    [
        ("naghamlay", ""),  # no other form listed
        ("naghamlay", "naghamlay"),  # the word itself is no evidence
        ("naghamlay", "mahamlay"),  # ma- shows no verb (madrigal)
        ("naghamlay", "hamlay"),  # nor does the bare word (dayao, a name)
        ("hamlayan", "maghamlay"),  # -an alone ends too many nouns and names
        ("pagkatapus", "itapus"),  # pagka- is a prefix of its own: no pag- on katapus
        ("kinagulat", "magkagulat"),  # ka before a lexicon root: kina- on gulat, not -in- on kagulat
        ("ginagwa", "maggagwa"),  # a consonant its vowel repeats: a copy, not a root
        ("nakapagpa", "magpagpa"),  # a root that starts as a prefix (makapag-)
        ("magnolya", "inolya"),  # n after g
        ("nagtuka", "ituka"),  # a root of four letters
    ],
)
def test_no_guess_without_evidence_or_shape(word, listed):
    assert cut(_pack(listed), word) == (word, word)


def test_shown_roots_on_the_shipped_lists():
    assert cut(FIL, "nagprisinta") == ("nag|prisinta", "prisinta")  # iprisinta, magprisinta are listed
    assert cut(FIL, "pumasuk") == ("p|um|asuk", "pasuk")  # a misspelled pasok: its forms are listed too
    assert cut(FIL, "magdalena") == ("magdalena", "magdalena")  # a name stays whole
    assert cut(FIL, "pagkatapus") == ("pagkatapus", "pagkatapus")
