"""The candidate readings of a folded Tagalog word: the search behind `filipino.FilipinoPack`.

`StemReadings` finds every way a word splits into prefixes, a CV copy, an infix, a root and a suffix such that the
root, with the alternations Tagalog spelling shows undone, is in the root lexicon: o -> u and final d -> r before a
suffix (inum|in <- inom, lakar|in <- lakad), syncope (takp|an <- takip, datn|an <- dating), h/n before -an/-in,
nasal assimilation and substitution (mam|ili <- bili), d -> r after a CV copy (d|um|a|rating <- dating), -in- as
ni- before l, r and y (and after i- before h, w and vowels: i|ni|handa). `ranking.ReadingRanks` scores the
readings and `filipino.FilipinoPack` keeps the best. The readings after a nasal prefix are in `nasal.NasalReadings`, the reading type and
its marks in `reading.py`.
"""

from __future__ import annotations

from morphcpt.morphology.affixation import lower_final_u, raise_final_o
from morphcpt.morphology.affixes import (
    INFIXED_PREFIXES,
    INFIXES,
    NASAL_BARE,
    NASAL_OF,
    PREFIX_PARTS,
    PREFIXES,
    SUFFIXES,
    SYNCOPE,
    is_vowel,
    onset_len,
    prefix_parts,
)
from morphcpt.morphology.loan_sounds import sound_copy
from morphcpt.morphology.nasal import NasalReadings
from morphcpt.morphology.reading import E_RAISED, SYNCOPATED, _Reading
from morphcpt.morphology.root_evidence import _syncope_h_stem
from morphcpt.morphology.syllabify import VOWELS, folded_first_syllable_cv

_MAX_WORD = 40
# a word this frequent (Zipf) is a common word (`_unshortened`, `filipino.has_affixed_reading`)
COMMON_ZIPF = 4.5
# the second consonant of the onsets borrowings bring: pr, pl, ty, kw, and the digraphs ch, sh, ts (che|check)
CLUSTER_SECOND = frozenset("lrwyhs")
_MAX_PREFIXES = 3
# one consonant sound of a borrowed word, where -in-/-um- go after (sh|in|are)
_DIGRAPHS = frozenset({"ch", "sh", "th", "ph", "ts"})
_PREFIX_SET = frozenset(PREFIXES) | {"mina", "kina"}  # the prefixes `_prefixed` looks for
_PREFIX_STARTS = (*PREFIXES, "mina", "kina")
_NOT_ROOTS = frozenset(PREFIXES)  # mina (mine) and kina are roots too (mag|mi|mina)
# the prefixes before which a borrowing of one syllable is a root (`StemReadings._one_syllable_loan`)
_LOAN_VERB_PREFIXES = frozenset({"mag", "nag", "pag"})
_VOWEL_LETTERS = "".join(sorted(VOWELS))
# the sounds before which -in- surfaces as ni- (`_body`): l, r and y anywhere (ni|luto), and right after the prefix
# i- also h, w and vowels (i|ni|handa, i|ni|uwi)
_NI_BEFORE = frozenset("lry")
_NI_AFTER_I = _NI_BEFORE | frozenset("hw") | frozenset(VOWELS)
_PREFIX_LENGTHS = sorted({len(p) for p in PREFIXES}, reverse=True)
# prefix -> (its prefix labels, the reduplicant it contains): nakaka- is the prefix naka- plus ka
_PREFIX_LABELS = {
    p: (
        tuple(t for t, k in prefix_parts(p) if k == "prefix"),
        "".join(t for t, k in prefix_parts(p) if k == "reduplicant"),
    )
    for p in PREFIXES
}


def _copy_may_end_at(s: str, k: int) -> bool:
    """Whether `s[:k]` can be a CV copy of the syllable after it (len(s) > k): a copy ends in a vowel and starts
    with the letter its syllable starts with, d where that is r (da|rating <- dating), k where that is c
    (nag|ko|code)."""
    return s[k - 1] in VOWELS and (s[k] == s[0] or (s[0], s[k]) in (("d", "r"), ("k", "c")))


def _syncope_of(found: tuple[str, int]) -> int:
    """The `restored` mark a reading of a plain stem keeps from `_lemma`: only a syncope or a raised e (the others
    weigh where they arise)."""
    return found[1] if found[1] in (SYNCOPATED, E_RAISED) else 0


