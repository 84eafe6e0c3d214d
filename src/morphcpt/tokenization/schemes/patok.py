"""Patok: morphology-aware contract-then-expand, so that token boundaries fall on morpheme boundaries.

Per document (canonical ids in, ids with the same text out):

1. Words. The ids are cut into word groups: a group starts at the first token, at a token whose text starts with
   whitespace ("▁mag") or is special, and after a token whose text ends with whitespace ("\\n") or is special.
   Each group's text is analysed once (cached): its words (`alignment.WORD_PATTERN`) go through the language
   pack's `spans` (its `analyze` as (start, end, kind) tuples), giving morpheme boundaries ("cuts", character
   offsets) and affix morphs. An *affix token* is a token whose extent equals an affix morph (prefix, infix,
   suffix, reduplicant), a word-initial one together with its "▁" — so Gemma's "▁ma" in "▁ma|ganda" is one,
   while "an" inside "bansa" never is (the analyser finds no affix there). Groups with specials or byte pieces,
   or longer than `MAX_WORD_TOKENS` (URLs, blobs), are left as they are.
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

Speed. Only a group with a morpheme boundary strictly inside one of its canonical tokens can gain anything in step 2,
so draws landing elsewhere are spent without work (re-encoding an aligned span gives it back, up to the occasional
non-canonical merge that patok does not need). Word groups are interned as small integer states with their analyses
and contraction steps cached (`patok_words.WordStates`). Where the compiled kernels build (`tokenization.native`, the
default), a batch runs through `native/patok.c`, which keeps the states and steps itself: groups, draws, splicing and
expansion in C on int32 arrays, drawing from each document's generator in the order of the Python code below, and
going back to Python only for what it has not seen, so that Python stays the one source of the analyses: the word
groups of a batch without a state, listed before the batch and analysed in one call (`WordStates.intern_groups`),
and the canonical encoding of a span (`WordStates.encode_span`, a callback). A step depends only on its span (its
ids and the morpheme cuts inside it), so the kernel answers a span it has seen in one state for every state holding
it, " kumain" and " kumain," alike (its span cache, `native/patok_states.c`). Without the kernels
(`MORPHCPT_NATIVE=off`, or no C compiler), `transform_many` does the array work (groups, the draws' values) once for
a batch and loops in Python: the same ids, which tests/tokenization/test_native.py checks on every setting.
`benchmarks/preprocess.py` measures both against vanilla.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import chain

import numpy as np

from morphcpt.tokenization import native
from morphcpt.tokenization.expansions import Expander, load_or_build_split_table
from morphcpt.tokenization.schemes.base import SchemeConfig, flat_via_lists, lists_via_flat
from morphcpt.tokenization.schemes.patok_words import MAX_WORD_TOKENS, WordInfo, WordStates
from morphcpt.tokenization.vocabulary import Vocabulary

__all__ = ["MAX_WORD_TOKENS", "PatokScheme", "WordInfo"]

_WS_BYTES = frozenset(bytes([b]) for b in b" \t\n\r\x0b\x0c")


@dataclass(slots=True)
class _Run:
    """One document's contraction: its length, active tokens, attempts and draw budget, and where its draws are."""

    doc: int
    n: int
    active: int
    attempts: int
    budget: int
    k: int = -1  # index of the last draw among all the document's draws
    rejected: int = 0


