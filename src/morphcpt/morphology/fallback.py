"""Readings for the words the analyser's search leaves with none (`filipino.FilipinoPack._best_reading` tries them
last): di- before a word that reads on its own, Tagalog affixes on an English root, the linker after a stem no word
list holds, the linker after a listed word the root lexicon does not hold, a root no list holds that a CV copy shows,
and one whose other verbal forms the lists hold. Four more have modules of their own: a full reduplication across a
hyphen (`full_copy.py`), a compound across one (`compound.py`), the plural of a verbal prefix (`plural.py`) and,
for a word no list holds, a root its affixes alone show (`unlisted.py`).

Each function takes the pack and the folded word and returns a reading or None. The pack supplies `_best` (its cached
reading of another word), `_readings` and `_score` (its search), `roots`, `_roots`, `_known` (every word of the
shipped lists), `_zipf`, `_wider` (the pack with the left-out dictionary headwords) and a slot for the English-root
pack `english_root_reading` builds.
"""

from __future__ import annotations

import copy as copying
import re
from collections.abc import Iterator
from typing import Any, Protocol

from morphcpt.morphology.affixation import lower_final_u, raise_final_o
from morphcpt.morphology.affixes import (
    INFIXES,
    ISA_LABELS,
    LINKER,
    LINKER_AFTER_N,
    PREFIX_PARTS,
    PREFIXES,
    an_ending,
    is_vowel,
    prefix_parts,
)
from morphcpt.morphology.loans import (
    affixed_english_reading,
    english_frequencies,
    english_roots,
    english_word,
)
from morphcpt.morphology.reading import SYNCOPATED, _Reading
from morphcpt.morphology.root_evidence import infixed_forms
from morphcpt.morphology.stems import CLUSTER_SECOND, StemReadings, _syllable_ok
from morphcpt.morphology.syllabify import vowel_groups


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


# A reading's frame before its root is known: (spans before the root's last part, prefixes, infix, suffix)
Frame = tuple[tuple[tuple[int, int, str], ...], tuple[str, ...], str, str]
NEGATION = "di-"  # di-|kilala
COMMON_ROOT_ZIPF = 3.0  # the least frequency of a root under isa- or a linker on a stem no list holds
_LISTED_STEM = 5  # letters of a listed word before the linker (`linked_listed_word`: not anti|ng, kani|ng)
# no word before a linker (pagsang is pagsang-ayon's, not pagsa|ng)
_NOT_STEMS = frozenset(PREFIXES) | ISA_LABELS


# Prefixes a CV copy of the root follows in a verb or its noun (nag|hi|hitay, pag|su|sungkal, naka|ku|kumbinse),
# longest first, i- last (its future: i|bi|bitag). Not ma-, na-, pa-, ka- (`affixes.WEAK_PREFIXES`): ma- and a copy
# may be mang- that took the root's first consonant (mananatili is mang- on tili). A copy ka after these is pagka-'s,
# magka-'s or naka-'s own (pagkakaron, magkakamag).
COPY_PREFIXES: tuple[str, ...] = (
    "makipag", "nakipag", "makapag", "nakapag", "ipinag", "magpa", "nagpa", "pagpa", "pinag", "magsi", "nagsi",
    "ipag", "maka", "naka", "mang", "nang", "pang", "mag", "nag", "pag", "i",
)  # fmt: skip
_COPIED_ROOT = 5  # letters of a root `copied_root_reading` takes (4 for one starting with a vowel)
# Prefixes `shown_root_reading` takes before a root no list holds, longest first: the verbal ones ending in g or a,
# i-, and ma-, na- (whose look-alikes are many, madrigal: with two forms of evidence, `_MA_EVIDENCE`); not mang-,
# which takes the root's first consonant.
GUESS_PREFIXES: tuple[str, ...] = (
    "makipag", "nakipag", "ipinag", "magpa", "nagpa", "pagpa", "ipag", "maka", "naka", "mag", "nag", "pag", "i",
    "ma", "na",
)  # fmt: skip
# forms of the root the lists must hold for ma-/na- before it (na|kansela: kinansela, ikansela)
_MA_EVIDENCE = 2
# The verbal forms of a root whose presence in the lists shows it (`_shown_forms`): these prefixes before it, -um-
# and -in- in it, -an and -in after it.
_SHOWING_PREFIXES = ("mag", "nag", "pag", "i", "maka", "naka", "magpa", "nagpa", "ipag", "ipinag", "makipag")
# A root of native shape: one consonant (ng, ts) or a consonant and l, r, w, y before its first vowel, then
# syllables of a vowel after at most two consonants, and at most one consonant at its end; no c, f, j, q, v, x, z.
_NATIVE_ROOT = re.compile(
    r"^(?:(?:ng|ts|[bdghklmnprstwy])[lrwy]?)?[aeiou](?:(?:ng|[bdghklmnprstwy]){0,2}[aeiou])+(?:ng|[bdghklmnprstwy])?$"
)


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


