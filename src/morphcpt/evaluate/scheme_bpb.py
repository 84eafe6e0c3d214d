"""Bits per byte of one model on one text as each tokenization scheme cuts it: what CPT has to repair, measured
before any training.

    from morphcpt.evaluate.scheme_bpb import scheme_ids, bits_per_byte
    ids = scheme_ids(texts, "stochastok", vocab, seed=1234)          # one id list per text, no <bos>/<eos>
    bits_per_byte(lm, ids, texts)   # {"bits_per_byte", "nats", "tokens", "bytes", "documents"}

    python benchmarks/scheme_bpb.py --model DIR [--schemes vanilla stochastok patok eeve]   # the table

Every scheme keeps the text (`decode(transform(ids)) == decode(ids)`), so each document is scored as
`<bos>` followed by its scheme's ids exactly as they are (no re-encoding, no `<eos>`), and the summed nats of every
token after `<bos>` are divided by ln 2 and by the UTF-8 bytes of the *text*: one denominator for every scheme,
whatever the number of tokens. The ids of a scheme that draws (stochastok, patok) come from the same per-document
generators preprocessing uses (`document_rng(seed, scheme, index)`). EEVE ids are the expanded tokenizer's
canonical ids, scored by the model grown to that tokenizer with its new rows at their EEVE initialisation
(`modeling.resize`), untrained.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from morphcpt.tokenization.schemes import SchemeConfig, build_scheme, document_rng, transform_documents

SCHEME_NAMES = ("vanilla", "stochastok", "patok", "eeve")


def scheme_ids(
    texts: Sequence[str],
    scheme: str,
    vocab,
    *,
    seed: int = 1234,
    expand_prop: float = 0.1,
) -> list[list[int]]:
    """The ids of each text under `scheme` (no <bos>/<eos>), checked to decode back to the text. `vocab` is the
    scheme's own vocabulary: the expanded tokenizer's for eeve, the base one for the others."""
    scheme_obj = build_scheme(SchemeConfig(name=scheme, expand_prop=expand_prop), vocab)
    canonical = vocab.encode_batch(list(texts))
    rngs = [document_rng(seed, scheme, index) for index in range(len(texts))]
    ids = transform_documents(scheme_obj, canonical, rngs)
    for index, (text, out) in enumerate(zip(texts, ids, strict=True)):
        if vocab.decode(out) != text:
            raise ValueError(
                f"scheme {scheme} changed the text of document {index}: its ids do not decode to it"
            )
    return ids


def bits_per_byte(lm, ids: Sequence[Sequence[int]], texts: Sequence[str]) -> dict:
    """Summed nats of each document's ids after `<bos>` (`lm.sequence_logprobs`), in bits per UTF-8 byte of the
    texts. `lm` is an `evaluate.hf_model.HFCausalLM` (or anything with `sequence_logprobs` and `prefix`)."""
    if len(ids) != len(texts):
        raise ValueError(f"{len(ids)} id lists for {len(texts)} texts")
    empty = [i for i, doc in enumerate(ids) if not doc]
    if empty:
        raise ValueError(f"documents {empty[:5]} have no ids: drop empty texts first")
    logprobs = lm.sequence_logprobs([list(lm.prefix) + list(doc) for doc in ids])
    nats = -sum(logprobs)
    nbytes = sum(len(text.encode("utf-8")) for text in texts)
    return {
        "bits_per_byte": nats / math.log(2) / nbytes,
        "nats_per_token": nats / sum(len(doc) for doc in ids),
        "tokens": sum(len(doc) for doc in ids),
        "bytes": nbytes,
        "documents": len(texts),
    }


def measure(
    model_dir,
    texts: Sequence[str],
    schemes: Sequence[str] = SCHEME_NAMES,
    *,
    eeve_tokenizer=None,
    seed: int = 1234,
    expand_prop: float = 0.1,
    batch_size: int = 8,
    work_dir=None,
) -> dict[str, dict]:
    """scheme -> `bits_per_byte` of the model in `model_dir` (fp32, CPU) on `texts` as that scheme tokenizes them.
    eeve needs `eeve_tokenizer` (an expanded tokenizer folder of the model's own tokenizer) and `work_dir`, where
    the model grown to it is written (`modeling.resize`)."""
    import tempfile
    from pathlib import Path

    from morphcpt.evaluate.hf_model import HFCausalLM
    from morphcpt.tokenization.vocabulary import Vocabulary

    unknown = sorted(set(schemes) - set(SCHEME_NAMES))
    if unknown:
        raise ValueError(f"unknown schemes {unknown}; known: {list(SCHEME_NAMES)}")
    if "eeve" in schemes and eeve_tokenizer is None:
        raise ValueError("scheme eeve needs an expanded tokenizer folder (eeve_tokenizer=)")
    results: dict[str, dict] = {}
    base = [s for s in schemes if s != "eeve"]
    if base:
        vocab = Vocabulary.load(model_dir)
        lm = HFCausalLM.load(model_dir, device="cpu", batch_size=batch_size)
        for scheme in base:
            ids = scheme_ids(texts, scheme, vocab, seed=seed, expand_prop=expand_prop)
            results[scheme] = bits_per_byte(lm, ids, texts)
        del lm
    if "eeve" in schemes:
        from morphcpt.modeling.resize import resize

        with tempfile.TemporaryDirectory(dir=work_dir) as tmp:
            grown = Path(tmp) / "eeve-model"
            facts = resize(model_dir, eeve_tokenizer, grown)
            vocab = Vocabulary.load(eeve_tokenizer)
            lm = HFCausalLM.load(grown, device="cpu", batch_size=batch_size)
            ids = scheme_ids(texts, "eeve", vocab, seed=seed)
            results["eeve"] = {**bits_per_byte(lm, ids, texts), "added_tokens": facts["added_tokens"]}
            new = sum(i >= facts["first_new_id"] for doc in ids for i in doc)
            results["eeve"]["new_token_share"] = new / results["eeve"]["tokens"]
            del lm
    return results
