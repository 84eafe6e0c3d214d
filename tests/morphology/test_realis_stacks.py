"""A perfective n- prefix (na-, nag-, naka-, ...) comes first in a Tagalog word, after another prefix only after di-,
pinaka- and pag-/pagka- (`affixes.realis_stacked`, issue #40's thirteenth session): panatili is a root, not
pa|na|tili, and ina-update is in|a-|update, not i|na-|update. The words are chosen here; none is a word of a
held-out gold set (data/gold_heldout/*heldout*.tsv)."""

from __future__ import annotations

import pytest

from morphcpt.morphology import FilipinoPack
from morphcpt.morphology.affixes import realis_stacked
from morphcpt.morphology.loans import hyphenated_reading
from morphology_helpers import FIL, cut


@pytest.mark.parametrize(
    ("prefixes", "stacked"),
    [
        (("pa", "na"), True),
        (("i", "na"), True),
        (("ka", "nag"), True),
        (("mapa", "nag"), True),
        (("di", "na"), False),
        (("pinaka", "na"), False),
        (("pag", "na"), False),
        (("pagka", "na"), False),
        (("na", "ka"), False),  # the realis prefix first
        (("pa",), False),
    ],
)
def test_which_stacks_count(prefixes, stacked):
    assert realis_stacked(prefixes) is stacked


def test_a_word_whose_only_reading_stacks_stays_whole():
    pack = FilipinoPack(roots={"tili", "gawa", "kita"})
    assert cut(pack, "panatili") == ("panatili", "panatili")  # not pa|na|tili
    assert cut(pack, "kanagawa") == ("kanagawa", "kanagawa")  # not ka|na|gawa
    assert cut(pack, "nagawa") == ("na|gawa", "gawa")  # the prefix alone still reads
    assert cut(pack, "pagnakita") == ("pag|na|kita", "kita")  # pag- (when) before a whole verb form


def test_panatili_is_a_root_of_the_shipped_lists():
    assert cut(FIL, "panatili") == ("panatili", "panatili")
    assert cut(FIL, "pinanatili") == ("p|in|anatili", "panatili")
    assert cut(FIL, "mapanatili") == ("ma|panatili", "panatili")
    assert cut(FIL, "panatilihin") == ("panatili|hin", "panatili")


def test_di_and_pinaka_still_stand_before_a_perfective_form():
    assert cut(FIL, "di-nakita") == ("di-|na|kita", "kita")
    assert cut(FIL, "pinakanaapektuhan") == ("pinaka|na|apektu|han", "apekto")


@pytest.mark.parametrize("word", ["ina-advertise", "ina-edit", "ina-upload"])
def test_ina_before_a_hyphen_is_in_and_the_vowel(word):
    reading = hyphenated_reading(word)
    assert reading is not None
    assert [word[s:e] for s, e, _ in reading.spans][:2] == ["in", "a-"]
    assert (reading.prefixes, reading.infix) == ((), "in")
