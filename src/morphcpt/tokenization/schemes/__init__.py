"""The tokenization schemes, one file each behind one interface, chosen by name from `SCHEMES`.

scheme = build_scheme(SchemeConfig(name="stochastok"), vocab)
out = scheme.transform(canonical_ids, document_rng(seed, scheme.name, doc_index))

Replicates: seed k of a scheme that draws (stochastok, patok) re-draws its choices from seed + k into
`<scheme>/seed<k>/` (`data_folder`); a scheme without random choices (vanilla, eeve) has the same ids for every
seed, so all its replicates read `<scheme>/`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from morphcpt.tokenization.schemes.base import (
    Scheme,
    SchemeConfig,
    document_rng,
    flatten,
    transform_documents,
    transform_flat,
)
from morphcpt.tokenization.schemes.eeve import EEVEScheme
from morphcpt.tokenization.schemes.patok import PatokScheme
from morphcpt.tokenization.schemes.stochastok import StochastokScheme
from morphcpt.tokenization.schemes.vanilla import VanillaScheme
from morphcpt.tokenization.vocabulary import Vocabulary

SCHEMES: dict[str, type] = {
    "vanilla": VanillaScheme,
    "stochastok": StochastokScheme,
    "patok": PatokScheme,
    "eeve": EEVEScheme,
}


def draws(name: str) -> bool:
    """Whether scheme `name` makes random choices (its ids depend on the seed); unknown names are assumed to."""
    return getattr(SCHEMES.get(name), "draws", True)


def data_folder(scheme: str, replicate: int = 0) -> str:
    """The folder, relative to the processed-data root, holding replicate `replicate` of `scheme`'s ids."""
    if replicate < 0:
        raise ValueError(f"replicate must be 0 or more, got {replicate}")
    return f"{scheme}/seed{replicate}" if replicate and draws(scheme) else scheme


def build_scheme(cfg: SchemeConfig | Mapping[str, Any], vocab: Vocabulary) -> Scheme:
    """The scheme `cfg.name` for `vocab`; `cfg` may be a SchemeConfig, a dict or an OmegaConf node."""
    cfg = SchemeConfig.from_mapping(cfg)
    try:
        cls = SCHEMES[cfg.name]
    except KeyError:
        raise ValueError(f"unknown scheme {cfg.name!r}; known: {sorted(SCHEMES)}") from None
    return cls(cfg, vocab)


__all__ = [
    "SCHEMES",
    "Scheme",
    "SchemeConfig",
    "build_scheme",
    "data_folder",
    "document_rng",
    "draws",
    "flatten",
    "transform_documents",
    "transform_flat",
]