def _glide_copy(root: str) -> str:
    """The copy a root that starts with a consonant and w or y also takes: the syllable its spelling dropped
    (kwento is kuwento: nag|ku|kwento; byahe biyahe: mag|bi|byahe), or "" for any other root."""
    if len(root) > 3 and root[1] in "wy" and root[0] not in VOWELS and root[2] in VOWELS:
        return root[0] + ("u" if root[1] == "w" else "i")
    return ""


def _syllable_ok(root: str) -> bool:
    """Affixed readings need a root of two syllables or more: Tagalog content roots are, "an"/"bay" are not."""
    return len(root) >= 3 and sum(map(root.count, _VOWEL_LETTERS)) >= 2


class StemReadings(NasalReadings):
    """The reading search; the pack supplies `_roots` (the lexicon), `_trusted` (the curated roots), `_zipf`
    (word frequencies) and `_known` (every word of the lists)."""

    # whether a root of one syllable takes affixes: only in the English-root pack (p|in|ost, t|in|ext), as Tagalog
    # content roots have two syllables (`_syllable_ok`)
    _one_syllable = False
    # the roots of the lexicon English uses (`loans.sounded_roots`: like, share), whose copy may follow the sound
    _sounded: frozenset[str] = frozenset()

    def _heard(self, red: str, root: str) -> bool:
        """Whether `red`, which is no copy of `root`'s spelling, is the copy of its sound (`loan_sounds`): asked
        only in the English-root pack or of a pack with English roots in its lexicon (the caller then checks the
        lemma it finds with `_sounded_root`)."""
        return (self._one_syllable or bool(self._sounded)) and sound_copy(red, root)

    def _sounded_root(self, lemma: str) -> bool:
        """Whether a copy of `lemma`'s sound (`_heard`) may stand before it: an English root."""
        return self._one_syllable or lemma in self._sounded

    def _unshortened(self, root: str) -> tuple[bool, float]:
        """A sort key for the roots a syncope may have shortened: the more frequent first (ka|ibg|an <- ibig), but
        a root of no common frequency that the lists show unshortened before a suffix last (kamt|an is kamit's:
        kamot makes kamutin; sakit, common, keeps sakt|an although sakitin is a word)."""
        full = {root, raise_final_o(root)}
        unshortened = any(f + sfx in self._known for f in full for sfx in ("an", "in"))
        return (unshortened and self._zipf.get(root, 0.0) < COMMON_ZIPF, self._frequency(root))

    @staticmethod
    def _suffix_splits(g: str) -> list[tuple[int, str]]:
        splits = [(len(g), "")]
        if not g.endswith(SUFFIXES):  # most words: one C-level test
            return splits
        for sfx in SUFFIXES:
            if g.endswith(sfx) and len(g) - len(sfx) >= 2:
                stem = g[: -len(sfx)]
                if (
                    sfx[0] in "hn"
                    and not is_vowel(stem[-1])
                    and not any(map(stem.endswith, SYNCOPE))
                    and not (sfx[0] == "h" and _syncope_h_stem(stem))
                ):
                    continue  # -han/-hin/-nan/-nin follow a vowel, or a syncopated root (dal|hin, sab|hin)
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
                if t in roots and self._affixable(t):
                    return t, bool(c)
                continue
            options = [(t, bool(c))]
            if suffixed in ("han", "hin") and not is_vowel(t[-1]):
                # -han/-hin after a consonant: only a root that lost its last vowel (dal|hin, sab|hin), never a
                # consonant-final root as spelled (balaghan is no balag + -han)
                lost = [(SYNCOPE[t], bool(c))] if t in SYNCOPE else []
                lost += [(o, SYNCOPATED) for o in self._lost_final_vowel(t, suffixed)]
                if t[0] == "r":  # and its d turned r after a vowel: ka|rum|han <- dumi
                    lost += [(o, SYNCOPATED) for o in self._lost_final_vowel("d" + t[1:], suffixed)]
                for o, restored in lost:
                    if o in roots and _syllable_ok(o) and (o not in _NOT_ROOTS or o in self._trusted):
                        return o, restored
                continue
            if suffixed == "ado":  # the root's last vowel gave way: sigur|ado <- siguro
                options = [(t + v, bool(c)) for v in "aoe"]
            elif suffixed:
                if t in SYNCOPE:
                    options.append((SYNCOPE[t], bool(c)))
                if (lowered := lower_final_u(t)) != t:
                    options.append((lowered, bool(c)))
                if len(t) > 3 and t[-1] == "i" and suffixed in ("han", "hin"):
                    options.append((t[:-1] + "e", E_RAISED))  # a final e raised: ataki|hin <- atake
                # final d -> r between vowels before the suffix: lakar|in <- lakad, bayar|an <- bayad
                if len(t) > 2 and t[-1] == "r" and is_vowel(t[-2]):
                    options += [(o[:-1] + "d", bool(c)) for o, _ in list(options)]
                # syncope: the root's last vowel lost between two consonants (takp|an <- takip, sund|in <- sunod,
                # bigy|an <- bigay), an n for its final ng (datn|an <- dating); marked as a restoration
                if len(t) >= 3 and not is_vowel(t[-1]) and not is_vowel(t[-2]) and is_vowel(t[-3]):
                    ends = (t[-1], "ng") if t[-1] == "n" else (t[-1],)
                    lost = sorted(
                        (t[:-1] + v + e for e in ends for v in _VOWEL_LETTERS), key=self._unshortened
                    )
                    options += [(o, SYNCOPATED) for o in lost]
            if t.startswith("r"):
                options += [("d" + o[1:], True) for o, _ in list(options)]
            for o, restored in options:
                if o in roots and self._affixable(o):
                    return o, restored
        return None

    def _affixable(self, root: str) -> bool:
        """Whether a root of the lexicon takes affixes here: two syllables or more (`_syllable_ok`; one in the
        English-root pack, `_one_syllable`), and no prefix unless curated (pag|kain, not pagka|in)."""
        return (_syllable_ok(root) or self._one_syllable) and (
            root not in _NOT_ROOTS or root in self._trusted
        )

    def _one_syllable_loan(self, root: str) -> bool:
        """A root of one syllable that mag-/nag-/pag- may take as written (`_LOAN_VERB_PREFIXES`): one a copy would
        point to (`_copied_loan`: four letters or more, in the lexicon, no function word): mag|trak, nag|golp,
        mag|tses. (The English-root pack reads its own: mag|drum.)"""
        return not self._one_syllable and not _syllable_ok(root) and self._copied_loan(root) is not None

    def _copied_loan(self, root: str) -> tuple[str, int] | None:
        """A root of one syllable that a consonant's copy points to: borrowings are (nag|re|rent, nag|che-|check),
        and a copy asks for a verb's root, so the two-syllable rule of `_syllable_ok` gives way; not a function word
        (Zipf >= 6, the enclitic lang: ni|lala|ng)."""
        ok = (
            len(root) >= 4
            and root in self._roots
            and root not in _NOT_ROOTS
            and self._zipf.get(root, 0.0) < 6
        )
        return (root, 0) if ok else None

    def _prefixed(
        self, s: str, pos: int, depth: int, suffixed: str, ni_before: frozenset[str] = _NI_BEFORE
    ) -> list[_Reading]:
        out = self._body(s, pos, suffixed, ni_before)
        if depth == 0 or not s.startswith(
            _PREFIX_STARTS
        ):  # (one C-level test for the common case: no prefix)
            return out
        # The prefixes `s` starts with, longest first (one of each length at most): a slice and a set lookup per
        # length rather than a `startswith` per prefix.
        for p in [s[:k] for k in _PREFIX_LENGTHS if k <= len(s) and s[:k] in _PREFIX_SET]:
            n = len(p) + (1 if s[len(p) : len(p) + 1] == "-" else 0)
            rest = s[n:]
            if len(rest) < 2 or rest[0] == "-":
                continue
            if p in INFIXED_PREFIXES:
                if n == len(p) and (p != "kina" or suffixed in ("an", "han", "nan")):
                    out += self._infixed_prefix(p, rest, pos, depth, suffixed)
                continue
            head = self._prefix_spans(p, pos, n) if p in PREFIX_PARTS else ((pos, pos + n, "prefix"),)
            labels, redup = _PREFIX_LABELS[p]
            if p in NASAL_OF:
                for r in self._nasal_root(p, rest, pos + n, suffixed, hyphenated=n > len(p)):
                    out.append(
                        _Reading(
                            head + r.spans, r.root, labels, reduplicant=r.reduplicant, restored=r.restored
                        )
                    )
                if p in ("pam", "ipam") and n == len(p) and rest.startswith("pa"):
                    # pang- before the causative pa- and a root, a thing's noun: pam|pa|lakas, pam|pa|aral|an
                    # (no third prefix nor infix: pam|pamahalaan, pam|pasinaya)
                    for r in self._prefixed(rest, pos + n, depth - 1, suffixed):
                        if r.prefixes == ("pa",) and not r.infix and r.spans[0][1] == pos + n + 2:
                            spans = head + r.spans
                            out.append(
                                _Reading(spans, r.root, labels + r.prefixes, r.infix, r.suffix, r.reduplicant)
                            )
                continue
            if p in NASAL_BARE and n == len(p):
                for r in self._substituted(rest, pos + n, suffixed):
                    out.append(
                        _Reading(
                            head + r.spans, r.root, (NASAL_BARE[p],), reduplicant=r.reduplicant, restored=True
                        )
                    )
            if p in _LOAN_VERB_PREFIXES and n == len(p) and not suffixed and self._one_syllable_loan(rest):
                out.append(
                    _Reading(head + ((pos + n, pos + len(s), "root"),), rest, labels)
                )  # mag|trak, nag|golp
            after = _NI_AFTER_I if p == "i" and n == 1 else _NI_BEFORE
            for r in self._prefixed(rest, pos + n, depth - 1, suffixed, after):
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

    def _infixed_prefix(self, p: str, rest: str, pos: int, depth: int, suffixed: str) -> list[_Reading]:
        """ma-/ka-/pa- with -in- (`INFIXED_PREFIXES`) before `rest`: m|in|a|buti, k|in|a|hi|hilig|an,
        p|in|a|kain; mina- may repeat its own ma (m|in|a|ma|dali, the imperfective)."""
        head = ((pos, pos + 1, "prefix"), (pos + 1, pos + 3, "infix"), (pos + 3, pos + 4, "prefix"))
        label = (INFIXED_PREFIXES[p],)
        at = pos + 4
        inner = (
            self._prefixed(rest, at, depth - 1, suffixed) if p == "pina" else self._body(rest, at, suffixed)
        )
        out = [
            _Reading(
                head + r.spans, r.root, label + r.prefixes, "in", r.suffix, r.reduplicant, restored=r.restored
            )
            for r in inner
            if not r.infix
        ]
        if p == "mina" and rest.startswith("ma") and len(rest) > 5:
            for r in self._body(rest[2:], at + 2, suffixed):
                if not (r.infix or r.reduplicant):
                    spans = head + ((at, at + 2, "reduplicant"),) + r.spans
                    out.append(_Reading(spans, r.root, label, "in", reduplicant="ma", restored=r.restored))
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

    def _body(
        self, s: str, pos: int, suffixed: str, ni_before: frozenset[str] = _NI_BEFORE
    ) -> list[_Reading]:
        """Readings of `s` as [reduplicant] [infix] root, with the infix inside the first syllable (or as ni- before
        the sounds `ni_before` holds)."""
        out: list[_Reading] = []
        end = pos + len(s)
        found = self._lemma(s, suffixed)
        if found:
            out.append(_Reading(((pos, end, "root"),), found[0], restored=_syncope_of(found)))
        # CV reduplication: la|laro, a|alis; the copy keeps d where the base has r (da|rating <- dating). The
        # copied syllable is looked up only where a copy can end (`_copy_may_end_at`).
        for k in (1, 2, 3):
            if len(s) < k + 3 or not _copy_may_end_at(s, k):
                continue
            red, root = s[:k], s[k:]
            copied = folded_first_syllable_cv(root)
            # the copy is the base's first consonant and vowel, d where the base has r, or a whole cluster and its
            # vowel (pri|prito, tya|tyaga; pi|prito is the first kind)
            spelled = (
                copied == red
                or red == _glide_copy(root)
                or (copied[:1] == "r" and red == "d" + copied[1:])
                or (
                    k == 3
                    and red[:2] == root[:2]
                    and root[0] not in VOWELS
                    and root[1] in CLUSTER_SECOND
                    and root[2] in VOWELS  # the copy's vowel follows the sound: she|share
                )
            )
            # an English root's copy follows its sound (nag|mi|meeting, k|in|i|click, ni|la|like: `_heard`)
            if spelled or self._heard(red, root):
                found = (
                    (red[:1] == "d" and self._lemma("d" + root[1:], suffixed))
                    or self._lemma(root, suffixed)
                    or (k > 1 and self._copied_loan(root))
                )
                if found and not spelled and not self._sounded_root(found[0]):
                    found = None
                if found:
                    out.append(
                        _Reading(
                            ((pos, pos + k, "reduplicant"), (pos + k, end, "root")),
                            found[0],
                            reduplicant=red,
                            restored=_syncope_of(found),
                        )
                    )
        dash = s.find("-")
        if 1 < dash <= 4 and len(s) > dash + 3:
            # a copy written with a hyphen before a known root: re-|record, che-|check, dra-|drive (the copy
            # follows the sound: its vowel may differ from the spelling's)
            red, root = s[:dash], s[dash + 1 :]
            cons = red[:-1]
            if (
                red[-1] in VOWELS
                and not any(ch in VOWELS for ch in cons)
                and root.startswith(cons)
                and (found := self._lemma(root, suffixed) or self._copied_loan(root))
            ):
                spans = ((pos, pos + dash + 1, "reduplicant"), (pos + dash + 1, end, "root"))
                out.append(_Reading(spans, found[0], reduplicant=red, restored=_syncope_of(found)))
        c = onset_len(s)
        if s[2:4] in INFIXES and (s[:2] in _DIGRAPHS or (c == 1 and s[1] in "lrwy" and s[0] not in "wy")):
            c = 2  # after a digraph, one sound (sh|in|are, ch|in|eck), or a cluster (pl|in|ano, kw|in|ento)
        for inf in INFIXES:
            # vowel-initial root: um|alis, in|alis, um|a|alis
            if s.startswith(inf) and len(s) > 3 and is_vowel(s[2]):
                rest = s[2:]
                found = self._lemma(rest, suffixed)
                if found:
                    out.append(
                        _Reading(
                            ((pos, pos + 2, "infix"), (pos + 2, end, "root")),
                            found[0],
                            infix=inf,
                            restored=_syncope_of(found),
                        )
                    )
                v = rest[0]
                if rest[1:2] == v and (found := self._lemma(rest[1:], suffixed)):
                    spans = (
                        (pos, pos + 2, "infix"),
                        (pos + 2, pos + 3, "reduplicant"),
                        (pos + 3, end, "root"),
                    )
                    out.append(
                        _Reading(spans, found[0], infix=inf, reduplicant=v, restored=_syncope_of(found))
                    )
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
                    out.append(_Reading(spans, found[0], infix=inf, restored=_syncope_of(found)))
                if is_vowel(after[:1]) and len(after) > 3:
                    root = after[1:]
                    copied = folded_first_syllable_cv(root)
                    # the copy keeps d where the base turned it r (d|um|a|rating <- dating); after a cluster the
                    # copy is the whole cluster and its vowel (pr|in|i|prito, dr|in|o|droga)
                    copies = (copied, _glide_copy(root))
                    spelled = (
                        onset + after[0] in copies
                        or (onset == "d" and copied == "r" + after[0])
                        or (c == 2 and root[:2] == onset and root[2:3] == after[0])
                    )
                    if (
                        (spelled or self._heard(onset + after[0], root))
                        and (
                            found := (onset == "d" and self._lemma("d" + root[1:], suffixed))
                            or self._lemma(root, suffixed)
                        )
                        and (spelled or self._sounded_root(found[0]))
                    ):
                        spans = (
                            (pos, pos + c, "reduplicant"),
                            (pos + c, pos + c + 2, "infix"),
                            (pos + c + 2, pos + c + 3, "reduplicant"),
                            (pos + c + 3, end, "root"),
                        )
                        out.append(
                            _Reading(
                                spans,
                                found[0],
                                infix=inf,
                                reduplicant=onset + after[0],
                                restored=_syncope_of(found),
                            )
                        )
        # the copy of a stem with -um- (its first syllable Cu): nag|pu|p|um|ilit, nag|su|s|um|ikap <- sikap; not on
        # the weakest roots (isusumite is no i|su|s|um|ite <- site)
        if (
            len(s) > 6
            and s[1] == "u"
            and s[2] == s[0]
            and s[3:5] == "um"
            and not is_vowel(s[0])
            and is_vowel(s[5])
        ):
            found = self._lemma(s[2] + s[5:], suffixed)
            if found and found[0] not in self._rare:
                spans = (
                    (pos, pos + 2, "reduplicant"),
                    (pos + 2, pos + 3, "root"),
                    (pos + 3, pos + 5, "infix"),
                )
                out.append(
                    _Reading(
                        (*spans, (pos + 5, end, "root")),
                        found[0],
                        infix="um",
                        reduplicant=s[:2],
                        restored=_syncope_of(found),
                    )
                )
        # -in- before l/r/y (and, right after i-, h/w/vowels) surfaces as ni-: ni|luto, ni|lu|luto, ni|renta
        if s.startswith("ni") and s[2:3] in ni_before:
            for r in self._body(s[2:], pos + 2, suffixed):
                if not r.infix:
                    out.append(
                        _Reading(
                            ((pos, pos + 2, "infix"),) + r.spans,
                            r.root,
                            infix="in",
                            reduplicant=r.reduplicant,
                            restored=r.restored,
                        )
                    )
        return out
