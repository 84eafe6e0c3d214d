"""How the ranking (`ranking.ReadingRanks`, issue #40's twelfth session) weighs readings: affixes that do not go
together (the conveyance i- takes no -an, so a word that starts in... reads -in- before a vowel-initial root, not i-
before an n-initial one; the pronouns nila and niya take no affix), of readings that tie on everything else the more
frequent root, and a curated root written far more often over a longer cut on a dictionary's root. The words are
chosen here; none is a word of a gold set but data/gold's namatay."""

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


def _pack(trusted: set[str], zipf: dict[str, float], roots: set[str]) -> FilipinoPack:
    pack = FilipinoPack(roots=roots)
    pack._trusted, pack._zipf = frozenset(trusted), zipf
    return pack


def test_a_curated_root_written_far_more_often_outweighs_a_longer_cut():
    pack = _pack({"patay"}, {"matay": 3.4, "patay": 5.2}, {"matay", "patay"})
    assert cut(pack, "namatay") == (
        "nam|atay",
        "patay",
    )  # data/gold's cut, not na|matay on a dictionary's matay
    pack = _pack({"gawa"}, {"ginaw": 3.5, "gawa": 5.4}, {"ginaw", "gawa"})
    assert cut(pack, "ginawan") == ("g|in|aw|an", "gawa")


def test_the_longer_cut_stays_where_the_figures_are_close_or_its_root_is_curated():
    pack = _pack({"patay"}, {"matay": 4.0, "patay": 5.2}, {"matay", "patay"})
    assert cut(pack, "namatay") == ("na|matay", "matay")  # 1.2 apart: not far enough
    pack = _pack({"patay", "matay"}, {"matay": 3.4, "patay": 5.2}, {"matay", "patay"})
    assert cut(pack, "namatay") == ("na|matay", "matay")  # both curated: the ranking as it was


def test_curated_alternatives_on_the_shipped_lists():
    assert cut(FIL, "ginawan") == ("g|in|aw|an", "gawa")  # not ginaw|an
    assert cut(FIL, "pagmamalaki") == ("pag|ma|ma|laki", "laki")  # not pag|mam|alaki <- balaki
    assert cut(FIL, "nakitaan") == ("na|kita|an", "kita")


def test_i_alone_on_a_root_no_frequency_list_knows_gives_way_to_a_common_root():
    roots = {"punin", "ipon", "bahin", "iba", "sulat", "ulat"}
    pack = _pack(set(), {"ipon": 4.4, "iba": 5.0, "ulat": 4.5}, roots)
    assert cut(pack, "ipunin") == ("ipun|in", "ipon")  # not i|punin, a dictionary's listed form of puno
    assert cut(pack, "ibahin") == ("iba|hin", "iba")
    written = _pack(set(), {"ipon": 4.4, "punin": 1.0}, roots)
    assert cut(written, "ipunin") == ("i|punin", "punin")  # a written root keeps the longer cut
    rare = _pack(set(), {"ipon": 2.0}, roots)
    assert cut(rare, "ipunin") == ("i|punin", "punin")  # ... and a rare one does not outweigh it
    assert cut(FIL, "ipunin") == ("ipun|in", "ipon") and cut(FIL, "ibahin") == ("iba|hin", "iba")


def test_i_keeps_a_roots_d_where_ma_and_a_copy_turn_it_r():
    pack = FilipinoPack(roots={"dita"})
    assert cut(pack, "irita") == ("irita", "irita")  # no i|rita <- dita
    assert cut(pack, "i-rita") != ("i-|rita", "dita")
    assert cut(pack, "idita") == ("i|dita", "dita")  # the d as spelled
    assert cut(pack, "marita") == ("ma|rita", "dita")  # after ma- (marami <- dami)
    assert cut(pack, "idirita") == ("i|di|rita", "dita")  # after a copy (idaraos)
    # irita, a word of its own, joins the lexicon
    assert cut(FIL, "nakakairita") == ("naka|ka|irita", "irita")
    assert cut(FIL, "nairita") == ("na|irita", "irita")


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("nakasabitin", ("naka|sabitin", "sabitin")),  # not na|ka|sabit|in: na- takes no -in
        ("nagbalikin", ("nag|balikin", "balikin")),  # nor does mag-/nag-
        ("binalikin", ("b|in|alikin", "balikin")),  # nor -in-: the done form drops the suffix
        ("pagbalikin", ("pag|balik|in", "balik")),  # so does pag- with it (pagbutihin)
        ("mabalikin", ("ma|balik|in", "balik")),  # and the adjective's ma- (masunurin)
    ],
)
def test_no_in_with_the_done_forms_prefixes(word, expected):
    pack = FilipinoPack(roots={"sabit", "sabitin", "balik", "balikin"})
    assert cut(pack, word) == expected


@pytest.mark.parametrize(("word", "root"), [("isulatin", "sulat"), ("ipabasahin", "basa")])
def test_no_i_prefix_takes_in(word, root):
    # i-, ipa-, ipag-, ika-, ... never stand with -in: with no other reading the misfit still reads (last resort)
    pack = FilipinoPack(roots={"sulat", "basa", "pagal", "alin"})
    assert cut(pack, "ipagalin") == ("ipag|alin", "alin")  # not i|pagal|in, though pagal is the longer root
    assert cut(pack, word)[1] == root


def test_no_i_prefix_takes_in_on_the_shipped_lists():
    assert cut(FIL, "ipangilin") == ("ipa|ngilin", "ngilin")
    assert cut(FIL, "isipin") == ("isip|in", "isip")  # the root's own i
