"""The megatron engine's `prepare` stage (one process, one GPU): import the Hugging Face weights once into
Megatron format, verify them once (the imported model's logits must reproduce the HF model's, or the job stops),
fingerprint the data once, and record the job in the run folder.

    python training/nemo/run_cpt.py recipe=cpt_patok cluster.stage=prepare

`train` (config.py) refuses to start until `verified.json` stands beside the import. The conversion and its logit
check are `morphcpt.modeling.convert`'s (the export of a megatron run uses them too). The same import, forward and export run on a
CPU with a TE-free spec in `roundtrip.py` (a check, not a stage of the job).
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

from morphcpt.jsonio import read_json
from morphcpt.modeling.convert import hf_to_megatron, megatron_hf_parity
from morphcpt.plan.compose import plan_to_yaml
from morphcpt.plan.schema import CPTPlan
from morphcpt.train import run_inputs
from morphcpt.train.megatron import compat
from morphcpt.train.megatron.config import IMPORT_MARKER, VERIFIED_MARKER, WeightVerificationError, overrides


def write_run_folder(plan: CPTPlan, extra: dict) -> None:
    """config.yaml, the overrides, and metadata.json (kept from the first job; later jobs are appended)."""
    run_dir = Path(plan.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(plan_to_yaml(plan))
    (run_dir / "megatron_overrides.json").write_text(json.dumps(overrides(plan), indent=2))
    meta_path = run_dir / "metadata.json"
    now = datetime.now(UTC).isoformat(timespec="seconds")
    if meta_path.exists():
        meta = read_json(meta_path, keys=("jobs",), fix="delete it: the next job writes it again")
    else:
        meta = {
            "run_name": plan.run_name,
            "engine": "megatron",
            "scheme": plan.data.scheme,
            "base_model": plan.model.pretrained,
            "config_hash": plan.config_hash(),
            "created": now,
            "jobs": [],
            **extra,
        }
    meta["jobs"].append({"prepared": now, "job_id": os.environ.get("PBS_JOBID")})
    meta_path.write_text(json.dumps(meta, indent=2))


def import_weights(plan: CPTPlan) -> Path:
    """Import the HF checkpoint into Megatron format once; later calls find the marker and return at once.

    The three variants' jobs share one import folder and may start together, so each imports into a staging
    folder of its own and renames it into place; a job that loses the race keeps the winner's import.
    """
    import shutil
    import socket

    target = Path(plan.cluster.import_dir)
    if (target / IMPORT_MARKER).exists():
        check_import(plan, target)
        return target
    staging = target.with_name(f"{target.name}.tmp-{socket.gethostname()}-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    hf_to_megatron(plan.model.pretrained, staging)
    base = run_inputs.source_record(str(plan.model.pretrained), None)
    (staging / IMPORT_MARKER).write_text(json.dumps({"source": plan.model.pretrained, "base_model": base}))
    if target.exists() and not (target / IMPORT_MARKER).exists():
        shutil.rmtree(target)  # left by an interrupted import of an earlier version: never complete
    try:
        os.rename(staging, target)  # fails when another job's complete import is already there
    except OSError:
        if not (target / IMPORT_MARKER).exists():
            raise
        shutil.rmtree(staging, ignore_errors=True)
    return target


def check_import(plan: CPTPlan, target: Path) -> None:
    """A finished import is reused only while it is whole (its iter_ folder) and was made from the files
    `model.pretrained` holds now (a base model replaced in place would otherwise train on the old weights)."""
    fix = f"delete {target} and rerun cluster.stage=prepare (the import is made again)"
    marker = read_json(target / IMPORT_MARKER, fix=fix)
    if not any(target.glob("iter_*")):
        raise WeightVerificationError(f"the import {target} holds no iter_* folder (deleted?); {fix}")
    recorded = marker.get("base_model")
    if recorded is None or marker.get("source") != plan.model.pretrained:
        return  # an import made before contents were recorded, or one the check stage names (another source)
    current = run_inputs.source_record(str(plan.model.pretrained), recorded)
    changed = run_inputs.compare({"inputs": {"base_model": recorded}}, {"inputs": {"base_model": current}})
    if changed:
        raise WeightVerificationError(
            f"the import {target} was made from other files than {plan.model.pretrained} holds now "
            f"({changed['base_model']}); {fix}"
        )


def verify_import(plan: CPTPlan) -> dict:
    """The imported Megatron model must reproduce the HF model's logits on fixed prompts, or training stops."""
    target = Path(plan.cluster.import_dir)
    marker = target / VERIFIED_MARKER
    if marker.exists():
        return read_json(
            marker, fix="delete it and rerun cluster.stage=prepare (the import is verified again)"
        )
    parity = megatron_hf_parity(
        plan.model.pretrained, target, plan.model.pretrained, plan.model.tokenizer or plan.model.pretrained
    )
    if not parity.ok():
        raise WeightVerificationError(
            f"imported weights in {target} do not reproduce {plan.model.pretrained}: {parity.as_dict()}. "
            f"Delete {target} and rerun cluster.stage=prepare; do not train on these weights."
        )
    result = {"source": plan.model.pretrained, **parity.as_dict()}
    marker.write_text(json.dumps(result, indent=2))
    return result


def prepare(plan: CPTPlan) -> dict:
    """Stage 1 (one process, one GPU): import once, verify once, fingerprint the data once, record the job."""
    from morphcpt.tokenization.vocabulary import Vocabulary
    from morphcpt.train.data import (
        FINGERPRINT_SAMPLES,
        build_datasets,
        check_ready,
        check_tokenizer,
        fingerprint,
    )

    check_ready(plan.data)
    vocab = Vocabulary.load(plan.model.tokenizer or plan.model.pretrained)
    check_tokenizer([*plan.data.chunk_prefixes(), plan.data.validation_prefix()], vocab)
    # a resubmitted job must not resume the run's checkpoints on a tokenizer, base model or data changed in place
    resuming = (plan.checkpoint_dir / "latest_checkpointed_iteration.txt").exists()
    run_inputs.check_resume(plan, plan.run_dir, plan.checkpoint_dir if resuming else None, main=True)
    import_weights(plan)
    verification = verify_import(plan)
    run_dir = Path(plan.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    fingerprint_path = run_dir / "data_fingerprint.json"
    if not fingerprint_path.exists():
        data = build_datasets(plan.data, plan.loop, vocab, cache_dir=run_dir / "data_cache")
        fingerprint_path.write_text(json.dumps(fingerprint(data, FINGERPRINT_SAMPLES), indent=2))
    write_run_folder(
        plan, {"megatron_bridge": compat.installed_version(), "weight_verification": verification}
    )
    return verification
