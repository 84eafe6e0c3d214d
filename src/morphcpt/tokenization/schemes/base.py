"""What every tokenization scheme shares: its config, its interface, and the per-document random generator.

A scheme turns the canonical ids of one document (no <bos>/<eos>) into the ids we train on, with a
`numpy.random.Generator` seeded from (seed, scheme, document index) so results never depend on how documents are
spread over workers. It must never change the text: `vocab.decode(out) == vocab.decode(ids)`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from itertools import chain
from typing import Any, Protocol

import numpy as np


@dataclass
class SchemeConfig:
    """One config for all schemes; each reads the fields it needs (YAML: conf/scheme/<name>.yaml)."""

    name: str = "vanilla"
    # stochastok and patok: share of the document's length tried as StochasTok splits
    expand_prop: float = 0.1
    # where the split table is cached (keyed by the vocabulary's fingerprint); None builds it in memory
    cache_dir: str | None = None
    # patok
    contract_prop: float = 0.9
    affix_awareness: float = 0.95
    num_toks_to_cont: list[int] = field(default_factory=lambda: [2, 3, 4])
    contract_prob: list[float] = field(default_factory=lambda: [0.35, 0.35, 0.3])
    language: str = "fil"
    # patok: span draws per token at most (rejected spans are re-drawn until this budget is spent)
    max_attempts_factor: float = 2.0

    @classmethod
    def from_mapping(cls, cfg: Mapping[str, Any] | SchemeConfig) -> SchemeConfig:
        """Accept a SchemeConfig, a dict or an OmegaConf node; unknown keys are an error."""
        if isinstance(cfg, SchemeConfig):
            return cfg
        known = {f.name for f in fields(cls)}
        values = dict(cfg.items())
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown scheme config keys {unknown}; known: {sorted(known)}")
        for key in ("num_toks_to_cont", "contract_prob"):
            if key in values:
                values[key] = list(values[key])
        return cls(**values)


class Scheme(Protocol):
    name: str
    # Optional class attributes that preprocessing reads: `draws = False` (no random choices, so no generators are
    # made for it: vanilla, eeve), `fills_caches = True` (its caches are warmed before the workers fork: patok).

    def transform(self, ids: list[int], rng: np.random.Generator) -> list[int]:
        """Canonical ids of one document -> transformed ids with the same text."""
        ...


def transform_documents(
    scheme: Scheme, docs: list[list[int]], rngs: list[np.random.Generator]
) -> list[list[int]]:
    """`[scheme.transform(ids, rng) for ids, rng in zip(docs, rngs)]`, through the scheme's `transform_many` where
    it has one (patok: a batch's array work done once). Documents sharing a generator (the parts of one long
    text) go in successive calls in their order, so each generator is drawn from as `transform` would."""
    many = getattr(scheme, "transform_many", None)
    if many is None:
        return [scheme.transform(ids, rng) for ids, rng in zip(docs, rngs, strict=True)]
    out: list[list[int] | None] = [None] * len(docs)
    left = list(range(len(docs)))
    while left:  # each round takes the first remaining document of every generator
        now, seen = [], set()
        for i in left:
            if id(rngs[i]) not in seen:
                seen.add(id(rngs[i]))
                now.append(i)
        for i, ids in zip(now, many([docs[i] for i in now], [rngs[i] for i in now]), strict=True):
            out[i] = ids
        taken = set(now)
        left = [i for i in left if i not in taken]
    return out


def transform_flat(
    scheme: Scheme, ids: np.ndarray, bounds: np.ndarray, rngs: list[np.random.Generator]
) -> tuple[np.ndarray, np.ndarray]:
    """`transform_documents` on arrays: documents `ids[bounds[d]:bounds[d+1]]` (int32, `bounds` int64) ->
    (their results back to back as int32, each result's length). A scheme with its own `transform_flat` (the
    compiled kernels) takes the arrays as they are; any other goes through lists."""
    own = getattr(scheme, "transform_flat", None)
    if own is not None:
        return own(ids, bounds, rngs)
    return flat_via_lists(scheme, ids, bounds, rngs)


def flatten(docs: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Documents as lists -> (their ids back to back as int32, int64 bounds: document d is ids[b[d]:b[d+1]])."""
    bounds = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(ids) for ids in docs], out=bounds[1:])
    return np.fromiter(chain.from_iterable(docs), dtype=np.int32, count=int(bounds[-1])), bounds


def unflatten(flat: np.ndarray, lengths: np.ndarray) -> list[list[int]]:
    """(ids back to back, lengths) -> one list per document."""
    values = flat.tolist()
    out, at = [], 0
    for n in lengths.tolist():
        out.append(values[at : at + n])
        at += n
    return out


def flat_via_lists(
    scheme: Scheme, ids: np.ndarray, bounds: np.ndarray, rngs
) -> tuple[np.ndarray, np.ndarray]:
    """`transform_flat` through `transform_documents`: the arrays as lists and back (the Python code's way)."""
    values, edges = ids.tolist(), bounds.tolist()
    docs = [values[a:b] for a, b in zip(edges, edges[1:], strict=False)]
    flat, out_bounds = flatten(transform_documents(scheme, docs, rngs))
    return flat, np.diff(out_bounds)


def lists_via_flat(scheme, docs: list[list[int]], rngs) -> list[list[int]]:
    """`transform_documents` through the scheme's own `transform_flat` (the compiled kernels): lists as arrays
    and back."""
    return unflatten(*scheme.transform_flat(*flatten(docs), rngs))


def document_rng(seed: int, scheme: str, doc_index: int) -> np.random.Generator:
    """A generator for one document, from a stable hash of (seed, scheme, doc_index) — not Python's `hash`."""
    digest = hashlib.sha256(f"morphcpt|{int(seed)}|{scheme}|{int(doc_index)}".encode()).digest()
    return np.random.Generator(np.random.PCG64(np.frombuffer(digest, dtype=np.uint32)))
