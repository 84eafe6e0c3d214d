"""What the word lists tell the reading search about a candidate root, for the alternations that need evidence.

A vowel-final root that lost its last vowel before -han/-hin (sab|hin <- sabi) and a d that an n-final nasal
prefix swallowed (man|ukot <- dukot) look like many words that are neither, so `stems.StemReadings` reads them
only where the lists show the root behind them: its verb forms, or the substituted stem in a paradigm. The pack
supplies `_zipf` (word frequencies), `_trusted` (the curated roots) and `_known` (every word of the lists).
"""

from __future__ import annotations

from morphcpt.morphology.affixation import raise_final_o
from morphcpt.morphology.affixes import INFIXES, is_vowel

# the consonants a vowel-final root may end on once it lost its last vowel before -han/-hin (sab|hin <- sabi,
# s|in|al|han <- sali, dal|hin <- dala): not t, s, p or n (nathan, roshan, within stay whole)
SYNCOPE_H_CODAS = ("b", "d", "g", "k", "l", "m", "r", "ng")


def _syncope_h_stem(stem: str) -> bool:
    """Whether `stem` can end as a two-syllable vowel-final root that lost its last vowel before -han/-hin: a vowel,
    then one of `SYNCOPE_H_CODAS` (sab, sal; a prefix may stand before it, `_lost_final_vowel` decides the rest)."""
    coda = 2 if stem.endswith("ng") else 1
    return len(stem) > coda and stem.endswith(SYNCOPE_H_CODAS) and is_vowel(stem[-coda - 1])


def infixed_forms(root: str) -> list[str]:
    """`root` with -um- and with -in-: after its first consonant (pumatay, pinatay), before a first vowel (umalis,
    inalis)."""
    if is_vowel(root[:1]):
        return [infix + root for infix in INFIXES]
    return [root[:1] + infix + root[1:] for infix in INFIXES]


class RootEvidence:
    """The evidence checks `stems.StemReadings` mixes in."""

    _zipf: dict[str, float]
    _trusted: frozenset[str]
    _known: frozenset[str]

    def _frequency(self, word: str) -> float:
        """A sort key: the more frequent word first."""
        return -self._zipf.get(word, 0.0)

    def _lost_final_vowel(self, stem: str, suffixed: str) -> list[str]:
        """The two-syllable vowel-final roots `stem` may be before -han/-hin once it lost its last vowel (sab|hin <-
        sabi, pag|sal|han <- sali), the likelier first (more verb forms in the lists, then a curated root, then the
        more frequent): only roots a frequency list (Zipf >= 3) or the curated list knows, and never a stem that
        repeats its suffix (mahinhin is ma|hinhin, not hina's)."""
        if not _syncope_h_stem(stem) or stem == suffixed or sum(map(stem.count, "aeiou")) != 1:
            return []  # (one vowel: pa|dal|han <- dala, not padal|han <- the noun padala)
        found = [
            stem + v
            for v in "ai"  # an o-final root raises its o instead (tuksu|hin <- tukso); -e ends loans (take)
            if self._zipf.get(stem + v, 0.0) >= 3 or stem + v in self._trusted
        ]
        return sorted(
            found,
            key=lambda root: (-self._verb_forms(root), root not in self._trusted, self._frequency(root)),
        )

    def _verb_forms(self, root: str) -> int:
        """How many of a verb's plainest forms of `root` the word lists hold (mag-, nag-, ma-, na-, i-, pag-, -um-,
        -in-): the root a shortened stem belongs to is a verb's (sab|hin <- sabi: nagsabi, sinabi; not saba)."""
        forms = {p + root for p in ("mag", "nag", "ma", "na", "i", "pag")}
        if not is_vowel(root[0]):
            forms |= set(infixed_forms(root))
        return len(forms & self._known)

    def _shown_as_verb(self, root: str) -> bool:
        """Whether the frequency list holds a -um-, -in-, mag- or nag- form of `root` (pumatay, pinatay; umalis;
        nagsumbong): the lists use it as a verb. Of two roots a nasal may have swallowed at one cut, the verb's is the
        likelier (mam|atay <- patay, not batay, a word of "based on"; man|ita <- sita, not tita; man|umbong <-
        sumbong, not tumbong); of two cuts that tie, too (`ranking.ReadingRanks._score`)."""
        forms = infixed_forms(root) + [prefix + root for prefix in ("mag", "nag")]
        return any(self._zipf.get(form, 0.0) > 0 for form in forms)

    def _shown_past_linker(self, root: str) -> bool:
        """Whether the frequency list shows `root`, which ends in -ng after a vowel, as a verb by a form no linker
        reading explains: a -um-, -in-, mag-, nag- or i- form whose spelling less the -ng is no listed word (igalang,
        as igala is none), or -an/-in after the root, its last o raised (tulungan shows tulong; pinili|ng and
        napili|ng show no piling)."""
        forms = infixed_forms(root) + [prefix + root for prefix in ("mag", "nag", "i")]
        if any(self._zipf.get(form, 0.0) > 0 and form[:-2] not in self._known for form in forms):
            return True
        stem = raise_final_o(root)
        return any(self._zipf.get(stem + suffix, 0.0) > 0 for suffix in ("an", "in"))

    def _d_substitution_attested(self, rest: str) -> bool:
        """Whether the word lists show the stem `rest` (what follows an n-final nasal prefix that swallowed a d:
        ukot <- dukot) in two nasal forms at least (manukot, nanunukot: man-, nan-, pan-, and ma-/na-/pa- with a
        copy): d -> n is rare, and most words that look like it are no such form (manila, panata, manang): one of the
        two forms must be a copy's (nanunukot), which a borrowing's look-alikes lack. True with no lists."""
        known = self._known
        if not known:
            return True
        plain = sum(pre + rest in known for pre in ("man", "nan", "pan"))
        copied = sum(pre + "n" + rest[:1] + "n" + rest in known for pre in ("ma", "na", "pa"))  # na|nu|nukot
        return copied >= 1 and plain + copied >= 2
