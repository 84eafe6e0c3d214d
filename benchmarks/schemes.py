"""Throughput of each tokenization scheme on one corpus, in one process, plus the split table's build time.

For every scheme: tokens/s of canonical encoding + transform (what preprocessing pays, in batches of 64 documents
as it does: `transform_many` where a scheme has it), of the transform alone, the time relative to vanilla, the
share of documents changed, the growth in tokens, and the morpheme-boundary alignment (precision/recall, see `morphcpt.tokenization.alignment`). Timings are CPU time of
this process (robust on a shared machine), the best of `--repeats` interleaved passes after a first pass that
fills the caches, as in a long job (each pass draws new random numbers, so span caches still miss); the first
pass is reported too. `--join N` glues N consecutive documents together to imitate longer documents. The split
table is timed on the given vocabulary and on a synthetic one of Gemma 3's size (262,144 pieces).

    python benchmarks/schemes.py [--tokenizer data/tokenizer] [--corpus data/sample/tl_sample.jsonl] [--join 20]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from types import SimpleNamespace

import numpy as np

from morphcpt import paths
from morphcpt.morphology import get_language_pack
from morphcpt.tokenization import SchemeConfig, Vocabulary, build_scheme, document_rng
from morphcpt.tokenization.alignment import Alignment, morpheme_boundary_alignment
from morphcpt.tokenization.expansions import build_split_table
from morphcpt.tokenization.schemes import transform_documents


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizer", default=str(paths.SAMPLE_TOKENIZER_DIR))
    parser.add_argument("--corpus", default=str(paths.SAMPLE_CORPUS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--join", type=int, default=1)
    args = parser.parse_args()

    vocab = Vocabulary.load(args.tokenizer)
    with open(args.corpus, encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f if line.strip()]
    texts = ["\n".join(texts[i : i + args.join]) for i in range(0, len(texts), args.join)]
    canonical = [vocab.encode(t) for t in texts]
    n_tokens = sum(map(len, canonical))
    print(f"{vocab}, {len(texts)} documents, {n_tokens} canonical tokens")

    schemes = {
        name: build_scheme(SchemeConfig(name=name), vocab) for name in ("vanilla", "stochastok", "patok")
    }
    rngs = {name: [document_rng(args.seed, name, i) for i in range(len(texts))] for name in schemes}
    outputs, cold = {}, {}
    for name, scheme in schemes.items():  # first pass: empty caches
        start = time.process_time()
        outputs[name] = run(scheme, canonical, rngs[name])
        cold[name] = time.process_time() - start
    best_total = {name: float("inf") for name in schemes}
    best_transform = dict(best_total)
    for _ in range(args.repeats):
        for name, scheme in schemes.items():
            best_total[name] = min(
                best_total[name], timed(lambda s=scheme, r=rngs[name]: encode_and_run(s, vocab, texts, r))
            )
            best_transform[name] = min(
                best_transform[name], timed(lambda s=scheme, r=rngs[name]: run(s, canonical, r))
            )

    pack = get_language_pack("fil")
    print(
        f"\n{'scheme':<11}{'tok/s total':>12}{'x vanilla':>10}{'tok/s transf':>13}{'first pass':>11}"
        f"{'changed':>9}{'growth':>8}{'precision':>10}{'recall':>8}"
    )
    for name in schemes:
        out = outputs[name]
        align = sum((morpheme_boundary_alignment(vocab, o, pack) for o in out), Alignment())
        changed = np.mean([o != c for o, c in zip(out, canonical, strict=True)])
        growth = sum(map(len, out)) / n_tokens - 1
        print(
            f"{name:<11}{n_tokens / best_total[name]:>12,.0f}{best_total[name] / best_total['vanilla']:>10.2f}"
            f"{n_tokens / best_transform[name]:>13,.0f}{n_tokens / cold[name]:>11,.0f}{changed:>9.1%}"
            f"{growth:>8.1%}{align.precision:>10.3f}{align.recall:>8.3f}"
        )

    t_rng = timed(lambda: [document_rng(args.seed, "x", i) for i in range(len(texts))])
    print(f"\ndocument_rng: {t_rng / len(texts) * 1e6:.1f} us per document (not included above)")
    t_small = timed(lambda: build_split_table(vocab))
    big = synthetic_vocabulary(262_144, seed=args.seed)
    t_big = timed(lambda: build_split_table(big))
    print(
        f"split table build: {t_small:.3f} s for {vocab.size:,} pieces; {t_big:.2f} s for {big.size:,} synthetic"
    )


def timed(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


BATCH = 64  # documents per batch, as `morphcpt.preprocess` hands them to `transform_documents`


def run(scheme, canonical, rngs) -> list[list[int]]:
    return [
        out
        for i in range(0, len(canonical), BATCH)
        for out in transform_documents(scheme, canonical[i : i + BATCH], rngs[i : i + BATCH])
    ]


def encode_and_run(scheme, vocab, texts, rngs) -> None:
    for i in range(0, len(texts), BATCH):
        run(scheme, vocab.encode_batch(texts[i : i + BATCH]), rngs[i : i + BATCH])


def synthetic_vocabulary(size: int, seed: int) -> SimpleNamespace:
    """Stand-in with Gemma 3's size for the split table: specials, 256 bytes, then syllable-built pieces."""
    rng = np.random.default_rng(seed)
    syllables = [c + v for c in "bkdghlmnprstwy" for v in "aeiou"] + list("aeioungy")
    pieces = ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>"] + [f"<0x{b:02X}>" for b in range(256)]
    seen = set(pieces)
    while len(pieces) < size:
        lengths = rng.integers(1, 6, size=size)
        picks = rng.integers(0, len(syllables), size=(size, 5)).tolist()
        spaced = (rng.random(size) < 0.5).tolist()
        for n, pick, space in zip(lengths.tolist(), picks, spaced, strict=True):
            word = ("\u2581" if space else "") + "".join(syllables[k] for k in pick[:n])
            if word not in seen and len(pieces) < size:
                seen.add(word)
                pieces.append(word)
    return SimpleNamespace(
        pieces=pieces,
        size=size,
        special_ids=frozenset(range(5)),
        byte_values={5 + b: b for b in range(256)},
        fingerprint=hashlib.sha256("\x00".join(pieces).encode()).hexdigest(),
    )


if __name__ == "__main__":
    main()
