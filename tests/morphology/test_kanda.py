"""kanda- (in a fluster, one thing after another: nag|kanda|hulog, nag|kanda|gulo), a prefix of its own, alone and after
mag-/nag-, whose ka the imperfective copies (nag|ka|kanda|hulog; not nagka-'s). Issue #40, twenty-first session; no
lemma here is the root of a held-out gold set."""

from __future__ import annotations

import pytest

from morphcpt.morphology import FilipinoPack
from morphology_helpers import FIL, cut


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("kandahulog", ("kanda|hulog", "hulog")),
        ("nagkandahulog", ("nag|kanda|hulog", "hulog")),
        ("magkandagulo", ("mag|kanda|gulo", "gulo")),
        ("nagkakandahulog", ("nag|ka|kanda|hulog", "hulog")),  # the imperfective copies kanda-'s ka
        ("magkakandatumba", ("mag|ka|kanda|tumba", "tumba")),
        ("magkandado", ("mag|kandado", "kandado")),  # a root that starts with kanda stays whole (padlock)
    ],
)
def test_kanda_alone_and_after_mag_and_nag(word, expected):
    pack = FilipinoPack(roots={"hulog", "gulo", "tumba", "kandado"})
    assert cut(pack, word) == expected


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("nagkandahulog", ("nag|kanda|hulog", "hulog")),
        ("nagkakandagulo", ("nag|ka|kanda|gulo", "gulo")),
        ("magkandado", ("mag|kandado", "kandado")),
        ("nagkandabulgot", ("nag|kanda|bulgot", "bulgot")),  # a root no list holds (`unlisted`)
        ("nagkakandabulgot", ("nag|ka|kanda|bulgot", "bulgot")),
    ],
)
def test_kanda_with_the_shipped_lists(word, expected):
    assert cut(FIL, word) == expected
