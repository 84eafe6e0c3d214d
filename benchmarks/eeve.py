"""EEVE figures (not a test): tokens per byte of the expanded tokenizer against vanilla on the sample, the time and
peak memory of learning the new pieces, and training throughput per EEVE stage on the tiny model.

    python benchmarks/eeve.py [--num-new 2048] [--candidates frequent|morphemes] [--steps 8]

Tokens per byte are counted over the whole shipped sample (`data/sample/tl_sample.jsonl`) with the shipped sample
tokenizer as the base ("vanilla"); the expansion is learned on the same text. The expansion runs in a child
process, so its peak resident memory (`ru_maxrss`) is its own and not the benchmark's. Stage throughput is the
median tokens/s of each stage's steps after the first (`metrics.jsonl`), tiny Gemma 3 on CPU (fp32) or a GPU.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path


def _expand_child(args: tuple, queue) -> None:
    from morphcpt.tokenization.eeve import expand

    corpus, base, out, num_new, candidates = args
    started = time.perf_counter()
    expansion = expand(corpus, base, out, num_new=num_new, candidates=candidates)
    queue.put(
        {
            "seconds": round(time.perf_counter() - started, 2),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "documents": expansion.documents,
            "bytes": expansion.corpus_bytes,
            "vanilla_tokens": expansion.base_tokens,
            "expanded_tokens": expansion.expanded_tokens,
        }
    )


def learn(corpus: Path, base: Path, out: Path, num_new: int, candidates: str) -> dict:
    queue = multiprocessing.get_context("spawn").Queue()
    child = multiprocessing.get_context("spawn").Process(
        target=_expand_child, args=((corpus, base, out, num_new, candidates), queue)
    )
    child.start()
    result = queue.get()
    child.join()
    return result


def stage_throughput(root: Path, tokenizer: Path, steps: int) -> dict:
    from morphcpt import paths
    from morphcpt.modeling.models import save_tiny_gemma3
    from morphcpt.preprocess import compose_config, run
    from morphcpt.train import load_plan
    from morphcpt.train.eeve import engine
    from morphcpt.train.hf.metrics import read_metrics

    lines = paths.SAMPLE_CORPUS.read_text(encoding="utf-8").splitlines(keepends=True)
    (root / "validation.jsonl").write_text("".join(lines[:100]), encoding="utf-8")
    (root / "chunk_01.jsonl").write_text("".join(lines[100:]), encoding="utf-8")
    common = [f"output_dir={root / 'data'}", "progress=false", f"tokenizer={tokenizer}", "scheme=eeve"]
    run(compose_config([f"input={root / 'chunk_01.jsonl'}", "index_offset=100", *common]))
    run(compose_config(["validation=true", f"input={root / 'validation.jsonl'}", "index_offset=0", *common]))
    base = save_tiny_gemma3(paths.SAMPLE_TOKENIZER_DIR, root / "base", seed=0)
    plan = load_plan(
        [
            "recipe=demo_eeve",
            f"data.root={root / 'data'}",
            f"output_root={root / 'out'}",
            f"model.pretrained={base}",
            f"model.tokenizer={tokenizer}",
            "validation.max_batches=1",
            "logging.tensorboard=false",
            f"eeve.steps=[{','.join([str(steps)] * 7)}]",
            "eeve.warmup_steps=[1,1,1,1,1,1,1]",
        ]
    )
    engine.run(plan)
    out = {}
    for stage in plan.eeve.stages:
        folder = engine.stage_dir(plan, stage)
        rows = [r for r in read_metrics(folder) if r["kind"] == "train"]
        done = json.loads((folder / engine.STAGE_DONE).read_text())
        out[f"stage{stage}"] = {
            "name": engine.STAGE_NAMES[stage],
            "trainable_parameters": done["trainable_parameters"],
            "tokens_per_s": round(statistics.median(r["tokens_per_s"] for r in rows[1:] or rows), 1),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    from morphcpt import paths

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num-new", type=int, default=2048)
    parser.add_argument("--candidates", choices=["frequent", "morphemes"], default="frequent")
    parser.add_argument("--steps", type=int, default=8, help="optimiser steps per stage")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    import torch

    with tempfile.TemporaryDirectory(prefix="morphcpt_eeve_bench_") as tmp:
        root = Path(tmp)
        tokenizer = root / "tokenizer"
        learned = learn(
            paths.SAMPLE_CORPUS, paths.SAMPLE_TOKENIZER_DIR, tokenizer, args.num_new, args.candidates
        )
        stages = stage_throughput(root, tokenizer, args.steps)
    report = {
        "num_new": args.num_new,
        "candidates": args.candidates,
        "sample_bytes": learned["bytes"],
        "vanilla_tokens_per_byte": round(learned["vanilla_tokens"] / learned["bytes"], 4),
        "eeve_tokens_per_byte": round(learned["expanded_tokens"] / learned["bytes"], 4),
        "new_token_training_s": learned["seconds"],
        "new_token_training_peak_rss_mb": learned["peak_rss_mb"],
        "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
        "threads": torch.get_num_threads(),
        "steps_per_stage": args.steps,
        "stages": stages,
    }
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
