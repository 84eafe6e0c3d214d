"""Readings for the words the analyser's search leaves with none (`filipino.FilipinoPack._best_reading` tries them
last): di- before a word that reads on its own, prefixes before a full reduplication, Tagalog affixes on an English
root, the linker after a stem no word list holds, and the linker after a listed word the root lexicon does not hold.

Each function takes the pack and the folded word and returns a reading or None. The pack supplies `_best` (its cached
reading of another word), `_readings` and `_score` (its search), `roots`, `_roots`, `_known` (every word of the
shipped lists), `_zipf`, `_wider` (the pack with the left-out dictionary headwords) and a slot for the English-root
pack `english_root_reading` builds.
"""

from __future__ import annotations

import copy as copying
from typing import Any, Protocol

from morphcpt.morphology.affixation import raise_final_o
from morphcpt.morphology.affixes import ISA_LABELS, LINKER, LINKER_AFTER_N, PREFIXES, is_vowel
from morphcpt.morphology.loans import (
    affixed_english_reading,
    english_frequencies,
    english_roots,
    english_word,
    prefix_split,
)
from morphcpt.morphology.reading import SYNCOPATED, _Reading


class Pack(Protocol):
    """What these readings ask of `filipino.FilipinoPack` (which imports this module)."""

    _roots: frozenset[str]
    _known: frozenset[str]
    _zipf: dict[str, float]
    _secondary: frozenset[str]

    _trusted: frozenset[str]
    _rare: frozenset[str]
    _shipped: bool
    _one_syllable: bool
    _english_pack: Any

    @property
    def roots(self) -> frozenset[str]: ...
    def _readings(self, f: str) -> list[_Reading]: ...
    def _score(self, f: str, r: _Reading) -> Any: ...
    def _best(self, f: str) -> _Reading: ...
    def _wider(self) -> Pack | None: ...


NEGATION = "di-"  # di-|kilala
COMMON_ROOT_ZIPF = 3.0  # the least frequency of a root under isa- or a linker on a stem no list holds
_LISTED_STEM = 5  # letters of a listed word before the linker (`linked_listed_word`: not anti|ng, kani|ng)
# no word before a linker (pagsang is pagsang-ayon's, not pagsa|ng)
_NOT_STEMS = frozenset(PREFIXES) | ISA_LABELS


def common_root(pack: Pack, root: str) -> bool:
    return pack._zipf.get(root, 0.0) >= COMMON_ROOT_ZIPF


def negated_reading(pack: Pack, f: str) -> _Reading | None:
    """di- (not) written with a hyphen before a word that reads on its own: di-|kilala, di-|ma|bilang, di-|tuwir|an|g,
    di-|kaaya-aya. The word after it must be a root, a listed word or read with affixes; otherwise no reading (the
    word stays whole)."""
    n = len(NEGATION)
    if not f.startswith(NEGATION) or len(f) < n + 3:
        return None
    rest = f[n:]
    r = pack._best(rest)
    if r.spans == ((0, len(rest), "root"),) and rest not in pack.roots and rest not in pack._known:
        return None
    spans = ((0, n, "prefix"),) + tuple((a + n, b + n, kind) for a, b, kind in r.spans)
    return r._replace(spans=spans, prefixes=(NEGATION[:-1], *r.prefixes))


def english_root_reading(pack: Pack, f: str) -> _Reading | None:
    """For a word with no reading at all, Tagalog affixes on an English root (`loans.affixed_english_reading`):
    um|attend, i|display, d|in|eclare, p|in|ost. The search runs on a copy of the pack over `loans.english_roots`
    alone, where a root of one syllable takes affixes, built once. Needs the shipped lists."""
    if len(f) < 6 or "-" in f or english_word(f, english := english_frequencies()):
        return None  # (a hyphen: `loans.hyphenated_reading` had its turn)
    if pack._english_pack is None:
        pack.roots  # noqa: B018 - the lexicon first
        if not pack._shipped:
            return None
        search = copying.copy(pack)
        search._roots = search._trusted = english_roots(english, pack._zipf, pack._roots)
        search._rare = search._secondary = frozenset()
        search._derived_roots = {}  # answers over other roots
        search._one_syllable = True  # p|in|ost, t|in|ext
        pack._english_pack = search
    search = pack._english_pack
    found = sorted(search._readings(f), key=lambda r: search._score(f, r))
    return affixed_english_reading(found, f, english, pack._zipf, pack._known)


