"""Full reduplication across a hyphen, for a word the analyser's search leaves with no reading
(`filipino.FilipinoPack._best_reading` tries it right after di-): a copy of the root, whole or its first two
syllables, after prefixes, a CV copy, isa- or with -um-/-in- inside it, and a suffix or the linker after the root
(pang-|araw-|araw, l|um|ipad-|lipad, ka|bigha-|bighani, bahay-|bahay|an, sari-|sari|ng); and a whole word repeated
after the linker (pula|ng-|pula, ma|rami|ng-|ma|rami). The part after the hyphen may take whichever of its
readings a copy fits (manu-|mano|ng beside the root manong). The search reads the bare copy itself (araw-|araw).
"""

from __future__ import annotations

from morphcpt.morphology.affixation import lower_final_u, raise_final_o
from morphcpt.morphology.affixes import (
    INFIXES,
    ISA_PREFIXES,
    LINKER,
    LINKER_AFTER_N,
    an_ending,
    is_vowel,
    onset_len,
    prefix_parts,
)
from morphcpt.morphology.fallback import Pack, _copy_fits, common_root, guessable_root
from morphcpt.morphology.loans import prefix_split
from morphcpt.morphology.reading import _Reading
from morphcpt.morphology.syllabify import syllabify


def full_copy_reading(pack: Pack, f: str) -> _Reading | None:
    """Prefixes before a full reduplication, the copy spelled as the root, as it stands before the suffix, with its
    last o raised, or its first two syllables: pang-|araw-|araw, pa|ulit-|ulit, magpa|lipat-|lipat,
    pagka|ka|sunud-|sunod, pag|sunud-|sunur|in, bahay-|bahay|an, sari-|sari|ng, ka|bigha-|bighani, pana-|panahon,
    and the raised copy alone (sunud-|sunod) or the copy of a listed word that is no root (ganun-|ganun; alang-|alang,
    whose -ng is no linker where the lists hold no alang-ala). The part after the last hyphen must read as a root of
    the lexicon or the lists, with at most a suffix or the linker; the part before it, the copy after up to two
    prefixes, after a CV copy (`_copied_before`: nag|la|lakad-|lakad, t|in|a|tawag-|tawag) or isa- and its forms
    before a common copy (Zipf 3) that does not start with sa (isina|sa|alang-|alang; pag|sa|sama-|sama is pag- and
    a copy), or the copy with -um-/-in- inside (l|um|ipad-|lipad, um|alun-|alon). A word read with any affixes,
    repeated after the linker, is `_linked_word`'s."""
    head, dash, tail = f.rpartition("-")
    if not dash or not head or not tail.isalpha() or len(tail) < 3:
        return None
    t = pack._best(tail)
    if (
        t.linker == LINKER
        and head.endswith(tail)
        and tail in pack._known
        and f"{head}-{tail[:-2]}" not in pack._known
    ):
        t = _Reading(((0, len(tail), "root"),), tail)  # alang-|alang: no alang-ala, as there is tamang-tama
    if len(t.spans) == 1 and tail not in pack.roots and tail not in pack._known:
        return _unlisted_copy(pack, f, head, tail)
    linked = _linked_word(pack, head, tail, t)
    if linked is not None:
        return linked
    for reading in _tail_readings(pack, tail, t):
        found = _copied(pack, head, tail, reading, listed=reading is t)
        if found is not None:
            return found
    return None


def _unlisted_copy(pack: Pack, f: str, head: str, tail: str) -> _Reading | None:
    """A word no shipped list holds whose part after the hyphen is a root no list holds either, with -an or -han
    after a vowel or without, copied before it after what `_copy_parts` allows: bulgot-|bulgot, ka|bulgot-|bulgot,
    nag|bulgot-|bulgot, bulgut-|bulgut|an (the copy spelled as the root stands before the suffix, its u lowered
    to o in the root). The root takes the checks of a guessed one (`fallback.guessable_root`: a native shape, no
    English word, not affix-like) and the reading is marked `guessed` (a capital keeps the word whole: Bora-Bora)."""
    if not pack._shipped or f in pack._known:
        return None
    readings = [_Reading(((0, len(tail), "root"),), tail)]
    end = an_ending(tail)
    if end:
        n = len(tail) - len(end)
        spans = ((0, n, "root"), (n, len(tail), "suffix"))
        readings.append(_Reading(spans, lower_final_u(tail[:n]), suffix=end))
    for reading in readings:
        if guessable_root(pack, reading.root):
            found = _copied(pack, head, tail, reading, listed=True)
            if found is not None:
                return found._replace(guessed=True)
    return None