def linked_unlisted_stem(pack: Pack, f: str) -> _Reading | None:
    """The linker after a stem no list holds, for a word with no other reading: -ng after a vowel (mababangong
    is ma|ba|bango|ng, pinakamagagandang pinaka|ma|ga|ganda|ng, napakabihirang napaka|bihira|ng), -g after n
    (mapaghamong is mapag|hamon|g). The stem must read with a prefix, -um-/-in- or a copy and no suffix but
    -an/-han after a prefix or -in- (pinausukang is p|in|a|usuk|an|g: `_framed`), on a root no syllable said
    twice (pagiging is no pa|gigi|ng) whose spelling with -ng or -g is no root or headword (kumikinang stays
    whole: kinang): of common frequency, or one of no frequency (ma|ga|garbo|ng, na|laktaw|an|g) that is no
    rare root (only a dictionary or the lists' paradigms show it) and whose spelling with the linker is no
    listed word. The word must be no headword (palumpong), nor English, nor a listed word plus -g (naipong is
    naipon's, not na|ipo|ng). Needs the shipped lists."""
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
            or r.guessed
            or (not common_root(pack, root) and (root in pack._rare or root + linker in pack._known))
            or (len(root) == 4 and root[:2] == root[2:])
            or any(root + end in pack._roots or root + end in secondary for end in (LINKER, LINKER_AFTER_N))
            # a guess is no stem (nagngangalang is nag|nga|ngalan|g, not on a copied ngala); last, as it searches
            # the stem again
            or (r == copied_root_reading(pack, stem) and not pack._readings(stem))
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


def copied_root_reading(pack: Pack, f: str) -> _Reading | None:
    """A root no list holds, for a word with no other reading, where a copy of its first syllable shows it: after
    -um-/-in- (h|um|a|hamlay, t|in|i|tilapok, um|i|inum, ni- before l, r, y; with i- before: i|t|in|a|tahip,
    i|ni|la|lapnos) or after one of `COPY_PREFIXES` (nag|hi|hitay, pag|su|sungkal, pang|gu|gulpe, i|bi|bitag,
    maka|pag|du|dulok cut as the search cuts it; the copy of a cluster as in `_copy_fits`). The root is the rest of
    the word, `_COPIED_ROOT` letters or more, two syllables, not its own copy again (pinaggagagawa, naglalalambing
    stay whole), less a final -an after -in- or one of `_SUFFIXED_PREFIXES` (h|in|a|hamlay|an, t|in|i|tilapuk|an
    on tilapok: `_copied_suffix`, `affixation.lower_final_u`; of the lexicon's roots, 3,270 have o in a closed last
    syllable and 300 u, 3,502 end in o and 61 in u). The word must be no headword nor English."""
    if len(f) < 7 or not f.isalpha() or _headword_or_english(pack, f):
        return None
    for spans, copy, infix, prefixes in _copy_frames(f):
        start = spans[-1][1]
        root = f[start:]
        if not _copy_fits(copy, root) or root.startswith(copy + copy) or not _syllable_ok(root):
            continue
        if len(root) < _COPIED_ROOT - is_vowel(root[0]):
            continue
        suffixed = (infix == "in" and prefixes != ("i",)) or _SUFFIXED_PREFIXES.intersection(prefixes)
        suffix = _copied_suffix(root) if suffixed else ""  # (i- takes no -an: i|t|in|a|tahip)
        end = len(f) - len(suffix)
        tail = ((end, len(f), "suffix"),) if suffix else ()
        reading = _Reading(
            (*spans, (start, end, "root"), *tail),
            lower_final_u(f[start:end]) if suffix else root,
            prefixes,
            infix=infix,
            suffix=suffix,
            reduplicant=copy,
        )
        return _prefix_cut(reading)  # maka|pag|du|dulok, as the search cuts makapag-
    return None


