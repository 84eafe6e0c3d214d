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

The root lexicon (`rootlexicon`: curated roots, underived dictionary headwords, and the words the shipped lists
show inflecting) is built lazily on first use and cached in `data/cache/morphology/`. Curated roots always stay
roots, which is how look-alikes such as "kabayo" (not ka+bayo) are protected.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from morphcpt.morphology import rootlexicon
from morphcpt.morphology.affixes import (
    CIRCUMFIXES,
    INFIXES,
    ISA_LABELS,
    LINKER,
    LINKER_AFTER_N,
    PREFIXES,
    SUFFIXES,
    fold,
    is_vowel,
    realis_stacked,
)
from morphcpt.morphology.base import Analysis, LanguagePack, Morph
from morphcpt.morphology.compound import hyphen_reading
from morphcpt.morphology.fallback import (
    common_root,
    copied_root_reading,
    english_root_reading,
    linked_listed_word,
    linked_unlisted_stem,
    shown_root_reading,
)
from morphcpt.morphology.lexicon import (
    FREQUENCY_FILE,
    HEADWORD_FILES,
    curated_roots,
    known_words,
    read_words,
    word_frequencies,
)
from morphcpt.morphology.loans import (
    english_frequencies,
    english_word,
    mostly_english,
    sounded_roots,
    unhyphenated_reading,
)
from morphcpt.morphology.plural import plural_fits, plural_reading, plural_singular
from morphcpt.morphology.ranking import ReadingRanks
from morphcpt.morphology.reading import D_SUBSTITUTED, SYNCOPATED, _Reading
from morphcpt.morphology.root_evidence import infixed_forms
from morphcpt.morphology.stems import _MAX_PREFIXES, _MAX_WORD, COMMON_ZIPF, StemReadings, _copy_may_end_at
from morphcpt.morphology.syllabify import folded_first_syllable_cv
from morphcpt.morphology.unlisted import unlisted_root_reading

# Where an affix of the inventory shows in a folded word, if it has one (see `_bare`).
_AFFIXED_ENDS = (*SUFFIXES, LINKER, LINKER_AFTER_N)
_AFFIXED_STARTS = (
    *PREFIXES,
    "ni",
    "mina",
    "kina",
)  # ni-: -in- before l/r/y (ni|luto); m|in|a|buti, k|in|a|...
# prefixes whose forms show a root in its full spelling (`FilipinoPack._inflects`)
_FULL_FORM_PREFIXES = (
    "mag",
    "nag",
    "pag",
    "ma",
    "na",
    "i",
    "maka",
    "naka",
    "taga",
    "pinag",
    "magpa",
    "nagpa",
)


# where isa- may stand (`_isa_fits`)
_ISA_STARTS = ("isa", "isina", "maisa", "naisa", "pagsasa", "magsa", "nagsa")


def _bare(f: str) -> bool:
    """Whether the folded word `f` can have no reading but one root: no hyphen (names after a prefix, full
    reduplication), no suffix or linker at its end, no prefix (nor ni-) at its start, no -um-/-in- within its first
    four letters (at the start, or after an onset of one or two letters) and no CV copy at its start (a vowel
    followed by the word's first letter, or r after d, within three letters). Every reading with more than one
    morph starts from one of those (`_readings`, `_prefixed`, `_body`), so `spans` skips the search for such words
    (tests/morphology/test_language_pack.py checks it against the search). Conservative: a word that fails it is searched."""
    if "-" in f or f.endswith(_AFFIXED_ENDS) or f.startswith(_AFFIXED_STARTS):
        return False
    head = f[:4]
    if any(infix in head for infix in INFIXES):
        return False
    return not any(len(f) > k and _copy_may_end_at(f, k) for k in (1, 2, 3))


def load_roots(lexicon_dir: Path | None = None, cache_dir: Path | None = None) -> frozenset[str]:
    """Every root of the lexicon of `lexicon_dir` (see `rootlexicon`)."""
    return load_root_tiers(lexicon_dir, cache_dir)[0]


