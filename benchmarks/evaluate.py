#!/usr/bin/env python
"""Evaluation throughput: MCQ and GEN items per second for a model (default: a tiny random Gemma 3 built here).

    python benchmarks/evaluate.py [--model DIR] [--device auto] [--mcq-items 256] [--gen-items 32] \
        [--batch-sizes 1 8 32] [--max-new-tokens 50]

Items are synthetic but shaped like the hierarchical benchmark (a one-line question, four one-word options).
A random model never emits a newline, so GEN runs every item to `--max-new-tokens`: the worst case. On a GPU the
model runs in bf16 and the timings synchronise the device. Not a test; prints one table.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import torch

from morphcpt import paths
from morphcpt.evaluate.gen import score_gen
from morphcpt.evaluate.hf_model import HFCausalLM
from morphcpt.evaluate.items import Item
from morphcpt.evaluate.mcq import score_mcq
from morphcpt.modeling.models import save_tiny_gemma3

ROOTS = ["kain", "luto", "sulat", "takbo", "ganda", "laro", "bili", "basa", "hugas", "tulog", "linis", "dala"]
AFFIXES = [
    ("um", "infix"),
    ("nag", "prefix"),
    ("mag", "prefix"),
    ("an", "suffix"),
    ("in", "infix"),
    ("ma", "prefix"),
]


def synthetic_items(n: int, mode: str, seed: int = 0) -> list[Item]:
    rng = random.Random(seed)
    items = []
    for i in range(n):
        root = rng.choice(ROOTS)
        affix, kind = rng.choice(AFFIXES)
        word = {"prefix": affix + root, "suffix": root + affix, "infix": root[0] + affix + root[1:]}[kind]
        options = [root, word, affix + root[::-1], root[:-1]] if mode == "mcq" else []
        rng.shuffle(options)
        items.append(
            Item(
                id=f"bench-{mode}-{i}",
                benchmark="hierarchical",
                subset="level2",
                mode=mode,
                category="decomposition",
                subcategory="root_extraction",
                prompt_en=f"What is the root of the Filipino word '{word}'? Answer with the root only.",
                prompt_tl=f"Ano ang salitang-ugat ng '{word}'?",
                answer=root,
                options=tuple(options),
                correct_index=options.index(root) if options else None,
                level=2,
            )
        )
    return items


def tiny_model(work: Path) -> Path:
    return save_tiny_gemma3(paths.SAMPLE_TOKENIZER_DIR, work / "model", seed=0)


def timed(function, device: torch.device) -> float:
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    function()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--model", type=Path, help="an exported HF model folder (default: a tiny random Gemma 3)"
    )
    parser.add_argument("--device", default="auto")
    parser.add_argument("--mcq-items", type=int, default=256)
    parser.add_argument("--gen-items", type=int, default=32)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--max-new-tokens", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        model_dir = args.model or tiny_model(Path(work))
        lm = HFCausalLM.load(model_dir, device=args.device)
        parameters = sum(p.numel() for p in lm.model.parameters())
        print(
            f"model {model_dir} ({parameters / 1e6:.2f} M parameters) on {lm.device}, dtype {lm.model.dtype}, "
            f"torch threads {torch.get_num_threads()}"
        )
        mcq, gen = synthetic_items(args.mcq_items, "mcq"), synthetic_items(args.gen_items, "gen")
        lm.batch_size = max(args.batch_sizes)
        score_mcq(lm, mcq[:8])  # warm-up: first-call allocations and kernel selection
        print(f"{'mode':<5} {'batch':>5} {'items':>6} {'seconds':>8} {'items/s':>9}")
        for batch_size in args.batch_sizes:
            lm.batch_size = batch_size
            seconds = timed(lambda: score_mcq(lm, mcq), lm.device)
            print(f"{'MCQ':<5} {batch_size:>5} {len(mcq):>6} {seconds:>8.2f} {len(mcq) / seconds:>9.1f}")
        for batch_size in args.batch_sizes:
            lm.batch_size = batch_size
            seconds = timed(lambda: score_gen(lm, gen, max_new_tokens=args.max_new_tokens), lm.device)
            print(f"{'GEN':<5} {batch_size:>5} {len(gen):>6} {seconds:>8.2f} {len(gen) / seconds:>9.1f}")


if __name__ == "__main__":
    main()
