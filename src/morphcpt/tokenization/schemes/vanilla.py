"""Vanilla: the canonical tokenization, unchanged. The baseline every other scheme is compared with."""

from __future__ import annotations

import numpy as np

from morphcpt.tokenization.schemes.base import SchemeConfig
from morphcpt.tokenization.vocabulary import Vocabulary


class VanillaScheme:
    name = "vanilla"
    draws = False  # no random choice: preprocessing makes no generators for it

    def __init__(self, cfg: SchemeConfig, vocab: Vocabulary) -> None:
        self.vocab = vocab

    def transform(self, ids: list[int], rng: np.random.Generator) -> list[int]:
        return list(ids)

    def transform_flat(self, ids: np.ndarray, bounds: np.ndarray, rngs: list[np.random.Generator]):
        return ids, np.diff(bounds)