def load_root_tiers(
    lexicon_dir: Path | None = None, cache_dir: Path | None = None
) -> tuple[frozenset[str], frozenset[str]]:
    """(every root, the roots only the lists' inflected forms show) of `lexicon_dir` (see `rootlexicon`)."""
    return rootlexicon.load_root_tiers(lexicon_dir, cache_dir, _lexicon_pack)


def _lexicon_pack(roots: Iterable[str], zipf: dict[str, float], known: frozenset[str]) -> FilipinoPack:
    """A pack over exactly `roots` that trusts every one of them, for sorting the word lists."""
    pack = FilipinoPack(roots=roots, cache_size=0)
    pack._zipf, pack._known = zipf, known
    return pack


class FilipinoPack(ReadingRanks, StemReadings, LanguagePack):
    """Tagalog/Filipino morphology. `roots` overrides the lexicon (tests); by default it loads lazily."""

    code = "fil"
    prefixes = PREFIXES
    infixes = INFIXES
    suffixes = SUFFIXES
    circumfixes = CIRCUMFIXES

    def __init__(self, roots: Iterable[str] | None = None, cache_size: int = 1 << 18):
        self._rare: frozenset[str] = (
            frozenset()
        )  # weakest roots: only a dictionary or the paradigms of the lists
        self._roots = frozenset(fold(r) for r in roots) if roots is not None else None
        self._trusted = self._roots
        self._zipf: dict[str, float] = {}
        self._known: frozenset[str] = frozenset()  # every word of the shipped lists (empty: no such check)
        self._shipped = roots is None  # the lexicon comes from the shipped word lists
        self._secondary: frozenset[str] = frozenset()  # headwords outside the lexicon (`_wider`)
        self._wider_pack: FilipinoPack | None = None
        self._derived_roots: dict[str, bool] = {}  # `ranking.ReadingRanks._derived`
        self._english_pack: FilipinoPack | None = None  # English roots only (`fallback.english_root_reading`)
        self._best = lru_cache(maxsize=cache_size)(self._best_reading)
        self._parse = lru_cache(maxsize=cache_size)(self._analysis)
        self._bounds = lru_cache(maxsize=cache_size)(self._boundaries)

    @property
    def roots(self) -> frozenset[str]:
        if self._roots is None:
            from morphcpt.paths import DATA_DIR, LEXICON_DIR

            self._roots, induced = load_root_tiers(LEXICON_DIR, DATA_DIR / "cache" / "morphology")
            self._trusted = curated_roots(LEXICON_DIR)
            self._zipf = word_frequencies(LEXICON_DIR / FREQUENCY_FILE)
            self._known = known_words(LEXICON_DIR)
            common = (set(self._trusted) | set(read_words(LEXICON_DIR / HEADWORD_FILES[0]))) - induced
            self._rare = (
                frozenset(r for r in self._roots if r not in common and not self._zipf.get(r)) | induced
            )
            self._sounded = sounded_roots(english_frequencies(), self._zipf, self._roots)
        return self._roots

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
        return self._cased(word, f, self._proper_noun(word) or self._best(f)).spans

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
        f = fold(word)
        return self._cased(word, f, self._proper_noun(word) or self._best(f))

    @staticmethod
    def _cased(word: str, f: str, r: _Reading) -> _Reading:
        """`r`, or `word` whole where it is capitalised and `r` only a guess of a root no list holds (Tromelin, a
        name, is no tromel|in; `unlisted.unlisted_root_reading`)."""
        return _Reading(((0, len(f), "root"),), f) if r.guessed and word[:1].isupper() else r

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
        """Whether some reading other than "the whole word is a root" leaves a lexicon root. Two readings do not
        count when their root is rarer than the word and no common word (`COMMON_ZIPF`): a linker alone (sulong is
        no sulo + -ng, but taong is tao|ng, kanyang kanya|ng) and an undone syncope (pansin is no pans|in <- panas,
        but kamtan is kamt|an <- kamit), unless the lists show the root inflecting in its full spelling (masdan is
        masd|an <- masid: `_inflects`). A vowel-final root's syncope before -han/-hin counts only so (sabhin is
        sab|hin <- sabi, which the lists show as nagsabi and sinabi; daghan, a word of another language, is no
        daga's). The plural of a verbal prefix counts too (mangagka|tipon: `_plural_reading_exists`)."""
        self.roots  # noqa: B018 - load the lexicon (and the frequencies `_readings` reads) first
        f = fold(word)
        zipf = self._zipf.get(f, 0.0)
        return any(
            len(r.spans) > 1
            # d -> n never takes a headword out (panahon is no pan|ahon <- dahon)
            and r.restored != D_SUBSTITUTED
            and (
                self._inflects(r.root)
                if r.restored == SYNCOPATED and r.suffix in ("han", "hin")
                else (
                    (r.restored != SYNCOPATED and r.affixed)
                    or r.linker == LINKER_AFTER_N  # atin|g: -g never ends a root
                    or self._zipf.get(r.root, 0.0) >= min(zipf, COMMON_ZIPF)
                    or (r.restored == SYNCOPATED and self._inflects(r.root))
                )
            )
            for r in self._readings(f)
        ) or self._plural_reading_exists(f)

    def _plural_reading_exists(self, f: str) -> bool:
        """Whether the folded `f` reads as the plural of a verbal prefix (`plural.plural_reading`) by the search
        alone: mangagka|tipon, though the headword magkatipon is a root of its own where the lexicon is built."""
        singular = plural_singular(f)
        return singular is not None and any(plural_fits(self, r) for r in self._readings(singular))

    def _inflects(self, root: str) -> bool:
        """Whether the word lists hold at least two forms of `root` unshortened, with a prefix (and a CV copy) or
        an infix: the root lives in its full spelling, so a shortened headword is its syncope (masdan <- masid:
        nagmamasid, pagmamasid), unlike pansin (no such forms of panas)."""
        copy = folded_first_syllable_cv(root)
        forms = {p + c + root for p in _FULL_FORM_PREFIXES for c in ("", copy)}
        if not is_vowel(root[:1]):
            forms |= set(infixed_forms(root))
        return len(forms & self._known) >= 2

    def _best_reading(self, f: str) -> _Reading:
        # The word must be letters and hyphens: one C-level test rather than one per character.
        letters = f.replace("-", "")
        if not f or len(f) > _MAX_WORD or f in self.roots or (letters and not letters.isalpha()):
            return _Reading(((0, len(f), "root"),), f) if f else _Reading((), "")
        candidates = self._readings(f)
        if candidates and mostly_english(f, english_frequencies(), self._zipf):  # manager is no ma|nager
            candidates = [
                r
                for r in candidates
                if r.root not in self._rare and (r.root in self._trusted or common_root(self, r.root))
            ]
        if candidates and f.startswith(_ISA_STARTS):
            candidates = [r for r in candidates if ISA_LABELS.isdisjoint(r.prefixes) or self._isa_fits(r)]
        if len(candidates) < 2:  # most words: nothing to score
            if candidates:
                return candidates[0]
            return (
                ("-" in f and hyphen_reading(self, f))
                or self._through_headword(f, self._headword_reading(f))
                or unhyphenated_reading(f, english_frequencies(), self._zipf)
                or english_root_reading(self, f)
                or linked_unlisted_stem(self, f)
                or linked_listed_word(self, f)
                or plural_reading(self, f)
                or copied_root_reading(self, f)
                or shown_root_reading(self, f)
                or unlisted_root_reading(self, f)
                or _Reading(((0, len(f), "root"),), f)
            )
        best = min(candidates, key=lambda r: self._score(f, r))
        best = self._curated_alternative(f, best, candidates)
        best = self._read_through(f, best, candidates)
        best = self._linked_alternative(f, best, candidates)
        # The same cut with another root (nang|uha: kuha or uha; man|ita: sita or tita): the root the lists show as a
        # verb (`_shown_as_verb`: nam|atay <- patay, which pinatay shows, not batay, based on), then the more frequent.
        # (A d -> n reading is no such alternative to a t/s one: the rarer substitution loses whatever the frequency.)
        same_cut = [
            best,
            *(
                r
                for r in candidates
                if r.spans == best.spans
                and r.root != best.root
                and (r.restored == D_SUBSTITUTED) == (best.restored == D_SUBSTITUTED)
            ),
        ]
        return min(same_cut, key=self._root_frequency) if len(same_cut) > 1 else best

    def _isa_fits(self, r: _Reading) -> bool:
        """isa- stands on a root of common frequency (isarado is no isa|rado), with at most ka- between
        (isa|ka|tupar|an; pagsasama-sama is no pagsa|sa|ma-|sama)."""
        after = r.prefixes[next(i for i, p in enumerate(r.prefixes) if p in ISA_LABELS) + 1 :]
        return common_root(self, r.root) and all(p == "ka" for p in after)

    def _headword_reading(self, f: str) -> _Reading | None:
        """For a word with no reading at all, the best one whose root is a headword the lexicon left out as derived
        (ibabaw as i|babaw): its forms read (um|ibabaw, k|in|alikot) rather than stay whole. Such roots rank rarest;
        only -um-/-in-, a CV copy, a prefix not in `affixes.WEAK_PREFIXES` or one suffix -an/-in (-han/-hin) counts (no
        linker alone: pindang is no pindan|g; sayang|in, pa|kinang|in), the suffix with no sound put back and not
        after a headword's own -an (suliranin is no suliran|in). Needs the shipped lists; a word with a reading keeps
        it."""
        if len(f) < 6 or (wider := self._wider()) is None:
            return None
        secondary = wider._secondary
        found = [
            r
            for r in wider._readings(f)
            if r.root in secondary
            and r.root != f
            and (
                r.strongly_affixed
                or (
                    r.suffix in ("an", "in", "han", "hin")
                    and not r.linker
                    and not r.restored
                    and not r.root.endswith("an")
                    and sum(kind == "suffix" for _, _, kind in r.spans) == 1
                )
            )
        ]
        return min(found, key=lambda r: wider._score(f, r)) if found else None

    def _through_headword(self, f: str, r: _Reading | None) -> _Reading | None:
        """`r` (a reading of `f` on a headword the lexicon left out as derived), or, where that headword reads as
        affixes on a curated root, the two readings made one: k|in|a|usap (kausap is ka|usap), pang|ka|isip|an
        (kaisipan), p|in|a|ni|niwala|an (paniniwala <- tiwala). Not through a linker, -in- or i- alone (binata,
        ibabaw: nouns of their own) or a misfit."""
        if r is None:
            return None
        positions = [i for s, e, kind in r.spans if kind == "root" for i in range(s, e)]
        if "".join(f[i] for i in positions) != r.root:
            return r  # the headword does not stand in the word as spelled
        inner = self._best(r.root)
        if (
            inner.root not in self._trusted
            or inner.linker
            or inner.infix  # pasinaya is no pa|s|in|aya on saya
            or not (inner.suffix or inner.prefixes not in ((), ("i",)))  # i- alone: ibabaw, ilalim
            or self._misfit(inner)
        ):
            return r
        spans = [span for span in r.spans if span[2] != "root"]
        # each of the headword's morphs onto the word's letters, in two pieces where an infix splits it (k|in|a)
        for a, b, kind in inner.spans:
            run = positions[a:b]
            start = run[0]
            for prev, here in zip(run, run[1:], strict=False):
                if here != prev + 1:
                    spans.append((start, prev + 1, kind))
                    start = here
            spans.append((start, run[-1] + 1, kind))
        return _Reading(
            tuple(sorted(spans)),
            inner.root,
            r.prefixes + inner.prefixes,
            r.infix or inner.infix,
            r.suffix or inner.suffix,
            r.reduplicant or inner.reduplicant,
            r.linker,
            inner.restored or r.restored,
        )

    def _wider(self) -> FilipinoPack | None:
        """This pack with the dictionary headwords of four letters or more that its lexicon does not hold added as
        its rarest roots (`_headword_reading`), built once; None for a pack over given roots."""
        if self._wider_pack is None:
            self.roots  # noqa: B018 - the lexicon first
            if not self._shipped:
                return None
            from morphcpt.paths import LEXICON_DIR

            secondary = rootlexicon.left_out_headwords(LEXICON_DIR, self._roots)
            wider = copy.copy(self)
            wider._roots = self._roots | secondary
            wider._rare = self._rare | secondary
            wider._secondary = secondary
            wider._derived_roots = {}  # answers over other roots
            self._wider_pack = wider
        return self._wider_pack

    def _root_frequency(self, r: _Reading) -> tuple[bool, float]:
        return (not self._shown_as_verb(r.root), self._frequency(r.root))

    def _readings(self, f: str) -> list[_Reading]:
        """Every candidate reading of the folded word `f`, in a fixed order (`min` keeps the first of equal
        scores)."""
        out: list[_Reading] = []
        weak_g: list[_Reading] = []  # -g readings too weak alone (see the end)
        shown_g = False
        ends = [(len(f), "")]
        if f.endswith(LINKER) and len(f) > 4 and is_vowel(f[-3]):
            # -ng after a vowel or -g after n: where both stems are words, the more frequent one (noon|g, una|ng).
            # The linker follows a word: a stem no word list holds is no word (sulong is not sulo|ng, nor
            # magsumbong magsumbo|ng), so the -ng stays with the root.
            after_vowel, after_n = (self._zipf.get(f[:-k], 0.0) for k in (2, 1))
            known = self._known
            if (not after_n or after_vowel >= after_n) and (not known or f[:-2] in known):
                ends.append((len(f) - 2, LINKER))
            if (not after_vowel or after_n > after_vowel) and (not known or f[:-1] in known):
                ends.append((len(f) - 1, LINKER_AFTER_N))
        english = len(ends) > 1 and english_word(f, english_frequencies())  # breaking: no break|in|g
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
                    if realis_stacked(r.prefixes):  # pa|na|tili, ka|na|gawa, i|na|probahan: no Tagalog stack
                        continue
                    if r.d_as_r_after_i(g):  # irita is no i|rita <- dita: i- keeps a d (idagdag, idaan)
                        continue
                    reading = _Reading(
                        r.spans + stail,
                        r.root,
                        r.prefixes,
                        r.infix,
                        suffix,
                        r.reduplicant,
                        linker,
                        r.restored,
                    )
                    if (
                        linker != LINKER_AFTER_N
                        or r.root in self._trusted
                        or self._zipf.get(g, 0.0) >= COMMON_ZIPF
                    ):
                        out.append(reading)
                    elif ((suffix and r.restored != SYNCOPATED) or r.infix) and not english:
                        out.append(reading)
                        shown_g = True
                    else:
                        weak_g.append(reading)
        # -g needs an n-final word: a root only the headword list knows is too weak, unless the word before the -g is
        # a common one (kasalukuyan|g) or has a suffix or -in- (ma|lawak|an|g, h|in|atul|an|g) in a word English does
        # not use (breaking: `loans.english_word`). A prefix alone (magsabong is no mag|sabon|g) or a suffix
        # after a vowel the analyser put back (pindang is no pind|an|g <- pinid) is no such sign. Once one reading
        # shows the -g, the weak ones compete too (naka|laan|g, not na|kala|an|g), after it on equal scores.
        return out + weak_g if shown_g else out


FILIPINO = FilipinoPack()
