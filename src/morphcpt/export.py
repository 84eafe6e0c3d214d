"""Export a training checkpoint to a Hugging Face model folder that `AutoModelForCausalLM.from_pretrained` loads.

    python -m morphcpt.export --run-dir outputs/runs/demo-base            # latest checkpoint
    python -m morphcpt.export --run-dir outputs/runs/gemma3-1b-patok --step 10000 --output exports/patok
    python -m morphcpt.export --run-dir outputs/runs/gemma3-1b-patok --average-last 3   # mean of the last 3

The run folder's `config.yaml` says which engine wrote it. hf-engine checkpoints are exported anywhere (their
`model/` is already an HF folder; a LoRA run's adapter is merged into it); Megatron-Bridge checkpoints are
converted with AutoBridge, on the cluster (GPU + NeMo container). The output holds the weights, the tokenizer
files and `morphcpt_metadata.json` (scheme, step, base_model, data, config_hash, engine, created), and is
published only after a parity check: the exported model's logits on fixed prompts must match the checkpoint's.

`--average-last k` exports the mean of the run's last k intact checkpoints' weights as one model (checkpoint
averaging, as in Signal and Noise; default output `<output_root>/exports/<run_name>-avg<k>-step<N>`, N the newest
step). The mean is taken in fp32 over the hf checkpoints' `model/` folders, or for a megatron run over the step
exports `<run_name>-step<N>` (export each first, on the cluster). Its metadata says which: `averaged_steps`,
`averaged_from`; parity compares the written model with the averaged one in memory. LoRA runs are refused.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from morphcpt.errors import UserError, reported
from morphcpt.indexed import file_digest
from morphcpt.jsonio import read_json
from morphcpt.plan.compose import plan_from_yaml
from morphcpt.plan.schema import CPTPlan

METADATA_FILE = "morphcpt_metadata.json"
MEGATRON_TRACKER = "latest_checkpointed_iteration.txt"


class AverageError(UserError, ValueError):
    """Checkpoints that cannot be averaged as asked; the message says what the run has and what to do."""


@dataclass
class ExportResult:
    output: Path
    step: int
    parity: dict


def find_checkpoint(plan: CPTPlan, step: int | None) -> tuple[Path, int]:
    """(checkpoint folder, step) of the run's latest checkpoint, or of `step`."""
    from morphcpt.modeling import checkpoint_files

    root = plan.checkpoint_dir
    if plan.engine == "hf":
        path = (
            checkpoint_files.step_dir(root, step)
            if step is not None
            else checkpoint_files.latest_checkpoint(root)
        )
        if path is None or not (path / "meta.json").exists():
            raise FileNotFoundError(
                f"no hf checkpoint {'for step ' + str(step) if step else ''} under {root}"
            )
        if step is not None and (
            problem := checkpoint_files.verify(path)
        ):  # latest_checkpoint verified its own
            raise checkpoint_files.CheckpointError(f"checkpoint {path} is not usable: {problem}")
        return path, checkpoint_files.read_meta(path)["step"]
    if step is None:
        tracker = root / MEGATRON_TRACKER
        if not tracker.exists():
            raise FileNotFoundError(f"no Megatron checkpoint under {root} ({MEGATRON_TRACKER} missing)")
        step = int(tracker.read_text().strip())
    path = root / f"iter_{step:07d}"
    if not path.is_dir():
        raise FileNotFoundError(f"no Megatron checkpoint {path}")
    return path, step


def metadata(plan: CPTPlan, step: int, extra: dict) -> dict:
    return {
        "scheme": plan.data.scheme,
        "step": step,
        "base_model": plan.model.pretrained,
        "data": {
            "root": plan.data.root,
            "scheme": plan.data.scheme,
            "chunks": [str(p) for p in plan.data.chunk_prefixes()],
            "validation": str(plan.data.validation_prefix()),
        },
        "config_hash": plan.config_hash(),
        "replicate": plan.data.replicate,  # seed k of its arm: the analysis groups an arm's seeds by it
        "engine": plan.engine,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "run_name": plan.run_name,
        **extra,
    }


