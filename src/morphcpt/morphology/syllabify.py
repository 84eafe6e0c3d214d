"""Tagalog syllabification (pagpapantig) following the Komisyon sa Wikang Filipino's orthography rules.

Used by the benchmark generators (syllable counts, CV-reduplication) and by the Filipino language pack.
`syllabify("sanggol") == ["sang", "gol"]`; run `python -m morphcpt.morphology.syllabify WORD ...` to try it.

Rules implemented (syllable shapes V, CV, VC, CVC and loanword clusters):
- "ng" is one consonant (nga-yon, pa-nga-lan); "ngg" is ng + g (sang-gol, mang-ga).
- Adjacent vowels belong to different syllables (a-a-lis, bu-o); w and y are consonants (ba-hay, a-raw).
- Between vowels one consonant starts the next syllable (ma-ta); of two, the first closes the previous one
  (sul-at is wrong, su-lat right; kut-sa-ra); of three or more, the last two start the next syllable when they
  form an onset cluster (kon-tra, ang-kla), otherwise only the last does (eks-per-to).
- Consonants before the first vowel and after the last one stay with it (tren, pla-to, nars).
Hyphens split the word into parts that are syllabified separately and are dropped from the output.
"""

from __future__ import annotations

import re
import sys
import unicodedata

VOWELS = frozenset("aeiou")
_VOWEL = re.compile("[aeiou]")
_VOWEL_RUN = re.compile("[aeiou]+")
# Onset clusters found in Spanish and English loans (KWF's "klaster").
ONSET_CLUSTERS = frozenset((
    "bl", "br", "dr", "dy", "fl", "fr", "gl", "gr", "kl", "kr", "kw", "ky", "pl",
    "pr", "py", "sy", "tr", "ts", "ty", "bw", "dw", "gw", "pw", "sw", "tw",
))  # fmt: skip


def base_letter(ch: str) -> str:
    """Lowercase letter with its diacritic removed ("Á" -> "a", "ñ" -> "n"); one character in, one out."""
    low = ch.lower()
    if len(low) != 1:
        return ch
    return unicodedata.normalize("NFD", low)[0]


def fold_letters(text: str) -> str:
    """`base_letter` of every character, so offsets stay valid. ASCII text, nearly every word, only needs
    lowercasing, which is much faster than going through `unicodedata` character by character."""
    if text.isascii():
        return text.lower()
    return "".join(base_letter(c) for c in text)


def _units(part: str) -> list[tuple[int, int, bool]]:
    """Split into (start, end, is_vowel) sound units, reading "ng" as one consonant."""
    folded = fold_letters(part)
    units = []
    i = 0
    while i < len(folded):
        c = folded[i]
        if c in VOWELS:
            units.append((i, i + 1, True))
            i += 1
        elif c == "n" and folded[i + 1 : i + 2] == "g":
            units.append((i, i + 2, False))
            i += 2
        else:
            units.append((i, i + 1, False))
            i += 1
    return units


def _cluster(part: str, consonants: list[tuple[int, int, bool]]) -> bool:
    if len(consonants) != 2 or any(e - s != 1 for s, e, _ in consonants):
        return False
    return "".join(base_letter(part[s]) for s, _, _ in consonants) in ONSET_CLUSTERS


def _syllabify_part(part: str) -> list[str]:
    units = _units(part)
    vowel_at = [k for k, u in enumerate(units) if u[2]]
    if not vowel_at:
        return [part] if part else []
    cuts = []  # unit indices at which a new syllable starts
    for left, right in zip(vowel_at, vowel_at[1:], strict=False):
        between = units[left + 1 : right]
        n = len(between)
        if n <= 1:
            cuts.append(left + 1)
        elif n == 2:
            cuts.append(left + 2)
        elif _cluster(part, between[-2:]):
            cuts.append(right - 2)
        else:
            cuts.append(right - 1)
    bounds = [0] + [units[k][0] for k in cuts] + [len(part)]
    return [part[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def syllabify(word: str) -> list[str]:
    """Syllables of `word` in order, original characters kept; "".join(result) == word without hyphens."""
    out: list[str] = []
    for part in word.split("-"):
        out.extend(_syllabify_part(part))
    return out


def count_syllables(word: str) -> int:
    return len(syllabify(word))


def vowel_groups(folded: str) -> int:
    """How many runs of vowels the folded word holds: a quick syllable count that reads a vowel pair as one
    (aregla 3, biyahe 3, tainga 2), for the analyser's checks of a root's length."""
    return len(_VOWEL_RUN.findall(folded))


def first_syllable_cv(word: str) -> str:
    """The part of the first syllable that Tagalog CV-reduplication copies: onset consonant + vowel, or the vowel.

    For a cluster onset only its first consonant is copied (trabaho -> ta-trabaho, as in common usage).
    """
    return _copied_syllable(word, fold_letters(word))


def folded_first_syllable_cv(folded: str) -> str:
    """`first_syllable_cv` of a word already folded (`fold_letters`), for the analyser, which asks it of every
    candidate root."""
    return _copied_syllable(folded, folded)


def _copied_syllable(word: str, folded: str) -> str:
    # The analyser asks this for every candidate root, so it looks only as far as the first vowel instead of
    # splitting the whole word into units: a vowel is always a unit of its own, and the onset is the first
    # unit ("ng" or one letter). The letters are read in `folded`, the characters returned from `word`.
    vowel = _VOWEL.search(folded)
    if vowel is None:
        return ""
    i = vowel.start()
    if i == 0:
        return word[0]
    return word[: 2 if folded.startswith("ng") else 1] + word[i]


def main(argv: list[str]) -> None:
    for word in argv:
        print(word, "->", "-".join(syllabify(word)))


if __name__ == "__main__":
    main(sys.argv[1:])
