"""Which generated forms make the gold sets of `data/gold_heldout/`: roots, unambiguous attested forms, the split.

Build-time only (`scripts/build_gold_heldout.py` calls `build`) and, like `gold_paradigms`, independent of the
analyser it judges. Each rule below answers a kind of wrong line found by reading the DEV set (never the
held-out one); data/gold_heldout/README.md lists them with their examples.

- A form is kept only if a shipped word list attests it (`LISTS`), and only if no other word that may be a root
  makes the same form with another cut or root: the templates run over every listed word, dictionary headwords
  (`HEADWORDS`) included (nag|paalam meets nagpa|alam, ma|ngamba meets mang|amba, kabayu|han meets ka|bayu|han,
  uling|an meets the syncope ulng|an <- ulinig), and a plain prefix on another word counts too (pa|minsan meets
  pam|insan <- pinsan).
- A linker form is kept only if no dictionary lists it as a word of its own (barong, upang).
- A syncope form is kept only if the lost vowel can be no other (kamt|an: kamit or kamot) and the shortened stem
  is no word of its own (uling) nor one vowel short of one (hing|in: hingi).
- A root is a word of the lists from which the templates make at least 4 attested forms of 3 affix families; it
  is left out if it is itself such a form (tulungan), a prefix plus another word that may be a root (pahiwatig,
  kasapakat), a suffixed or -ado form of another word (bilhan <- bili, sigurado <- siguro), raised (lubus), starts
  with a CV copy (popost) or with ng + consonant (ngyari), or is English: spelled so (c, f, j, sh, ...) or more
  frequent in English than in Filipino by wordfreq (date, install, graduate), or such a word plus a suffix
  (replyan).
"""

from __future__ import annotations

import collections
import hashlib
import random
from collections.abc import Callable
from pathlib import Path

from gold_paradigms import VOWELS, Form, paradigm, suffixed

LISTS = ("fil_tesseract_words.txt", "fil_wordfreq.tsv", "tgl_words.txt")  # attest a form
HEADWORDS = ("tl_wiktionary_headwords.txt",)  # a dictionary: may be a root, never attests a form
DICTIONARIES = ("tl_wiktionary_headwords.txt", "tgl_words.txt")  # headwords: roots and derived words mixed
ENGLISH_SPELLING = (
    "c",
    "q",
    "x",
    "f",
    "v",
    "z",
    "j",
    "sh",
    "th",
    "ee",
    "oo",
    "ea",
    "ph",
    "ou",
    "ght",
    "ow",
    "oa",
    "gg",
)
DERIVING = ("pa", "ka", "ma", "na", "pag", "mag", "nag", "pang", "pam", "pan", "i", "taga", "paki", "naka")
PLAIN_PREFIXES = (
    "i",
    "ka",
    "ma",
    "na",
    "pa",
    "mag",
    "nag",
    "pag",
)  # a form may also be one of these + a word
SUFFIX_ENDINGS = ("an", "han", "in", "hin", "n", "ng", "g")
MIN_FORMS, MIN_FAMILIES = 4, 3


def words_of(lexicon: Path, names: tuple[str, ...]) -> set[str]:
    """The first field of every line of the named lists, lowercased ("#" lines skipped)."""
    words = set()
    for name in names:
        for line in (lexicon / name).read_text(encoding="utf-8").splitlines():
            word = line.split("\t")[0].strip().lower()
            if word and not word.startswith("#"):
                words.add(word)
    return words


def root_shaped(word: str) -> bool:
    """Letters only, 3 to 12 of them, two syllables or more, and no ng + consonant at the start (ngyari)."""
    return (
        word.isalpha()
        and word.isascii()
        and 3 <= len(word) <= 12
        and sum(c in VOWELS for c in word) >= 2
        and not (word.startswith("ng") and word[2] not in VOWELS)
    )


def english_spelled(word: str) -> bool:
    return any(e in word for e in ENGLISH_SPELLING)


def evidence(forms: list[Form]) -> list[Form]:
    """The forms that count as evidence that a word is a root (a linker follows any word)."""
    return [f for f in forms if f.template != "linker"]


def productive(forms: list[Form]) -> bool:
    ev = evidence(forms)
    return (
        len({f.word for f in ev}) >= MIN_FORMS and len({f.template.split(":")[0] for f in ev}) >= MIN_FAMILIES
    )


def lost_vowel_stems(r: str) -> list[str]:
    """The stems of `r` that syncope makes before a suffix (takip -> takp, dating -> datng and datn)."""
    return sorted({stem for stem, _, tags in suffixed(r) if "syncope" in tags})


def syncope_is_ambiguous(r: str, known: set[str]) -> bool:
    """Whether a syncope form of `r` could come from another word: the lost vowel another one (kamit and kamot both
    give kamt), or the shortened stem a word itself (uling) or a word without its last vowel (hing <- hingi)."""
    for stem in lost_vowel_stems(r):
        if stem in known or any(stem + v in known for v in VOWELS):
            return True
        for k in range(1, len(stem)):  # a vowel put back between any two consonants of the stem
            if (
                stem[k - 1] not in VOWELS
                and stem[k] not in VOWELS
                and any((o := stem[:k] + v + stem[k:]) != r and o in known for v in VOWELS)
            ):
                return True
    return False


