"""Speed and memory of the data pipeline: preprocessing per scheme, and split_jsonl (a benchmark, not a test).

    python benchmarks/preprocess.py [--replicate 1 4] [--workers 1 2] [--json benchmarks/preprocess.json]

The input is the shipped sample corpus (or `--input`), written `N` times back to back for each `--replicate N`.
Each measurement runs in a fresh process with `TOKENIZERS_PARALLELISM=false`, so a worker is one core. Reported:
tokens/s per worker (from the completion marker's processing time, imports and tokenizer loading excluded), each
scheme's processing time relative to vanilla's on the same input, and memory: the peak resident set of the whole
process tree minus the resident set after imports and tokenizer loading. That increment should not grow with N
(the pipeline streams). split_jsonl is timed on the sample written `--split-replicate` times, in MB/s and in
tokens/s (vanilla tokens per byte, from the measurements above).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from morphcpt import paths

SCHEMES = ("vanilla", "stochastok", "patok")

# Runs in a child process: warm up imports and the tokenizer, note the resident set, preprocess, note the peak.
_CHILD = """
import json, resource, sys
from morphcpt.indexed import IndexedWriter
import megatron.core.datasets.indexed_dataset
from morphcpt.preprocess import compose_config, run
from morphcpt.tokenization import Vocabulary, build_scheme
from morphcpt.tokenization.schemes import SchemeConfig
input_path, output_dir, scheme, workers, tokenizer = sys.argv[1:6]
build_scheme(SchemeConfig(name=scheme), Vocabulary.load(tokenizer))
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
cfg = compose_config([f"scheme={scheme}", f"input={input_path}", f"output_dir={output_dir}", f"workers={workers}",
                      f"tokenizer={tokenizer}", "progress=false", "force=true"])
stats = run(cfg)
peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({"stats": {k: stats[k] for k in ("documents", "tokens", "timings")}, "base_kb": base, "peak_kb": peak}))
"""


def replicate(source: Path, times: int, target: Path) -> Path:
    data = source.read_bytes()
    with open(target, "wb") as out:
        for _ in range(times):
            out.write(data if data.endswith(b"\n") else data + b"\n")
    return target


def measure(input_path: Path, output_dir: Path, scheme: str, workers: int, tokenizer: str) -> dict:
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false", "PYTHONWARNINGS": "ignore"}
    args = [sys.executable, "-c", _CHILD, str(input_path), str(output_dir), scheme, str(workers), tokenizer]
    result = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def time_split(input_path: Path, output_dir: Path, num_chunks: int = 20) -> dict:
    from morphcpt.corpus.split import split_jsonl

    started = time.perf_counter()
    split_jsonl(input_path, output_dir, num_chunks)
    seconds = time.perf_counter() - started
    size = input_path.stat().st_size
    return {"bytes": size, "seconds": seconds, "mb_per_s": size / seconds / 1e6}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", default=str(paths.SAMPLE_CORPUS))
    parser.add_argument("--tokenizer", default=str(paths.SAMPLE_TOKENIZER_DIR))
    parser.add_argument("--replicate", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--schemes", nargs="+", default=list(SCHEMES))
    parser.add_argument("--split-replicate", type=int, default=40, help="input size for timing split_jsonl")
    parser.add_argument("--json", default=None, help="also write the measurements here")
    args = parser.parse_args(argv)

    rows = []
    with tempfile.TemporaryDirectory(prefix="morphcpt-bench-") as tmp:
        tmp = Path(tmp)
        inputs = {n: replicate(Path(args.input), n, tmp / f"corpus_x{n}.jsonl") for n in args.replicate}
        for n, input_path in inputs.items():
            for workers in args.workers:
                for scheme in args.schemes:
                    result = measure(input_path, tmp / "out", scheme, workers, args.tokenizer)
                    timings = result["stats"]["timings"]
                    rows.append(
                        {
                            "replicate": n,
                            "workers": workers,
                            "scheme": scheme,
                            "tokens": result["stats"]["tokens"],
                            "process_s": timings["process_s"],
                            "tokens_per_s_per_worker": timings["tokens_per_s"] / workers,
                            "rss_after_load_mb": result["base_kb"] / 1024,
                            "peak_increment_mb": (result["peak_kb"] - result["base_kb"]) / 1024,
                        }
                    )
        split_input = replicate(Path(args.input), args.split_replicate, tmp / "split_input.jsonl")
        split = time_split(split_input, tmp / "chunks")
    for row in rows:
        vanilla = next(
            r
            for r in rows
            if (r["replicate"], r["workers"], r["scheme"]) == (row["replicate"], row["workers"], "vanilla")
        )
        row["time_vs_vanilla"] = row["process_s"] / vanilla["process_s"]
    vanilla = next(r for r in rows if r["scheme"] == "vanilla")
    tokens_per_byte = vanilla["tokens"] / (Path(args.input).stat().st_size * vanilla["replicate"])
    split["tokens_per_s"] = split["mb_per_s"] * 1e6 * tokens_per_byte

    header = f"{'xN':>3} {'workers':>7} {'scheme':<10} {'tokens':>9} {'process s':>9} {'tok/s/worker':>12} "
    header += f"{'vs vanilla':>10} {'rss after load MB':>17} {'peak +MB':>8}"
    print(header)
    for r in rows:
        print(
            f"{r['replicate']:>3} {r['workers']:>7} {r['scheme']:<10} {r['tokens']:>9,} {r['process_s']:>9.2f} "
            f"{r['tokens_per_s_per_worker']:>12,.0f} {r['time_vs_vanilla']:>9.2f}x "
            f"{r['rss_after_load_mb']:>17.0f} {r['peak_increment_mb']:>8.1f}"
        )
    print(
        f"split_jsonl (x{args.split_replicate}, {split['bytes'] / 1e6:.1f} MB, 20 chunks): {split['mb_per_s']:.0f} MB/s, "
        f"{split['tokens_per_s']:,.0f} tokens/s"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "split_jsonl": split}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
