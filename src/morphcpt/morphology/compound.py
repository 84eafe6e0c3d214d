"""Compounds of two words joined by a hyphen, with affixes on the first, for a word the analyser's search leaves
with no reading (`filipino.FilipinoPack._best_reading` tries it after full reduplication and the hyphenated
loans): ipag|bigay-alam, nag|bi|bigay-daan, pag|ma|may-ari, wala|ng-|hiya, ma|bigy|an|g-|label. The compound is
one root (bigay-alam) where the affixes stand before it; after a suffix or the linker the part after the hyphen is
a root morph of its own, the hyphen going with the morph before it (data/gold/README.md). A compound with no
affixes stays whole (kapit-bahay, balik-aral), as does a full reduplication (`full_copy`'s).
"""

from __future__ import annotations

from morphcpt.morphology.affixation import lower_final_u
from morphcpt.morphology.affixes import LINKER, is_vowel
from morphcpt.morphology.fallback import Pack, negated_reading
from morphcpt.morphology.full_copy import _before_copy, _part_spans, full_copy_reading
from morphcpt.morphology.loans import hyphenated_reading
from morphcpt.morphology.reading import _Reading


def hyphen_reading(pack: Pack, f: str) -> _Reading | None:
    """The first of the readings for a folded word with a hyphen that the search leaves whole: di- (`negated_reading`),
    full reduplication (`full_copy`), affixes written before a hyphen on a loan (`loans.hyphenated_reading`), then a
    compound (`compound_reading`)."""
    return (
        negated_reading(pack, f)
        or full_copy_reading(pack, f)
        or hyphenated_reading(f)
        or compound_reading(pack, f)
    )


def compound_reading(pack: Pack, f: str) -> _Reading | None:
    """The folded word `f`, one hyphen between two words, the second a word the lists hold or a root of three
    letters or more (not tin-is, tam-is: a glottal stop written so): affixes before a compound the lists hold
    (`_listed_compound`: pag|ma|may-ari), else the first word read with affixes on a root of the lexicon or
    the lists, not a guessed one, nor one whose first three letters start the second word too (a full
    reduplication). The reading's root is the listed compound, else the two roots joined by the hyphen
    (bigay-alam, wala-hiya)."""
    head, dash, tail = f.partition("-")
    if not dash or len(head) < 4 or len(tail) < 3 or not head.isalpha() or not tail.isalpha():
        return None
    if tail not in pack._known and tail not in pack.roots:
        return None
    listed = _listed_compound(pack, f, head, tail)
    if listed is not None:
        return listed
    r = pack._best(head)
    if r.guessed or not (r.affixed or r.linker) or r.root[:3] == tail[:3]:
        return None  # (u|ulit-ulitin, ha|hanap-hanapin: a full reduplication, `full_copy`'s or none)
    if r.root not in pack.roots and r.root not in pack._known:
        return None
    (start, end, kind), before = r.spans[-1], r.spans[:-1]
    if kind == "root":  # ipag|bigay-alam: the affixes before the compound
        spans = (*before, (start, len(f), "root"))
    else:  # wala|ng-|hiya: a suffix or the linker ends the first word
        spans = (*before, (start, end + 1, kind), (end + 1, len(f), "root"))
    return r._replace(spans=spans, root=f"{r.root}-{tail}")


def _listed_compound(pack: Pack, f: str, head: str, tail: str) -> _Reading | None:
    """Prefixes, a copy of the compound's first syllable or both (`full_copy._before_copy`) before the
    shortest compound the lists hold that ends the word, its first word three letters or more: pag|ma|may-ari
    (may-ari; the lists also hold mamay-ari); a linker that ends its first word after a listed word of three
    letters or more cut (ka|wala|ng-|bahala, root wala-bahala); its first word's last u lowered where the
    lists hold the compound so (pag|bu|buntung-hininga on buntong-hininga). The compound's words may not start
    alike (anga-anga is a full reduplication)."""
    for k in range(len(head) - 3, 0, -1):
        first = head[k:]
        if first[:3] == tail[:3] or f"{first}-{tail}" not in pack._known:
            continue
        stem = first[:-2]
        if first.endswith(LINKER) and len(stem) >= 3 and is_vowel(stem[-1]) and stem in pack._known:
            parts = _before_copy(pack, head[:k], stem)
            if parts:  # ka|wala|ng-|tinag: the linker that ends the first word is cut
                pieces = [*parts, (stem, "root"), (LINKER, "suffix"), (tail, "root")]
                spans, prefixes, infix = _part_spans(f, pieces)
                return _Reading(
                    tuple(spans),
                    f"{stem}-{tail}",
                    prefixes,
                    infix=infix,
                    reduplicant=_copy(parts),
                    linker=LINKER,
                )
        parts = _before_copy(pack, head[:k], first)
        if parts:  # pag|bu|buntung-hininga: the root as the lists hold it, buntong-hininga
            lowered = f"{lower_final_u(first)}-{tail}"
            root = lowered if lowered in pack._known else f"{first}-{tail}"
            spans, prefixes, infix = _part_spans(f, [*parts, (f[k:], "root")])
            return _Reading(tuple(spans), root, prefixes, infix=infix, reduplicant=_copy(parts))
    return None


def _copy(parts: list[tuple[str, str]]) -> str:
    return next((text for text, kind in parts if kind == "reduplicant"), "")
