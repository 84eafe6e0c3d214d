"""Language-independent morphology types: a morph span, a word analysis, and the language-pack interface.

A language pack (see `filipino.py`) knows a language's affix inventory and analyses single words into morphs
that cover the word exactly. Patok uses `spans`, the alignment measure `boundaries`; the benchmark generators
use `parse` and the pack's affix application helpers.
"""

from __future__ import annotations

from dataclasses import dataclass

MORPH_KINDS = ("prefix", "infix", "suffix", "root", "reduplicant")


@dataclass(frozen=True)
class Morph:
    text: str  # surface text, original case
    kind: str  # one of MORPH_KINDS
    start: int  # character offsets in the analysed word
    end: int


@dataclass(frozen=True)
class Analysis:
    """A word split into morphs plus the linguistic reading behind the split (lowercase, diacritics removed)."""

    word: str
    morphs: tuple[Morph, ...]
    root: str  # dictionary form of the root (inumin -> "inom", mamili -> "bili")
    prefixes: tuple[str, ...] = ()
    infix: str = ""
    suffix: str = ""
    reduplicant: str = ""
    linker: str = ""  # the ligature -ng of vowel-final words (magandang); a clitic, not a derivational suffix

    @property
    def is_affixed(self) -> bool:
        return bool(self.prefixes or self.infix or self.suffix)


class LanguagePack:
    """Affix inventory and analyser of one language. Subclasses implement `parse`."""

    code: str
    prefixes: tuple[str, ...]
    infixes: tuple[str, ...]
    suffixes: tuple[str, ...]
    circumfixes: tuple[tuple[str, str], ...]

    def parse(self, word: str) -> Analysis:
        raise NotImplementedError

    def analyze(self, word: str) -> list[Morph]:
        """Morphs covering `word` in order; a single root morph when no affix is found."""
        return list(self.parse(word).morphs)

    def spans(self, word: str) -> tuple[tuple[int, int, str], ...]:
        """(start, end, kind) of the morphs of `analyze(word)`: what patok reads, for every word it meets (a pack may
        answer it without building `Morph`s)."""
        return tuple((m.start, m.end, m.kind) for m in self.analyze(word))

    def boundaries(self, word: str) -> list[int]:
        """Inner character offsets between morphs, sorted, each with 0 < b < len(word)."""
        return [m.start for m in self.parse(word).morphs[1:]]
