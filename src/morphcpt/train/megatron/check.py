"""The cluster engine's `check` stage: everything Megatron-Bridge would build before the model, built for real on
any machine where `megatron.bridge` imports, no GPU needed. The PBS job runs it first, so a wrong container or
wrong data fails in the job's first minute instead of on 8 ranks after the import.

    python training/nemo/run_cpt.py recipe=cpt_patok cluster.stage=check

It (1) requires a supported Megatron-Bridge release, (2) builds that release's Gemma 3 1B recipe with the plan
applied and puts it through Bridge's own `runtime_config_update()` (as pretrain() does: mixed precision,
data-parallel size, `ConfigContainer.validate()`) at the job's world size, (3) builds the tokenizer
Bridge would build and applies Bridge's vocabulary rule to it (the model must keep its rows, unpadded), (4) checks
that every chunk is complete and all were written with one tokenizer whose ids fit the embedding, and (5) builds
the train and validation datasets Bridge would build from the real indexed data (BlendedMegatronDatasetBuilder
via Bridge's dataset provider) and reads samples of each. Between (2) and (3) it estimates the memory one GPU needs
from the validated config (`morphcpt.train.memory.megatron`) and refuses a plan that does not fit
`cluster.gpu_memory`, naming the micro batch or recomputation that would. It prints a one-screen summary, writes
`<run_dir>/check.json`, and on any mismatch raises ClusterCheckError (exit status 1 from the job).

What only exists after `prepare` is stood in for, and the summary says so: before the first import Bridge's
validation would refuse the missing `checkpoint.pretrained_checkpoint`, so validation sees an empty stand-in folder.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from morphcpt.plan.schema import CPTPlan
from morphcpt.train.megatron import compat
from morphcpt.train.megatron.config import IMPORT_MARKER, build_config, parallel_layout, training_blend

CHECK_SAMPLES = 4  # samples read from each of the train and validation datasets


class ClusterCheckError(RuntimeError):
    """Something the cluster job needs is wrong; the message says what and how to fix it."""


@contextmanager
def _import_stand_in(cfg, plan: CPTPlan, notes: list[str]):
    """Point `checkpoint.pretrained_checkpoint` at an empty folder while Bridge validates, if no import exists."""
    target = Path(plan.cluster.import_dir)
    if (target / IMPORT_MARKER).exists():
        notes.append(f"imported weights: {target} (complete)")
        yield
        return
    stand_in = Path(tempfile.mkdtemp(prefix="morphcpt-check-import-"))
    cfg.checkpoint.pretrained_checkpoint = str(stand_in)
    notes.append(
        f"imported weights: not yet in {target}; an empty stand-in folder was validated (prepare imports)"
    )
    try:
        yield
    finally:
        cfg.checkpoint.pretrained_checkpoint = str(target)
        shutil.rmtree(stand_in, ignore_errors=True)


@contextmanager
def _world_size(size: int):
    """WORLD_SIZE as torchrun would set it for the job, so Bridge computes the job's data-parallel size."""
    before = os.environ.get("WORLD_SIZE")
    os.environ["WORLD_SIZE"] = str(size)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("WORLD_SIZE", None)
        else:
            os.environ["WORLD_SIZE"] = before


def validate_config(plan: CPTPlan, notes: list[str]):
    """The recipe with the plan applied, put through Bridge's own `runtime_config_update` (what pretrain() does
    first: mixed precision, data-parallel size, communication overlap, then `ConfigContainer.validate()`) at
    the job's world size."""
    from megatron.bridge.training.config import runtime_config_update

    cfg = build_config(plan, training_blend(plan))
    try:
        layout = parallel_layout(plan)
    except ValueError as error:
        cluster = plan.cluster
        raise ClusterCheckError(
            f"the plan does not divide over {cluster.nodes} node(s) x {cluster.gpus_per_node} GPUs: {error}. Choose "
            "loop.global_batch_size as a multiple of that, or a number of nodes (TRAIN_NODES) that divides it"
        ) from None
    with _import_stand_in(cfg, plan, notes), _world_size(layout["world_size"]):
        try:
            runtime_config_update(cfg)
        except (AssertionError, ValueError, TypeError) as error:
            raise ClusterCheckError(f"Megatron-Bridge rejects the configuration: {error}") from error
    if cfg.data_parallel_size != layout["data_parallel"]:
        raise ClusterCheckError(
            f"Bridge computes data-parallel size {cfg.data_parallel_size}, the plan {layout['data_parallel']}"
        )
    return cfg, layout


