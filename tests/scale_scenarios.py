"""The hf engine's layouts at 2 ranks, run under torchrun by tests/train/hf/test_parallel.py (one launch for all, as
starting ranks costs more than the runs):

    python -m torch.distributed.run --nproc-per-node 2 tests/scale_scenarios.py DATA_ROOT OUT TINY_MODEL

Runs, one after the other, in OUT/runs/<name>: `fsdp` (4 steps), `fsdp_ac` (the same with activation
checkpointing), `fsdp_resumed` (stopped after 2 steps, then resumed to 4; its step-2 run folder is copied to
`fsdp_reshard` before resuming, for a 1-rank resume), `hsdp` (2 steps with two replicas of a one-rank shard, the
2-D mesh FSDP2 gets on several nodes, then resumed as one copy over both ranks), `fsdp_fp16` (fp16 autocast with
the sharded loss scale) and `lora` (LoRA adapters on TINY_MODEL under ddp).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import torch.distributed as dist

from morphcpt.train import load_plan
from morphcpt.train.hf.engine import train

STEPS = [
    "recipe=demo_base",
    "data.num_chunks=2",
    "loop.steps=4",
    "loop.seq_length=32",
    "loop.global_batch_size=4",
    "loop.micro_batch_size=2",
    "optim.warmup_steps=2",
    "validation.interval=2",
    "validation.micro_batch_size=4",
    "validation.max_batches=3",  # odd: under fsdp rank 1 has fewer validation batches than rank 0
    "checkpoint.interval=2",
    "logging.progress_bar=false",
]


def plan(data_root: str, out: str, *extra: str):
    return load_plan([*STEPS, f"data.root={data_root}", f"output_root={out}", *extra])


def main(data_root: str, out: str, tiny_model: str) -> None:
    train(plan(data_root, out, "run_name=fsdp", "loop.sharding=fsdp"))
    train(
        plan(data_root, out, "run_name=fsdp_ac", "loop.sharding=fsdp", "loop.activation_checkpointing=true")
    )
    resumed = ["run_name=fsdp_resumed", "loop.sharding=fsdp"]
    first = train(plan(data_root, out, *resumed, "loop.max_steps_per_run=2"))
    assert first.final_step == 2 and first.interrupted
    if dist.get_rank() == 0:
        shutil.copytree(Path(out) / "runs" / "fsdp_resumed", Path(out) / "runs" / "fsdp_reshard")
    dist.barrier()
    train(plan(data_root, out, *resumed))
    hsdp = ["run_name=hsdp", "loop.sharding=fsdp"]
    first = train(plan(data_root, out, *hsdp, "loop.fsdp_shard_size=1", "loop.max_steps_per_run=2"))
    assert first.final_step == 2 and first.interrupted
    train(plan(data_root, out, *hsdp))
    train(plan(data_root, out, "run_name=fsdp_fp16", "loop.sharding=fsdp", "loop.precision=fp16-mixed"))
    lora = [
        "run_name=lora",
        f"model.pretrained={tiny_model}",
        "model.tokenizer=null",
        "peft.method=lora",
        "peft.rank=4",
    ]
    train(plan(data_root, out, *lora, "peft.target_modules=[q_proj,v_proj,down_proj]"))


if __name__ == "__main__":
    main(*sys.argv[1:4])
