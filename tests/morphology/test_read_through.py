"""A curated root that is itself an affixed form of another curated root (padala <- dala, paalam <- alam, laruan <-
laro) is listed so that the noun stays whole; a word that adds affixes to it reads through to the inner root
(`ranking.ReadingRanks._read_through`, issue #40's thirteenth session): nagpa|dala, ipina|alam, pa|laru|an. So does a
word on a dictionary headword the lexicon left out as derived from a curated root (`FilipinoPack._through_headword`):
k|in|a|usap on kausap. The words are chosen here; none is a word of a held-out gold set
(data/gold_heldout/*heldout*.tsv)."""

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


def test_a_left_out_headword_derived_from_a_curated_root_reads_through():
    # kausap, kaibigan, kasaysayan: headwords the lexicon left out as derived (ka|usap, ka|ibig|an, ka|saysay|an)
    # the -in- inside ka- (k|in|a), as in k|in|a|takut|an
    assert cut(FIL, "kinausap") == ("k|in|a|usap", "usap")
    assert cut(FIL, "kumakausap") == ("k|um|a|ka|usap", "usap")
    assert cut(FIL, "pangkasaysayan") == ("pang|ka|saysay|an", "saysay")
    assert cut(FIL, "pangkaibigan") == ("pang|ka|ibig|an", "ibig")


def test_no_read_through_a_headword_of_i_alone_or_with_in():
    # ibabaw and binata are nouns of their own, though they read i|babaw and b|in|ata
    assert cut(FIL, "mangibabaw") == ("mang|ibabaw", "ibabaw")
    assert cut(FIL, "nagbibinata") == ("nag|bi|binata", "binata")
    # nor one with -in- (pasinaya reads pa|s|in|aya, on saya)
    assert cut(FIL, "pampasinaya") == ("pam|pasinaya", "pasinaya")