def check_memory(cfg, plan: CPTPlan, layout: dict) -> dict:
    """The planner's per-GPU estimate from Bridge's validated config (its model shape, parallelism, distributed
    optimiser, recomputation, micro batch) against the plan's card; ClusterCheckError saying what fits when it
    does not. Nothing is allocated."""
    from morphcpt.plan.card import gpu_type
    from morphcpt.train.memory.megatron import MegatronShape
    from morphcpt.train.memory.planner import DoesNotFit, check_fits

    facts = gpu_type(plan.cluster.gpu_type)
    if facts is not None and not facts.bf16:
        raise ClusterCheckError(
            f"cluster.gpu_type={plan.cluster.gpu_type} has no bf16, which the megatron engine trains in; "
            "set GPU_TYPE in .env to the cluster's card (A100, H100, ...), or train with engine=hf "
            "loop.precision=fp16-mixed"
        )
    shape = MegatronShape.from_config(cfg, layout["data_parallel"])
    try:
        return {**check_fits(plan, "megatron", megatron_shape=shape), "config": shape.describe()}
    except DoesNotFit as error:
        raise ClusterCheckError(str(error)) from error


def check_tokenizer(cfg, plan: CPTPlan) -> dict:
    """Build the tokenizer Bridge builds and apply Bridge's own vocabulary rule to it: the model must keep the
    checkpoint's rows exactly (no padding, no resize)."""
    from megatron.bridge.training.tokenizers.tokenizer import build_tokenizer

    tokenizer = build_tokenizer(cfg.tokenizer)
    try:
        from megatron.bridge.training.setup import _validate_and_set_vocab_size as bridge_vocab_rule
    except ImportError as error:  # private helper; a release without it is not one we support
        raise ClusterCheckError(
            f"this Megatron-Bridge has no vocabulary rule where expected: {error}"
        ) from error
    try:
        vocab, padded = bridge_vocab_rule(cfg.model.vocab_size, tokenizer.vocab_size)
    except ValueError as error:
        raise ClusterCheckError(f"Bridge refuses the tokenizer: {error}") from error
    if vocab != plan.model.vocab_size or padded:
        raise ClusterCheckError(
            f"Bridge would train {vocab} embedding rows (padding {padded}) instead of the checkpoint's "
            f"{plan.model.vocab_size}; set model.vocab_size to the pretrained model's rows"
        )
    return {
        "type": cfg.tokenizer.tokenizer_type,
        "vocab_size": int(tokenizer.vocab_size),
        "model_vocab_size": int(vocab),
        "tokenizer": tokenizer,
    }


