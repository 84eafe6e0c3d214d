"""pang- before the causative pa- (issue #40's twelfth session): pam|pa|lakas, the noun of a thing that makes
something so. The words are chosen here; the tuning words that showed the pattern are in no gold set."""

from __future__ import annotations

import pytest

from morphcpt.morphology import FilipinoPack
from morphology_helpers import FIL, cut


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("pampalakas", ("pam|pa|lakas", "lakas")),
        ("pampatulog", ("pam|pa|tulog", "tulog")),
        ("pampaalis", ("pam|pa|alis", "alis")),  # a vowel-initial root
        ("pampaaralan", ("pam|pa|aral|an", "aral")),  # with the suffix of pa|aral|an
        ("ipampaligo", ("ipam|pa|ligo", "ligo")),  # ipang- too
    ],
)
def test_pang_before_the_causative_pa(word, expected):
    pack = FilipinoPack(roots={"lakas", "tulog", "alis", "aral", "ligo"})
    assert cut(pack, word) == expected


def test_pang_before_a_root_that_starts_with_pa_keeps_it():
    pack = FilipinoPack(roots={"palit", "pasahero", "lit"})
    assert cut(pack, "pampalit") == ("pam|palit", "palit")
    assert cut(pack, "pampasahero") == ("pam|pasahero", "pasahero")


def test_only_pa_and_a_root_follow():
    # a third prefix or an infix after pam|pa is no such noun: pampamahalaan is pang- before pamahalaan
    pack = FilipinoPack(roots={"hala", "saya", "pamahalaan", "pasinaya"})
    assert cut(pack, "pampamahalaan") == ("pam|pamahalaan", "pamahalaan")
    assert cut(pack, "pampasinaya") == ("pam|pasinaya", "pasinaya")


def test_pang_before_pa_on_the_shipped_lists():
    assert cut(FIL, "pampakalma") == ("pam|pa|kalma", "kalma")
    assert cut(FIL, "pampaganda") == ("pam|pa|ganda", "ganda")  # no longer pam|paganda
    assert cut(FIL, "pampasahero") == ("pam|pasahero", "pasahero")
