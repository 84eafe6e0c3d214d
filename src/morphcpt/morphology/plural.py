"""The plural of a verbal prefix, archaic and literary (the Bible's): ang after the prefix's m or n (mag- -> mangag-,
na- -> nanga-, naka- -> nangaka-), read from the singular for a word the analyser's search and the other fallbacks
(`fallback.py`) leave with no reading (`filipino.FilipinoPack._best_reading`), and asked of every headword where the
root lexicon is built (`filipino.FilipinoPack.has_affixed_reading`: mangagkatipon is no root).
"""

from __future__ import annotations

from morphcpt.morphology.fallback import Pack
from morphcpt.morphology.reading import _Reading

# The verbal prefixes whose plural puts `PLURAL_MARK` after their m or n (mag- -> mangag-, na- -> nanga-)
PLURAL_OF = frozenset({
    "ma", "na", "mag", "nag", "maka", "naka", "maki", "naki", "magka", "nagka", "magsi", "nagsi", "magsipag", "nagsipag",
})  # fmt: skip
PLURAL_MARK = "ang"


def plural_reading(pack: Pack, f: str) -> _Reading | None:
    """For a word with no reading at all, the plural of a verbal prefix (`PLURAL_OF`), archaic and literary (the
    Bible's), which puts ang after the prefix's m or n: its singular read, the plural cut whole. nangag|sa|sabi as
    nag|sa|sabi, nanga|takot as na|takot, nangaka|upo as naka|upo, nangagsi|alis, mangagka|tipon. The singular must
    start with that prefix, on a root of the lexicon; a word that reads as mang- or nang- (nang|a|asar, mang|alikot
    <- kalikot, na|nga|ngamba) never comes here."""
    singular = plural_singular(f)
    if singular is None:
        return None
    r = pack._best(singular)
    if not plural_fits(pack, r):
        return None
    first, n = r.prefixes[0], len(PLURAL_MARK)
    spans = ((0, len(first) + n, "prefix"),) + tuple((a + n, b + n, kind) for a, b, kind in r.spans[1:])
    return r._replace(spans=spans, prefixes=(first[0] + PLURAL_MARK + first[1:], *r.prefixes[1:]))


def plural_singular(f: str) -> str | None:
    """The folded word `f` less `PLURAL_MARK` where it may be a plural (nangagsabi -> nagsabi), else None."""
    if len(f) < 7 or f[:1] not in ("m", "n") or f[1:5] != PLURAL_MARK + "a":
        return None
    return f[0] + f[4:]


def plural_fits(pack: Pack, r: _Reading) -> bool:
    """Whether `r`, a reading of a plural's singular, starts with a prefix of `PLURAL_OF`, whole, on a lexicon root."""
    first = r.prefixes[0] if r.prefixes else ""
    return first in PLURAL_OF and r.spans[0] == (0, len(first), "prefix") and r.root in pack.roots
