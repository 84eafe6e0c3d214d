#!/usr/bin/env python
"""The question in miniature (not a test): one model's bits per byte on the held-out validation text as each scheme
tokenizes it — vanilla, stochastok, patok and eeve ids scored as they are, after `<bos>`, before any training.

    python benchmarks/scheme_bpb.py --model /work/assets/gemma3-270m [--schemes vanilla stochastok patok eeve] \
        [--num-new 2048] [--expand-prop 0.1] [--seed 1234] [--limit N] [--json out.json]

The validation text is the demo's and the local chain's canonical held-out set: the last 160 lines of
`data/sample/tl_sample.jsonl` as `corpus.split.split_jsonl(..., num_chunks=4, holdout_lines=160)` cuts them. The
EEVE tokenizer is learned here on the other lines (the chunks) with the model's own tokenizer as the base
(`tokenization.eeve.expand`, `--num-new` pieces), and the model is grown to it with its new rows at their EEVE
initialisation (`train.eeve.resize`). The default model is a tiny random Gemma 3 on the sample tokenizer.
Library: `morphcpt.evaluate.scheme_bpb`.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from morphcpt import paths
from morphcpt.corpus.split import split_jsonl
from morphcpt.evaluate.scheme_bpb import SCHEME_NAMES, measure
from morphcpt.tokenization.eeve import EXPANSION_FILE, Expansion, expand

HOLDOUT_LINES = 160  # demo.DemoConfig.holdout_lines and the local chain's HOLDOUT_LINES
NUM_CHUNKS = 4  # demo.DemoConfig.num_chunks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, help="HF model folder (default: a tiny random Gemma 3)")
    parser.add_argument("--schemes", nargs="+", default=list(SCHEME_NAMES), choices=SCHEME_NAMES)
    parser.add_argument("--num-new", type=int, default=2048, help="new pieces of the EEVE tokenizer")
    parser.add_argument(
        "--eeve-tokenizer",
        type=Path,
        help="keep the learned EEVE tokenizer here, and reuse it when it is there",
    )
    parser.add_argument("--expand-prop", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--limit", type=int, help="first N validation documents only")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--json", type=Path, help="also write the table here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = args.model
        if model is None:
            from morphcpt.modeling.models import save_tiny_gemma3

            model = save_tiny_gemma3(paths.SAMPLE_TOKENIZER_DIR, tmp / "tiny", num_layers=2, num_heads=2)
        split_jsonl(paths.SAMPLE_CORPUS, tmp / "chunks", NUM_CHUNKS, holdout_lines=HOLDOUT_LINES)
        lines = (tmp / "chunks" / "validation.jsonl").read_text(encoding="utf-8").splitlines()
        texts = [t for t in (json.loads(line).get("text") for line in lines) if t][: args.limit]
        eeve_dir = None
        if "eeve" in args.schemes:
            started = time.perf_counter()
            eeve_dir = args.eeve_tokenizer or tmp / "eeve-tokenizer"
            if (eeve_dir / EXPANSION_FILE).is_file() and Expansion.load(eeve_dir).num_new == args.num_new:
                expansion = Expansion.load(eeve_dir)
            else:
                chunks = sorted((tmp / "chunks").glob("chunk_*.jsonl"))
                expansion = expand(chunks, model, eeve_dir, num_new=args.num_new)
            print(
                f"eeve tokenizer {eeve_dir}: {expansion.num_new} new pieces from {expansion.documents} documents, "
                f"{time.perf_counter() - started:.0f} s (e.g. {', '.join(expansion.pieces[:8])})"
            )
        print(f"model {model}; {len(texts)} validation documents")
        print("| scheme | tokens | tokens/byte | nats/token | bits/byte |")
        print("|---|---:|---:|---:|---:|", flush=True)
        table = {}
        for scheme in args.schemes:  # one at a time, each row shown (and kept) as soon as it is measured
            started = time.perf_counter()
            row = measure(
                model,
                texts,
                [scheme],
                eeve_tokenizer=eeve_dir,
                seed=args.seed,
                expand_prop=args.expand_prop,
                batch_size=args.batch_size,
                work_dir=tmp,
            )[scheme]
            table[scheme] = {**row, "seconds": time.perf_counter() - started}
            print(
                f"| {scheme} | {row['tokens']:,} | {row['tokens'] / row['bytes']:.3f} | "
                f"{row['nats_per_token']:.3f} | {row['bits_per_byte']:.4f} |",
                flush=True,
            )
            if args.json:
                args.json.write_text(json.dumps(table, indent=1) + "\n")


if __name__ == "__main__":
    main()
