"""Tokenization: a `Vocabulary` view of a Hugging Face tokenizer, the StochasTok split table, and the schemes.

A scheme maps the canonical ids of one document to the ids we train on, never changing the text:
`vocab.decode(scheme.transform(ids, rng)) == vocab.decode(ids)`. Pick one by name with `build_scheme`:

    vocab = Vocabulary.load("data/tokenizer")
    scheme = build_scheme(SchemeConfig(name="patok"), vocab)
    ids = scheme.transform(vocab.encode(text), document_rng(seed, "patok", doc_index))

`python benchmarks/schemes.py` measures their throughput.
"""

from morphcpt.tokenization.schemes import SCHEMES, Scheme, SchemeConfig, build_scheme, document_rng
from morphcpt.tokenization.vocabulary import Vocabulary

__all__ = ["SCHEMES", "Scheme", "SchemeConfig", "Vocabulary", "build_scheme", "document_rng"]