def full_copy_reading(pack: Pack, f: str) -> _Reading | None:
    """Prefixes before a full reduplication, the copy spelled as the root, as it stands before the suffix, or with
    its last o raised: pang-|araw-|araw, pa|ulit-|ulit, magpa|lipat-|lipat, pagka|ka|sunud-|sunod,
    pag|sunud-|sunur|in, and the raised copy alone (sunud-|sunod) or the copy of a listed word that is no root
    (ganun-|ganun). The part after the last hyphen must read as a root of the lexicon or the lists, with at most a
    suffix; the part before it, up to two prefixes and the copy."""
    head, dash, tail = f.rpartition("-")
    if not dash or not head or not tail.isalpha() or len(tail) < 3:
        return None
    t = pack._best(tail)
    if t.prefixes or t.infix or t.reduplicant or t.linker:
        return None
    if len(t.spans) == 1 and tail not in pack.roots and tail not in pack._known:
        return None
    start, end = next((s, e) for s, e, kind in t.spans if kind == "root")
    root = t.root
    raised = raise_final_o(root)
    raised = "" if raised == root else raised
    for copy in dict.fromkeys(c for c in (tail[start:end], root, raised) if c):
        if not head.endswith(copy) or "-" in head[-len(copy) :]:
            continue
        before = head[: -len(copy)]
        prefixes = prefix_split(before.replace("-", ""))
        if prefixes is None or (
            not prefixes and copy != raised and (before or not _listed_copy(t, copy, tail))
        ):
            continue  # araw-araw is the search's own reading; ganun-|ganun (a listed word, no root) is this one's
        spans, at = [], 0
        for p in prefixes:
            at_end = at + len(p) + (1 if before[at + len(p) : at + len(p) + 1] == "-" else 0)
            spans.append((at, at_end, "prefix"))
            at = at_end
        n = len(head) + 1
        spans.append((at, n, "reduplicant"))
        spans += [(a + n, b + n, kind) for a, b, kind in t.spans]
        return t._replace(spans=tuple(spans), prefixes=tuple(prefixes), reduplicant=copy)
    return None


def _listed_copy(t: _Reading, copy: str, tail: str) -> bool:
    """Whether `copy` repeats the whole `tail`, a word of four letters or more read whole (ganun-|ganun; not the
    names of three, Jun-Jun)."""
    return copy == tail and len(t.spans) == 1 and len(tail) >= 4


def linked_unlisted_stem(pack: Pack, f: str) -> _Reading | None:
    """The linker after a stem no list holds, for a word with no other reading: -ng after a vowel (mababangong is
    ma|ba|bango|ng, pinakamagagandang pinaka|ma|ga|ganda|ng, napakabihirang napaka|bihira|ng), -g after n
    (mapaghamong is mapag|hamon|g). The stem must read with a prefix, -um-/-in- or a copy and no suffix but -an/-han
    after a prefix or -in- (pinausukang is p|in|a|usuk|an|g: `_framed`), on a root of common frequency that is no
    syllable said twice (pagiging is no pa|gigi|ng) and whose spelling with -ng or -g is no root or headword
    (kumikinang stays whole: kinang). The word must be no headword (palumpong), nor English, nor a
    listed word plus -g (naipong is naipon's, not na|ipo|ng). Needs the shipped lists."""
    if (
        not pack._known
        or len(f) < 7
        or not f.endswith(LINKER)
        or not is_vowel(f[-3])
        or f[:-1] in pack._known
    ):
        return None
    if _headword_or_english(pack, f):
        return None
    secondary = _left_out_headwords(pack)
    for linker in (LINKER, LINKER_AFTER_N):
        stem = f[: -len(linker)]
        r = pack._best(stem)
        root = r.root
        if (
            (r.suffix and not _framed(r))
            or r.linker
            or not (r.prefixes or r.infix or r.reduplicant)
            or not common_root(pack, root)
            or (len(root) == 4 and root[:2] == root[2:])
            or any(root + end in pack._roots or root + end in secondary for end in (LINKER, LINKER_AFTER_N))
        ):
            continue
        return r._replace(spans=(*r.spans, (len(stem), len(f), "suffix")), linker=linker)
    return None


def _headword_or_english(pack: Pack, f: str) -> bool:
    """Whether the folded word `f` is a dictionary headword the lexicon left out (a word of its own: palumpong,
    malong) or a word English uses: the linker fallbacks leave it whole."""
    return f in _left_out_headwords(pack) or english_word(f, english_frequencies())


def _left_out_headwords(pack: Pack) -> frozenset[str]:
    """The dictionary headwords the lexicon left out (`_wider`'s), none for a pack over given roots."""
    wider = pack._wider()
    return wider._secondary if wider is not None else frozenset()


def _framed(r: _Reading) -> bool:
    """Whether `r`'s suffix is -an/-han with a prefix or -in- before its root as written (p|in|a|usuk|an, not the
    -ing that ends roots: hinanaing is no h|in|ana|in|g, nor a shortened root: pang|alw|an)."""
    return r.suffix in ("an", "han") and bool(r.prefixes or r.infix) and r.restored != SYNCOPATED


def linked_listed_word(pack: Pack, f: str) -> _Reading | None:
    """The linker after a word of the lists that the root lexicon does not hold, for a word with no other reading:
    komprehensibo|ng, aspeto|ng, istruktura|ng, kwalipikado|ng, meron|g. Of -ng after a vowel and -g after n, the
    stem the lists hold more often; it must be of common frequency (`COMMON_ROOT_ZIPF`), `_LISTED_STEM` letters or
    more and no prefix. The word must be no headword (malong, anting) nor English. Needs the shipped lists."""
    if not pack._known or len(f) <= _LISTED_STEM or not f.endswith(LINKER):
        return None
    stems = [(f[:-2], LINKER)] if is_vowel(f[-3]) else []
    stems.append((f[:-1], LINKER_AFTER_N))  # (f[:-1] ends in n)
    listed = [
        (pack._zipf.get(s, 0.0), s, linker)
        for s, linker in stems
        if s in pack._known and len(s) >= _LISTED_STEM and s not in _NOT_STEMS
    ]
    if not listed:
        return None
    zipf, stem, linker = max(listed)
    if zipf < COMMON_ROOT_ZIPF or _headword_or_english(pack, f):
        return None
    r = pack._best(stem)
    if r.linker:
        return None
    return r._replace(spans=(*r.spans, (len(stem), len(f), "suffix")), linker=linker)
