"""What the analyser's pattern tests share (tests/morphology/test_affix_classes.py, test_loans.py): the shipped
Filipino pack and a word's cut and root as one comparable pair."""

from __future__ import annotations

from morphcpt.morphology import FilipinoPack, get_language_pack

FIL = get_language_pack("fil")


def cut(pack: FilipinoPack, word: str) -> tuple[str, str]:
    """`word`'s morphs joined by "|" and its root, as `pack` reads it."""
    analysis = pack.parse(word)
    return "|".join(m.text for m in analysis.morphs), analysis.root
