"""Readings after a nasal prefix (mang-, nang-, pang- and their assimilated forms): the root with its first consonant
swallowed (mam|ili <- bili, man|ukot <- dukot) or kept, after a CV copy (nang|ya|yari), and a copy of the nasal
that replaced it (na|mi|mili <- bili). A mixin of `stems.StemReadings`, which supplies `_lemma` (the root lookup).
"""

from __future__ import annotations

from morphcpt.morphology.affixes import (
    CORONAL,
    DELETED_BY_ENDING,
    DELETING,
    LABIAL,
    SUBSTITUTED,
    is_vowel,
)
from morphcpt.morphology.reading import D_SUBSTITUTED, _Reading
from morphcpt.morphology.root_evidence import RootEvidence
from morphcpt.morphology.syllabify import VOWELS, folded_first_syllable_cv


class NasalReadings(RootEvidence):
    """The nasal prefixes' part of the reading search."""

    def _lemma(self, surface: str, suffixed: str, restore: tuple[str, ...] = ("",)) -> tuple[str, int] | None:
        raise NotImplementedError  # `stems.StemReadings._lemma`

    def _nasal_root(
        self, p: str, rest: str, pos: int, suffixed: str, hyphenated: bool = False
    ) -> list[_Reading]:
        """The root after a nasal prefix, its first consonant possibly swallowed (mam|ili), possibly after a CV
        reduplicant (nang|ya|yari); after a hyphen none is (pang-|ahit is shaving's, not kahit's)."""
        out: list[_Reading] = []
        ending = "ng" if p.endswith("ng") else p[-1]
        restore = ("",) + (DELETED_BY_ENDING[ending] if p in DELETING and not hyphenated else ())
        if ending == "n" and p in DELETING and not hyphenated and self._d_substitution_attested(rest):
            restore += ("d",)  # man|ukot <- dukot, only where the lists show the stem so twice
        # the copy keeps d where the base turned it r (man|da|ragat <- dagat)
        bases = [("", rest)] + [
            (rest[:k], rest[k:])
            for k in (1, 2)
            if len(rest) > k + 2
            and rest[k - 1] in VOWELS
            and folded_first_syllable_cv(rest[k:]) in (rest[:k], "r" + rest[1:k] if rest[0] == "d" else "")
        ]
        for red, base in bases:
            swallowed = False  # a t or s found: d is read only where neither is (man|alo <- talo, not dalo)
            for c in restore:
                if c == "d" and swallowed:
                    continue
                found = self._lemma(base, suffixed, (c,))
                if found is None:
                    continue
                swallowed = swallowed or c in ("t", "s")
                lemma = found[0]
                initial = lemma[0]
                agrees = (
                    (ending == "m" and initial in LABIAL)
                    or (ending == "n" and initial in CORONAL)
                    or (ending == "ng" and initial not in LABIAL | CORONAL)
                )
                # ng left unassimilated before a consonant (nang|loob, mang|lait, kasing|bilis): read, but marked,
                # so that the assimilated form's reading wins where both exist
                plain = not agrees and ending == "ng" and not c and not is_vowel(initial)
                if agrees or plain:
                    spans = (((pos, pos + len(red), "reduplicant"),) if red else ()) + (
                        (pos + len(red), pos + len(rest), "root"),
                    )
                    restored = D_SUBSTITUTED if c == "d" else bool(c) or found[1] or plain
                    out.append(_Reading(spans, lemma, reduplicant=red, restored=restored))
        return out

    def _substituted(self, rest: str, pos: int, suffixed: str) -> list[_Reading]:
        """CV reduplicant + a base whose first consonant is the prefix's nasal in place of the root's:
        (na)|mi|mili <- bili, (pa)|nga|ngailangan <- kailangan."""
        out: list[_Reading] = []
        nasal = "ng" if rest.startswith("ng") else rest[:1]
        if nasal not in SUBSTITUTED:
            return out
        red = rest[: len(nasal) + 1]
        base = rest[len(red) :]
        if len(red) <= len(nasal) or not is_vowel(red[-1]) or len(base) < 4:
            return out
        # the copy is the base's first syllable (na|mi|mili), or the prefix's nasal and a (na|ma|malengke)
        if not (
            base.startswith(red) or (red[-1] == "a" and base.startswith(nasal) and is_vowel(base[len(nasal)]))
        ):
            return out
        # ng also stands before a vowel-initial root (na|nga|ngaral <- aral, ma|ngi|ngisda <- isda)
        for c in SUBSTITUTED[nasal] + (("",) if nasal == "ng" else ()):
            found = self._lemma(base[len(nasal) :], suffixed, (c,))
            if found is not None:
                spans = ((pos, pos + len(red), "reduplicant"), (pos + len(red), pos + len(rest), "root"))
                out.append(_Reading(spans, found[0], reduplicant=red))
        return out
