"""`morphcpt <stage> [args…]`: one console script for every stage of the pipeline.

Each stage is a module with its own `main()`; this only dispatches, so `morphcpt preprocess scheme=patok …` and
`python -m morphcpt.preprocess scheme=patok …` are the same command. `morphcpt --help` lists the stages.
"""

from __future__ import annotations

import importlib
import sys

STAGES: dict[str, tuple[str, str]] = {
    "download": ("morphcpt.corpus.download", "stream SEA-PILE v2 (or local parquet shards) to JSONL"),
    "prepare": (
        "morphcpt.corpus.assemble",
        "prepare one corpus from txt/jsonl/json/csv/parquet/Hub sources, to a token budget",
    ),
    "split": ("morphcpt.corpus.split", "split a JSONL corpus into N byte-balanced chunks"),
    "preprocess": (
        "morphcpt.preprocess",
        "tokenize one chunk with one scheme into a Megatron indexed dataset",
    ),
    "audit": ("morphcpt.audit", "compare the schemes' indexed datasets side by side"),
    "jobs": ("morphcpt.chain.jobs", "render PBS job scripts, or run a rendered one locally"),
    "submit": (
        "morphcpt.chain.pipeline",
        "submit every stage as a chain of dependent PBS/Slurm jobs, or --status",
    ),
    "train": ("morphcpt.train", "continued pretraining (hf engine, or the megatron engine on the cluster)"),
    "export": ("morphcpt.export", "export a checkpoint to a Hugging Face model folder"),
    "verify-setup": ("morphcpt.chain.setup_check", "check that this machine is ready to run the suite"),
    "benchmarks": ("morphcpt.bench", "generate the Filipino morphology benchmarks"),
    "evaluate": ("morphcpt.evaluate", "evaluate models on the benchmarks"),
    "analyze": ("morphcpt.analysis", "tables, statistics, plots and a report from evaluation results"),
    "train-tokenizer": (
        "morphcpt.tokenization.train_tokenizer",
        "train a SentencePiece tokenizer for a language",
    ),
    "generate": (
        "morphcpt.evaluate.generate_text",
        "generate text with an exported model (prompts, interactive)",
    ),
    "import-tokenizer": (
        "morphcpt.tokenization.import_tokenizer",
        "import a SentencePiece .model, a tokenizer.json or a tokenizer folder for the suite",
    ),
    "eeve-tokenizer": (
        "morphcpt.tokenization.eeve",
        "EEVE: expand a tokenizer with N new target-language pieces",
    ),
    "demo": ("morphcpt.demo", "the whole pipeline on the shipped sample with a tiny model, on CPU"),
}


def _usage() -> str:
    width = max(map(len, STAGES))
    rows = "\n".join(f"  {name:<{width}}  {help_}" for name, (_, help_) in STAGES.items())
    return f"usage: morphcpt <stage> [args…]\n\nstages:\n{rows}\n"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in {"-h", "--help", "help"}:
        print(_usage())
        return 0
    stage, rest = argv[0], argv[1:]
    if stage not in STAGES:
        print(f"morphcpt: unknown stage {stage!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(STAGES[stage][0])
    sys.argv = [f"morphcpt {stage}", *rest]
    result = module.main()
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