def shown_root_reading(pack: Pack, f: str) -> _Reading | None:
    """A root no list holds as a root, for a word with no other reading, where the lists hold another verbal form of
    it (`_shown_forms`): nag|prisinta (the lists hold iprisinta, magprisinta), p|um|asuk (pinasuk), naka|tutuk
    (tutukan), na|kansela (kinansela, ikansela: ma- and na- need two). The frames (`_guess_frames`): a prefix of
    `GUESS_PREFIXES` before a consonant (not ka after a g: magka-, nagka-, pagka- are prefixes of their own; nor n
    but ng after a g: magnolya, not nag|ngulgot); -um- or -in- after the first consonant or before a first vowel;
    i- before -in-; -an (-han after a vowel) after -in- or pag-, and -in (-hin) after the root alone, the u before
    the suffix lowered to o. The root has `_COPIED_ROOT` letters or more (4 from a vowel), two or three syllables
    and a native shape (`_NATIVE_ROOT`), is no English word and does not start as an affixed word would
    (`_affix_like`); of several frames, the one whose root the lists show in the most forms, its prefix cut as the
    search cuts it (`_prefix_cut`: naki|pag|hamlay). The word must be no headword nor English: a name the lists
    never inflect stays whole (magdalena)."""
    if len(f) < 6 or not f.isalpha() or _headword_or_english(pack, f):
        return None
    best: tuple[int, _Reading] | None = None
    for reading in _guessed_readings(pack, f, _guess_frames(f)):
        shown = len(_shown_forms(reading.root) & pack._known - {f})
        if reading.prefixes[:1] in (("ma",), ("na",)) and shown < _MA_EVIDENCE:
            continue
        if shown and (best is None or shown > best[0]):
            best = (shown, reading)
    return _prefix_cut(best[1]) if best else None


def _prefix_cut(r: _Reading) -> _Reading:
    """`r` with a first prefix that is cut into parts (`affixes.PREFIX_PARTS`) so cut, as the search cuts it
    (`StemReadings._prefix_spans`): naka|pag|bulgot."""
    (start, end, kind), rest = r.spans[0], r.spans[1:]
    prefix = r.prefixes[0] if kind == "prefix" and r.prefixes else ""
    if prefix not in PREFIX_PARTS:
        return r
    labels = tuple(text for text, part in prefix_parts(prefix) if part == "prefix")
    spans = StemReadings._prefix_spans(prefix, start, end - start)
    return r._replace(spans=(*spans, *rest), prefixes=(*labels, *r.prefixes[1:]))


def _guessed_readings(pack: Pack, f: str, frames: Iterator[Frame]) -> Iterator[_Reading]:
    """The readings of the folded word `f` by `frames` whose root may be a root no list holds (`guessable_root`);
    the u before a suffix lowered to o, and an r after
    a or i before it put back as the d it spells (t|in|awar|an <- tawad: of the lists' stems in -ar, -ir before
    -an/-in, 79 are of a root in -ad, -id, 6 of one in -ar, -ir; not after o, whose roots in -or are loans more
    often than those of the unlisted words: tambor|in, doktor)."""
    for spans, prefixes, infix, suffix in frames:
        end = len(f) - len(suffix)
        start = spans[-1][1] if spans else 0
        stem = "".join(f[a:b] for a, b, kind in spans if kind == "root") + f[start:end]
        root = lower_final_u(stem) if suffix else stem
        if suffix and len(root) > 2 and root[-2:] in ("ar", "ir"):  # d -> r between vowels: awar|an <- tawad
            root = root[:-1] + "d"
        if not guessable_root(pack, root):
            continue
        tail = ((end, len(f), "suffix"),) if suffix else ()
        copy = "".join(f[a:b] for a, b, kind in spans if kind == "reduplicant")
        yield _Reading(
            (*spans, (start, end, "root"), *tail),
            root,
            prefixes,
            infix=infix,
            suffix=suffix,
            reduplicant=copy,
        )


