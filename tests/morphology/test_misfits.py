"""How the ranking (`ranking.ReadingRanks`, issue #40's twelfth session) weighs readings: affixes that do not go
together (the conveyance i- takes no -an, so a word that starts in... reads -in- before a vowel-initial root, not i-
before an n-initial one; the pronouns nila and niya take no affix), and of readings that tie on everything else the
more frequent root. The words are chosen here; none is a word of a gold set."""

from __future__ import annotations

import pytest

from morphcpt.morphology import FilipinoPack
from morphology_helpers import FIL, cut


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("inasahan", ("in|asa|han", "asa")),  # not i|nasa|han, though nasa (desire) is the longer root
        ("inayunan", ("in|ayun|an", "ayon")),
        ("inagahan", ("in|aga|han", "aga")),
    ],
)
def test_i_takes_no_an(word, expected):
    pack = FilipinoPack(roots={"asa", "nasa", "ayon", "nayon", "aga", "naga"})
    assert cut(pack, word) == expected


def test_i_still_reads_without_an():
    pack = FilipinoPack(roots={"nasa", "asa", "sulat"})
    assert cut(pack, "isulat") == ("i|sulat", "sulat")


def test_i_takes_no_an_on_the_shipped_lists():
    assert cut(FIL, "inasnan") == ("in|asn|an", "asin")  # syncope: asin -> asn-an
    assert cut(FIL, "iiwasan") == ("i|iwas|an", "iwas")  # the vowel's copy, not i-, keeps -an


def test_of_readings_that_tie_the_more_frequent_root_wins():
    pack = FilipinoPack(roots={"titik", "tikan", "tatag", "tagan"})
    pack._zipf = {"titik": 4.0, "tatag": 3.5}
    assert cut(pack, "titikan") == ("titik|an", "titik")  # not ti|tikan: the same length of root
    assert cut(pack, "katatagan") == ("ka|tatag|an", "tatag")
    pack = FilipinoPack(roots={"titik", "tikan"})
    pack._zipf = {"tikan": 4.0}
    assert cut(pack, "titikan") == ("ti|tikan", "tikan")


def test_nila_and_niya_take_no_affix():
    assert cut(FIL, "nilaan") == ("ni|laan", "laan")  # not nila|an