class PatokScheme:
    name = "patok"
    fills_caches = True  # word states and steps: preprocessing forks its workers after warming them up

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
        table = load_or_build_split_table(vocab, cfg.cache_dir)
        self._expander = Expander(table)
        self._opens = np.array(
            [vocab.is_special(i) or b[:1] in _WS_BYTES for i, b in enumerate(vocab.piece_bytes)]
        )
        self._closes = np.array(
            [vocab.is_special(i) or b[-1:] in _WS_BYTES for i, b in enumerate(vocab.piece_bytes)]
        )
        self.words = WordStates(vocab, pack, cache_size=cache_size, max_states=2 * cache_size)
        self.word_info = self.words.word_info
        self._kernel = None  # the compiled kernel (`native`), when it builds here
        kernels = native.load()
        if kernels is not None:
            self._kernel = native.PatokKernel(
                kernels,
                opens=self._opens,
                closes=self._closes,
                char_len=self.words.char_len,
                table=table,
                contract_prop=self.contract_prop,
                max_attempts_factor=self.max_attempts_factor,
                affix_awareness=self.affix_awareness,
                expand_prop=self.expand_prop,
                sizes=self._sizes,
                cdf=self._cdf,
                intern_groups=self.words.intern_groups,
                encode_span=self.words.encode_span,
            )
            self.words.attach(self._kernel)

    @property
    def native(self) -> bool:
        """Whether documents go through the compiled kernel (else through the Python code below)."""
        return self._kernel is not None

    # -- the scheme --------------------------------------------------------------------------------------
    def transform(self, ids: list[int], rng: np.random.Generator) -> list[int]:
        return self.transform_many([ids], [rng])[0]

    def transform_many(self, docs: list[list[int]], rngs: list[np.random.Generator]) -> list[list[int]]:
        """`[transform(ids, rng) for ids, rng in zip(docs, rngs)]`, with the array work done once for all the
        documents (numpy's per-call cost is most of it on documents of a few hundred tokens). The generators must
        be distinct objects: each is drawn from in the order `transform` draws from it."""
        if len({id(rng) for rng in rngs}) != len(rngs) or len(rngs) != len(docs):
            raise ValueError("transform_many needs one distinct generator per document")
        if self._kernel is not None:
            return lists_via_flat(self, docs, rngs)
        return self._transform_python(docs, rngs)

    def transform_flat(self, ids: np.ndarray, bounds: np.ndarray, rngs: list[np.random.Generator]):
        """Documents `ids[bounds[d]:bounds[d+1]]` (int32; generators drawn from in document order, so the parts
        of one text may share one) -> (their results back to back as int32, each result's length)."""
        if self._kernel is None:
            return flat_via_lists(self, ids, bounds, rngs)
        self.words.reset_if_full()
        try:
            return self._kernel.run(ids, bounds, rngs)
        except BaseException:
            self.words.reset()  # a failed callback may leave the two sides' tables apart
            raise

    def _transform_python(self, docs: list[list[int]], rngs: list[np.random.Generator]) -> list[list[int]]:
        """The reference implementation (and the fallback where the kernels cannot be compiled)."""
        out = [list(ids) for ids in docs]
        todo = [i for i, ids in enumerate(out) if ids]
        if not todo:
            return out
        self.words.reset_if_full()
        lengths = [len(out[i]) for i in todo]
        first = np.cumsum([0, *lengths])  # where each document starts in the concatenation
        joined = list(chain.from_iterable(out[i] for i in todo))
        starts, ends, sids, group_doc, frozen = self._groups(joined, first)
        bounds = np.searchsorted(group_doc, np.arange(len(todo) + 1)).tolist()  # a document's active groups
        initial = sids.tolist()
        current = list(initial)  # the state of every active group, as the draws change it
        self._contract(lengths, starts, ends, bounds, current, [rngs[i] for i in todo])
        for d, i in enumerate(todo):
            ids, fixed = out[i], frozen[d]
            b0, b1 = bounds[d], bounds[d + 1]
            changed = [(g - b0, current[g]) for g in range(b0, b1) if current[g] != initial[g]]
            if changed:
                offset = first[d]
                ids, fixed = self._assemble(ids, starts[b0:b1] - offset, ends[b0:b1] - offset, changed, fixed)
            out[i] = self._expander.expand(
                ids, int(len(ids) * self.expand_prop), rngs[i], frozen=fixed or None
            )
        return out

    def _groups(self, ids: list[int], first: np.ndarray):
        """The word groups of documents given back to back (`first`: where each starts, and the total length).

        Returns the (start, end, sid, document) of the groups that can contract, in order, and per document the
        sorted positions (in the document) of its affix tokens.
        """
        n = len(ids)
        # Token i starts a group when it opens one or token i-1 closes one, or when it starts a document.
        tokens = np.array(ids)
        opens = np.empty(n, dtype=bool)
        opens[0] = True
        opens[1:] = self._opens[tokens[1:]] | self._closes[tokens[:-1]]
        opens[first[:-1]] = True
        starts = np.flatnonzero(opens)
        ends = np.append(starts[1:], n)
        sids = self.words.group_sids(ids, tokens, starts, ends)
        active, affix = self.words.flags_of(sids)
        doc = np.searchsorted(first, starts, side="right") - 1
        frozen: list[list[int]] = [[] for _ in range(len(first) - 1)]
        if affix.any():
            masks = self.words.masks
            at = (starts[affix] - first[doc[affix]]).tolist()
            for s, sid, d in zip(at, sids[affix].tolist(), doc[affix].tolist(), strict=True):
                mask = masks[sid]
                while mask:
                    low = mask & -mask
                    frozen[d].append(s + low.bit_length() - 1)
                    mask ^= low
        return starts[active], ends[active], sids[active], doc[active], frozen

    def _contract(self, lengths, starts, ends, bounds, current, rngs) -> None:
        """Run every document's contraction attempts, updating `current` (the state of every active group).

        Draws land on uniform positions of the document; only those on active groups can do anything, so they
        are generated directly: the gap to the next such draw is geometric with p = active tokens / n, and its
        position is uniform over the active tokens. Other draws count as spent attempts. Each document's first
        chunk of draws is drawn for all documents at once; the few that need more draw them one at a time.
        """
        # (group, offset in the group) of every active token, so a draw finds its token by one index.
        sizes = ends - starts
        slot_group = np.repeat(np.arange(len(sizes)), sizes)
        slot_offset = np.arange(len(slot_group)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        slot_first = np.concatenate(([0], np.cumsum(sizes)))[bounds].tolist()
        runs = []  # the documents with work
        for d, n in enumerate(lengths):
            attempts = int(self.contract_prop * n)
            n_active = slot_first[d + 1] - slot_first[d]
            if n_active and attempts > 0:
                runs.append(_Run(d, n, n_active, attempts, max(attempts, int(self.max_attempts_factor * n))))
        while runs:
            chunks = [
                rngs[r.doc].random(5 * max(8, int(1.2 * r.attempts * r.active / r.n))).reshape(-1, 5)
                for r in runs
            ]
            draws = self._draws(chunks, runs, slot_first, slot_group, slot_offset)
            unfinished = []
            for run, rows in zip(runs, draws, strict=True):
                finished, run.k, run.rejected = self._run_draws(
                    rows, current, run.attempts, run.budget, run.rejected
                )
                if not finished:
                    unfinished.append(run)
            runs = unfinished

    def _draws(self, chunks, runs, slot_first, slot_group, slot_offset) -> list:
        """Each run's chunk of uniforms, five per draw (gap, position, size, reject, cut), as an iterator of
        (draw index, active group, offset, size, reject, cut): the same arithmetic as one draw at a time, done
        for all the chunks at once."""
        u = np.concatenate(chunks)
        rows = np.array([len(c) for c in chunks])
        per_row = lambda values: np.repeat(np.asarray(values), rows)  # noqa: E731
        n_active = per_row([r.active for r in runs])
        every = per_row([r.active == r.n for r in runs])  # every draw lands on an active group
        gaps = np.ones(len(u), dtype=np.int64)
        if not every.all():
            log_miss = per_row([math.log1p(-r.active / r.n) if r.active != r.n else 0.0 for r in runs])
            gaps[~every] = self._gaps(u[~every, 0], log_miss[~every])
        top = np.concatenate(([0], np.cumsum(rows)))
        gaps[top[:-1]] += [r.k for r in runs]  # so that the running sums are the draws' indices
        index = np.cumsum(gaps)
        index -= per_row(np.concatenate(([0], index[top[1:-1] - 1])))  # each run's sums from its own start
        slot = (u[:, 1] * n_active).astype(np.int64) + per_row([slot_first[r.doc] for r in runs])
        aw = self.affix_awareness
        columns = (
            index.tolist(),
            slot_group[slot].tolist(),
            slot_offset[slot].tolist(),
            np.asarray(self._sizes)[np.searchsorted(self._cdf, u[:, 2], side="right")].tolist(),
            (u[:, 3] < aw).tolist(),
            (u[:, 4] < aw).tolist(),
        )
        top = top.tolist()
        return [zip(*(c[a:b] for c in columns), strict=True) for a, b in zip(top, top[1:], strict=False)]

    def _run_draws(self, draws, current, attempts, budget, rejected) -> tuple[bool, int, int]:
        """Apply one document's draws to `current`; returns whether its attempts are spent, the last draw index
        and the rejected count (to go on with a next chunk)."""
        state_len, masks, add_step = self.words.lengths, self.words.masks, self.words.add_step
        known_step = self.words.steps.get
        k = -1
        for k, g, offset, size, reject, cut in draws:
            if k >= budget or k - rejected >= attempts:  # a rejected span does not count: it is re-drawn
                return True, k, rejected
            sid = current[g]
            # Clip the span to the group's current state.
            length = state_len[sid]
            r = offset if offset < length else length - 1
            e = r + size
            if e > length:
                e = length
            if reject:  # a span holding an affix token is rejected
                mask = masks[sid]
                if mask and (mask >> r) & ((1 << (e - r)) - 1):
                    rejected += 1
                    continue
            if length > MAX_WORD_TOKENS:  # a state grown past the limit never steps (WordStates: left alone)
                continue
            # One integer for (state, span, cut), 7 bits each for r and e: r < 64 and e <= 64 here.
            key = (((sid << 7 | r) << 7 | e) << 1) | cut
            new = known_step(key)
            if new is None:
                new = add_step(key, sid, r, e, cut)
            if new >= 0:
                current[g] = new
        return False, k, rejected

    @staticmethod
    def _gaps(u: np.ndarray, log_miss) -> np.ndarray:
        """`1 + int(math.log1p(-x) / log_miss)` for every x in `u` (`log_miss`: a number, or one per x): the
        draw-to-draw gaps, geometric.

        numpy's log1p may differ from the C library's `math.log1p` in the last bits (a SIMD implementation), which
        could move the integer part where the quotient is within rounding of an integer: those few are computed
        with `math.log1p`, so the gaps are exactly the scalar formula's.
        """
        q = np.log1p(-u) / log_miss
        gaps = q.astype(np.int64)  # q >= 0: truncation, as int()
        per_x = np.broadcast_to(log_miss, u.shape)
        for i in np.flatnonzero(np.abs(q - np.rint(q)) < 1e-6).tolist():
            gaps[i] = int(math.log1p(-float(u[i])) / float(per_x[i]))
        return gaps + 1

    def _assemble(self, ids, starts, ends, changed, frozen) -> tuple[list[int], list[int]]:
        """Splice the changed groups in; returns the new ids and the positions of their affix tokens."""
        states, masks = self.words.states, self.words.masks
        out: list[int] = []
        moved: list[int] = []
        prev = shift = f = 0
        starts, ends = starts.tolist(), ends.tolist()
        for g, sid in changed:
            s, e = starts[g], ends[g]
            while f < len(frozen) and frozen[f] < s:
                moved.append(frozen[f] + shift)
                f += 1
            while f < len(frozen) and frozen[f] < e:  # the group's old affix tokens: replaced below
                f += 1
            out += ids[prev:s]
            new = states[sid]
            mask, at = masks[sid], s + shift
            while mask:
                low = mask & -mask
                moved.append(at + low.bit_length() - 1)
                mask ^= low
            out += new
            shift += len(new) - (e - s)
            prev = e
        moved += [p + shift for p in frozen[f:]]
        out += ids[prev:]
        return out, moved
