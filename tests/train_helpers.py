"""Helpers for the training tests: small preprocessed datasets made by the real pipeline (morphcpt.preprocess).

`write_data` splits the first lines of the sample corpus into a validation file and training chunks, and
preprocesses them exactly as the cluster jobs do: `<root>/<scheme>/chunk_NN_text_document.{bin,idx}` +
`chunk_NN.done.json` per scheme and chunk, and the canonical `<root>/validation/validation_text_document`.
`tiny_plan` is the 4-step run of the tiny model the engine tests compare, `train_losses` what it logged.
"""

from __future__ import annotations

import json
from pathlib import Path

from morphcpt.preprocess import compose_config, run
from morphcpt.train import load_plan
from morphcpt.train.hf.metrics import read_metrics

# demo_base (tiny Gemma 3), 4 steps of a global batch of 4 at seq 32, validated and checkpointed every 2 steps
TINY_RUN = [
    "data.num_chunks=1",
    "loop.steps=4",
    "loop.seq_length=32",
    "loop.global_batch_size=4",
    "loop.micro_batch_size=2",
    "optim.warmup_steps=1",
    "validation.interval=2",
    "validation.max_batches=2",
    "checkpoint.interval=2",
    "logging.tensorboard=false",
]


def tiny_plan(data_root: Path, out: Path, *extra: str):
    """The tiny run's plan on `write_data`'s datasets under `data_root`, writing under `out`."""
    return load_plan(["recipe=demo_base", f"data.root={data_root}", f"output_root={out}", *TINY_RUN, *extra])


def train_losses(run_dir) -> list[float]:
    """The training losses a run logged, step by step."""
    return [r["loss"] for r in read_metrics(run_dir) if r["kind"] == "train"]


def read_texts(corpus: Path, limit: int | None = None) -> list[str]:
    """The `text` of the first `limit` lines of a JSONL corpus."""
    lines = corpus.read_text(encoding="utf-8").splitlines()[:limit]
    return [json.loads(line)["text"] for line in lines]


def write_data(
    root: Path, corpus: Path, limit: int, schemes=("vanilla",), num_chunks: int = 1, validation: int = 40
):
    """Preprocess the corpus's first `limit` lines: `validation` held out, the rest in `num_chunks` chunks."""
    lines = corpus.read_text(encoding="utf-8").splitlines(keepends=True)[:limit]
    sources = root / "jsonl"
    sources.mkdir(parents=True)
    (sources / "validation.jsonl").write_text("".join(lines[:validation]), encoding="utf-8")
    common = [f"output_dir={root}", "progress=false"]
    run(
        compose_config(
            ["validation=true", f"input={sources / 'validation.jsonl'}", "index_offset=0", *common]
        )
    )
    train = lines[validation:]
    size = -(-len(train) // num_chunks)
    for chunk in range(num_chunks):
        path = sources / f"chunk_{chunk + 1:02d}.jsonl"
        path.write_text("".join(train[chunk * size : (chunk + 1) * size]), encoding="utf-8")
        offset = validation + chunk * size
        for scheme in schemes:
            run(compose_config([f"scheme={scheme}", f"input={path}", f"index_offset={offset}", *common]))
    return root
