"""Real Filipino words for the benchmark generators, drawn from the shipped lexicon and checked by the analyser.

Sources (data/lexicon, provenance in data/NOTICE): wordfreq's Filipino frequency list (`fil_wordfreq.tsv`, CC
BY-SA 4.0), tglstemmer's dictionary word list (`tgl_words.txt`, MIT) and tesseract's Filipino word list
(`fil_tesseract_words.txt`, Apache-2.0). A word counts as Tagalog when tglstemmer or tesseract lists it (wordfreq
alone also holds English and names). Affixed words are kept only when the analyser finds a lexicon root and
re-applying the same affixes to that root gives the word back, so every affix item is a genuinely affixed real
word with a real root.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from morphcpt.morphology import Analysis, FilipinoPack, apply_affix
from morphcpt.morphology.affixation import AffixSpec
from morphcpt.morphology.filipino import FILIPINO

WORDFREQ_FILE = "fil_wordfreq.tsv"
HEADWORD_FILE = "tgl_words.txt"
FORMS_FILE = "fil_tesseract_words.txt"
_PLAIN = re.compile(r"[a-z]+")
_ACCENTED = re.compile(r"[áàâéèêíìîóòôúùû]")
# Surface allomorphs of the two suffixes, named by their canonical form in prompts and answers.
CANONICAL_SUFFIX = {"an": "an", "han": "an", "nan": "an", "in": "in", "hin": "in", "nin": "in"}


@dataclass(frozen=True)
class AffixedWord:
    word: str
    analysis: Analysis
    spec: AffixSpec  # canonical affixes that rebuild the word from the root
    glottal: bool  # suffix added without h-insertion (root ends in a glottal stop)

    @property
    def root(self) -> str:
        return self.analysis.root

    @property
    def shape(self) -> str:
        """Which affix types the word carries: "P" prefix, "I" infix, "S" suffix, "R" reduplication."""
        s = self.spec
        return "P" * bool(s.prefixes) + "I" * bool(s.infix) + "S" * bool(s.suffix) + "R" * s.reduplicate


class LexiconMissingError(FileNotFoundError):
    """The shipped lexicon is not where the configuration says."""


class BenchLexicon:
    """Word pools by frequency: plain Tagalog words, accented words, and affixed words by affix shape."""

    def __init__(self, lexicon_dir: Path, pool_size: int = 8000, pack: FilipinoPack = FILIPINO):
        lexicon_dir = Path(lexicon_dir)
        missing = [n for n in (WORDFREQ_FILE, HEADWORD_FILE, FORMS_FILE) if not (lexicon_dir / n).is_file()]
        if missing:
            raise LexiconMissingError(
                f"{lexicon_dir} lacks {missing}; see data/NOTICE to rebuild the lexicon"
            )
        self.pack = pack
        ranked = _read_wordfreq(lexicon_dir / WORDFREQ_FILE)
        headwords = _read_list(lexicon_dir / HEADWORD_FILE)
        forms = _read_list(lexicon_dir / FORMS_FILE)
        self.attested = headwords | forms
        # Frequent words first, then the rest in alphabetical order. Plain words must be dictionary headwords
        # (tesseract's list also holds English); affixed forms may come from either list, since the analyser
        # must find a Tagalog root in them anyway.
        ordered = [w for w in ranked if w in self.attested]
        ordered += sorted(self.attested - set(ordered))
        plain = [w for w in ordered if w in headwords]
        self.words = [w for w in plain if _PLAIN.fullmatch(w) and 3 <= len(w) <= 14][:pool_size]
        self.accented = [w for w in ranked if _ACCENTED.search(w) and w.isalpha() and len(w) >= 3]
        self.affixed: dict[str, list[AffixedWord]] = {}
        for w in ordered[: pool_size * 4]:
            if _PLAIN.fullmatch(w) and (item := self._affixed(w)):
                self.affixed.setdefault(item.shape, []).append(item)
        self.by_root: dict[str, list[AffixedWord]] = {}
        for items in self.affixed.values():
            for a in items:
                self.by_root.setdefault(a.root, []).append(a)

    def _affixed(self, word: str) -> AffixedWord | None:
        a = self.pack.parse(word)
        # a root of the lexicon only: a word read on a headword the lexicon left out (pang|kabuhayan) is no item
        if not a.is_affixed or a.linker or len(a.prefixes) > 1 or not self.pack.is_root(a.root):
            return None
        spec = AffixSpec(a.prefixes, a.infix, CANONICAL_SUFFIX.get(a.suffix, ""), bool(a.reduplicant))
        for glottal in (False, True):
            if apply_affix(a.root, spec, glottal=glottal) == word:
                return AffixedWord(word, a, spec, glottal and bool(a.suffix))
        return None

    def is_word(self, word: str) -> bool:
        return word.lower() in self.attested


def _read_list(path: Path) -> set[str]:
    return {line.strip().lower() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}


def _read_wordfreq(path: Path) -> list[str]:
    """Words of the frequency table, most frequent first (the file is already sorted; the header is skipped)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.split("\t", 1)[0].lower() for line in lines[1:] if line.strip()]
