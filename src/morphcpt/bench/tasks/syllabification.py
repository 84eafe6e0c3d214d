"""Syllabification tasks: count and split a word's syllables, and reduplicate its first CV syllable.
Registered in `TASKS` of this module; `morphcpt.bench.tasks.TASKS` gathers every family.
"""

from __future__ import annotations

from morphcpt.bench.tasks.base import (
    Task,
    number_distractors,
    pick_distractors,
    q,
)
from morphcpt.morphology import reduplicate, syllabify
from morphcpt.morphology.syllabify import ONSET_CLUSTERS, VOWELS


def clear_syllables(word: str) -> bool:
    """Native-looking words only: no cluster whose split rules differ between sources (kut-sa-ra / ku-tsa-ra)."""
    syl = syllabify(word)
    for a, b in zip(syl, syl[1:], strict=False):
        if a[-1] not in VOWELS and (a[-1] + b[0]) in ONSET_CLUSTERS:
            return False
    return all(s[0] in VOWELS or len(s) < 2 or s[1] in VOWELS or s.startswith("ng") for s in syl)


def make_syllable_count(rng, lex):
    w = rng.choice(lex.words)
    if not clear_syllables(w):
        return None
    n = len(syllabify(w))
    return q(
        "syllable_count",
        w,
        f"How many syllables does the word '{w}' have?",
        f"Ilang pantig mayroon ang salitang '{w}'?",
        str(n),
        number_distractors(rng, n, low=1),
    )


def _shifted_splits(word: str) -> list[str]:
    """Hyphenations with one syllable boundary moved by one letter."""
    syl = syllabify(word)
    cuts = [sum(len(s) for s in syl[:k]) for k in range(1, len(syl))]
    out = []
    for k, c in enumerate(cuts):
        for d in (-1, 1):
            moved = sorted({*cuts[:k], c + d, *cuts[k + 1 :]})
            if all(0 < m < len(word) for m in moved) and len(moved) == len(cuts):
                bounds = [0, *moved, len(word)]
                out.append("-".join(word[a:b] for a, b in zip(bounds, bounds[1:], strict=False)))
    return out


def make_syllable_split(rng, lex):
    w = rng.choice(lex.words)
    if not clear_syllables(w) or len(syllabify(w)) < 2:
        return None
    answer = "-".join(syllabify(w))
    wrong = _shifted_splits(w) + ["-".join(w[i : i + 2] for i in range(0, len(w), 2))]
    return q(
        "syllable_split",
        w,
        f"Divide the word '{w}' into syllables, separated by hyphens.",
        f"Hatiin sa mga pantig ang salitang '{w}', na pinaghihiwalay ng gitling ang mga pantig.",
        answer,
        pick_distractors(rng, answer, wrong),
    )


def make_cv_reduplication(rng, lex):
    items = lex.affixed.get("PR", []) + lex.affixed.get("IR", []) + lex.affixed.get("R", [])
    if not items:
        return None
    root = rng.choice(items).root
    answer = reduplicate(root)
    first = syllabify(root)[0]
    vowel = next(c for c in root if c in VOWELS)
    wrong = [
        first + root,
        root + syllabify(root)[-1],
        answer[:-1],
        root[0] + root,
        vowel + root,
        answer + root[-1],
    ]
    return q(
        "cv_reduplication",
        root,
        f"Reduplicate the first consonant and vowel of the root '{root}' (CV reduplication, as in the future form).",
        f"Ulitin ang unang katinig at patinig ng salitang-ugat na '{root}' (pag-uulit na KP, gaya ng sa aspektong "
        f"kontemplatibo).",
        answer,
        pick_distractors(rng, answer, wrong),
    )


TASKS: dict[str, Task] = {
    "syllable_count": Task(make_syllable_count, lambda w, p: str(len(syllabify(w)))),
    "syllable_split": Task(make_syllable_split, lambda w, p: "-".join(syllabify(w))),
    "cv_reduplication": Task(make_cv_reduplication, lambda w, p: reduplicate(w)),
}
