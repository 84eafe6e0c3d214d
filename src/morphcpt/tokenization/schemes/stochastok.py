"""StochasTok (Sims et al., 2025): split random tokens of the canonical ids into two vocabulary tokens.

`int(len(ids) * expand_prop)` attempts; each picks a uniformly random position of the current, growing list and
replaces its token by a uniformly chosen expansion pair, or is spent when the token has none (specials, bytes,
unsplittable pieces). Realised growth is therefore below `expand_prop`. The text never changes.

The attempts run in the compiled kernel (`tokenization.native`) where it builds, else in `Expander.expand`: the
same ids either way.
"""

from __future__ import annotations

import numpy as np

from morphcpt.tokenization import native
from morphcpt.tokenization.expansions import Expander, load_or_build_split_table
from morphcpt.tokenization.schemes.base import SchemeConfig, flat_via_lists, lists_via_flat
from morphcpt.tokenization.vocabulary import Vocabulary


class StochastokScheme:
    name = "stochastok"

    def __init__(self, cfg: SchemeConfig, vocab: Vocabulary) -> None:
        if cfg.expand_prop < 0:
            raise ValueError(f"expand_prop must be >= 0, got {cfg.expand_prop}")
        self.vocab = vocab
        self.expand_prop = cfg.expand_prop
        self.table = load_or_build_split_table(vocab, cfg.cache_dir)
        self._expander = Expander(self.table)
        self._kernels = native.load()  # the compiled expansion, when it builds here

    @property
    def native(self) -> bool:
        return self._kernels is not None

    def transform(self, ids: list[int], rng: np.random.Generator) -> list[int]:
        if self._kernels is None:
            return self._expander.expand(list(ids), int(len(ids) * self.expand_prop), rng)
        return self.transform_many([ids], [rng])[0]

    def transform_many(self, docs: list[list[int]], rngs: list[np.random.Generator]) -> list[list[int]]:
        """`[transform(ids, rng) for ids, rng in zip(docs, rngs)]` in one call of the kernel."""
        if self._kernels is None:
            return list(map(self.transform, docs, rngs))
        return lists_via_flat(self, docs, rngs)

    def transform_flat(self, ids: np.ndarray, bounds: np.ndarray, rngs: list[np.random.Generator]):
        """Documents `ids[bounds[d]:bounds[d+1]]` (int32) -> (results back to back as int32, their lengths);
        generators are drawn from in document order."""
        if self._kernels is None:
            return flat_via_lists(self, ids, bounds, rngs)
        return self._kernels.stochastok(ids, bounds, rngs, self.expand_prop, self.table)
