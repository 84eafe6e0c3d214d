"""Which task types make up each PACUTE subset and each hierarchical level (REFERENCE.md, PACUTE section).

Stress (PACUTE's `stress` subset in the official release) is not generated: stress cannot be read off plain
Tagalog spelling, the shipped lexicon has no stress marks (tglstemmer's and tesseract's lists carry none,
wordfreq has about ten stress-marked Tagalog words), and no stress-marked Tagalog lexicon with a licence that
allows redistribution was found on PyPI or in Debian (see `SKIPPED`). The official stress files are read and
scored like any other subset (`evaluate.items`).
"""

from __future__ import annotations

PACUTE_SUBSETS: dict[str, tuple[str, ...]] = {
    "affixation": (
        "prefix_identification",
        "infix_identification",
        "suffix_identification",
        "circumfix_identification",
        "prefix_inflection",
        "infix_inflection",
        "suffix_inflection",
        "circumfix_inflection",
    ),
    "composition": ("spelling", "letter_count", "length", "diacritic_count", "uppercase_count"),
    "manipulation": (
        "insert",
        "delete",
        "substitute",
        "permute",
        "duplicate",
        "case",
        "diacritic_normalisation",
    ),
    "syllabification": ("syllable_count", "syllable_split", "cv_reduplication"),
}
PACUTE_SIZES = {"affixation": 140, "composition": 900, "manipulation": 800, "syllabification": 400}

HIERARCHICAL_LEVELS: dict[int, tuple[str, tuple[str, ...]]] = {
    0: ("character_recognition", ("nth_letter", "letter_position", "letter_count")),
    1: ("character_manipulation", ("insert", "delete", "substitute", "permute")),
    2: ("morpheme_decomposition", ("prefix_identification", "root_extraction")),
    3: ("affix_removal", ("prefix_removal", "infix_removal", "suffix_removal")),
    4: ("affix_application", ("prefix_inflection", "infix_inflection", "suffix_inflection")),
    5: ("multi_step", ("multi_step",)),
}
HIERARCHICAL_SIZE = 300

SKIPPED = {
    "pacute/stress": "not generated: Tagalog spelling does not show stress and no stress-marked Tagalog lexicon "
    "that may be redistributed was found (searched 2026-11-23, PyPI and Debian: wordfreq, tglstemmer, "
    "tesseract-ocr-fil, aspell-tl, myspell-tl, itagalog carry no stress marks; espeak-ng-data has no Tagalog "
    "dictionary; epitran maps letters to sounds without stress; wikipron and lexikos ship no Tagalog data). "
    "Evaluate the official stress files instead (--benchmarks pacute-stress).",
}


def quotas(total: int, tasks: tuple[str, ...]) -> dict[str, int]:
    """Split `total` items as evenly as possible over `tasks` (the first ones take the remainder)."""
    base, extra = divmod(total, len(tasks))
    return {t: base + (i < extra) for i, t in enumerate(tasks)}