def check_data_markers(plan: CPTPlan) -> dict:
    """Every chunk and the validation set are complete, written by one tokenizer, with ids that fit the model."""
    from morphcpt.train.data import DataNotReady, check_ready, read_marker

    try:
        check_ready(plan.data)
    except DataNotReady as error:
        raise ClusterCheckError(str(error)) from error
    prefixes = [*plan.data.chunk_prefixes(), plan.data.validation_prefix()]
    markers = {p: read_marker(p) for p in prefixes}
    fingerprints = {m.get("key", {}).get("tokenizer_fingerprint") for m in markers.values()}
    if len(fingerprints) != 1 or None in fingerprints:
        raise ClusterCheckError(
            f"the chunks of {plan.data.scheme!r} and the validation set were not all written with one tokenizer "
            f"(fingerprints: {sorted(str(f)[:12] for f in fingerprints)}); preprocess them again with one TOKENIZER"
        )
    data_vocab = {int(m["vocab_size"]) for m in markers.values()}
    if max(data_vocab) > plan.model.vocab_size:
        raise ClusterCheckError(
            f"the data was tokenized with a vocabulary of {max(data_vocab):,} ids, more than the model's "
            f"{plan.model.vocab_size:,} embedding rows"
        )
    fingerprint = fingerprints.pop()
    from morphcpt.tokenization.vocabulary import Vocabulary
    from morphcpt.train.data import TokenizerMismatch, check_tokenizer

    tokenizer_source = plan.model.tokenizer or plan.model.pretrained
    try:
        vocab = Vocabulary.load(tokenizer_source)
    except Exception as error:  # any failure to load means the same fix
        raise ClusterCheckError(
            f"cannot load the plan's tokenizer {tokenizer_source}: {error}. Offline compute nodes: set TOKENIZER "
            "in .env to a local folder (hf download ... --local-dir) and HF_HUB_OFFLINE=1"
        ) from error
    try:
        check_tokenizer(prefixes, vocab)
    except TokenizerMismatch as error:
        raise ClusterCheckError(str(error)) from error
    tokenizer_note = f"matches {tokenizer_source} ({vocab.size:,} ids)"
    return {
        "chunks": len(prefixes) - 1,
        "documents": sum(int(m["documents"]) for p, m in markers.items() if p != prefixes[-1]),
        "tokens": sum(int(m["tokens"]) for p, m in markers.items() if p != prefixes[-1]),
        "validation_documents": int(markers[prefixes[-1]]["documents"]),
        "data_vocab_size": max(data_vocab),
        "tokenizer_fingerprint": fingerprint,
        "tokenizer_check": tokenizer_note,
    }


def _read_samples(dataset, count: int, seq_length: int, vocab_size: int, name: str) -> dict:
    if dataset is None or len(dataset) == 0:
        raise ClusterCheckError(f"Bridge built no {name} dataset from the plan's data")
    picks = np.linspace(0, len(dataset) - 1, num=min(count, len(dataset))).astype(int)
    highest = 0
    for i in picks:
        sample = dataset[int(i)]
        tokens = sample["tokens"]
        if tuple(tokens.shape) != (seq_length,):
            raise ClusterCheckError(
                f"{name} sample {i} has shape {tuple(tokens.shape)}, expected ({seq_length},)"
            )
        if int(tokens.min()) < 0 or int(tokens.max()) >= vocab_size:
            raise ClusterCheckError(f"{name} sample {i} holds ids outside [0, {vocab_size})")
        highest = max(highest, int(tokens.max()))
    return {"samples": int(len(dataset)), "read": len(picks), "highest_id": highest}


def check_datasets(cfg, tokenizer, plan: CPTPlan) -> dict:
    """The train and validation datasets exactly as Bridge builds them for pretrain(), and a few samples."""
    import torch.distributed as dist
    from megatron.bridge.data.loaders import build_train_valid_test_datasets
    from megatron.bridge.data.utils import get_dataset_provider

    from morphcpt.train.data import ensure_process_group

    created = not dist.is_initialized()
    ensure_process_group()  # the blend builder needs one; a 1-process gloo group on this CPU
    try:
        cfg.dataset.tokenizer = tokenizer
        train, valid, _ = build_train_valid_test_datasets(cfg, get_dataset_provider(cfg.dataset))
        seq, vocab = plan.loop.seq_length, plan.model.vocab_size
        return {
            "train": _read_samples(train, CHECK_SAMPLES, seq, vocab, "train"),
            "validation": _read_samples(valid, CHECK_SAMPLES, seq, vocab, "validation"),
        }
    finally:
        if created:  # Bridge reads the world size from a live group: leave none behind for the next check
            dist.destroy_process_group()