def guessable_root(pack: Pack, root: str) -> bool:
    """Whether `root` may be a root no list holds (`_guessed_readings`' checks): `_COPIED_ROOT` letters or more (4
    from a vowel), two or three syllables, a native shape (`_NATIVE_ROOT`), no English word, and not starting as an
    affixed word would (`_affix_like`)."""
    return (
        len(root) >= _COPIED_ROOT - is_vowel(root[:1] or "x")
        and 2 <= vowel_groups(root) <= 3
        and bool(_NATIVE_ROOT.match(root))
        and not english_word(root, english_frequencies())
        and not _affix_like(pack, root)
    )


def _guess_frames(f: str) -> Iterator[Frame]:
    """The affix frames `shown_root_reading` tries on the folded word `f`: (spans before the root's last part,
    prefixes, infix, suffix)."""
    onset = "ng" if f.startswith("ng") else f[:1]
    n = len(onset)

    def suffixes(allowed: bool) -> tuple[str, ...]:
        if not allowed:
            return ("",)
        ends = [end for end in ("han", "an") if f.endswith(end)]
        return ("", *(end for end in ends if (end == "han") == is_vowel(f[-len(end) - 1])))

    if is_vowel(f[0]) and f[:2] in INFIXES and is_vowel(f[2:3]):  # um|inom, in|inom
        for suffix in suffixes(f[:2] == "in"):
            yield ((0, 2, "infix"),), (), f[:2], suffix
    elif f[n : n + 2] in INFIXES and is_vowel(f[n + 2 : n + 3]):  # h|um|amlay, h|in|amlay|an
        for suffix in suffixes(f[n : n + 2] == "in"):
            yield ((0, n, "root"), (n, n + 2, "infix")), (), f[n : n + 2], suffix
    # i- before -in- after the root's first consonant (ng or one letter): i|h|in|amlay, i|ng|in|ulgot
    k = 3 if f.startswith("ng", 1) else 2
    if f[:1] == "i" and f[k : k + 2] == "in" and not is_vowel(f[1]) and is_vowel(f[k + 2 : k + 3]):
        yield ((0, 1, "prefix"), (1, k, "root"), (k, k + 2, "infix")), ("i",), "in", ""
    for prefix in GUESS_PREFIXES:
        rest = f[len(prefix) :]
        if not f.startswith(prefix) or is_vowel(rest[:1]) or (prefix[-1] == "g" and rest.startswith("ka")):
            continue  # (magka-, nagka-, pagka- are prefixes of their own: pagka|tapus, not pag|katapus)
        if not (prefix[-1] == "g" and rest[:1] == "n" and rest[:2] != "ng"):  # (magnolya; not nag|ngulgot)
            for suffix in suffixes(prefix == "pag"):
                yield ((0, len(prefix), "prefix"),), (prefix,), "", suffix
    # a suffix alone: -in, -hin (not -an, which ends too many nouns and names: sinoman)
    if not is_vowel(f[0]):
        for end in ("hin", "in"):
            if f.endswith(end) and (end[0] == "h") == is_vowel(f[-len(end) - 1 : -len(end)] or "x"):
                yield (), (), "", end
                break


# what a root `shown_root_reading` guesses may not start with: another prefix (naka|pagpa is makapag-'s)
_PREFIX_STARTS = ("mag", "nag", "pag", "mang", "nang", "pang", "maka", "naka")


def _affix_like(pack: Pack, root: str) -> bool:
    """Whether a guessed `root` starts as an affixed word would: with a prefix (`_PREFIX_STARTS`), with ka before a
    lexicon root (k|in|a|gulat is kina- on gulat, not -in- on a kagulat; mag|kansela stays), or with a consonant
    its vowel repeats (ginagwa, itatanung: a copy of a misspelled root, not a root)."""
    if root.startswith(_PREFIX_STARTS) or (root.startswith("ka") and root[2:] in pack._roots):
        return True
    return not is_vowel(root[0]) and is_vowel(root[1]) and root[2:3] == root[0]


