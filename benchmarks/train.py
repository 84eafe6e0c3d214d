"""Throughput and peak memory of the hf training engine (not a test): the real `train()` loop on synthetic data.

    python benchmarks/train.py                       # tiny Gemma 3 on CPU (the demo's configuration)
    python benchmarks/train.py --shape 1b --seq 2048 --micro-batch 2 --global-batch 16   # on a GPU: tokens/s, MFU
    python benchmarks/train.py --ranks 2 --sharding fsdp [--activation-checkpointing]     # under torchrun

It writes a synthetic indexed dataset (random ids from the sample tokenizer's range) to a temporary folder, runs
the engine for `--steps` optimiser steps, and reports the median tokens/s over the steps after the first two
(warm-up), the peak memory (GPU allocated, or the process's resident memory on CPU) and, on a GPU, the model FLOPs
utilisation: 6 x matmul parameters + 12 x layers x attention width x attended context, per token (the PaLM
estimate; sliding-window layers attend to at most the window), over the GPU's dense bf16 peak.

With `--ranks N` it writes the data once and launches itself under torchrun (gloo on CPU); the figures are rank
0's. It also prints the memory planner's per-rank estimate for the layout (`morphcpt.train.memory.planner`) and, on CPU,
the measured peak of one step of the same shape in one process (`measured_bytes`: the parameters and optimiser
state plus the torch allocator's peak during the step), next to which the resident memory is mostly the Python,
torch and transformers runtime.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

from morphcpt import paths
from morphcpt.indexed import IndexedWriter, dataset_digest
from morphcpt.modeling.models import GEMMA3_1B_SHAPE, GEMMA3_1B_VOCAB
from morphcpt.plan.card import gpu_type
from morphcpt.tokenization.vocabulary import Vocabulary
from morphcpt.train import load_plan
from morphcpt.train.hf.engine import train
from morphcpt.train.hf.metrics import read_metrics
from morphcpt.train.memory import planner

SHAPES = {
    "tiny": [],
    "1b": [f"model.{k}={v}" for k, v in GEMMA3_1B_SHAPE.items()] + [f"model.vocab_size={GEMMA3_1B_VOCAB}"],
}


def write_synthetic(root: Path, vocab: Vocabulary, tokens: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    low = max(vocab.special_ids) + 1
    for prefix, count in (
        (root / "bench" / "chunk_01_text_document", tokens),
        (root / "validation" / "validation_text_document", tokens // 20),
    ):
        with IndexedWriter(prefix, vocab.size) as writer:
            written = documents = 0
            while written < count:
                length = int(rng.integers(64, 1024))
                writer.add([vocab.bos_id, *rng.integers(low, vocab.size, length).tolist(), vocab.eos_id])
                written += length + 2
                documents += 1
        # what training checks in preprocessing's marker: the documents, the tokenizer that wrote the ids, and the
        # files' sizes and checksums (the run records its inputs by them)
        marker = {
            "documents": documents,
            "key": {"tokenizer_fingerprint": vocab.fingerprint},
            "files": dataset_digest(prefix),
        }
        prefix.with_name(prefix.name.removesuffix("_text_document") + ".done.json").write_text(
            json.dumps(marker)
        )


def flops_per_token(model_cfg, vocab_size: int, seq: int) -> float:
    width = model_cfg.num_heads * model_cfg.head_dim
    kv = model_cfg.num_kv_heads * model_cfg.head_dim
    per_layer = model_cfg.hidden_size * (width + 2 * kv) + width * model_cfg.hidden_size
    per_layer += 3 * model_cfg.hidden_size * model_cfg.intermediate_size
    matmul_params = model_cfg.num_layers * per_layer + vocab_size * model_cfg.hidden_size
    layers = [(i + 1) % model_cfg.global_every == 0 for i in range(model_cfg.num_layers)]
    attention = sum(
        12 * width * (seq if is_global else min(seq, model_cfg.sliding_window)) for is_global in layers
    )
    return 6 * matmul_params + attention


def bench_plan(args, root: Path):
    return load_plan(
        [
            "recipe=demo_base",
            "run_name=bench",
            f"data.root={root / 'data'}",
            "data.scheme=bench",
            f"output_root={root / 'out'}",
            f"loop.steps={args.steps}",
            f"loop.seq_length={args.seq}",
            f"loop.micro_batch_size={args.micro_batch}",
            f"loop.global_batch_size={args.global_batch}",
            f"loop.precision={args.precision}",
            f"loop.sharding={args.sharding}",
            f"loop.activation_checkpointing={str(args.activation_checkpointing).lower()}",
            f"model.max_position_embeddings={max(args.seq, 512)}",
            f"model.tokenizer={paths.SAMPLE_TOKENIZER_DIR}",
            "optim.warmup_steps=1",
            f"validation.interval={args.steps}",
            "validation.max_batches=1",
            f"checkpoint.interval={args.steps}",
            "logging.tensorboard=false",
            *SHAPES[args.shape],
        ]
    )


def planner_report(args, plan, vocab: Vocabulary) -> dict:
    """The planner's per-rank estimate for this layout and, on CPU, the measured peak of one step."""
    cuda = torch.cuda.is_available()
    shape = planner.model_shape(
        plan, vocab.size
    )  # the plan's vocabulary (model.vocab_size) wins over the tokenizer's
    own = planner.rows(plan, "hf", args.ranks)[0]  # the engine's layout on this card, as it will run it
    report = {"planner_estimate_mb": round(own.estimate.total(args.micro_batch) / 2**20, 2)}
    if not cuda:
        from morphcpt.modeling.models import build_model
        from morphcpt.train.hf.parallel import enable_activation_checkpointing

        model = build_model(planner.model_config(plan, vocab.size), seed=0).train()
        if args.activation_checkpointing:
            enable_activation_checkpointing(model)
        ids = torch.randint(0, vocab.size, (args.micro_batch, args.seq))
        measured = planner.measured_bytes(model, torch.optim.AdamW(model.parameters()), ids)
        one = planner.estimate(
            shape, args.seq, 1, "ddp", args.activation_checkpointing, bf16=False, flash=False
        )
        report["one_process_step"] = {
            "planner_estimate_mb": round(one.total(args.micro_batch) / 2**20, 2),
            "measured_peak_mb": round(measured["peak"] / 2**20, 2),
        }
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", choices=sorted(SHAPES), default="tiny")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--micro-batch", type=int, default=4)
    parser.add_argument("--global-batch", type=int, default=8)
    parser.add_argument("--precision", choices=["bf16-mixed", "fp32"], default="bf16-mixed")
    parser.add_argument("--sharding", choices=["ddp", "fsdp"], default="ddp")
    parser.add_argument("--activation-checkpointing", action="store_true")
    parser.add_argument("--ranks", type=int, default=1, help="processes (torchrun --nproc-per-node)")
    parser.add_argument("--workdir", default=None, help=argparse.SUPPRESS)  # set for the torchrun ranks
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)

    vocab = Vocabulary.load(paths.SAMPLE_TOKENIZER_DIR)
    if args.workdir is not None:  # one rank under torchrun: train only
        train(bench_plan(args, Path(args.workdir)))
        return 0
    with tempfile.TemporaryDirectory(prefix="morphcpt_bench_") as tmp:
        root = Path(tmp)
        write_synthetic(root / "data", vocab, tokens=args.steps * args.global_batch * (args.seq + 1) * 2)
        plan = bench_plan(args, root)
        if args.ranks > 1 and "WORLD_SIZE" not in os.environ:
            launch = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(args.ranks)]
            forwarded = (sys.argv[1:] if argv is None else argv) + ["--workdir", str(root)]
            subprocess.run([*launch, __file__, *forwarded], check=True)
        else:
            train(plan)
        rows = [r for r in read_metrics(Path(plan.run_dir)) if r["kind"] == "train"]
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    tokens_per_s = statistics.median(r["tokens_per_s"] for r in rows[2:] or rows)
    report = {
        "shape": args.shape,
        "device": device,
        "ranks": args.ranks,
        "sharding": args.sharding,
        "activation_checkpointing": args.activation_checkpointing,
        # torchrun gives each rank OMP_NUM_THREADS=1 unless it is set
        "threads_per_rank": int(os.environ.get("OMP_NUM_THREADS", "1"))
        if args.ranks > 1
        else torch.get_num_threads(),
        "precision": args.precision if torch.cuda.is_available() else "fp32",
        "seq_length": args.seq,
        "global_batch": args.global_batch,
        "micro_batch": args.micro_batch,
        "steps": args.steps,
        "tokens_per_s": round(tokens_per_s, 1),
        "peak_memory_mb": round(max(r["peak_memory_mb"] for r in rows), 1),
        **planner_report(args, plan, vocab),
    }
    facts = gpu_type(device)
    peak = facts.bf16_tflops if facts else None
    if torch.cuda.is_available() and peak:
        report["mfu"] = round(
            tokens_per_s
            * flops_per_token(plan.model, plan.model.vocab_size or vocab.size, args.seq)
            / (peak * 1e12),
            4,
        )
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
