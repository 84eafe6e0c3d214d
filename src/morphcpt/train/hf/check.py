"""The hf engine's `check` stage: what a training job needs, checked on the CPU before torchrun starts its ranks and
before any GPU memory is allocated. The job scripts run it first (TRAIN_ENGINE=hf, the EEVE job):

    python training/nemo/run_cpt.py recipe=cpt_patok engine=hf cluster.stage=check

It (1) refuses a card type without bf16 under bf16-mixed, (2) reads the model's shape (the pretrained config, or the
plan's random-init shape), (3) asks the memory planner whether the plan's layout fits `cluster.gpu_memory` on the
job's GPUs (`cluster.nodes` x `cluster.gpus_per_node`, or torchrun's WORLD_SIZE) and refuses it with the layouts
that would fit, validation's micro batch included, and (4) checks that every chunk of the scheme and the validation
set are preprocessed, by the plan's tokenizer. One screen of summary, `<run_dir>/check.json`; HFCheckError (exit
status 1) on the first problem.
"""

from __future__ import annotations

import json
from pathlib import Path

from morphcpt.plan.schema import CPTPlan, PlanError


class HFCheckError(RuntimeError):
    """Something the hf training job needs is wrong; the message says what and how to fix it."""


def check(plan: CPTPlan) -> dict:
    from morphcpt.tokenization.vocabulary import Vocabulary
    from morphcpt.train.data import DataNotReady, TokenizerMismatch, check_ready, check_tokenizer
    from morphcpt.train.memory.hf import model_shape
    from morphcpt.train.memory.planner import DoesNotFit, check_fits, engine_world

    try:
        shape = model_shape(plan)
    except (OSError, ValueError) as error:
        raise HFCheckError(f"cannot read the shape of model {plan.model.pretrained}: {error}") from error
    world = engine_world(plan, "hf")
    try:
        memory = check_fits(
            plan, "hf", world
        )  # bf16-mixed on a card without bf16: refused, naming fp16-mixed
    except (DoesNotFit, PlanError) as error:
        raise HFCheckError(str(error)) from error
    prefixes = [*plan.data.chunk_prefixes(), plan.data.validation_prefix()]
    try:
        check_ready(plan.data)
        source = plan.model.tokenizer or plan.model.pretrained
        check_tokenizer(prefixes, Vocabulary.load(source))
    except (DataNotReady, TokenizerMismatch) as error:
        raise HFCheckError(str(error)) from error
    report = {
        "engine": "hf",
        "world_size": world,
        "model": {"params": shape.params, "layers": shape.layers, "vocab": shape.vocab, "note": shape.note},
        "memory": memory,
        "data": {
            "chunks": plan.data.num_chunks,
            "validation": str(plan.data.validation_prefix()),
            **data_epochs(plan),
        },
    }
    run_dir = Path(plan.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "check.json").write_text(json.dumps(report, indent=2))
    print(summary(plan, report), flush=True)
    return report


def data_epochs(plan: CPTPlan) -> dict:
    """How many tokens the chunks hold, how many the plan reads (steps x global batch x sequence length), and so
    how many epochs that is: GPTDataset repeats the data past one epoch, so a plan longer than its data is legal."""
    from morphcpt.indexed import read_index

    held = sum(int(read_index(prefix)["lengths"].sum()) for prefix in plan.data.chunk_prefixes())
    loop = plan.loop
    planned = loop.steps * loop.global_batch_size * loop.seq_length
    return {"tokens": held, "planned_tokens": planned, "epochs": planned / held if held else float("inf")}


def epochs_line(data: dict) -> str:
    return (
        f"the plan reads {data['planned_tokens'] / 1e9:.3g}B tokens of the {data['tokens'] / 1e9:.3g}B the chunks "
        f"hold: {data['epochs']:.2f} epochs"
    )


def summary(plan: CPTPlan, report: dict) -> str:
    mem, model = report["memory"], report["model"]
    lines = [
        f"hf check: {plan.run_name} (scheme {plan.data.scheme}) — OK",
        f"  model       {model['params'] / 1e9:.3f}B parameters, {model['layers']} layers, vocab {model['vocab']:,}",
        f"  memory      {mem['estimate_gib']:.1f} of {mem['usable_gib']:.1f} GiB usable per GPU, {mem['layout']} at "
        f"micro batch {mem['micro_batch']} ({mem['margin']:.0%} free; up to {mem['largest_micro_batch']} fits) on "
        f"{report['world_size']} rank(s): {mem['card']}",
        f"  validation  micro batch {mem['validation']['micro_batch']}: {mem['validation']['estimate_gib']:.1f} GiB",
        f"  data        {report['data']['chunks']} chunks of {plan.data.scheme} and the validation set, by the "
        "plan's tokenizer",
        f"  epochs      {epochs_line(report['data'])}",
        f"  checkpoints every {plan.checkpoint.interval} steps; keeps the newest {plan.checkpoint.keep} "
        "(checkpoint.keep, CHECKPOINT_KEEP in .env), deletes older ones",
    ]
    if model["note"]:
        lines.append(f"  note        {model['note']}")
    return "\n".join(lines)


def run(plan: CPTPlan) -> dict:
    """The command's stage: the report, or exit status 1 with the reason."""
    import sys

    try:
        return check(plan)
    except HFCheckError as error:
        print(f"\nhf check FAILED: {error}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None