def _tail_readings(pack: Pack, tail: str, best: _Reading) -> list[_Reading]:
    """The readings of `tail` a copy before it may fit: the best and the search's others, best to worst, those with
    the linker first; then a common listed word (Zipf 3) before the linker, read whole (kabi-|kabila|ng, not a root
    kabilang); then `tail` whole where it is a root or a listed word (baitang, whose best reading is bait|an|g;
    mano|ng beside the root manong); then a rarer listed word before the linker (baitan|g comes last)."""
    searched = sorted(pack._readings(tail), key=lambda r: pack._score(tail, r))
    readings = [best, *(r for r in searched if r.spans != best.spans or r.root != best.root)]
    common, rare = [], []
    for linker in (LINKER, LINKER_AFTER_N):  # a listed word and the linker (kabila|ng, hinala|ng)
        core = tail[: -len(linker)]
        if tail.endswith(linker) and core in pack._known and is_vowel(core[-1]) == (linker == LINKER):
            reading = _Reading(
                ((0, len(core), "root"), (len(core), len(tail), "suffix")), core, linker=linker
            )
            (common if common_root(pack, core) else rare).append(reading)
    whole = [_Reading(((0, len(tail), "root"),), tail)] if tail in pack.roots or tail in pack._known else []
    return [*sorted(readings, key=lambda r: not r.linker), *common, *whole, *rare]


def _copied(pack: Pack, head: str, tail: str, t: _Reading, listed: bool) -> _Reading | None:
    """The reading of `head`-`tail` as a copy of the root of `t` (a reading of `tail` with at most a suffix and the
    linker) after what `_copy_parts` allows; None where no copy fits. The bare copy of a listed word read whole
    (ganun-|ganun) only where `listed`: `t` is the best reading (tikman-tikman is no copy of a root tikman)."""
    if t.prefixes or t.infix or t.reduplicant:
        return None
    start, end = next((s, e) for s, e, kind in t.spans if kind == "root")
    spelled = tail[start:end]
    raised = raise_final_o(t.root)
    raised = "" if raised == t.root else raised
    for copy in dict.fromkeys(
        c for c in (spelled, t.root, raised, _first_two_syllables(spelled)) if len(c) >= 3
    ):
        parts = _copy_parts(pack, head, copy)
        if parts is None or (
            len(parts) == 1 and head == tail and not (listed and _listed_copy(t, copy, tail))
        ):
            continue  # araw-araw is the search's own reading; ganun-|ganun (a listed word, no root) is this one's
        n = len(head) + 1
        spans, prefixes, infix = _part_spans(head, parts)
        spans[-1] = (spans[-1][0], n, spans[-1][2])  # the hyphen after the copy stays with it
        spans += [(a + n, b + n, kind) for a, b, kind in t.spans]
        return t._replace(spans=tuple(spans), prefixes=prefixes, infix=infix, reduplicant=copy)
    return None


def _linked_word(pack: Pack, head: str, tail: str, t: _Reading) -> _Reading | None:
    """`tail` read as `t` and written again before it with the linker, -ng after a vowel (its last o may be raised)
    or -g after n: the intensive pula|ng-|pula, usu|ng-|uso beside uso|ng-|uso, iyan|g-|iyan, ma|rami|ng-|ma|rami,
    ka|mukha|ng-|ka|mukha. The first copy's root is the reduplicant. A root alone may also be copied after a prefix
    or with -um-/-in- inside, as `_copy_parts` allows (pa|ganda|ng-|ganda). None where `head` is no such copy, and
    where `tail` ends in the linker itself: its ng may be a root's (bukung-bukong, gumiwang-giwang)."""
    if t.linker or "-" in head:  # tamang-tamang, bukung-bukong: a root's own ng or the linker twice
        return None
    for linker in (LINKER, LINKER_AFTER_N):
        stem = head[: -len(linker)]
        if not head.endswith(linker) or (linker == LINKER) != is_vowel(stem[-1:] or "x"):
            continue
        if linker == LINKER_AFTER_N and not stem.endswith("n"):
            continue
        n = len(head) + 1
        after = ((len(stem), n, "suffix"), *((a + n, b + n, kind) for a, b, kind in t.spans))
        if stem in (tail, raise_final_o(tail)):
            first = tuple((a, b, "reduplicant" if kind == "root" else kind) for a, b, kind in t.spans)
            return t._replace(spans=(*first, *after), reduplicant=stem, linker=linker)
        if t.prefixes or t.infix or t.reduplicant:
            continue
        for copy in dict.fromkeys((tail, raise_final_o(tail))):
            parts = _copy_parts(pack, stem, copy)
            if parts is None or len(parts) < 2:
                continue
            spans, prefixes, infix = _part_spans(stem, parts)
            return t._replace(
                spans=(*spans, *after), prefixes=prefixes, infix=infix, reduplicant=copy, linker=linker
            )
    return None


