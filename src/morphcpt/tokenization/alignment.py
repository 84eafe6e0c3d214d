"""How well token boundaries fall on morpheme boundaries: the measure patok is built to raise.

Definition (per document, and summed over documents with `+`):
- words are the matches of `WORD_PATTERN` in the decoded text (letters, with inner hyphens: "mag-aral");
- morpheme boundaries M are the inner offsets `pack.boundaries(word)` of every word;
- in-word token boundaries T are the offsets where one token ends and the next begins strictly inside a word
  (specials spell nothing and add no boundary);
- matched = |T ∩ M|; precision = matched / |T| (share of in-word token boundaries that are morpheme
  boundaries); recall = matched / |M| (share of morpheme boundaries that are token boundaries).
Offsets are counted in UTF-8 bytes, so a byte-fallback token that ends inside a character is a token boundary
that no morpheme boundary can match. A `pack` whose `boundaries(word)` answers None does not know the word, which
then counts for neither side (`morphology.gold.GoldSegmentation` scores only the words it holds). Used by the tests, `benchmarks/schemes.py` and the data audit:

    a = morpheme_boundary_alignment(vocab, ids, get_language_pack("fil"))
    print(a.precision, a.recall)
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from itertools import accumulate

from morphcpt.tokenization.vocabulary import Vocabulary

# A word: letters (any script, no digits or underscore), optionally joined by single inner hyphens.
WORD_PATTERN = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


@dataclass(frozen=True)
class Alignment:
    token_boundaries: int = 0
    morpheme_boundaries: int = 0
    matched: int = 0

    @property
    def precision(self) -> float:
        return self.matched / self.token_boundaries if self.token_boundaries else 0.0

    @property
    def recall(self) -> float:
        return self.matched / self.morpheme_boundaries if self.morpheme_boundaries else 0.0

    def __add__(self, other: Alignment) -> Alignment:
        return Alignment(
            self.token_boundaries + other.token_boundaries,
            self.morpheme_boundaries + other.morpheme_boundaries,
            self.matched + other.matched,
        )


def morpheme_boundary_alignment(vocab: Vocabulary, ids: list[int], pack) -> Alignment:
    """Token boundaries vs morpheme boundaries inside the words of one document (see the module docstring)."""
    token_ends = sorted(set(accumulate(len(vocab.piece_bytes[i]) for i in ids)))
    text = vocab.decode(ids)
    t_count = m_count = matched = 0
    char_pos = byte_pos = 0
    for match in WORD_PATTERN.finditer(text):
        start, end = match.span()
        byte_pos += len(text[char_pos:start].encode("utf-8"))
        char_pos = start
        word = match.group()
        word_bytes = len(word.encode("utf-8"))
        bounds = pack.boundaries(word)
        if bounds is None:
            byte_pos += word_bytes
            char_pos = end
            continue
        inner = set(
            token_ends[bisect_right(token_ends, byte_pos) : bisect_left(token_ends, byte_pos + word_bytes)]
        )
        morph = {byte_pos + len(word[:b].encode("utf-8")) for b in bounds}
        t_count += len(inner)
        m_count += len(morph)
        matched += len(inner & morph)
        byte_pos += word_bytes
        char_pos = end
    return Alignment(t_count, m_count, matched)
