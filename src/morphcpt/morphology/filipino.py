"""Filipino (Tagalog) language pack: affix inventory, a lexicon-checked word analyser, and affix application.

    >>> from morphcpt.morphology import get_language_pack
    >>> [m.text for m in get_language_pack("fil").analyze("Naglalaro")]
    ['Nag', 'la', 'laro']

The analyser finds affixes only where Tagalog puts them — prefixes at the start, -um-/-in- after the first
consonant (or before a vowel-initial root), suffixes at the end, CV reduplication before the root — and accepts
a reading only if the remaining root is in the root lexicon, so "bansa" and "bayan" stay whole. Phonology it
undoes: h-/n-insertion before -an/-in (basahin, tawanan), o -> u raising (inumin <- inom), common syncope
(gawin <- gawa), nasal assimilation of mang-/pang- with deletion of the root's first consonant (mamili <- bili),
the linker -ng (magandang). `apply_affix` runs the same rules forwards for the benchmark generators.

Root lexicon, built lazily on first use from the word lists `lexicon.py` reads (about 3 s with the shipped ones,
then cached in `data/cache/morphology/`, keyed by the inputs and this analyser's source):
- the curated roots in `morphology/data/tl_roots.txt`, plus any `*root*` file in `data/lexicon/` (one root per
  line, first whitespace-separated field, "#" comments);
- the dictionary headwords of `data/lexicon/tgl_words.txt` (tglstemmer's list, which mixes roots and derived
  words such as "kumain") that have no affixed reading even when every headword may serve as a root: those are
  roots ("bansa", "saka"); the rest are derived ("kumain" = k|um|ain). Curated roots always stay roots, which is
  how look-alikes such as "kabayo" (not ka+bayo) are protected.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from morphcpt.morphology.affixes import (
    CIRCUMFIXES,
    CORONAL,
    DELETED_BY_ENDING,
    DELETING,
    INFIXES,
    LABIAL,
    LINKER,
    LINKER_AFTER_N,
    NASAL_BARE,
    NASAL_OF,
    PREFIX_PARTS,
    PREFIXES,
    SUBSTITUTED,
    SUFFIXES,
    SYLLABLE_PREFIXES,
    SYNCOPE,
    fold,
    is_vowel,
    onset_len,
)
from morphcpt.morphology.base import Analysis, LanguagePack, Morph
from morphcpt.morphology.lexicon import (
    FREQUENCY_FILE,
    HEADWORD_FILES,
    curated_roots,
    read_words,
    word_frequencies,
)
from morphcpt.morphology.syllabify import VOWELS, folded_first_syllable_cv

_MAX_WORD = 40
_MAX_PREFIXES = 3
_PREFIX_SET = frozenset(PREFIXES)
_VOWEL_LETTERS = "".join(sorted(VOWELS))
_PREFIX_LENGTHS = sorted({len(p) for p in PREFIXES}, reverse=True)
# prefix -> (its prefix labels, the reduplicant it contains): nakaka- is the prefix naka- plus ka
_PREFIX_LABELS = {
    p: (
        tuple(t for t, k in PREFIX_PARTS.get(p, ((p, "prefix"),)) if k == "prefix"),
        "".join(t for t, k in PREFIX_PARTS.get(p, ()) if k == "reduplicant"),
    )
    for p in PREFIXES
}


# Where an affix of the inventory shows in a folded word, if it has one (see `_bare`).
_AFFIXED_ENDS = (*SUFFIXES, LINKER, LINKER_AFTER_N)
_AFFIXED_STARTS = (*PREFIXES, "ni")  # ni-: -in- before l/y (ni|luto)


def _bare(f: str) -> bool:
    """Whether the folded word `f` can have no reading but one root: no hyphen (names after a prefix, full
    reduplication), no suffix or linker at its end, no prefix (nor ni-) at its start, no -um-/-in- within its first
    four letters (at the start, or after an onset of one or two letters) and no CV copy at its start (a vowel
    followed by the word's first letter, or r after d, within three letters). Every reading with more than one
    morph starts from one of those (`_readings`, `_prefixed`, `_body`), so `spans` skips the search for such words
    (tests/test_morphology.py checks it against the search). Conservative: a word that fails it is searched."""
    if "-" in f or f.endswith(_AFFIXED_ENDS) or f.startswith(_AFFIXED_STARTS):
        return False
    head = f[:4]
    if any(infix in head for infix in INFIXES):
        return False
    return not any(len(f) > k and _copy_may_end_at(f, k) for k in (1, 2, 3))


def _copy_may_end_at(s: str, k: int) -> bool:
    """Whether `s[:k]` can be a CV copy of the syllable after it (len(s) > k): a copy ends in a vowel and starts
    with the letter its syllable starts with, d where that is r (da|rating <- dating)."""
    return s[k - 1] in VOWELS and (s[k] == s[0] or (s[0], s[k]) == ("d", "r"))


def _syllable_ok(root: str) -> bool:
    """Affixed readings need a root of two syllables or more: Tagalog content roots are, "an"/"bay" are not."""
    return len(root) >= 3 and sum(map(root.count, _VOWEL_LETTERS)) >= 2


def load_roots(lexicon_dir: Path | None = None, cache_dir: Path | None = None) -> frozenset[str]:
    """Curated roots, `*root*` files and the underived headwords of `lexicon_dir` (see the module docstring).

    The underived headwords are cached in `cache_dir` under a hash of every input, including the analyser's own
    source, so a change to the rules or the lists recomputes them, and the file written then replaces those of
    earlier inputs; an unwritable cache is skipped.
    """
    roots = set(curated_roots(lexicon_dir))
    if lexicon_dir is None or not Path(lexicon_dir).is_dir():
        return frozenset(roots)
    headword_files = [Path(lexicon_dir) / n for n in HEADWORD_FILES if (Path(lexicon_dir) / n).is_file()]
    if not headword_files:
        return frozenset(roots)
    digest = hashlib.sha256("\n".join(sorted(roots)).encode())
    for path in [
        *headword_files,
        *(Path(__file__).with_name(n) for n in ("filipino.py", "affixes.py", "syllabify.py", "lexicon.py")),
    ]:
        digest.update(path.read_bytes())
    cache = Path(cache_dir) / f"tl_underived_{digest.hexdigest()[:20]}.txt" if cache_dir else None
    if cache is not None and cache.is_file():
        return frozenset(roots | set(cache.read_text(encoding="utf-8").split()))
    headwords = {w for path in headword_files for w in read_words(path)}
    everything = FilipinoPack(roots=roots | headwords, cache_size=0)
    underived = sorted(w for w in headwords - roots if not everything.has_affixed_reading(w))
    if cache is not None:
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
            tmp.write_text("\n".join(underived) + "\n", encoding="utf-8")
            os.replace(tmp, cache)
            for stale in cache.parent.glob("tl_underived_*.txt"):  # other rules or lists: never read again
                if stale != cache:
                    stale.unlink(missing_ok=True)
        except OSError:
            pass  # a read-only data folder: recompute next time
    return frozenset(roots | set(underived))


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
    restored: bool = False


class FilipinoPack(LanguagePack):
    """Tagalog/Filipino morphology. `roots` overrides the lexicon (tests); by default it loads lazily."""

    code = "fil"
    prefixes = PREFIXES
    infixes = INFIXES
    suffixes = SUFFIXES
    circumfixes = CIRCUMFIXES

    def __init__(self, roots: Iterable[str] | None = None, cache_size: int = 1 << 18):
        self._roots = frozenset(fold(r) for r in roots) if roots is not None else None
        self._trusted = self._roots
        self._zipf: dict[str, float] = {}
        self._best = lru_cache(maxsize=cache_size)(self._best_reading)
        self._parse = lru_cache(maxsize=cache_size)(self._analysis)
        self._bounds = lru_cache(maxsize=cache_size)(self._boundaries)

    @property
    def roots(self) -> frozenset[str]:
        if self._roots is None:
            from morphcpt.paths import DATA_DIR, LEXICON_DIR

            self._roots = load_roots(LEXICON_DIR, DATA_DIR / "cache" / "morphology")
            self._trusted = curated_roots(LEXICON_DIR)
            self._zipf = word_frequencies(LEXICON_DIR / FREQUENCY_FILE)
        return self._roots

    def _score(self, f: str, r: _Reading) -> tuple[int, int, int]:
        """Longest root first; then the least marked reading (a root only known from the headword list, a
        restored nasal-deleted consonant, bare -an/-in after a vowel, which needs an unwritten glottal stop);
        then the fewest morphs. kinain is k|in|ain (root kain), not kina|in."""
        root_chars = sum(e - s for s, e, k in r.spans if k == "root")
        marked = int(r.restored) + int(r.root not in self._trusted)
        for (s, e, kind), (_, _, after) in zip(r.spans, r.spans[1:], strict=False):
            if (
                kind == "prefix"
                and f[s:e] in SYLLABLE_PREFIXES
                and after == "root"
                and f[e : e + 2] == f[e - 2 : e]
            ):
                marked += 1  # na|ki|kita, not naki|kita
        if r.suffix in ("an", "in"):
            start = next(s for s, _, k in reversed(r.spans) if k == "suffix" and f[s : s + 2] == r.suffix)
            marked += is_vowel(f[start - 1])
        return (-root_chars, marked, len(r.spans))

    # ---------------------------------------------------------------- analysis
    def parse(self, word: str) -> Analysis:
        return self._parse(word)

    def boundaries(self, word: str) -> list[int]:
        return list(self._bounds(word))

    def spans(self, word: str) -> tuple[tuple[int, int, str], ...]:
        """The spans of the reading `parse` would build its morphs from, without building them (patok asks this of
        every word it meets): one root, without the search, for a word with no affix pattern (`_bare`)."""
        f = fold(word)
        if _bare(f):
            return ((0, len(f), "root"),) if f else ()
        return (self._proper_noun(word) or self._best(f)).spans

    def _boundaries(self, word: str) -> tuple[int, ...]:
        return tuple(m.start for m in self._parse(word).morphs[1:])

    def _analysis(self, word: str) -> Analysis:
        reading = self._reading(word)
        morphs = tuple(Morph(word[s:e], kind, s, e) for s, e, kind in reading.spans)
        return Analysis(
            word=word,
            morphs=morphs,
            root=reading.root,
            prefixes=reading.prefixes,
            infix=reading.infix,
            suffix=reading.suffix,
            reduplicant=reading.reduplicant,
            linker=reading.linker,
        )

    def _reading(self, word: str) -> _Reading:
        """The reading `word` gets: as a prefixed name, else the best of its folded form (cached)."""
        return self._proper_noun(word) or self._best(fold(word))

    @staticmethod
    def _proper_noun(word: str) -> _Reading | None:
        """prefix-Name (taga-Leyte, maka-Amerikano, mala-Marcos): a capital after the hyphen marks a name, which
        no lexicon lists, so the prefix is taken on its form alone."""
        head, dash, name = word.partition("-")
        if (
            not dash
            or not name[:1].isupper()
            or fold(head) not in PREFIXES
            or not name.replace("-", "").isalpha()
        ):
            return None
        n = len(head) + 1
        return _Reading(((0, n, "prefix"), (n, len(word), "root")), fold(name), (fold(head),))

    def is_root(self, word: str) -> bool:
        return fold(word) in self.roots

    def has_affixed_reading(self, word: str) -> bool:
        """Whether some reading other than "the whole word is a root" leaves a lexicon root."""
        self.roots  # noqa: B018 - load the lexicon (and the frequencies `_readings` reads) first
        return any(len(r.spans) > 1 for r in self._readings(fold(word)))

    def _best_reading(self, f: str) -> _Reading:
        # The word must be letters and hyphens: one C-level test rather than one per character.
        letters = f.replace("-", "")
        if not f or len(f) > _MAX_WORD or f in self.roots or (letters and not letters.isalpha()):
            return _Reading(((0, len(f), "root"),), f) if f else _Reading((), "")
        candidates = self._readings(f)
        if len(candidates) < 2:  # most words: nothing to score
            return candidates[0] if candidates else _Reading(((0, len(f), "root"),), f)
        return min(candidates, key=lambda r: self._score(f, r))

    def _readings(self, f: str) -> list[_Reading]:
        """Every candidate reading of the folded word `f`, in a fixed order (`min` keeps the first of equal
        scores)."""
        out: list[_Reading] = []
        ends = [(len(f), "")]
        if f.endswith(LINKER) and len(f) > 4 and is_vowel(f[-3]):
            # -ng after a vowel or -g after n: where both stems are words, the more frequent one (noon|g, una|ng)
            after_vowel, after_n = (self._zipf.get(f[:-k], 0.0) for k in (2, 1))
            if not after_n or after_vowel >= after_n:
                ends.append((len(f) - 2, LINKER))
            if not after_vowel or after_n > after_vowel:
                ends.append((len(f) - 1, LINKER_AFTER_N))
        for end, linker in ends:
            tail = ((end, len(f), "suffix"),) if linker else ()
            g = f[:end]
            if linker and g in self._roots:
                out.append(_Reading(((0, end, "root"),) + tail, g, linker=linker))
            half, dash, rest = g.partition("-")  # full reduplication: halo-halo
            if dash and half == rest and half in self._roots:
                n = len(half) + 1
                spans = ((0, n, "reduplicant"), (n, len(g), "root")) + tail
                out.append(_Reading(spans, half, reduplicant=half, linker=linker))
            for stem_end, suffix in self._suffix_splits(g):
                stail = (((stem_end, end, "suffix"),) if suffix else ()) + tail
                for r in self._prefixed(g[:stem_end], 0, _MAX_PREFIXES, suffix):
                    if linker == LINKER_AFTER_N and r.root not in self._trusted:
                        continue  # -g needs an n-final word: a root only the headword list knows is too weak
                    out.append(
                        _Reading(
                            r.spans + stail,
                            r.root,
                            r.prefixes,
                            r.infix,
                            suffix,
                            r.reduplicant,
                            linker,
                            r.restored,
                        )
                    )
        return out

    @staticmethod
    def _suffix_splits(g: str) -> list[tuple[int, str]]:
        splits = [(len(g), "")]
        if not g.endswith(SUFFIXES):  # most words: one C-level test
            return splits
        for sfx in SUFFIXES:
            if g.endswith(sfx) and len(g) - len(sfx) >= 2:
                stem = g[: -len(sfx)]
                if sfx[0] in "hn" and not is_vowel(stem[-1]) and not any(map(stem.endswith, SYNCOPE)):
                    continue  # -han/-hin/-nan/-nin follow a vowel, or a syncopated root (dal|hin)
                splits.append((len(stem), sfx))
        return splits

    def _lemma(
        self, surface: str, suffixed: str, restore: tuple[str, ...] = ("",)
    ) -> tuple[str, bool] | None:
        """Dictionary root for a surface root, undoing raising/syncope/-ado's lost vowel (`suffixed`: the suffix),
        nasal deletion (`restore`) or d -> r between vowels (maramdaman <- damdam). Prefixes are no roots unless
        curated (pag|kain, not pagka|in)."""
        roots = self._roots
        for c in restore:
            t = c + surface
            if not suffixed and t[:1] != "r":  # nearly every call: the surface root itself is the only option
                if t in roots and _syllable_ok(t) and (t not in _PREFIX_SET or t in self._trusted):
                    return t, bool(c)
                continue
            options = [(t, bool(c))]
            if suffixed == "ado":  # the root's last vowel gave way: sigur|ado <- siguro
                options = [(t + v, bool(c)) for v in "aoe"]
            elif suffixed:
                if t in SYNCOPE:
                    options.append((SYNCOPE[t], bool(c)))
                last_u = t.rfind("u")
                if last_u >= 0 and not any(is_vowel(ch) for ch in t[last_u + 1 :]):
                    options.append((t[:last_u] + "o" + t[last_u + 1 :], bool(c)))
            if t.startswith("r"):
                options += [("d" + o[1:], True) for o, _ in list(options)]
            for o, restored in options:
                if o in roots and _syllable_ok(o) and (o not in _PREFIX_SET or o in self._trusted):
                    return o, restored
        return None

    def _prefixed(self, s: str, pos: int, depth: int, suffixed: str) -> list[_Reading]:
        out = self._body(s, pos, suffixed)
        if depth == 0 or not s.startswith(PREFIXES):  # (one C-level test for the common case: no prefix)
            return out
        # The prefixes `s` starts with, longest first (one of each length at most): a slice and a set lookup per
        # length rather than a `startswith` per prefix.
        for p in [s[:k] for k in _PREFIX_LENGTHS if k <= len(s) and s[:k] in _PREFIX_SET]:
            n = len(p) + (1 if s[len(p) : len(p) + 1] == "-" else 0)
            rest = s[n:]
            if len(rest) < 2 or rest[0] == "-":
                continue
            head = self._prefix_spans(p, pos, n) if p in PREFIX_PARTS else ((pos, pos + n, "prefix"),)
            labels, redup = _PREFIX_LABELS[p]
            if p in NASAL_OF:
                for r in self._nasal_root(p, rest, pos + n, suffixed):
                    out.append(
                        _Reading(
                            head + r.spans, r.root, labels, reduplicant=r.reduplicant, restored=r.restored
                        )
                    )
                continue
            if p in NASAL_BARE and n == len(p):
                for r in self._substituted(rest, pos + n, suffixed):
                    out.append(
                        _Reading(
                            head + r.spans, r.root, (NASAL_BARE[p],), reduplicant=r.reduplicant, restored=True
                        )
                    )
            for r in self._prefixed(rest, pos + n, depth - 1, suffixed):
                if redup and r.reduplicant:
                    continue
                out.append(
                    _Reading(
                        head + r.spans,
                        r.root,
                        labels + r.prefixes,
                        r.infix,
                        r.suffix,
                        r.reduplicant or redup,
                        restored=r.restored,
                    )
                )
        return out

    @staticmethod
    def _prefix_spans(p: str, pos: int, n: int) -> tuple[tuple[int, int, str], ...]:
        parts = PREFIX_PARTS.get(p)
        if not parts:
            return ((pos, pos + n, "prefix"),)
        spans, at = [], pos
        for text, kind in parts:
            spans.append((at, at + len(text), kind))
            at += len(text)
        spans[-1] = (spans[-1][0], pos + n, spans[-1][2])
        return tuple(spans)

    def _nasal_root(self, p: str, rest: str, pos: int, suffixed: str) -> list[_Reading]:
        """The root after a nasal prefix, its first consonant possibly swallowed (mam|ili), possibly after a CV
        reduplicant (nang|ya|yari)."""
        out: list[_Reading] = []
        ending = "ng" if p.endswith("ng") else p[-1]
        restore = ("",) + (DELETED_BY_ENDING[ending] if p in DELETING else ())
        bases = [("", rest)] + [
            (rest[:k], rest[k:])
            for k in (1, 2)
            if len(rest) > k + 2 and rest[k - 1] in VOWELS and folded_first_syllable_cv(rest[k:]) == rest[:k]
        ]
        for red, base in bases:
            for c in restore:
                found = self._lemma(base, suffixed, (c,))
                if found is None:
                    continue
                lemma = found[0]
                initial = lemma[0]
                agrees = (
                    (ending == "m" and initial in LABIAL)
                    or (ending == "n" and initial in CORONAL)
                    or (ending == "ng" and initial not in LABIAL | CORONAL)
                )
                if agrees:
                    spans = (((pos, pos + len(red), "reduplicant"),) if red else ()) + (
                        (pos + len(red), pos + len(rest), "root"),
                    )
                    out.append(_Reading(spans, lemma, reduplicant=red, restored=bool(c) or found[1]))
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
        if len(red) <= len(nasal) or not is_vowel(red[-1]) or not base.startswith(red) or len(base) < 4:
            return out
        for c in SUBSTITUTED[nasal]:
            found = self._lemma(base[len(nasal) :], suffixed, (c,))
            if found is not None:
                spans = ((pos, pos + len(red), "reduplicant"), (pos + len(red), pos + len(rest), "root"))
                out.append(_Reading(spans, found[0], reduplicant=red))
        return out

    def _body(self, s: str, pos: int, suffixed: str) -> list[_Reading]:
        """Readings of `s` as [reduplicant] [infix] root, with the infix inside the first syllable."""
        out: list[_Reading] = []
        end = pos + len(s)
        found = self._lemma(s, suffixed)
        if found:
            out.append(_Reading(((pos, end, "root"),), found[0]))
        # CV reduplication: la|laro, a|alis; the copy keeps d where the base has r (da|rating <- dating). The
        # copied syllable is looked up only where a copy can end (`_copy_may_end_at`).
        for k in (1, 2, 3):
            if len(s) < k + 3 or not _copy_may_end_at(s, k):
                continue
            red, root = s[:k], s[k:]
            copied = folded_first_syllable_cv(root)
            if copied == red or (copied[:1] == "r" and red == "d" + copied[1:]):
                found = self._lemma(root, suffixed)
                if found:
                    out.append(
                        _Reading(
                            ((pos, pos + k, "reduplicant"), (pos + k, end, "root")), found[0], reduplicant=red
                        )
                    )
        c = onset_len(s)
        for inf in INFIXES:
            # vowel-initial root: um|alis, in|alis, um|a|alis
            if s.startswith(inf) and len(s) > 3 and is_vowel(s[2]):
                rest = s[2:]
                found = self._lemma(rest, suffixed)
                if found:
                    out.append(
                        _Reading(((pos, pos + 2, "infix"), (pos + 2, end, "root")), found[0], infix=inf)
                    )
                v = rest[0]
                if rest[1:2] == v and (found := self._lemma(rest[1:], suffixed)):
                    spans = (
                        (pos, pos + 2, "infix"),
                        (pos + 2, pos + 3, "reduplicant"),
                        (pos + 3, end, "root"),
                    )
                    out.append(_Reading(spans, found[0], infix=inf, reduplicant=v))
            # consonant-initial root: k|um|ain, s|um|u|sulat
            if c and s[c : c + 2] == inf and len(s) > c + 3:
                onset, after = s[:c], s[c + 2 :]
                found = self._lemma(onset + after, suffixed)
                if found:
                    spans = (
                        (pos, pos + c, "root"),
                        (pos + c, pos + c + 2, "infix"),
                        (pos + c + 2, end, "root"),
                    )
                    out.append(_Reading(spans, found[0], infix=inf))
                if is_vowel(after[:1]) and len(after) > 3:
                    root = after[1:]
                    if folded_first_syllable_cv(root) == onset + after[0] and (
                        found := self._lemma(root, suffixed)
                    ):
                        spans = (
                            (pos, pos + c, "reduplicant"),
                            (pos + c, pos + c + 2, "infix"),
                            (pos + c + 2, pos + c + 3, "reduplicant"),
                            (pos + c + 3, end, "root"),
                        )
                        out.append(_Reading(spans, found[0], infix=inf, reduplicant=onset + after[0]))
        # -in- before l/y surfaces as ni-: ni|luto, ni|lu|luto
        if s.startswith("ni") and s[2:3] in ("l", "y"):
            for r in self._body(s[2:], pos + 2, suffixed):
                if not r.infix:
                    out.append(
                        _Reading(
                            ((pos, pos + 2, "infix"),) + r.spans,
                            r.root,
                            infix="in",
                            reduplicant=r.reduplicant,
                        )
                    )
        return out


FILIPINO = FilipinoPack()
