"""Patok: morphology-aware contract-then-expand, so that token boundaries fall on morpheme boundaries.

Per document (canonical ids in, ids with the same text out):

1. Words. The ids are cut into word groups: a group starts at the first token, at a token whose text starts with
   whitespace ("▁mag") or is special, and after a token whose text ends with whitespace ("\\n") or is special.
   Each group's text is analysed once (cached): its words (`alignment.WORD_PATTERN`) go through the language
   pack's `analyze`, giving morpheme boundaries ("cuts", character offsets) and affix morphs. An *affix token*
   is a token whose extent equals an affix morph (prefix, infix, suffix, reduplicant), a word-initial one
   together with its "▁" — so Gemma's "▁ma" in "▁ma|ganda" is one, while "an" inside "bansa" never is (the
   analyser finds no affix there). Groups with specials or byte pieces, or longer than `MAX_WORD_TOKENS`
   (URLs, blobs), are left as they are.
2. Contraction. `int(contract_prop * len(ids))` attempts. Each draws a span size n from `num_toks_to_cont`
   (weights `contract_prob`) and a uniform start; the span is clipped to its word group. A span holding an
   affix token is rejected with probability `affix_awareness` and re-drawn; all draws together are bounded by
   `max_attempts_factor * len(ids)`. Otherwise, with probability `affix_awareness`, the span's text is cut at the
   morpheme boundaries inside it, each fragment is encoded canonically ("▁" stays on a word-initial fragment),
   and the result replaces the span when it spells the same text with ordinary pieces and is no longer than
   the span plus one token per morpheme boundary the cut introduces (so "▁kum|ain" may become "▁k|um|ain",
   but a cut never costs more than the boundary it aligns). Without the cut (probability 1 - affix_awareness)
   the span is re-encoded whole and replaced when that is no longer: a plain contraction.
3. Expansion. StochasTok with `expand_prop` on the contracted ids, affix tokens frozen (an attempt landing on one
   is spent, so the work stays bounded even when every token is an affix).

Speed. Only a group with a morpheme boundary strictly inside one of its canonical tokens can gain anything in
step 2, so draws landing elsewhere are spent without work (re-encoding an aligned span gives it back, up to the
occasional non-canonical merge that patok does not need). Analyses, fragment encodings and whole span steps
(state, clipped span, cut or not) -> new state are cached, so a step costs a dictionary lookup once a word has
been seen; a cut span with no boundary inside shares the entry of the plain one. Everything per token runs on
plain lists (numpy's per-call cost outweighs its speed on documents of a few hundred tokens).
`benchmarks/schemes.py` measures it against vanilla.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate

import numpy as np

from morphcpt.tokenization.alignment import WORD_PATTERN
from morphcpt.tokenization.expansions import Expander, load_or_build_split_table
from morphcpt.tokenization.schemes.base import SchemeConfig
from morphcpt.tokenization.vocabulary import WORD_START, Vocabulary

AFFIX_KINDS = frozenset({"prefix", "infix", "suffix", "reduplicant"})
MAX_WORD_TOKENS = 64
_WS_BYTES = frozenset(bytes([b]) for b in b" \t\n\r\x0b\x0c")
_UNSEEN, _ACTIVE, _AFFIX = -1, 1, 2


@dataclass(frozen=True, slots=True)
class WordInfo:
    """A word group in one tokenization: its text, token offsets, morpheme cuts and affix tokens."""

    text: str
    offsets: tuple[int, ...]  # character offsets of the token boundaries, 0 .. len(text)
    cuts: tuple[int, ...]  # morpheme boundaries, sorted character offsets
    affix_extents: frozenset[tuple[int, int]]  # (start, end) of tokens that are affix tokens
    affix_flags: tuple[bool, ...]  # per token
    active: bool  # a cut falls strictly inside a token: contraction can align something here


class PatokScheme:
    name = "patok"

    def __init__(self, cfg: SchemeConfig, vocab: Vocabulary, pack=None, cache_size: int = 1 << 17) -> None:
        if len(cfg.num_toks_to_cont) != len(cfg.contract_prob) or not cfg.num_toks_to_cont:
            raise ValueError("num_toks_to_cont and contract_prob must be non-empty and of equal length")
        if min(cfg.num_toks_to_cont) < 1 or min(cfg.contract_prob) < 0 or sum(cfg.contract_prob) <= 0:
            raise ValueError("num_toks_to_cont must be >= 1 and contract_prob a distribution")
        if not 0.0 <= cfg.affix_awareness <= 1.0:
            raise ValueError("affix_awareness must be in [0, 1]")
        if pack is None:
            from morphcpt.morphology import get_language_pack

            pack = get_language_pack(cfg.language)
        pack.analyze("pinagsisikapan")  # loads the analyser's lexicon now, not inside the first document
        self.vocab = vocab
        self.pack = pack
        self.contract_prop = cfg.contract_prop
        self.expand_prop = cfg.expand_prop
        self.affix_awareness = cfg.affix_awareness
        self.max_attempts_factor = max(cfg.max_attempts_factor, cfg.contract_prop)
        self._sizes = list(cfg.num_toks_to_cont)
        probs = np.asarray(cfg.contract_prob, dtype=np.float64)
        self._cdf = np.cumsum(probs / probs.sum())[:-1].tolist()
        self._expander = Expander(load_or_build_split_table(vocab, cfg.cache_dir))

        self._plain = [not vocab.is_special(i) and not vocab.is_byte(i) for i in range(vocab.size)]
        self._char_len = [len(p) for p in vocab.pieces]
        self._opens = [vocab.is_special(i) or b[:1] in _WS_BYTES for i, b in enumerate(vocab.piece_bytes)]
        self._closes = [vocab.is_special(i) or b[-1:] in _WS_BYTES for i, b in enumerate(vocab.piece_bytes)]
        self._opens_np, self._closes_np = np.array(self._opens), np.array(self._closes)
        # per id: UNSEEN, or the bits ACTIVE | AFFIX of a one-token group of that id
        self._single_code = np.full(vocab.size, _UNSEEN, dtype=np.int8)
        self._encode_word = self._word_encoder()
        self.word_info = lru_cache(maxsize=cache_size)(self._word_info)
        self._analysis = lru_cache(maxsize=cache_size)(self._analyse_text)
        self._fragments = lru_cache(maxsize=cache_size)(self._encode_fragments)
        self._encode_piece = lru_cache(maxsize=cache_size)(lambda text: tuple(self._encode_word(text)))
        self._step = lru_cache(maxsize=cache_size)(self._span_step)

    # -- cached analyses ---------------------------------------------------------------------------------
    def _analyse_text(self, text: str) -> tuple[tuple[int, ...], frozenset[tuple[int, int]]]:
        """Morpheme cuts and affix-token extents of a group's text."""
        cuts: list[int] = []
        extents: set[tuple[int, int]] = set()
        for match in WORD_PATTERN.finditer(text):
            start = match.start()
            for k, morph in enumerate(self.pack.analyze(match.group())):
                if k:
                    cuts.append(start + morph.start)
                if morph.kind in AFFIX_KINDS:
                    extents.add((start + morph.start, start + morph.end))
                    if morph.start == 0 and start > 0 and text[start - 1] == " ":
                        extents.add((start - 1, start + morph.end))  # "▁ma" carries the word's space
        return tuple(cuts), frozenset(extents)

    def _word_info(self, group: tuple[int, ...]) -> WordInfo:
        if len(group) > MAX_WORD_TOKENS or not all(self._plain[i] for i in group):
            return WordInfo("", (), (), frozenset(), (False,) * len(group), False)
        text = self.vocab.decode(group)
        offsets = tuple(accumulate((self._char_len[i] for i in group), initial=0))
        cuts, extents = self._analysis(text)
        inner = set(offsets[1:-1])
        flags = tuple((a, b) in extents for a, b in zip(offsets, offsets[1:], strict=False))
        return WordInfo(text, offsets, cuts, extents, flags, any(c not in inner for c in cuts))

    def _encode_fragments(self, text: str, cuts: tuple[int, ...]) -> tuple[int, ...] | None:
        """Canonical ids of `text` cut at `cuts`, or None when they would not spell it with plain pieces."""
        bounds = (0, *cuts, len(text))
        encode = (
            self._encode_piece
        )  # fragments ("um", "▁k", "ain") recur far more often than their combinations
        ids = [i for a, b in zip(bounds, bounds[1:], strict=False) for i in encode(text[a:b])]
        if not all(self._plain[i] for i in ids) or self.vocab.decode(ids) != text:
            return None
        return tuple(ids)

    def _word_encoder(self):
        """A fast canonical encoder for word fragments.

        With Gemma's layout (normaliser: " " -> "▁"; no pre-tokeniser, or one splitting on " ", which never
        matches after normalisation) a fragment goes straight to the BPE model, about four times faster than a full
        `encode`; it skips added-token matching, which a fragment of a word does not need, and every result is
        checked to spell its text anyway. Other layouts use the full `encode`.
        """
        backend = (
            self.vocab.layout
        )  # the normalizer and pre_tokenizer (reading the whole backend takes seconds)
        gemma_normaliser = {"type": "Replace", "pattern": {"String": " "}, "content": WORD_START}
        split_on_space = {"type": "Split", "pattern": {"String": " "}}
        pre = backend.get("pre_tokenizer")
        if backend.get("normalizer") == gemma_normaliser and (
            pre is None or {k: pre.get(k) for k in split_on_space} == split_on_space
        ):
            tokenize = self.vocab.encoder.model.tokenize
            return lambda text: [t.id for t in tokenize(text.replace(" ", WORD_START))]
        return self.vocab.encode

    def _span_step(
        self, state: tuple[int, ...], r: int, e: int, cut: bool
    ) -> tuple[bool, tuple[int, ...] | None]:
        """Contract the tokens `r` to `e` (exclusive) of a group in state `state`, cut at the morpheme
        boundaries inside them if `cut`.

        Returns whether the span holds an affix token, and the group's new ids (None when unchanged).
        """
        info = self.word_info(state)
        cs, ce = info.offsets[r], info.offsets[e]
        c = info.cuts
        lo, hi = bisect_right(c, cs), bisect_left(c, ce)
        if cut and lo == hi:
            return self._step(state, r, e, False)  # no boundary inside: the same step, under one cache entry
        cuts = tuple(x - cs for x in c[lo:hi]) if cut else ()
        has_affix = True in info.affix_flags[r:e]
        new = self._fragments(info.text[cs:ce], cuts)
        if new is None or new == state[r:e]:
            return has_affix, None
        if cuts:
            inner = info.offsets[r + 1 : e]
            introduced = sum(1 for x in cuts if x + cs not in inner)
        else:
            introduced = 0
        if len(new) > e - r + introduced:
            return has_affix, None
        return has_affix, state[:r] + new + state[e:]

    # -- the scheme --------------------------------------------------------------------------------------
    def transform(self, ids: list[int], rng: np.random.Generator) -> list[int]:
        ids = list(ids)
        n = len(ids)
        if n == 0:
            return ids
        active, frozen = self._groups(ids)
        attempts = int(self.contract_prop * n)
        if active and attempts > 0:
            changed = self._contract(ids, active, attempts, rng)
            if changed:
                ids, frozen = self._assemble(ids, active, changed, frozen)
        return self._expander.expand(ids, int(len(ids) * self.expand_prop), rng, frozen=frozen)

    def _groups(self, ids: list[int]) -> tuple[list[tuple[int, int]], list[bool] | None]:
        """The (start, end) of the word groups that can contract, in order, and the affix-token flag of every
        position (None when there is no affix token)."""
        n = len(ids)
        # Token i starts a group when it opens one or token i-1 closes one. This test runs on every token, and so
        # does the lookup of one-token groups (most groups): both run as numpy array operations.
        tokens = np.array(ids)
        starts = np.flatnonzero(self._opens_np[tokens[1:]] | self._closes_np[tokens[:-1]]) + 1
        starts = np.concatenate(([0], starts))
        ends = np.append(starts[1:], n)
        single = ends - starts == 1
        single_starts = starts[single]
        codes = self._single_code[tokens[single_starts]]
        unseen = codes == _UNSEEN
        if unseen.any():
            for i in np.unique(tokens[single_starts[unseen]]).tolist():
                info = self.word_info((i,))
                self._single_code[i] = _ACTIVE * info.active + _AFFIX * info.affix_flags[0]
            codes = self._single_code[tokens[single_starts]]
        active = [(s, s + 1) for s in single_starts[(codes & _ACTIVE) != 0].tolist()]
        affix_singles = single_starts[(codes & _AFFIX) != 0].tolist()
        affix_groups: list[tuple[int, tuple[bool, ...]]] = []  # (start, flags) of longer groups with some
        word_info, longer = self.word_info, []
        for s, e in zip(starts[~single].tolist(), ends[~single].tolist(), strict=True):
            info = word_info(tuple(ids[s:e]))
            if info.active:
                longer.append((s, e))
            if True in info.affix_flags:
                affix_groups.append((s, info.affix_flags))
        if longer:
            active = sorted(active + longer)  # in document order: the draws in `_contract` index them
        if not (affix_singles or affix_groups):
            return active, None
        frozen = [False] * n
        for s in affix_singles:
            frozen[s] = True
        for s, flags in affix_groups:
            frozen[s : s + len(flags)] = flags
        return active, frozen

    def _contract(self, ids, active, attempts, rng) -> dict[int, tuple[int, ...]]:
        """Run the contraction attempts; returns the new ids of the (indices of) active groups that changed.

        Draws land on uniform positions of the document; only those on active groups can do anything, so they
        are generated directly: the gap to the next such draw is geometric with p = active tokens / n, and its
        position is uniform over the active tokens. Other draws count as spent attempts.
        """
        n = len(ids)
        budget = max(attempts, int(self.max_attempts_factor * n))
        # (group, offset in the group) of every active token, so a draw finds its token by one index.
        lengths = np.array([e - s for s, e in active])
        slot_group = np.repeat(np.arange(len(active)), lengths)
        slot_offset = np.arange(len(slot_group)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        n_active = len(slot_group)
        every = n_active == n  # every draw lands on an active group: the gap is always 1
        log_miss = 0.0 if every else math.log1p(-n_active / n)
        current: dict[int, tuple[int, ...]] = {}  # group -> its ids, once a draw lands there
        aw, step, log1p = self.affix_awareness, self._step, math.log1p
        sizes, cdf = np.asarray(self._sizes), np.asarray(self._cdf)
        k = -1  # index of the current draw among all draws
        rejected = 0
        while True:
            # Five uniforms per draw (gap, position, size, reject, cut), turned into the draw's values for a
            # whole chunk at once: the same arithmetic as one at a time (the gap with math.log1p, as before).
            u = rng.random(5 * max(8, int(1.2 * attempts * n_active / n))).reshape(-1, 5)
            steps = [1] * len(u) if every else [1 + int(log1p(-x) / log_miss) for x in u[:, 0].tolist()]
            steps[0] += k  # so that the running sums are the draws' indices
            position = (u[:, 1] * n_active).astype(np.int64)
            draws = zip(
                accumulate(steps),
                slot_group[position].tolist(),
                slot_offset[position].tolist(),
                sizes[np.searchsorted(cdf, u[:, 2], side="right")].tolist(),
                (u[:, 3] < aw).tolist(),
                (u[:, 4] < aw).tolist(),
                strict=True,
            )
            for k, g, offset, size, reject, cut in draws:
                if k >= budget or k - rejected >= attempts:  # a rejected span does not count: it is re-drawn
                    return {
                        g: new for g, new in current.items() if list(new) != ids[active[g][0] : active[g][1]]
                    }
                state = current.get(g)
                if state is None:
                    state = current[g] = tuple(ids[active[g][0] : active[g][1]])
                # Clip the span to the group here, so that draws giving the same span share one cache entry.
                length = len(state)
                r = offset if offset < length else length - 1
                e = r + size
                if e > length:
                    e = length
                has_affix, new = step(state, r, e, cut)
                if has_affix and reject:
                    rejected += 1
                elif new is not None:
                    current[g] = new

    def _assemble(self, ids, active, changed, frozen) -> tuple[list[int], list[bool]]:
        """Splice the changed groups in, with their affix-token flags."""
        out: list[int] = []
        flags: list[bool] = []
        prev = 0
        for g in sorted(changed):
            s, e = active[g]
            new = changed[g]
            out += ids[prev:s]
            out += new
            flags += frozen[prev:s] if frozen is not None else [False] * (s - prev)
            flags += self.word_info(new).affix_flags
            prev = e
        out += ids[prev:]
        flags += frozen[prev:] if frozen is not None else [False] * (len(ids) - prev)
        return out, flags