def _shown_forms(root: str) -> set[str]:
    """The verbal forms of `root` whose presence in the lists shows it is one: `_SHOWING_PREFIXES` before it, -um-
    and -in- in it, -an and -in (-han, -hin after a vowel) after it, its last o raised."""
    forms = {prefix + root for prefix in _SHOWING_PREFIXES} | set(infixed_forms(root))
    stem = raise_final_o(root)
    h = "h" if is_vowel(stem[-1]) else ""
    return forms | {stem + h + end for end in ("an", "in")}


def _copy_frames(f: str) -> Iterator[tuple[tuple[tuple[int, int, str], ...], str, str, tuple[str, ...]]]:
    """The ways the folded word `f` may start with affixes and a copy: (spans, copy, infix, prefixes), -um-/-in-
    first (p|in|a|... before pinag|...); a copy ka after a prefix is none (pagka-'s, magka-'s, naka-'s own)."""
    onset = "ng" if f.startswith("ng") else f[:1]
    n = len(onset)
    if is_vowel(f[0]) and f[:2] in ("um", "in"):  # um|i|inum, in|a|aply
        yield ((0, 2, "infix"), (2, 3, "reduplicant")), f[2], f[:2], ()
    if not is_vowel(f[0]) and f[n : n + 2] in ("um", "in") and is_vowel(f[n + 2 : n + 3]):  # h|um|a|hamlay
        spans = ((0, n, "reduplicant"), (n, n + 2, "infix"), (n + 2, n + 3, "reduplicant"))
        yield spans, onset + f[n + 2], f[n : n + 2], ()
    if f.startswith("ni") and f[2:3] in ("l", "r", "y") and is_vowel(f[3:4]):  # ni|la|lapnos
        yield ((0, 2, "infix"), (2, 4, "reduplicant")), f[2:4], "in", ()
    if f[:1] == "i" and not is_vowel(f[1:2] or "a") and f[2:4] == "in" and is_vowel(f[4:5] or "x"):
        spans = ((0, 1, "prefix"), (1, 2, "reduplicant"), (2, 4, "infix"), (4, 5, "reduplicant"))
        yield spans, f[1] + f[4], "in", ("i",)  # i- with -in- in the copy: i|t|in|a|tahip
    if f.startswith("ini") and f[3:4] in ("l", "r", "y") and is_vowel(f[4:5]):  # i|ni|la|lapnos
        yield ((0, 1, "prefix"), (1, 3, "infix"), (3, 5, "reduplicant")), f[3:5], "in", ("i",)
    prefix = next((p for p in COPY_PREFIXES if f.startswith(p)), "")
    rest = f[len(prefix) :]
    copy = next((rest[:k] for k in (2, 3) if prefix and _copy_fits(rest[:k], rest[k:])), "")
    if copy and copy != "ka":
        spans = ((0, len(prefix), "prefix"), (len(prefix), len(prefix) + len(copy), "reduplicant"))
        yield spans, copy, "", (prefix,)


# prefixes whose copied forms end in -an far more often than their roots do (pinag|ta|talun|an, pag|ha|hanap|an)
_SUFFIXED_PREFIXES = frozenset({"pinag", "ipinag", "pag", "nag", "pang"})


def _copied_suffix(root: str) -> str:
    """-an (-han after a vowel) at the end of a copied root, where what stays before it is a root of four letters
    and two syllables or more: -in- and a copy end in the suffix, not the root, 352 times to 14 in the lists'
    readings (h|in|a|hanap|an; d|in|a|daan is the root's own -an)."""
    suffix = an_ending(root)
    if not suffix:
        return ""
    stem = root[: -len(suffix)]
    return suffix if len(stem) >= 4 and _syllable_ok(stem) else ""


def _copy_fits(copy: str, root: str) -> bool:
    """Whether `copy` is a copy of `root`'s first syllable: its vowel, its consonant and vowel (hi|hitay), the first
    consonant of a cluster and its vowel (pa|prasko) or the whole cluster (bra|brainstorm); ng is one consonant."""
    if not copy or not is_vowel(copy[-1]) or len(root) <= len(copy):
        return False
    if root.startswith(copy):
        return len(copy) < 3 or copy[1] in CLUSTER_SECOND or copy.startswith("ng")
    return len(copy) == 2 and root[1:2] in CLUSTER_SECOND and root[0] + root[2:3] == copy
