"""Token budgets: `10M`, `100M`, `1B`, `10B` or any number; counting tokens; a deterministic sample within a budget.

    parse_count("1.5B") == 1_500_000_000;  format_count(12_345_678) == "12.3M"
    counter = TokenCounter.from_tokenizer("outputs/tokenizer")   # exact, with the target tokenizer
    counter = TokenCounter.estimate(bytes_per_token=4.0)         # before a tokenizer exists: from UTF-8 bytes
    keep = select_within_budget(keys, tokens, budget)            # documents in key order until the budget

A budget is an upper bound: documents are taken whole, in the order of a per-document key derived from
(seed, text), while they fit; the key order is a seeded shuffle, so the same sources, seed and budget always give
the same sample, whatever the order the documents were read in.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SUFFIXES = {"": 1, "K": 10**3, "M": 10**6, "B": 10**9, "G": 10**9, "T": 10**12}
_COUNT = re.compile(r"^\s*(\d+(?:\.\d*)?(?:[eE]\d+)?)\s*([kKmMbBgGtT]?)\s*$")
DEFAULT_BYTES_PER_TOKEN = 4.0  # the shipped sample tokenizer spells 4.04 text bytes per token


def parse_count(value: str | int | float) -> int:
    """A token count written as `10M`, `100M`, `1B`, `10B`, `250k`, `1.5B`, `1e9` or a plain integer."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    else:
        match = _COUNT.match(str(value))
        if not match:
            raise ValueError(f"not a token count: {value!r} (write e.g. 10M, 100M, 1B, 10B or 250000)")
        number = float(match.group(1)) * SUFFIXES[match.group(2).upper()]
    if number < 1 or not math.isfinite(number):
        raise ValueError(f"a token count must be at least 1, got {value!r}")
    return int(number)


def format_count(count: int) -> str:
    """12_345_678 -> '12.3M' (for messages; exact counts go in manifests)."""
    for suffix, size in (("B", 10**9), ("M", 10**6), ("k", 10**3)):
        if count >= size:
            return f"{count / size:.3g}{suffix}"
    return str(count)


def document_key(seed: int, text: str) -> int:
    """A uniform 64-bit sampling key of a document: depends on the seed and the text only."""
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8, key=seed.to_bytes(8, "little", signed=True))
    return int.from_bytes(digest.digest(), "little")


@dataclass
class TokenCounter:
    """Tokens of a text: with a tokenizer folder's SentencePiece model (exact, no bos/eos), or estimated as
    UTF-8 bytes / `bytes_per_token` (rounded up) when no tokenizer exists yet."""

    method: str
    bytes_per_token: float = DEFAULT_BYTES_PER_TOKEN
    _encode: object = None

    @classmethod
    def estimate(cls, bytes_per_token: float = DEFAULT_BYTES_PER_TOKEN) -> TokenCounter:
        if bytes_per_token <= 0:
            raise ValueError(f"bytes per token must be positive, got {bytes_per_token}")
        return cls(method=f"estimate: UTF-8 bytes / {bytes_per_token:g}", bytes_per_token=bytes_per_token)

    @classmethod
    def from_tokenizer(cls, folder: str | Path) -> TokenCounter:
        folder = Path(folder)
        model_file = folder / "tokenizer.model"
        if model_file.exists():
            import sentencepiece as spm

            model = spm.SentencePieceProcessor(model_file=str(model_file))
            return cls(method=f"tokenizer {folder}", _encode=model.encode)
        if (folder / "tokenizer.json").exists():
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            return cls(
                method=f"tokenizer {folder}",
                _encode=lambda text: tokenizer.encode(text, add_special_tokens=False).ids,
            )
        raise FileNotFoundError(f"{folder} holds no tokenizer.model or tokenizer.json")

    def __call__(self, text: str, nbytes: int) -> int:
        if self._encode is not None:
            return len(self._encode(text))
        return math.ceil(nbytes / self.bytes_per_token)


def select_within_budget(keys: np.ndarray, tokens: np.ndarray, budget: int) -> np.ndarray:
    """Boolean mask of the documents taken: in ascending key order, each document that still fits the budget.

    A document too large for what is left is passed over and smaller ones after it may still fit, so the sample
    comes close to the budget without ever exceeding it.
    """
    order = np.argsort(keys, kind="stable")
    keep = np.zeros(len(keys), dtype=bool)
    if len(order) == 0:
        return keep
    # The leading run that fits as a whole, at numpy speed; then document by document for what is left.
    fits = int(np.searchsorted(np.cumsum(tokens[order]), budget, side="right"))
    keep[order[:fits]] = True
    left = budget - int(tokens[order[:fits]].sum())
    smallest = int(tokens.min())
    for index in order[fits:]:
        if left < smallest:
            break
        size = int(tokens[index])
        if size <= left:
            keep[index] = True
            left -= size
    return keep
