"""One candidate reading of a folded word, as the reading search (`stems.StemReadings`) builds it and
`ranking.ReadingRanks` scores it, with the marks of the alternations it undid.
"""

from __future__ import annotations

from typing import NamedTuple

from morphcpt.morphology.affixes import WEAK_PREFIXES

# `_Reading.restored` of a root whose lost vowel was put back (1: a swallowed consonant, d <- r)
SYNCOPATED = 2
# `_Reading.restored` of a root whose d an n-final nasal prefix swallowed (man|ukot <- dukot): the rarest
# substitution, read only where the word lists show the substituted stem in two forms (`_d_substitution_attested`)
D_SUBSTITUTED = 3
# `_Reading.restored` of a root whose final e was raised to i before -han/-hin (ataki|hin <- atake): read only where
# no reading of the spelling as written fits as well (`ranking.ReadingRanks._score`: kabutihan stays ka|buti|han)
E_RAISED = 4


class _Reading(NamedTuple):
    """One candidate reading of a folded word: spans (start, end, kind) and the linguistic labels (a named tuple:
    the analyser builds several per word, and a tuple builds in a third of a frozen dataclass's time)."""

    spans: tuple[tuple[int, int, str], ...]
    root: str
    prefixes: tuple[str, ...] = ()
    infix: str = ""
    suffix: str = ""
    reduplicant: str = ""
    linker: str = ""
    # 0, 1 (a swallowed consonant or d <- r put back), SYNCOPATED, D_SUBSTITUTED or E_RAISED
    restored: int = 0
    # a root no list holds, guessed by the affixes alone (`unlisted.unlisted_root_reading`): a capital keeps the word
    # whole (`filipino.FilipinoPack._cased`)
    guessed: bool = False

    @property
    def affixed(self) -> bool:
        """Whether the reading has an affix besides the linker: a prefix, an infix, a suffix or a CV copy."""
        return bool(self.prefixes or self.infix or self.suffix or self.reduplicant)

    @property
    def strongly_affixed(self) -> bool:
        """Whether the reading marks its word as affixed on its own: -um-/-in-, a CV copy or a first prefix not in
        `affixes.WEAK_PREFIXES` (k|in|alikot, nag|ha|hagis; not pa|tibong, ka|dena)."""
        return bool(
            self.infix or self.reduplicant or (self.prefixes and self.prefixes[0] not in WEAK_PREFIXES)
        )

    def d_as_r_after_i(self, word: str) -> bool:
        """Whether the reading (of `word`, folded) puts the conveyance i- right before a d-root spelled with r
        (i|rita <- dita, i-|rate <- date). d turns r after ma-, pa-, ka- and a copy (marami, karapatan, darating),
        never after i- alone: idagdag, idaan, idamay; irita is a word of its own (nakakairita, nairita)."""
        if self.prefixes[-1:] != ("i",) or not self.root.startswith("d"):
            return False
        i = next(i for i, (_, _, kind) in enumerate(self.spans) if kind == "root")
        if i == 0:
            return False
        (before, _, kind), start = self.spans[i - 1], self.spans[i][0]
        return kind == "prefix" and word[before:start] in ("i", "i-") and word[start] == "r"
