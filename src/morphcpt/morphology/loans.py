"""Readings of borrowed words that carry Tagalog affixes: Filipino keeps a borrowed word in its own spelling and puts
the prefixes and the CV copy before it, with a hyphen (mag-|cast, ma|di-|disable) or without one (nag|text,
nag|wo|work, pang|ha|harass). The root lexicon holds no English, so such a word has no other reading; these are
tried only for a word that has none (`FilipinoPack._best_reading`).

Without a hyphen the root must be an English word, told by `data/en_words.tsv` (wordfreq's English frequency of
the lists' words, built by `scripts/build_english_words.py`): at least as frequent in English as in Filipino with
a Zipf figure of 3 or more (the rule the generated gold sets use to call a root English), four letters or more,
after one of `LOAN_PREFIXES` and at most a copy of its first sounds. A word English uses itself (magnet, nagging:
Zipf 2.5 or more) stays whole.

A word still without a reading is then read with the whole Tagalog morphology over English roots
(`english_roots`, `affixed_english_reading`; the search runs in `fallback.english_root_reading`): um|attend,
i|display, d|in|eclare, p|in|ost, in|apply|an, te|text, mag|tweet. The root must stand in the word unchanged and no
linker follows it; the prefixes that start many names and words of their own (`_WEAK_LOAN_PREFIXES`: ma|donna,
ka|plan) ask for a listed word and a longer, more frequent root. And a word English uses commonly reads on no weak
Tagalog root (`mostly_english`: manager is no ma|nager).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from morphcpt.morphology.affixes import ISA_LABELS, ISA_PREFIXES, PREFIXES, prefix_parts, realis_stacked
from morphcpt.morphology.lexicon import word_frequencies
from morphcpt.morphology.loan_sounds import leading_consonants, sound_copy
from morphcpt.morphology.reading import _Reading
from morphcpt.morphology.stems import _syllable_ok

ENGLISH_FILE = Path(__file__).resolve().parent / "data" / "en_words.tsv"
# Prefixes that mark a borrowed verb or noun strongly enough to cut without a hyphen; the one-syllable ones that
# start many words of their own (i-, ka-, ma-, na-, pa-: parent, iconic) do not.
LOAN_PREFIXES: tuple[str, ...] = tuple(sorted((
    "magpa", "nagpa", "pagpa", "magka", "nagka", "pagka", "nakaka", "makaka", "makapag", "nakapag", "makipag",
    "nakipag", "maka", "naka", "magsi", "nagsi", "mapag", "napag", "pinag", "ipag", "mag", "nag", "pag", "mang",
    "nang", "pang", "naki", "maki", "paki", "nakiki", "makiki", "pakiki", "nakikipag", "makikipag", "pakikipag",
), key=len, reverse=True))  # fmt: skip
ENGLISH_ROOT_ZIPF = 3.0  # an English root: at least this often in English, and as often as in Filipino
# `english_roots` lets Filipino use a borrowed root up to this much more often than English does (tweet: 4.25 vs 4.17)
ENGLISH_ROOT_MARGIN = 0.5
# ... and `unhyphenated_reading` this much where a copy of the root's sound stands before it, which Tagalog spelling
# of an English word alone would not make (nag|jo|jogging: 3.89 in Filipino, 3.38 in English; nag|ri|ring)
_SOUNDED_COPY_MARGIN = 1.0
# `affixed_english_reading`: a word Filipino itself uses this often is a word of its own (Napoles), not a loan's form
_OWN_WORD_ZIPF = 4.0
# prefixes `affixed_english_reading` never reads before an English root: isa- (Tagalog roots only) and those of
# nouns and adjectives that start Tagalog words and names (tagalong is no tag|along nor taga|long, sindang no
# sin|dang)
_NO_LOAN_LABELS = ISA_LABELS | frozenset(
    {"tag", "taga", "tig", "sing", "sin", "sim", "kasing", "kasin", "kasim", "paka", "pala"}
)
# prefixes that start many words and names of their own: after one, `affixed_english_reading` asks for a listed word
# and a longer, more frequent root (i|display, na|approve; not ma|rites, ka|lori, pa|tune)
_WEAK_LOAN_PREFIXES = frozenset(
    {"i", "ika", "ipa", "ka", "ma", "mala", "na", "ni", "pa", "man", "nan", "pan"}
)
_LONG_ROOT, _LONG_I_ROOT = 5, 7  # letters (`_loan_evidence`)
_COPY_ALONE_ZIPF, _WEAK_COPY_ZIPF, _WEAK_ROOT_ZIPF = 4.2, 4.0, 3.5  # English Zipf figures (`_loan_evidence`)
_SHORT_INFIXED_ZIPF = 4.5  # ... and of a root shorter than `_LONG_ROOT` with -in- alone
ENGLISH_WORD_ZIPF = 2.5  # a word English itself uses this often stays whole
_MIN_ROOT = 4  # shorter English roots cut Tagalog words (mag|ing, pang|law)
_PREFIX_COPIES = frozenset({"pa", "ka", "ki"})  # the syllables of magpa-, magka-, maki- a copy may repeat


@lru_cache(maxsize=1)
def english_frequencies() -> dict[str, float]:
    """word -> English Zipf frequency of `ENGLISH_FILE` ({} when the file is absent)."""
    return word_frequencies(ENGLISH_FILE)


def english_word(f: str, english: dict[str, float]) -> bool:
    """Whether English itself uses the folded word `f` (`ENGLISH_WORD_ZIPF` in `english`): then it stays whole."""
    return english.get(f, 0.0) >= ENGLISH_WORD_ZIPF


def unhyphenated_reading(f: str, english: dict[str, float], zipf: dict[str, float]) -> _Reading | None:
    """The folded word `f` as one of `LOAN_PREFIXES`, at most a copy of the root's first sounds, and an English
    root, or None: nag|text, nakaka|stress (cut naka|ka|stress), nag|te|text, nag|da|drawing (the copy keeps the
    first consonant of a cluster, or the whole cluster: nag|bre|breakfast), nag|a|apply, or the copy of the prefix's
    own pa, ka or ki (nagpa|pa|print). The longest prefix first, then the shortest copy; `zipf` holds the Filipino
    frequencies. The root lexicon may hold the root (chat, post: a word of one syllable reads only with a copy
    there), as long as the figures call it English: `ENGLISH_ROOT_ZIPF` or more in English, and in Filipino at most
    `ENGLISH_ROOT_MARGIN` more (the margin of `english_roots`: Taglish's own loans such as bully and bash count), or
    `_SOUNDED_COPY_MARGIN` more after a copy of its sound (nag|jo|jogging)."""
    if len(f) < 6 or english_word(f, english) or not f.isalpha():
        return None
    for p in LOAN_PREFIXES:  # longest first
        if not f.startswith(p):
            continue
        rest = f[len(p) :]
        for k in (0, 1, 2, 3, 4):
            copy, root = rest[:k], rest[k:]
            en = english.get(root, 0.0)
            if len(root) < _MIN_ROOT or en < ENGLISH_ROOT_ZIPF:
                continue
            sounded = bool(k) and sound_copy(copy, root)
            if k and not (sounded or (copy == p[-2:] and copy in _PREFIX_COPIES and len(p) > 2)):
                continue
            if en < zipf.get(root, 0.0) - (_SOUNDED_COPY_MARGIN if sounded else ENGLISH_ROOT_MARGIN):
                continue
            parts = list(prefix_parts(p))
            if copy:
                parts.append((copy, "reduplicant"))
            return _spelled(
                f, [*parts, (root, "root")], tuple(t for t, kind in parts if kind == "prefix"), ""
            )
    return None


def mostly_english(f: str, english: dict[str, float], zipf: dict[str, float]) -> bool:
    """Whether English uses the folded word `f` commonly (`ENGLISH_ROOT_ZIPF`, the figure that makes an English
    root) and at least as often as Filipino (`zipf`) does: then `filipino.FilipinoPack` takes only a reading on a
    curated root or one of common frequency, and none on the weakest roots (manager is no ma|nager on a dictionary's
    rare headword, karate no ka|rate, hitman no hitm|an)."""
    en = english.get(f, 0.0)
    return en >= ENGLISH_ROOT_ZIPF and en >= zipf.get(f, 0.0)


def english_roots(
    english: dict[str, float], zipf: dict[str, float], lexicon: frozenset[str]
) -> frozenset[str]:
    """The roots `affixed_english_reading` may find: words of the `english` table of four letters or more that
    English uses at least `ENGLISH_ROOT_ZIPF` and Filipino (`zipf`) at most `ENGLISH_ROOT_MARGIN` more often, and
    that the root `lexicon` does not hold as a root of two syllables (those read the usual way; post and text,
    of one, take no affix there); no word of one syllable that ends in ng (kining is no k|in|ing)."""
    return frozenset(
        w
        for w, z in english.items()
        if _english_root(w, z, zipf)
        and (w not in lexicon or not _syllable_ok(w))
        and (_syllable_ok(w) or not w.endswith("ng"))  # king, long end as Tagalog words do (k|in|ing)
    )


def sounded_roots(
    english: dict[str, float], zipf: dict[str, float], lexicon: frozenset[str]
) -> frozenset[str]:
    """The roots of the `lexicon` that the figures call English (those of `english_roots`: like, share): a CV copy
    of one may follow its sound, as a borrowed root's does (ni|la|like, sh|in|e|share; `loan_sounds`)."""
    return frozenset(w for w in lexicon if _english_root(w, english.get(w, 0.0), zipf))


def _english_root(w: str, z: float, zipf: dict[str, float]) -> bool:
    """Whether `w`, with English Zipf figure `z`, may be an English root: `ENGLISH_ROOT_ZIPF` or more in English,
    at most `ENGLISH_ROOT_MARGIN` more in Filipino (`zipf`), `_MIN_ROOT` letters or more."""
    return (
        z >= ENGLISH_ROOT_ZIPF
        and z >= zipf.get(w, 0.0) - ENGLISH_ROOT_MARGIN
        and len(w) >= _MIN_ROOT
        and w.isalpha()
    )


def affixed_english_reading(
    readings: list[_Reading], f: str, english: dict[str, float], zipf: dict[str, float], known: frozenset[str]
) -> _Reading | None:
    """The best of `readings` (the candidates of the folded word `f` over `english_roots`, best first) that reads
    `f` as Tagalog affixes on an English root, or None: um|attend, um|a|attend, i|display, d|in|eclare, in|apply|an,
    te|text, mag|tweet, na|fa|fall, pinaka|latest, parking|an. The root stands in the word unchanged (no restored
    sound, no linker), -an is the only suffix, isa- and tag- never count (`_NO_LOAN_LABELS`), and the evidence must
    grow with the risk of a name or a word of another language (`_loan_evidence`; after `_WEAK_LOAN_PREFIXES` the
    word must also be one of the lists' words, `known`: running text holds iframe and iCloud). A word English uses
    itself, or Filipino `_OWN_WORD_ZIPF` or more, stays whole."""
    if english_word(f, english) or zipf.get(f, 0.0) >= _OWN_WORD_ZIPF:
        return None
    for r in readings:
        if (
            r.root != f
            and not r.restored
            and not r.linker
            and r.suffix in ("", "an")
            and "".join(f[s:e] for s, e, kind in r.spans if kind == "root") == r.root  # unchanged
            and _loan_evidence(r, english, f in known)
        ):
            return r
    return None


def _loan_evidence(r: _Reading, english: dict[str, float], listed: bool) -> bool:
    """Whether the affixes of `r` and its English root's length and Zipf figure make a case: a suffix needs a root
    of `_LONG_ROOT` letters (not jodi|an, nag|carl|an); -in- alone that or a Zipf of `_SHORT_INFIXED_ZIPF`
    (p|in|ost, t|in|ext; not m|in|oan, t|in|ale); a CV copy alone a root of `_COPY_ALONE_ZIPF` (te|test, not
    la|labs); after `_WEAK_LOAN_PREFIXES` a `listed` word and a root of `_LONG_ROOT` letters and `_WEAK_ROOT_ZIPF`
    (i- and a root of `_LONG_I_ROOT` letters: any English root), or with a copy one of `_WEAK_COPY_ZIPF`
    (na|te|test, not ka|ti|ting), except i- with -in-, a verb's perfective, which asks what -in- alone does or a copy
    (i|t|in|ext, i|p|in|o|post); any other prefix, -um- before a vowel or -in- with a copy, any English root."""
    if not _NO_LOAN_LABELS.isdisjoint(r.prefixes):
        return False
    n, z = len(r.root), english.get(r.root, 0.0)
    if r.suffix and n < _LONG_ROOT:  # nagcarlan is no nag|carl|an
        return False
    first = r.prefixes[0] if r.prefixes else ("um" if r.infix == "um" and r.spans[0][2] == "infix" else "")
    if not first and not r.infix:
        if r.reduplicant:
            return z >= _COPY_ALONE_ZIPF
        return bool(r.suffix) and n >= _LONG_ROOT
    if not first and not r.reduplicant and n < _LONG_ROOT:  # -in- alone: p|in|ost, not m|in|oan
        return z >= _SHORT_INFIXED_ZIPF
    if r.prefixes == ("i",) and r.infix == "in":  # a verb's perfective: i|t|in|ext, i|p|in|o|post
        return bool(r.reduplicant) or n >= _LONG_ROOT or z >= _SHORT_INFIXED_ZIPF
    if first in _WEAK_LOAN_PREFIXES:
        if not listed:
            return False
        if r.reduplicant:
            return z >= _WEAK_COPY_ZIPF
        return n >= _LONG_ROOT and (z >= _WEAK_ROOT_ZIPF or (n >= _LONG_I_ROOT and first == "i"))
    return bool(first or r.reduplicant) or n >= _LONG_ROOT


def hyphenated_reading(f: str) -> _Reading | None:
    """Affixes written before a hyphen on a root no lexicon lists, in the folded word `f`: Filipino spelling keeps a
    borrowed word in its own spelling and hyphenates the prefixes and the CV copy before it (mag-|cast, i-|verify,
    naka-|block, ma|i-|update, ma|di-|disable, nag-|na|navigate, in-|import, in|a-|upload, s|in|e-|save). What
    stands before the last hyphen must read whole as up to two prefixes, then at most one of: a copy of the root's
    first consonants, or of the first of them, and a vowel (the copy follows the sound: se-save, nag|ta-|translate;
    y after a consonant is the vowel: t|in|a-|type), -in- (before a vowel), -in- and a vowel (before a vowel:
    ina-upload), -in- inside such a copy (sh|in|e-share, b|in|a-|block), or ni- and the copy before l, r, y
    (ni|re-|require). With prefixes alone, the root itself may start with the copy (nag-|na|navigate, nag-|a|apply).
    A hyphen stays with the morph before it."""
    head, _, root = f.rpartition("-")
    if not root.isalpha() or len(root) < 2 or not head.replace("-", "").isalpha():
        return None  # (also a word that starts or ends with a hyphen: "" is no letters)
    h = head.replace("-", "")
    onset = _onset(root)
    # (length, kind) of the morphs after the prefixes, and what the copy repeats: the whole onset, or its first
    # consonant (b|in|a-|block)
    tails: list[tuple[tuple[tuple[int, str], ...], str]] = [((), "")]
    for o in sorted({onset, min(onset, 1)}, reverse=True) if onset else ():
        tails += [
            (((o + 1, "reduplicant"),), root[:o]),
            (((o, "reduplicant"), (2, "infix"), (1, "reduplicant")), root[:o]),
        ]
        if root[0] in "lry":  # -in- as ni- before l, r, y, then the copy (ni|re-|require) or not (ni-|reset)
            tails.append((((2, "infix"), (o + 1, "reduplicant")), "ni" + root[:o]))
            tails.append((((2, "infix"),), "ni"))
    if not onset:
        tails += [
            (((1, "reduplicant"),), ""),
            (((2, "infix"),), ""),
            (((2, "infix"), (1, "reduplicant")), ""),
        ]
    for tail, repeated in tails:
        n_tail = sum(n for n, _ in tail)
        if n_tail > len(h):
            continue
        copy = h[len(h) - n_tail :] if n_tail else ""
        if n_tail and not _copy_shaped(copy, tail, repeated):
            continue
        prefixes = prefix_split(h[: len(h) - n_tail])
        if prefixes is None or (not prefixes and not tail):
            continue
        parts = [part for p in prefixes for part in prefix_parts(p)]  # maki|pag-|chat
        parts += [(copy[a:b], k) for a, b, k in _cumulative(tail)]
        body = [(root, "root")]
        rest = root[onset + 1 :]
        if (
            not tail
            and onset
            and root[onset : onset + 1] in "aeiou"
            and len(rest) >= 4
            and rest.startswith(root[:onset])
        ):
            body = [(root[: onset + 1], "reduplicant"), (rest, "root")]  # nag-|na|navigate
        elif not tail and not onset and root[1:2] == root[0] and len(root) >= 5:
            body = [(root[0], "reduplicant"), (root[1:], "root")]  # a vowel's copy: nag-|a|apply
        labels = tuple(t for t, k in parts if k == "prefix")
        return _spelled(f, parts + body, labels, "in" if any(k == "infix" for _, k in parts) else "")
    return None


def _onset(root: str) -> int:
    """How many consonants start `root`; y after a consonant sounds a vowel (type, sync: one)."""
    n = leading_consonants(root)
    return root.find("y", 1) if 0 < root.find("y", 1) < n else n


def _copy_shaped(copy: str, tail: tuple[tuple[int, str], ...], onset: str) -> bool:
    """Whether `copy` is the copy `tail` describes of a root starting with the consonants `onset` (after ni- for the
    tail that starts with it); the copy follows the sound, so a c may be copied as k (kina-|cast, magki-|click)."""
    return any(_shaped(copy, tail, o) for o in dict.fromkeys((onset, onset.replace("c", "k"))))


def _shaped(copy: str, tail: tuple[tuple[int, str], ...], onset: str) -> bool:
    """`_copy_shaped` for one spelling of the onset."""
    if len(tail) == 1 and tail[0][1] == "infix":
        return copy == ("ni" if onset == "ni" else "in")
    if len(tail) == 1:
        return copy[:-1] == onset and copy[-1] in "aeiou"
    if tail[0][1] == "infix" and onset.startswith("ni"):
        return copy[:-1] == onset and copy[-1] in "aeiou"
    if tail[0][1] == "infix":
        return copy[:2] == "in" and copy[2] in "aeiou"
    return copy[: len(onset)] == onset and copy[len(onset) : len(onset) + 2] == "in" and copy[-1] in "aeiou"


# the prefixes before a hyphen: not isa-, which takes Tagalog roots only (pagsasama-sama is no pagsa|sa|ma-|sama)
_HYPHENATED_PREFIXES = frozenset(PREFIXES) - ISA_PREFIXES


def prefix_split(h: str) -> list[str] | None:
    """`h` as at most two prefixes of the inventory but isa- (longest first) that stack (`affixes.realis_stacked`:
    ina-|update is in|a-|update, not i|na-|update), [] for "", None when it is not."""
    if not h:
        return []
    if h in _HYPHENATED_PREFIXES:
        return [h]
    for k in range(len(h) - 1, 0, -1):
        if (
            h[:k] in _HYPHENATED_PREFIXES
            and h[k:] in _HYPHENATED_PREFIXES
            and not realis_stacked((h[:k], h[k:]))
        ):
            return [h[:k], h[k:]]
    return None


def _cumulative(tail: tuple[tuple[int, str], ...]) -> list[tuple[int, int, str]]:
    out, at = [], 0
    for n, kind in tail:
        out.append((at, at + n, kind))
        at += n
    return out


def _spelled(f: str, parts: list[tuple[str, str]], prefixes: tuple[str, ...], infix: str) -> _Reading:
    """The reading of `f` whose morphs are `parts` (text without hyphens, kind), each hyphen of `f` joined to the
    morph before it."""
    spans, at = [], 0
    for text, kind in parts:
        end = at + len(text)
        while end < len(f) and f[end] == "-":
            end += 1
        spans.append((at, end, kind))
        at = end
    copy = "".join(t for t, k in parts if k == "reduplicant")
    return _Reading(tuple(spans), parts[-1][0], prefixes, infix, reduplicant=copy)
