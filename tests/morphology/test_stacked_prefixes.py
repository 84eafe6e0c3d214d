"""Stacked prefixes (issue #40, twelfth session): pang- before the causative pa- (pam|pa|lakas, the noun of a thing
that makes something so), maka- + pag- cut in two as data/gold cuts maka|pag-|import, with or without a hyphen, and
no swallowed consonant after a hyphenated nasal prefix.
The words are chosen here; the tuning words that showed the patterns are in no gold set."""

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


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("makapagluto", ("maka|pag|luto", "luto")),  # maka- + pag-, as data/gold's maka|pag-|import
        ("nakapagluto", ("naka|pag|luto", "luto")),
        ("nakakapagluto", ("naka|ka|pag|luto", "luto")),  # as before
        ("makapag-aral", ("maka|pag-|aral", "aral")),
    ],
)
def test_maka_and_pag_are_two_prefixes(word, expected):
    assert cut(FilipinoPack(roots={"luto", "aral"}), word) == expected


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("makapag-install", ("maka|pag-|install", "install")),
        (
            "makipag-chat",
            ("maki|pag-|chat", "chat"),
        ),  # the hyphenated loan cuts its prefixes as a Tagalog root does
        ("nakikipag-chat", ("naki|ki|pag-|chat", "chat")),
        ("nakaka-stress", ("naka|ka-|stress", "stress")),  # naka|ka|tawa's copy, the hyphen after it
    ],
)
def test_a_hyphenated_loan_cuts_a_stacked_prefix_into_its_parts(word, expected):
    assert cut(FIL, word) == expected


def test_a_hyphen_after_a_nasal_prefix_swallowed_no_consonant():
    pack = FilipinoPack(roots={"ahit", "kahit"})
    assert cut(pack, "pang-ahit") == ("pang-|ahit", "ahit")  # shaving's, not kahit's
    assert cut(pack, "pangahit") == ("pang|ahit", "ahit")  # the plain root first without it too
    assert cut(FIL, "ipang-ahit") == ("ipang-|ahit", "ahit")