def _export_hf(checkpoint: Path, staging: Path) -> dict:
    """Copy the checkpoint's model (a LoRA run's base with its adapter merged in) and check the export's logits
    against the checkpoint's model (the adapter model, for LoRA)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from morphcpt.modeling.checkpoint_files import ADAPTER_DIR
    from morphcpt.modeling.logit_parity import compare_logits, prompt_ids
    from morphcpt.modeling.models import load_strict

    source = load_strict(checkpoint / "model").eval()
    tokenizer = AutoTokenizer.from_pretrained(checkpoint / "model")
    ids, mask = prompt_ids(tokenizer)
    adapter = checkpoint / ADAPTER_DIR
    if adapter.is_dir():
        from morphcpt.modeling import lora

        source = lora.load_lora(source, adapter, trainable=False).eval()
    with torch.no_grad():
        want = source(input_ids=ids, attention_mask=mask).logits
    if adapter.is_dir():
        source = lora.merge(source)
    source.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    exported = AutoModelForCausalLM.from_pretrained(staging, dtype=torch.float32).eval()
    with torch.no_grad():
        got = exported(input_ids=ids, attention_mask=mask).logits
    return compare_logits(got, want, tolerance="exact", mask=mask).check("export vs checkpoint").as_dict()


def default_output(plan: CPTPlan, step: int | None) -> Path:
    name = plan.run_name if step is None else f"{plan.run_name}-step{step}"
    return Path(plan.output_root) / "exports" / name


def export_run(
    run_dir: str | Path,
    step: int | None = None,
    output: str | Path | None = None,
    extra: dict | None = None,
) -> ExportResult:
    """Export the run's latest checkpoint (or `step`) to `output` (default `<output_root>/exports/<run_name>`);
    `extra` adds to (or overrides) the metadata, e.g. the EEVE stages and added tokens."""
    plan = plan_from_yaml(Path(run_dir) / "config.yaml")
    plan.run_dir = str(Path(run_dir).resolve())  # where the run is now, should it have moved since
    from morphcpt.modeling.convert import megatron_to_hf

    checkpoint, found_step = find_checkpoint(plan, step)
    output = Path(output) if output is not None else default_output(plan, step)
    staging = output.with_name(output.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    parity = (
        _export_hf(checkpoint, staging) if plan.engine == "hf" else megatron_to_hf(plan, checkpoint, staging)
    )
    facts = {"checkpoint": str(checkpoint), "parity": parity}
    if plan.engine == "hf":
        facts["validation"] = read_json(checkpoint / "meta.json").get("validation")
    meta = metadata(plan, found_step, {**facts, **(extra or {})})
    # what the folder holds, so that "exported" means these files are there (`morphcpt.completion.export`)
    meta["files"] = {p.name: file_digest(p) for p in sorted(staging.iterdir()) if p.is_file()}
    (staging / METADATA_FILE).write_text(json.dumps(meta, indent=2))
    shutil.rmtree(output, ignore_errors=True)
    os.replace(staging, output)
    return ExportResult(output=output, step=found_step, parity=parity)


def _average_sources(plan: CPTPlan, k: int) -> tuple[list[Path], list[int]]:
    """The HF folders whose weights are averaged (the last k checkpoints' models, oldest first) and their steps."""
    from morphcpt.modeling import checkpoint_files

    if k < 2:
        raise AverageError(f"--average-last needs at least 2 checkpoints, not {k}")
    if plan.engine == "hf":
        found = checkpoint_files.intact_checkpoints(plan.checkpoint_dir)
        if any((path / "adapter").is_dir() for path in found[-k:]):
            raise AverageError(f"{plan.run_dir}: a LoRA run; average its merged exports instead")
        steps = [int(checkpoint_files.read_meta(path)["step"]) for path in found]
        folders = [path / "model" for path in found]
    else:
        tracker = plan.checkpoint_dir / MEGATRON_TRACKER
        latest = int(tracker.read_text().strip()) if tracker.is_file() else -1
        steps = sorted(
            int(p.name.removeprefix("iter_"))
            for p in plan.checkpoint_dir.glob("iter_*")
            if p.name.removeprefix("iter_").isdigit() and int(p.name.removeprefix("iter_")) <= latest
        )
        folders = [default_output(plan, step) for step in steps]
        missing = [str(f) for f in folders[-k:] if not (f / "config.json").is_file()]
        if len(steps) >= k and missing:
            raise AverageError(
                f"averaging a megatron run reads its step exports; export these first (the export job): {missing}"
            )
    if len(found_steps := steps[-k:]) < k:
        raise AverageError(
            f"--average-last {k}: the run {plan.run_dir} kept {len(steps)} intact checkpoints (steps "
            f"{', '.join(map(str, steps)) or 'none'}); keep more (checkpoint.keep) or average fewer"
        )
    return folders[-k:], found_steps


def average_last(run_dir: str | Path, k: int, output: str | Path | None = None) -> ExportResult:
    """Export the mean of the run's last `k` checkpoints' weights as one HF model (see the module docstring)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from morphcpt.modeling.logit_parity import compare_logits, prompt_ids
    from morphcpt.modeling.models import load_strict

    plan = plan_from_yaml(Path(run_dir) / "config.yaml")
    plan.run_dir = str(Path(run_dir).resolve())
    folders, steps = _average_sources(plan, k)
    model = load_strict(folders[-1]).eval()  # the newest: its config and tokenizer
    total = {name: tensor.detach().clone().double() for name, tensor in model.state_dict().items()}
    for folder in folders[:-1]:
        for name, tensor in load_strict(folder).state_dict().items():
            total[name] += tensor.double()
    model.load_state_dict({name: (value / k).float() for name, value in total.items()})
    tokenizer = AutoTokenizer.from_pretrained(folders[-1])
    output = (
        Path(output)
        if output is not None
        else default_output(plan, None).with_name(f"{plan.run_name}-avg{k}-step{steps[-1]}")
    )
    staging = output.with_name(output.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    model.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    ids, mask = prompt_ids(tokenizer)
    exported = AutoModelForCausalLM.from_pretrained(staging, dtype=torch.float32).eval()
    with torch.no_grad():
        want = model(input_ids=ids, attention_mask=mask).logits
        got = exported(input_ids=ids, attention_mask=mask).logits
    parity = compare_logits(got, want, tolerance="exact", mask=mask).check("averaged export").as_dict()
    facts = {"averaged_steps": steps, "averaged_from": [str(f) for f in folders], "parity": parity}
    meta = metadata(plan, steps[-1], facts)
    meta["files"] = {p.name: file_digest(p) for p in sorted(staging.iterdir()) if p.is_file()}
    (staging / METADATA_FILE).write_text(json.dumps(meta, indent=2))
    shutil.rmtree(output, ignore_errors=True)
    os.replace(staging, output)
    return ExportResult(output=output, step=steps[-1], parity=parity)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="morphcpt export", description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-dir", required=True, help="run folder (holds config.yaml and checkpoints/)")
    parser.add_argument("--step", type=int, default=None, help="checkpoint step (default: the latest)")
    parser.add_argument(
        "--output", default=None, help="output folder (default: <output_root>/exports/<run_name>)"
    )
    parser.add_argument(
        "--average-last",
        type=int,
        metavar="K",
        help="export the mean of the last K checkpoints' weights instead",
    )
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.average_last is not None and args.step is not None:
        parser.error("--average-last takes the run's last checkpoints; leave out --step")
    with reported("morphcpt export"):
        if args.average_last is not None:
            result = average_last(args.run_dir, args.average_last, args.output)
        else:
            result = export_run(args.run_dir, args.step, args.output)
    print(f"exported step {result.step} to {result.output} (parity: {result.parity})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
