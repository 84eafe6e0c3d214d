"""EEVE: the canonical tokenization of an EEVE-expanded tokenizer (`morphcpt.tokenization.eeve`), unchanged.

The fourth arm of the experiment does not re-cut tokens: the expanded vocabulary already gives the target
language its own pieces, so the ids to train on are the expanded tokenizer's canonical ids. Preprocess with the
expanded folder as the tokenizer (`scheme=eeve tokenizer=<expanded folder>`); any other tokenizer is an error,
so EEVE data cannot silently be vanilla data. The folder's `eeve_expansion.json` is read and must record exactly
the new pieces its `tokenizer.json` holds: training resizes the model from that record, so data made with a
tokenizer the record does not describe would train new rows initialised for other pieces.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from morphcpt.tokenization.eeve import EXPANSION_FILE, Expansion
from morphcpt.tokenization.schemes.base import SchemeConfig
from morphcpt.tokenization.vocabulary import Vocabulary


class EEVEScheme:
    name = "eeve"
    draws = False  # no random choice: preprocessing makes no generators for it

    def __init__(self, cfg: SchemeConfig, vocab: Vocabulary) -> None:
        folder = Path(vocab.source)
        if not (folder / EXPANSION_FILE).is_file():
            raise ValueError(
                f"scheme eeve needs an EEVE-expanded tokenizer folder (tokenizer=<folder with {EXPANSION_FILE}>), "
                f"got {folder or 'a tokenizer without a folder'}; make one with python -m morphcpt.tokenization.eeve"
            )
        # Read, not only found: a cut-off record, or one from another build than the folder's tokenizer.json,
        # means the folder is not the expanded tokenizer training will resize the model for.
        Expansion.load(folder).check_tokenizer(vocab, folder)
        self.vocab = vocab

    def transform(self, ids: list[int], rng: np.random.Generator) -> list[int]:
        return list(ids)

    def transform_flat(self, ids: np.ndarray, bounds: np.ndarray, rngs: list[np.random.Generator]):
        return ids, np.diff(bounds)
