"""Morphology language packs: affix inventories, word analysis and affix application.

`get_language_pack("fil").analyze("kumain")` -> [Morph("k", "root"), Morph("um", "infix"), Morph("ain", "root")].
Patok uses `spans`, the alignment measure `boundaries`; the benchmark generators use `parse`, `apply_affix` and
`syllabify`.
"""

from __future__ import annotations

from morphcpt.morphology.affixation import AffixSpec, apply_affix, reduplicate
from morphcpt.morphology.base import Analysis, LanguagePack, Morph
from morphcpt.morphology.filipino import FILIPINO, FilipinoPack
from morphcpt.morphology.syllabify import count_syllables, syllabify

LANGUAGE_PACKS: dict[str, LanguagePack] = {"fil": FILIPINO, "tl": FILIPINO}


def get_language_pack(code: str) -> LanguagePack:
    try:
        return LANGUAGE_PACKS[code]
    except KeyError:
        raise ValueError(f"no language pack for {code!r}; known: {sorted(LANGUAGE_PACKS)}") from None


__all__ = [
    "LANGUAGE_PACKS",
    "AffixSpec",
    "Analysis",
    "FilipinoPack",
    "LanguagePack",
    "Morph",
    "apply_affix",
    "count_syllables",
    "get_language_pack",
    "reduplicate",
    "syllabify",
]
