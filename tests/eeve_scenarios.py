"""EEVE stages at 2 ranks, run under torchrun by tests/train/eeve/test_eeve_stages.py (one launch for both layouts):

    python -m torch.distributed.run --nproc-per-node 2 tests/eeve_scenarios.py DATA_ROOT TOKENIZER BASE OUT

Runs stages 1, 2 and 6 (new input rows, new output rows, all parameters) of the tiny Gemma 3 in
OUT/ddp/runs/<run> under DDP, and in OUT/fsdp/runs/<run> under FSDP2 one optimiser step per call (so every step
after the first resumes from a sharded checkpoint), with the settings of `EEVE_STEPS` below.
"""

from __future__ import annotations

import sys

from morphcpt.train import load_plan
from morphcpt.train.eeve import engine

EEVE_STEPS = [
    "recipe=demo_eeve",
    "loop.seq_length=32",
    "loop.global_batch_size=4",
    "loop.micro_batch_size=2",
    "validation.max_batches=2",
    "eeve.steps=[2,2,2,2,2,2,2]",
    "eeve.warmup_steps=[0,0,0,0,0,0,0]",
    "eeve.stages=[1,2,6]",
]


def plan(data_root: str, tokenizer: str, base: str, out: str, *extra: str):
    inputs = [f"data.root={data_root}", f"model.tokenizer={tokenizer}", f"model.pretrained={base}"]
    return load_plan([*EEVE_STEPS, *inputs, f"output_root={out}", *extra])


def main(data_root: str, tokenizer: str, base: str, out: str) -> None:
    ddp = engine.run(plan(data_root, tokenizer, base, f"{out}/ddp", "loop.sharding=ddp"))
    assert ddp.stages_run == [1, 2, 6] and not ddp.interrupted
    fsdp = plan(data_root, tokenizer, base, f"{out}/fsdp", "loop.sharding=fsdp", "loop.max_steps_per_run=1")
    for _ in range(6):
        result = engine.run(fsdp)
        if not result.interrupted:
            break
    assert result.stages_run == [1, 2, 6] and not result.interrupted


if __name__ == "__main__":
    main(*sys.argv[1:5])