class Selection:
    """The roots and forms of the lists, with every word that may offer a competing reading."""

    def __init__(self, lexicon: Path, is_english: Callable[[str], bool]) -> None:
        self.attested = words_of(lexicon, LISTS)
        self.known = self.attested | words_of(lexicon, HEADWORDS)
        self.headwords = words_of(lexicon, DICTIONARIES)
        self.forms: dict[str, list[Form]] = {}
        for x in sorted(self.known):
            if root_shaped(x):
                found = [f for f in paradigm(x) if f.word in self.attested and f.word != x]
                if found:
                    self.forms[x] = found
        self.productive = {x for x, fs in self.forms.items() if x in self.attested and productive(fs)}
        # A bare CV copy that a dictionary lists is a word of its own (babae is no ba|bae): not a form.
        made = {
            f.word
            for x in self.productive
            for f in evidence(self.forms[x])
            if not (f.template == "AF:CTPL" and f.word in self.headwords)
        }
        self.made = made
        # Words that may be roots and so offer readings of their own: productive words, dictionary headwords and
        # words with two attested forms, unless they are themselves a form of a productive root (tulungan, buksan:
        # a dictionary lists derived words too).
        self.sources = {
            x
            for x, fs in self.forms.items()
            if x not in made
            and (x in self.productive or x in self.headwords or len({f.word for f in evidence(fs)}) >= 2)
        }
        self.readings: dict[str, set[tuple[str, tuple[str, ...]]]] = collections.defaultdict(set)
        for x in sorted(self.sources):
            for f in self.forms[x]:
                self.readings[f.word].add((x, f.morphs))
        self.others = self.sources | self.productive
        # what may follow a prefix in a derived word: such a word, its d as r (pa|rangal <- dangal)
        self.after_prefix = self.others | {"r" + o[1:] for o in self.others if o[0] == "d"}
        self.roots = sorted(
            r
            for r in self.productive
            if not self.derived(r)
            and not is_english(r)
            and not any(
                r.endswith(s) and is_english(r[: -len(s)]) for s in ("an", "han", "in", "hin")
            )  # replyan
        )

    def derived(self, r: str) -> bool:
        """A root built of another word (see the module docstring)."""
        last = max(r.rfind(v) for v in VOWELS)
        others = self.others
        return (
            r in self.made
            or (r[last] == "u" and r[:last] + "o" + r[last + 1 :] in self.productive)  # lubus <- lubos
            or any(r.startswith(p) and r[len(p) :] in self.after_prefix for p in DERIVING)
            or any(r.endswith(s) and r[: -len(s)] in others for s in SUFFIX_ENDINGS)
            or any(r.endswith(s) and r[: -len(s)] + v in self.known for s in ("han", "hin") for v in VOWELS)
            or (r.endswith("ado") and any(r[:-3] + v in self.known for v in "aoe"))  # sigur|ado <- siguro
            or any(r[k - 1] in VOWELS and r[:k] == r[k : 2 * k] for k in (1, 2))  # popost, aaply
        )

    def unambiguous_forms(self, r: str, gold_words: set[str]) -> list[Form]:
        """The attested forms of root `r` that only `r` makes, and only with this cut."""
        own = {f.word for f in self.forms[r]}
        syncope_doubtful = syncope_is_ambiguous(r, self.known)
        out = []
        for f in self.forms[r]:
            w = f.word
            if w in self.productive or w in gold_words or self.readings[w] != {(r, f.morphs)}:
                continue
            if "syncope" in f.tags and syncope_doubtful:
                continue
            if f.template == "linker" and (w in self.headwords or w in self.sources):
                continue  # barong is a word, not baro|ng; upang is not upa|ng
            if any(
                w.startswith(p) and (x := w[len(p) :]) in self.sources and x != r and x not in own
                for p in PLAIN_PREFIXES
            ):
                continue  # pa|minsan against pam|insan
            out.append(f)
        return out


def build(
    lexicon: Path,
    gold_words: set[str],
    per_template: int,
    roots_per_set: int,
    is_english: Callable[[str], bool],
    seed: int = 25,
) -> dict[str, list[tuple[Form | None, str]]]:
    """The rows of the DEV and HELD-OUT sets: (form, root), or (None, root) for a bare root."""
    sel = Selection(lexicon, is_english)
    first: dict[str, tuple[str, Form]] = {}
    for r in sel.roots:
        for f in sel.unambiguous_forms(r, gold_words):
            first.setdefault(f.word, (r, f))
    sets = {}
    for name, parity in (("dev", 0), ("heldout", 1)):
        rng = random.Random(f"{seed}-{name}")
        mine = [
            w for w, (r, _) in sorted(first.items()) if hashlib.sha256(r.encode()).digest()[0] % 2 == parity
        ]
        rng.shuffle(mine)
        taken, per = [], collections.Counter()
        for w in mine:
            template = first[w][1].template
            if per[template] < per_template:
                per[template] += 1
                per.update(first[w][1].tags)
                taken.append(w)
        chosen = set(taken)
        for w in mine:  # then the rarer phenomena (syncope, cluster copies, d -> r) up to the same count each
            tags = first[w][1].tags
            if w not in chosen and any(per[t] < per_template for t in tags):
                per.update(tags)
                taken.append(w)
        rows: list[tuple[Form | None, str]] = [(first[w][1], first[w][0]) for w in taken]
        bare = [
            r
            for r in sel.roots
            if hashlib.sha256(r.encode()).digest()[0] % 2 == parity and r not in gold_words
        ]
        rows += [(None, r) for r in sorted(rng.sample(bare, min(roots_per_set, len(bare))))]
        sets[name] = rows
    return sets
