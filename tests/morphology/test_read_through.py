"""A curated root that is itself an affixed form of another curated root (padala <- dala, paalam <- alam, laruan <-
laro) is listed so that the noun stays whole; a word that adds affixes to it reads through to the inner root
(`ranking.ReadingRanks._read_through`, issue #40's thirteenth session): nagpa|dala, ipina|alam, pa|laru|an. The
words are chosen here; none is a word of a held-out gold set (data/gold_heldout/*heldout*.tsv)."""

from __future__ import annotations

from morphcpt.morphology import FilipinoPack
from morphology_helpers import FIL, cut


def _pack() -> FilipinoPack:
    return FilipinoPack(roots={"dala", "padala", "alam", "paalam", "niya", "kaniya", "bili", "bilang"})


def test_affixes_on_a_derived_root_read_through_to_its_root():
    pack = _pack()
    assert cut(pack, "nagpadala") == ("nagpa|dala", "dala")  # not nag|padala
    assert cut(pack, "ipinaalam") == ("ipina|alam", "alam")  # not i|p|in|aalam
    assert cut(pack, "ipinapadala") == ("ipina|pa|dala", "dala")


def test_the_derived_root_alone_or_with_a_linker_stays_whole():
    pack = _pack()
    assert cut(pack, "padala") == ("padala", "padala")
    assert cut(pack, "padalang") == ("padala|ng", "padala")  # a linker is no affix on the noun


def test_no_read_through_to_a_pronoun_nor_past_a_linker():
    pack = _pack()
    assert cut(pack, "kaniyahin") == ("kaniya|hin", "kaniya")  # niya takes no affix
    assert cut(pack, "mabilang") == ("ma|bilang", "bilang")  # bilang is no bil|an|g <- bili


def test_read_through_on_the_shipped_lists():
    assert cut(FIL, "magpaalam") == ("magpa|alam", "alam")
    assert cut(FIL, "pagpapadala") == ("pagpa|pa|dala", "dala")
    assert cut(FIL, "palaruan") == ("pa|laru|an", "laro")
    assert cut(FIL, "padala") == ("padala", "padala")


def test_no_read_through_where_a_nasal_took_the_first_sound():
    # mang- + paalam: the p is gone, so there is no pa- to cut off (not ma|ma|alam)
    assert cut(_pack(), "mamaalam") == ("mam|aalam", "paalam")