def check(plan: CPTPlan) -> dict:
    """Run every check, print the summary, write `<run_dir>/check.json`; ClusterCheckError on a mismatch."""
    version, api = compat.require_supported()
    recipe_name, _ = compat.recipe(api)
    notes: list[str] = []
    data = check_data_markers(plan)
    cfg, layout = validate_config(plan, notes)
    memory = check_memory(cfg, plan, layout)
    tokenizer = check_tokenizer(cfg, plan)
    datasets = check_datasets(cfg, tokenizer.pop("tokenizer"), plan)
    ckpt = Path(cfg.checkpoint.load) / "latest_checkpointed_iteration.txt"
    report = {
        "megatron_bridge": version,
        "recipe": recipe_name,
        "layout": layout,
        "validated": {
            "seq_length": cfg.model.seq_length,
            "vocab_size": cfg.model.vocab_size,
            "global_batch_size": cfg.train.global_batch_size,
            "micro_batch_size": cfg.train.micro_batch_size,
            "train_iters": cfg.train.train_iters,
            "lr": [cfg.optimizer.lr, cfg.optimizer.min_lr],
            "weight_decay": [cfg.scheduler.start_weight_decay, cfg.scheduler.end_weight_decay],
            "warmup_steps": cfg.scheduler.lr_warmup_steps,
            "decay_steps": cfg.scheduler.lr_decay_steps,
            "exit_duration_in_mins": cfg.train.exit_duration_in_mins,
            "most_recent_k": cfg.checkpoint.most_recent_k,
            "checkpoint": cfg.checkpoint.load,
            "resume_iteration": int(ckpt.read_text().strip()) if ckpt.exists() else None,
        },
        "memory": memory,
        "tokenizer": tokenizer,
        "data": data,
        "datasets": datasets,
        "notes": notes,
    }
    run_dir = Path(plan.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "check.json").write_text(json.dumps(report, indent=2, default=str))
    print(summary(plan, report), flush=True)
    return report


def _epochs(v: dict, d: dict) -> str:
    """How many passes over the data the plan makes (GPTDataset repeats the data past one epoch)."""
    planned = v["train_iters"] * v["global_batch_size"] * v["seq_length"]
    epochs = f"{planned / d['tokens']:.2f} epochs" if d["tokens"] else "no tokens in the chunks"
    return f"the plan reads {planned / 1e9:.3g}B tokens of the {d['tokens'] / 1e9:.3g}B the chunks hold: {epochs}"


def summary(plan: CPTPlan, report: dict) -> str:
    v, d, ds, t = report["validated"], report["data"], report["datasets"], report["tokenizer"]
    mem = report["memory"]
    resume = (
        f"resumes at iteration {v['resume_iteration']}" if v["resume_iteration"] else "starts from the import"
    )
    lines = [
        f"cluster check: {plan.run_name} (scheme {plan.data.scheme}) — OK",
        f"  Megatron-Bridge {report['megatron_bridge']}: {report['recipe']}, put through runtime_config_update() + validate()",
        f"  layout      {report['layout']['world_size']} GPUs, DP {report['layout']['data_parallel']}, "
        f"grad accumulation {report['layout']['gradient_accumulation']}",
        f"  loop        {v['train_iters']} iters, GBS {v['global_batch_size']}, MBS {v['micro_batch_size']}, "
        f"seq {v['seq_length']}, exit after {v['exit_duration_in_mins']} min",
        f"  memory      {mem['estimate_gib']:.1f} of {mem['usable_gib']:.1f} GiB usable per GPU at MBS "
        f"{mem['micro_batch']} ({mem['margin']:.0%} free; MBS up to {mem['largest_micro_batch']} fits): "
        f"{mem['card']}, {mem['config']}",
        f"  optimiser   lr {v['lr'][0]:g}->{v['lr'][1]:g}, warmup {v['warmup_steps']} / decay {v['decay_steps']} "
        f"samples, weight decay {v['weight_decay'][0]:g}->{v['weight_decay'][1]:g}",
        f"  vocabulary  model {v['vocab_size']:,} rows; Bridge's {t['type']} {t['vocab_size']:,} (kept, unpadded); "
        f"data ids < {d['data_vocab_size']:,}",
        f"  tokenizer   data written by {d['tokenizer_fingerprint'][:12]}: {d['tokenizer_check']}",
        f"  data        {d['chunks']} chunks, {d['documents']:,} documents, {d['tokens']:,} tokens; "
        f"validation {d['validation_documents']:,} documents",
        f"  epochs      {_epochs(v, d)}",
        f"  datasets    train {ds['train']['samples']:,} samples, validation {ds['validation']['samples']:,}; "
        f"read {ds['train']['read']}+{ds['validation']['read']}, highest id {max(ds['train']['highest_id'], ds['validation']['highest_id']):,}",
        f"  checkpoints {v['checkpoint']} (keeps {v['most_recent_k']}), {resume}",
        *(f"  note        {note}" for note in report["notes"]),
    ]
    return "\n".join(lines)
