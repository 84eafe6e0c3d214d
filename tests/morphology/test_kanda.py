"""kanda- (in a fluster, one thing after another: kanda|rapa, nag|kanda|rapa <- dapa, nag|kanda|hulog), a prefix of
its own after mag-/nag-, whose ka the imperfective copies (nag|ka|kanda|hulog; not nagka-'s). Issue #40, twenty-first
session; the lemmas here are none of data/gold_heldout/paradigms_heldout11.tsv's."""

from __future__ import annotations

import pytest

from morphcpt.morphology import FilipinoPack
from morphology_helpers import FIL, cut


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("kandarapa", ("kanda|rapa", "dapa")),  # d -> r after the prefix's vowel
        ("nagkandarapa", ("nag|kanda|rapa", "dapa")),
        ("magkandahulog", ("mag|kanda|hulog", "hulog")),
        ("nagkakandahulog", ("nag|ka|kanda|hulog", "hulog")),  # the imperfective copies kanda-'s ka
        ("magkakandasira", ("mag|ka|kanda|sira", "sira")),
        ("magkandado", ("mag|kandado", "kandado")),  # a root that starts with kanda stays whole (padlock)
    ],
)
def test_kanda_after_mag_and_nag(word, expected):
    pack = FilipinoPack(roots={"dapa", "hulog", "sira", "kandado"})
    assert cut(pack, word) == expected


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        (
            "nagkandarapa",
            ("nag|kanda|rapa", "dapa"),
        ),  # the lists hold the headword kandarapa: read through it
        ("nagkakandarapa", ("nag|ka|kanda|rapa", "dapa")),
        ("magkandado", ("mag|kandado", "kandado")),
        ("nagkandabulgot", ("nag|kanda|bulgot", "bulgot")),  # a root no list holds (`unlisted`)
        ("nagkakandabulgot", ("nag|ka|kanda|bulgot", "bulgot")),
    ],
)
def test_kanda_with_the_shipped_lists(word, expected):
    assert cut(FIL, word) == expected