def _part_spans(
    text: str, parts: list[tuple[str, str]]
) -> tuple[list[tuple[int, int, str]], tuple[str, ...], str]:
    """(spans, prefix labels, infix) of `parts` ((text, kind), its hyphens left out) laid over `text`, a hyphen
    staying with the morph before it (pang-|araw)."""
    spans, at = [], 0
    for p, kind in parts:
        at_end = at + len(p) + (1 if text[at + len(p) : at + len(p) + 1] == "-" else 0)
        spans.append((at, at_end, kind))
        at = at_end
    prefixes = tuple(p for p, kind in parts if kind == "prefix")
    return spans, prefixes, next((p for p, kind in parts if kind == "infix"), "")


def _copy_parts(pack: Pack, head: str, copy: str) -> list[tuple[str, str]] | None:
    """(text, kind) of `head`, its hyphens left out, where it ends in `copy`: what stands before it
    (`_before_copy`), then the copy; or the copy with -um-/-in- after its first consonant (l|um|ipad) or before its
    first vowel (um|alun, in|alon: um- is no prefix before alon). None where `head` is neither."""
    if head.endswith(copy) and "-" not in head[-len(copy) :]:
        parts = _before_copy(pack, head[: -len(copy)].replace("-", ""), copy)
        if parts is not None:
            return [*parts, (copy, "reduplicant")]
    n = onset_len(copy)
    for infix in INFIXES:
        if "-" not in head and len(copy) >= 4 and head == copy[:n] + infix + copy[n:]:
            return [*(((copy[:n], "reduplicant"),) if n else ()), (infix, "infix"), (copy[n:], "reduplicant")]
    return None


def _first_two_syllables(root: str) -> str:
    """The copy of a root of three syllables or more that stops after its second vowel: baha for bahagya, bigha for
    bighani, pintu for pintuho, sali for salimuot; "" for a shorter root."""
    syllables = syllabify(root)
    if len(syllables) < 3:
        return ""
    second = syllables[1]
    last_vowel = max(i for i, ch in enumerate(second) if is_vowel(ch))
    return syllables[0] + second[: last_vowel + 1]


def _before_copy(pack: Pack, letters: str, copy: str) -> list[tuple[str, str]] | None:
    """(text, kind) of what stands before a full reduplication `copy`, its hyphens left out (`letters`): up to two
    prefixes ([] for none), isa- or one of its forms before a common copy that does not start with sa
    (isina|sa|alang-|alang), or a CV copy after prefixes or around -um-/-in- (`_copied_before`); None for anything
    else."""
    prefixes = prefix_split(letters)
    if prefixes is not None:
        return [(p, "prefix") for p in prefixes]
    if letters in ISA_PREFIXES and not copy.startswith("sa") and common_root(pack, copy):
        return list(prefix_parts(letters))
    return _copied_before(letters, copy)


def _copied_before(letters: str, copy: str) -> list[tuple[str, str]] | None:
    """(text, kind) of what stands before a full reduplication `copy` where it ends in a CV copy of the copy's first
    syllable: after one or two prefixes (nag|la|lakad-|lakad, pag|sa|sama-|sama, nag-|u|usap-|usap), or around
    -um-/-in- (t|in|a|tawag-|tawag, s|um|a|sayaw-|sayaw); None where it does not."""
    for k in (3, 2, 1):
        cv, rest = letters[-k:], letters[:-k]
        if rest and _copy_fits(cv, copy) and (prefixes := prefix_split(rest)):
            return [*((p, "prefix") for p in prefixes), (cv, "reduplicant")]
    if len(letters) == 4 and letters[1:3] in INFIXES and _copy_fits(letters[0] + letters[3], copy):
        return [(letters[0], "reduplicant"), (letters[1:3], "infix"), (letters[3], "reduplicant")]
    return None


def _listed_copy(t: _Reading, copy: str, tail: str) -> bool:
    """Whether `copy` repeats the whole `tail`, a word of four letters or more read whole (ganun-|ganun; not the
    names of three, Jun-Jun)."""
    return copy == tail and len(t.spans) == 1 and len(tail) >= 4
