"""Patok's word states: each spelling of a word group interned once, with its analysis and its contraction steps.

A *state* is the ids of one word group (see `patok`), as a tuple; `WordStates.intern` gives it a small integer id
(sid) the first time it is seen, with what the document loop needs as plain list entries: its length, its affix
tokens as a bit mask, and whether contraction can align anything in it. A contraction step (sid, span, cut or not)
-> new sid is computed once (`WordStates.add_step`) and then read from a dictionary keyed by one integer, so the
per-draw cost of patok does not depend on hashing tuples of ids. `group_sids` looks up the sids of all the word
groups of a document at once: one-token groups through an array indexed by id, groups of up to six tokens
through their ids packed into one integer (exact: no hashing), longer ones (a fraction of a percent) by their
tuple.

Memory stays bounded: `reset_if_full` (called between documents) drops every table once `max_states` states are
known; results never depend on what is cached. With patok's compiled kernel (`tokenization.native`, `attach`),
the states and steps live in the kernel and the tables here stay empty: this class gives it the analyses. Before
each batch the kernel lists the groups it has no state for, whose analyses `intern_groups` hands back in one call
(the kernel derives their affix masks and activity as `_respelled` does); during the batch it asks back here
only for the canonical encoding of a span it has not seen (`encode_span`, what `span_step` re-encodes), since a
step depends on nothing but the span's ids and the cuts inside it. A reset clears the kernel too.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from functools import lru_cache
from itertools import accumulate
from typing import NamedTuple

import numpy as np

from morphcpt.tokenization.alignment import WORD_PATTERN
from morphcpt.tokenization.vocabulary import WORD_START, Vocabulary

AFFIX_KINDS = frozenset({"prefix", "infix", "suffix", "reduplicant"})
MAX_WORD_TOKENS = 64
NO_STEP = -1  # `WordStates.add_step` result: the span stays as it is


class WordInfo(NamedTuple):
    """A word group in one tokenization: its text, token offsets, morpheme cuts and affix tokens (a named tuple:
    one is built for every state, and a tuple builds in a third of a frozen dataclass's time)."""

    text: str
    offsets: tuple[int, ...]  # character offsets of the token boundaries, 0 .. len(text)
    cuts: tuple[int, ...]  # morpheme boundaries, sorted character offsets
    affix_extents: frozenset[tuple[int, int]]  # (start, end) of tokens that are affix tokens
    affix_mask: int  # bit i: token i is an affix token
    active: bool  # a cut falls strictly inside a token: contraction can align something here

    @property
    def affix_flags(self) -> tuple[bool, ...]:
        """Per token: whether it is an affix token."""
        return tuple(bool(self.affix_mask >> i & 1) for i in range(max(len(self.offsets) - 1, 0)))


_NO_EXTENTS: frozenset[tuple[int, int]] = frozenset()
# A text's morpheme cuts and affix-token extents (character offsets), as `WordStates._analyse_text` gives them.
TextAnalysis = tuple[tuple[int, ...], frozenset[tuple[int, int]]]


def _left_alone(group: tuple[int, ...]) -> WordInfo:
    """The info of a group patok does not touch (specials, byte pieces, longer than MAX_WORD_TOKENS)."""
    return WordInfo("", (), (), _NO_EXTENTS, 0, False)


class WordStates:
    """Interned word states of one vocabulary and language pack, their analyses and cached contraction steps."""

    def __init__(self, vocab: Vocabulary, pack, cache_size: int = 1 << 17, max_states: int = 1 << 18) -> None:
        self.vocab = vocab
        self.pack = pack
        self.max_states = max_states
        # Specials and byte pieces: a group holding one is left alone.
        self._not_plain = vocab.special_ids.union(vocab.byte_values)
        self.char_len = [len(p) for p in vocab.pieces]  # characters per piece ("▁" is one: a space)
        self._encode_word = self._word_encoder()
        self.word_info = lru_cache(maxsize=cache_size)(self._word_info)
        self._word_morphs = lru_cache(maxsize=cache_size)(self._morphs_of_word)
        self._fragments = lru_cache(maxsize=cache_size)(self._encode_fragments)
        self._encode_piece = lru_cache(maxsize=cache_size)(lambda text: tuple(self._encode_word(text)))
        # Groups of up to `_pack` tokens are looked up by their ids packed into one int64 (with the length).
        self._bits = max(1, (vocab.size - 1).bit_length())
        self._pack = min(3, 60 // self._bits)
        self.native = None  # a native.PatokKernel holding the states (`attach`), or None
        self.reset()

    def reset(self) -> None:
        """Forget every state and step (sids change meaning: call between documents only)."""
        self._sid_of: dict[tuple[int, ...], int] = {}
        self.states: list[tuple[int, ...]] = []
        self.infos: list[WordInfo] = []
        self.lengths: list[int] = []
        self.masks: list[int] = []  # bit i: token i is an affix token
        self._active: list[bool] = []
        self.steps: dict[int, int] = {}  # contraction steps (`add_step`), by the draw loop's integer key
        self._packed: dict[int, int] = {}
        self._single = np.full(self.vocab.size, -1, dtype=np.int64)  # id -> sid of the one-token group
        # Mirrors of `_active` and `masks != 0` as arrays, to look up all the groups of a document at once.
        self._active_np = np.zeros(0, dtype=bool)
        self._affix_np = np.zeros(0, dtype=bool)
        if self.native is not None:
            self.native.reset()

    def attach(self, native) -> None:
        """Keep the states in `native` (a `native.PatokKernel`) from now on, starting empty: the tables here are
        only the Python path's."""
        self.native = native
        self.reset()

    def num_states(self) -> int:
        return len(self.states) if self.native is None else self.native.num_states()

    def reset_if_full(self) -> None:
        if self.num_states() >= self.max_states:
            self.reset()

    # -- analyses ------------------------------------------------------------------------------------------
    def _morphs_of_word(
        self, word: str
    ) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...], TextAnalysis, TextAnalysis]:
        """A word's morpheme cuts and affix morphs, (start, end) offsets in the word, then the group analysis of
        the word as a group's whole text, and of the word after a space (" " + word, its most common group) —
        cached by word: one word recurs in many groups, " bahay", " bahay,", "Bahay.")."""
        spans = self.pack.spans(word)
        cuts = tuple(m_start for m_start, _, _ in spans[1:])
        affixes = tuple((m_start, m_end) for m_start, m_end, kind in spans if kind in AFFIX_KINDS)
        if not cuts and not affixes:
            alone = after_space = ((), _NO_EXTENTS)
        else:
            alone = self._placed(word, ((0, cuts, affixes),))
            after_space = self._placed(" " + word, ((1, cuts, affixes),))
        return cuts, affixes, alone, after_space

    def _analyse_text(self, text: str) -> TextAnalysis:
        """Morpheme cuts and affix-token extents of a group's text."""
        # Most groups are one word, with or without its space, which `isalpha` finds without the regular
        # expression (letters are a subset of WORD_PATTERN's characters, so an all-letter text is exactly one
        # match of it), and whose analysis as a group is cached with the word's.
        if text.isalpha():
            return self._word_morphs(text)[2]
        if text[:1] == " " and text[1:].isalpha():
            return self._word_morphs(text[1:])[3]
        # One word at the start or after the space, the rest no word (" bahay,", "Juan:", " mag-aral"): its
        # analysis is the word's, as there.
        space = text[:1] == " "
        match = WORD_PATTERN.match(text, space)
        if match is not None and WORD_PATTERN.search(text, match.end()) is None:
            return self._word_morphs(match.group())[3 if space else 2]
        words = []
        for match in WORD_PATTERN.finditer(text):
            cuts, affixes, _, _ = self._word_morphs(match.group())
            if cuts or affixes:
                words.append((match.start(), cuts, affixes))
        return self._placed(text, words) if words else ((), _NO_EXTENTS)

    @staticmethod
    def _placed(text: str, words) -> TextAnalysis:
        """The cuts and affix extents in `text` of its words' (start, cuts, affixes), placed where they start."""
        cuts: list[int] = []
        extents: set[tuple[int, int]] = set()
        for start, word_cuts, affixes in words:
            cuts += [start + c for c in word_cuts]
            for m_start, m_end in affixes:
                extents.add((start + m_start, start + m_end))
                if m_start == 0 and start > 0 and text[start - 1] == " ":
                    extents.add((start - 1, start + m_end))  # "▁ma" carries the word's space
        return tuple(cuts), frozenset(extents) if extents else _NO_EXTENTS

    def _word_info(self, group: tuple[int, ...]) -> WordInfo:
        if len(group) > MAX_WORD_TOKENS or not self._not_plain.isdisjoint(group):
            return _left_alone(group)
        text = self.vocab.spell_plain(group)
        return self._respelled(group, text, *self._analyse_text(text))

    def _respelled(self, group: tuple[int, ...], text: str, cuts, extents) -> WordInfo:
        """The info of `group`, which spells `text` with morpheme cuts `cuts` and affix morphs `extents`."""
        n = len(group)
        if n > MAX_WORD_TOKENS:
            return _left_alone(group)
        offsets = tuple(accumulate(map(self.char_len.__getitem__, group), initial=0))
        mask = 0  # most groups have no affix and no cut: their mask and activity need no work
        if extents:
            for i, token in enumerate(zip(offsets, offsets[1:], strict=False)):
                if token in extents:
                    mask |= 1 << i
        active = bool(cuts) and not set(offsets[1:-1]).issuperset(cuts)  # a cut strictly inside a token
        return WordInfo(text, offsets, cuts, extents, mask, active)

    def _encode_fragments(self, text: str, cuts: tuple[int, ...]) -> tuple[int, ...] | None:
        """Canonical ids of `text` cut at `cuts`, or None when they would not spell it with plain pieces."""
        bounds = (0, *cuts, len(text))
        # Fragments ("um", "▁k", "ain") recur far more often than their combinations: cached one by one.
        encode = self._encode_piece
        ids = [i for a, b in zip(bounds, bounds[1:], strict=False) for i in encode(text[a:b])]
        if not self._not_plain.isdisjoint(ids) or self.vocab.spell_plain(ids) != text:
            return None
        return tuple(ids)

    def _word_encoder(self):
        """A fast canonical encoder for word fragments.

        With Gemma's layout (normaliser: " " -> "▁"; no pre-tokeniser, or one splitting on " ", which never
        matches after normalisation) a fragment goes straight to the BPE model, about four times faster than a full
        `encode`; it skips added-token matching, which a fragment of a word does not need, and every result is
        checked to spell its text anyway. Other layouts use the full `encode`.
        """
        # The normalizer and pre_tokenizer (reading the whole backend takes seconds).
        backend = self.vocab.layout
        gemma_normaliser = {"type": "Replace", "pattern": {"String": " "}, "content": WORD_START}
        split_on_space = {"type": "Split", "pattern": {"String": " "}}
        pre = backend.get("pre_tokenizer")
        if backend.get("normalizer") == gemma_normaliser and (
            pre is None or {k: pre.get(k) for k in split_on_space} == split_on_space
        ):
            tokenize = self.vocab.encoder.model.tokenize
            return lambda text: [t.id for t in tokenize(text.replace(" ", WORD_START))]
        return self.vocab.encode

    # -- states --------------------------------------------------------------------------------------------
    def intern(self, state: tuple[int, ...], info: WordInfo | None = None) -> int:
        """The sid of `state` (`info`: its info, when the caller knows it)."""
        sid = self._sid_of.get(state)
        if sid is None:
            if info is None:
                info = self.word_info(state)
            sid = self._add(state, info)
        return sid

    def _add(self, state: tuple[int, ...], info: WordInfo) -> int:
        """A new state's sid, its tables filled."""
        sid = self._sid_of[state] = len(self.states)
        self.states.append(state)
        self.infos.append(info)
        self.lengths.append(len(state))
        self.masks.append(info.affix_mask)
        self._active.append(info.active)
        return sid

    def intern_groups(self, ids: np.ndarray, pairs: np.ndarray) -> None:
        """Hand the kernel (`attach`) the analyses of the groups `ids[s:s + n]` for the (s, n) pairs in `pairs`
        (flat; its list of a batch's groups without a state, each once), in one call."""
        flat = ids.tolist()
        cuts: list[int] = []
        ncuts: list[int] = []
        extents: list[int] = []
        nextents: list[int] = []
        not_plain, spell, analyse = self._not_plain, self.vocab.spell_plain, self._analyse_text
        for s, n in zip(pairs[0::2].tolist(), pairs[1::2].tolist(), strict=True):
            group = flat[s : s + n]
            if n > MAX_WORD_TOKENS or not not_plain.isdisjoint(group):  # left alone (`_word_info`)
                ncuts.append(-1)
                nextents.append(0)
                continue
            group_cuts, group_extents = analyse(spell(group))
            cuts += group_cuts
            ncuts.append(len(group_cuts))
            nextents.append(len(group_extents))
            for extent in group_extents:
                extents += extent
        self.native.add_groups(ids, pairs, cuts, ncuts, extents, nextents)

    def encode_span(self, ids: list[int], cuts: tuple[int, ...]) -> tuple[int, ...] | None:
        """The canonical ids of the text of `ids` cut at `cuts` (character offsets in it), or None when they would
        not spell it with plain pieces: what `span_step` re-encodes, asked by the kernel for a span it has not
        seen (once: the kernel caches the answer, so `_fragments`'s cache would only miss)."""
        return self._encode_fragments(self.vocab.spell_plain(ids), cuts)

    def group_sids(
        self, ids: list[int], tokens: np.ndarray, starts: np.ndarray, ends: np.ndarray
    ) -> np.ndarray:
        """The sid of every word group `ids[starts[g]:ends[g]]` (`tokens` is `ids` as an array)."""
        lengths = ends - starts
        sids = np.empty(len(starts), dtype=np.int64)
        single = lengths == 1
        firsts = tokens[starts[single]]
        found = self._single[firsts]
        if (found < 0).any():
            for i in np.unique(firsts[found < 0]).tolist():
                self._single[i] = self.intern((i,))
            found = self._single[firsts]
        sids[single] = found
        pack = self._pack
        if pack > 1:
            # Two to `pack` tokens: their ids and length packed in one int64; up to twice that: in two.
            short = ~single & (lengths <= pack)
            if short.any():
                keys = self._keys(tokens, starts[short], lengths[short], 0) | lengths[short] << (
                    self._bits * pack
                )
                sids[short] = self._lookup(ids, starts[short], lengths[short], keys.tolist())
            wide = (lengths > pack) & (lengths <= 2 * pack)
            if wide.any():
                at, size = starts[wide], lengths[wide]
                low = self._keys(tokens, at, size, 0).tolist()
                high = (self._keys(tokens, at, size, pack) | size << (self._bits * pack)).tolist()
                sids[wide] = self._lookup(
                    ids, at, size, [a | b << 64 for a, b in zip(low, high, strict=True)]
                )
        longer = lengths > (2 * pack if pack > 1 else 1)
        if longer.any():
            intern = self.intern
            sids[longer] = [
                intern(tuple(ids[s:e]))
                for s, e in zip(starts[longer].tolist(), ends[longer].tolist(), strict=True)
            ]
        return sids

    def _keys(self, tokens: np.ndarray, at: np.ndarray, size: np.ndarray, first: int) -> np.ndarray:
        """Ids `first` .. `first + pack - 1` of the groups starting at `at` (0 past a group's end), packed."""
        keys = np.zeros(len(at), dtype=np.int64)
        last = len(tokens) - 1
        for j in range(self._pack):
            ids = np.where(size > first + j, tokens[np.minimum(at + first + j, last)], 0)
            keys |= ids << (self._bits * j)
        return keys

    def _lookup(self, ids: list[int], at: np.ndarray, size: np.ndarray, keys: list[int]) -> list[int]:
        """The sids of groups by their packed keys, interning the groups seen for the first time."""
        get = self._packed.get
        found = [get(key) for key in keys]
        if None in found:
            for g, sid in enumerate(found):
                if sid is None:
                    s = int(at[g])
                    found[g] = self._packed[keys[g]] = self.intern(tuple(ids[s : s + int(size[g])]))
        return found

    def flags_of(self, sids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(active, has an affix token) of each sid, as boolean arrays."""
        known = len(self._active_np)
        if len(self.states) > known:  # extend the mirrors by the states interned since
            self._active_np = np.concatenate((self._active_np, np.array(self._active[known:], dtype=bool)))
            self._affix_np = np.concatenate((self._affix_np, np.array(self.masks[known:], dtype=bool)))
        return self._active_np[sids], self._affix_np[sids]

    # -- contraction steps ---------------------------------------------------------------------------------
    def add_step(self, key: int, sid: int, r: int, e: int, cut: bool) -> int:
        """The sid after contracting tokens `r` to `e` (exclusive) of state `sid`, cut at the morpheme boundaries
        inside them if `cut`, or `NO_STEP` when the span stays; cached in `steps` under `key`, the caller's one
        integer for (sid, r, e, cut) (patok's draw loop looks it up there before calling this)."""
        new = self.steps[key] = self.span_step(sid, r, e, cut)
        return new

    def span_step(self, sid: int, r: int, e: int, cut: bool) -> int:
        """`add_step` without the cache (the Python path's; the compiled kernel takes its steps itself, with
        `encode_span`)."""
        state, info = self.states[sid], self.infos[sid]
        if not info.offsets:  # a state grown past MAX_WORD_TOKENS: left as it is
            return NO_STEP
        cs, ce = info.offsets[r], info.offsets[e]
        c = info.cuts
        lo, hi = bisect_right(c, cs), bisect_left(c, ce)
        cuts = tuple(x - cs for x in c[lo:hi]) if cut else ()
        new = self._fragments(info.text[cs:ce], cuts)
        if new is None or new == state[r:e]:
            return NO_STEP
        if cuts:
            inner = info.offsets[r + 1 : e]
            introduced = sum(1 for x in cuts if x + cs not in inner)
        else:
            introduced = 0
        if len(new) > e - r + introduced:
            return NO_STEP
        new_state = state[:r] + new + state[e:]
        if new_state in self._sid_of:
            return self._sid_of[new_state]
        # The same text, so the same analysis: only the token offsets change.
        return self.intern(new_state, self._respelled(new_state, info.text, info.cuts, info.affix_extents))
