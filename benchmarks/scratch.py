"""Speed and memory of the from-scratch path (a benchmark, not a test): corpus preparation, tokenizer training,
text generation.

    python benchmarks/scratch.py [--replicate 1 8] [--vocab-sizes 2000 8000] [--json benchmarks/scratch.json]

- prepare_corpus: the shipped sample corpus written N times (each copy's texts made distinct, so deduplication
  keeps them), as JSONL and as CSV, prepared in a fresh process: MB/s of input (wall time of `prepare`, imports
  excluded) and the peak resident set above the one after imports. Token counts are estimated from bytes, or
  with `--with-tokenizer`, counted with the sample tokenizer.
- train-tokenizer: seconds to train a SentencePiece BPE tokenizer of each `--vocab-sizes` on the sample corpus.
- generation: tokens/s of greedy decoding, 64 new tokens, batch 1 and 8, with the tiny Gemma 3 on CPU with each of
  `--threads` (default 1 and all cores: on a busy machine one thread can be far faster); and with a
  Gemma 3 1B-shaped random model (the sample tokenizer's vocabulary) when a CUDA GPU is present.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from morphcpt import paths

_PREPARE_CHILD = """
import json, resource, sys, time
from pathlib import Path
from morphcpt.corpus.assemble import PrepareConfig, prepare
source, output, tokenizer = sys.argv[1], Path(sys.argv[2]), sys.argv[3] or None
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tic = time.perf_counter()
manifest = prepare(PrepareConfig(sources=[source], output=output, tokenizer=tokenizer, progress=False))
seconds = time.perf_counter() - tic
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": seconds, "documents": manifest["documents"], "tokens": manifest["tokens"],
                  "base_mb": base / 1024, "peak_increment_mb": (peak - base) / 1024}))
"""


def replicated_inputs(times: int, folder: Path) -> dict[str, Path]:
    rows = [json.loads(line) for line in paths.SAMPLE_CORPUS.read_text(encoding="utf-8").splitlines()]
    jsonl, table = folder / f"corpus_x{times}.jsonl", folder / f"corpus_x{times}.csv"
    with (
        open(jsonl, "w", encoding="utf-8") as out_jsonl,
        open(table, "w", encoding="utf-8", newline="") as out_csv,
    ):
        writer = csv.writer(out_csv)
        writer.writerow(["text", "source"])
        for copy in range(times):
            for row in rows:
                text = f"{row['text']} ({copy})"
                out_jsonl.write(
                    json.dumps({"text": text, "source": row["source"]}, ensure_ascii=False) + "\n"
                )
                writer.writerow([text, row["source"]])
    return {"jsonl": jsonl, "csv": table}


def bench_prepare(replicates: list[int], with_tokenizer: bool, folder: Path) -> list[dict]:
    rows = []
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false"}
    for times in replicates:
        for kind, path in replicated_inputs(times, folder).items():
            tokenizer = str(paths.SAMPLE_TOKENIZER_DIR) if with_tokenizer else ""
            args = [
                sys.executable,
                "-c",
                _PREPARE_CHILD,
                str(path),
                str(folder / f"out_{kind}.jsonl"),
                tokenizer,
            ]
            result = json.loads(
                subprocess.run(args, env=env, capture_output=True, text=True, check=True).stdout
            )
            size_mb = path.stat().st_size / 1e6
            rows.append(
                {
                    "input": kind,
                    "replicate": times,
                    "input_mb": round(size_mb, 2),
                    **result,
                    "mb_per_s": size_mb / result["seconds"],
                    "token_count": "tokenizer" if with_tokenizer else "estimate",
                }
            )
            print(
                f"prepare_corpus {kind:<5} x{times:<3} {size_mb:7.2f} MB  {result['seconds']:6.2f} s  "
                f"{size_mb / result['seconds']:6.2f} MB/s  peak +{result['peak_increment_mb']:.1f} MB "
                f"(after imports {result['base_mb']:.0f} MB)",
                flush=True,
            )
    return rows


def bench_tokenizer(vocab_sizes: list[int], folder: Path) -> list[dict]:
    from morphcpt.tokenization.train_tokenizer import train_sentencepiece_tokenizer

    rows = []
    for size in vocab_sizes:
        tic = time.perf_counter()
        train_sentencepiece_tokenizer(paths.SAMPLE_CORPUS, folder / f"tok_{size}", size)
        seconds = time.perf_counter() - tic
        rows.append(
            {"vocab_size": size, "corpus_mb": paths.SAMPLE_CORPUS.stat().st_size / 1e6, "seconds": seconds}
        )
        print(
            f"train-tokenizer vocab {size:>6}: {seconds:.2f} s on {rows[-1]['corpus_mb']:.2f} MB", flush=True
        )
    return rows


def bench_generation(folder: Path, thread_counts: list[int]) -> list[dict]:
    import torch

    from morphcpt.evaluate.generate_text import SamplingConfig, TextGenerator
    from morphcpt.modeling.models import GEMMA3_1B_SHAPE, save_tiny_gemma3

    models = [("tiny", "cpu", {})]
    if torch.cuda.is_available():
        models.append(("gemma3-1b-shape", "cuda", GEMMA3_1B_SHAPE))
    else:
        print("generation: no CUDA GPU here, the 1B-shaped model is not measured", flush=True)
    prompts = ["Ang mga bata ay naglalaro sa", "Kumain ka na ba", "Magandang umaga", "Salamat po"] * 2
    sampling = SamplingConfig(max_new_tokens=64, temperature=0)
    rows = []
    for name, device, shape in models:
        model_dir = save_tiny_gemma3(paths.SAMPLE_TOKENIZER_DIR, folder / name, seed=0, **shape)
        generator = TextGenerator.load(model_dir, device=device)
        generator.generate(prompts[:1], SamplingConfig(max_new_tokens=4, temperature=0))  # warm-up
        for threads, batch in [(t, b) for t in (thread_counts if device == "cpu" else [0]) for b in (1, 8)]:
            if threads:
                torch.set_num_threads(threads)
            if device == "cuda":
                torch.cuda.synchronize()
            tic = time.perf_counter()
            results = generator.generate(prompts[:batch], sampling, batch_size=batch)
            if device == "cuda":
                torch.cuda.synchronize()
            seconds = time.perf_counter() - tic
            tokens = sum(r.new_tokens for r in results)
            rows.append(
                {
                    "model": name,
                    "device": device,
                    "batch": batch,
                    "tokens": tokens,
                    "seconds": seconds,
                    "tokens_per_s": tokens / seconds,
                    "threads": torch.get_num_threads(),
                }
            )
            print(
                f"generate {name} on {device} ({torch.get_num_threads()} threads), batch {batch}: {tokens} tokens "
                f"in {seconds:.2f} s = {tokens / seconds:.1f} tokens/s",
                flush=True,
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicate", type=int, nargs="+", default=[1, 8])
    parser.add_argument(
        "--with-tokenizer", action="store_true", help="count tokens with the sample tokenizer"
    )
    parser.add_argument("--vocab-sizes", type=int, nargs="+", default=[2000, 8000])
    parser.add_argument(
        "--threads", type=int, nargs="+", default=[1, os.cpu_count() or 1], help="CPU threads"
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        report = {
            "prepare_corpus": bench_prepare(args.replicate, args.with_tokenizer, folder),
            "train_tokenizer": bench_tokenizer(args.vocab_sizes, folder),
            "generation": bench_generation(folder, args.threads),
            "cpu_count": os.cpu_count(),
        }
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
