"""Training and validation data for the hf engine, read exactly as the cluster reads it: megatron-core's
`GPTDataset` (documents concatenated and cut into seq+1-token samples, shuffled with the plan's seed) over a blend
of one scheme's chunks, and the canonical validation set that every scheme shares.

    data = build_datasets(plan.data, plan.loop, vocab, cache_dir=run_dir / "data_cache")
    batch = collate(data.train, range(0, 4))    # {"tokens", "labels", "loss_mask"} of 4 samples

Sample `i` of the training blend is the same on every rank and after every resume, so a data position is just a
count of consumed samples. Building a blend needs a torch.distributed process group; on a single process a
1-rank gloo group is created (`ensure_process_group`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist

from morphcpt.indexed import bin_path, dataset_exists, idx_path, read_index
from morphcpt.train.plan import DataPlan, LoopPlan

BYTES_PER_READ = 1 << 24  # tokens per slice when summing a whole .bin
FINGERPRINT_SAMPLES = 16  # training samples hashed into a run's data fingerprint


class DataNotReady(FileNotFoundError):
    """Preprocessed data is missing or incomplete; the message lists what and how to make it."""


@dataclass
class TrainData:
    train: torch.utils.data.Dataset  # BlendedDataset (several chunks) or GPTDataset (one chunk)
    validation: torch.utils.data.Dataset  # GPTDataset, one epoch of the canonical validation set
    byte_table: np.ndarray  # UTF-8 bytes each token id spells (0 for specials); bits/byte denominators
    prefixes: list[Path]
    validation_prefix: Path


class _Ids:
    """The tokenizer facts GPTDataset uses: vocabulary size (token dtype), end-of-document and pad ids, and an
    identity that keys its index cache (a different vocabulary must not reuse cached sample indices)."""

    def __init__(self, vocab) -> None:
        self.vocab_size = vocab.size
        self.eod = self.eos = vocab.eos_id
        self.pad = vocab.pad_id
        self.unique_identifiers = {"vocabulary": vocab.fingerprint}


def ensure_process_group() -> None:
    """Create a 1-process gloo group when torch.distributed is not initialised (a GPTDataset blend needs one)."""
    if not dist.is_initialized():
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)


def done_marker(prefix: Path) -> Path:
    """Preprocessing's completion marker of a chunk: `<dir>/<chunk>.done.json` beside `<chunk>_text_document`."""
    return prefix.with_name(prefix.name.removesuffix("_text_document") + ".done.json")


def check_ready(data: DataPlan) -> None:
    """Every chunk of the scheme is completely preprocessed and the validation set exists, or say what is not."""
    problems = []
    for prefix in data.chunk_prefixes():
        if not dataset_exists(prefix):
            problems.append(f"missing {prefix}.{{bin,idx}}")
        elif not done_marker(prefix).exists():
            problems.append(f"incomplete {prefix} (no {done_marker(prefix).name})")
    validation = data.validation_prefix()
    if not dataset_exists(validation):
        problems.append(f"missing validation set {validation}.{{bin,idx}}")
    elif not done_marker(validation).exists():
        problems.append(f"incomplete validation set {validation} (no {done_marker(validation).name})")
    if problems:
        listing = "\n  ".join(
            problems[:10] + ([f"... and {len(problems) - 10} more"] if len(problems) > 10 else [])
        )
        raise DataNotReady(
            f"data for scheme {data.scheme!r} under {data.root} is not ready:\n  {listing}\n"
            f"Run preprocessing for scheme={data.scheme} and the validation set (morphcpt preprocess, or the "
            "preprocess_data PBS jobs)."
        )


def byte_table(vocab) -> np.ndarray:
    """Bytes of UTF-8 text each id decodes to; summing it over ids gives the byte length of their text."""
    return np.fromiter((len(b) for b in vocab.piece_bytes), dtype=np.int64, count=vocab.size)


def dataset_bytes(prefix: Path, table: np.ndarray) -> tuple[int, int]:
    """(tokens, UTF-8 bytes) of a whole indexed dataset: its documents' decoded length, computed once."""
    dtype = read_index(prefix)["dtype"]
    tokens = np.memmap(bin_path(prefix), dtype=dtype, mode="r")
    total = 0
    for start in range(0, tokens.size, BYTES_PER_READ):
        total += int(table[tokens[start : start + BYTES_PER_READ]].sum())
    return int(tokens.size), total


def build_datasets(data: DataPlan, loop: LoopPlan, vocab, cache_dir: Path) -> TrainData:
    """GPTDataset blend of the scheme's chunks (steps x global batch samples) + one epoch of validation."""
    from megatron.core.datasets.blended_megatron_dataset_builder import BlendedMegatronDatasetBuilder
    from megatron.core.datasets.gpt_dataset import GPTDataset, GPTDatasetConfig

    check_ready(data)
    ensure_process_group()
    prefixes = data.chunk_prefixes()
    config = GPTDatasetConfig(
        random_seed=data.seed,
        sequence_length=loop.seq_length,
        blend_per_split=[
            ([str(p) for p in prefixes], data.blend_weights()),
            ([str(data.validation_prefix())], None),
            None,
        ],
        path_to_cache=str(cache_dir),
        tokenizer=_Ids(vocab),
        reset_position_ids=False,
        reset_attention_mask=False,
        eod_mask_loss=False,
        create_attention_mask=False,
    )
    sizes = [loop.steps * loop.global_batch_size, None, None]
    train, validation, _ = BlendedMegatronDatasetBuilder(GPTDataset, sizes, lambda: True, config).build()
    return TrainData(train, validation, byte_table(vocab), prefixes, data.validation_prefix())


def collate(dataset, indices: Iterable[int]) -> dict[str, torch.Tensor]:
    samples = [dataset[int(i)] for i in indices]
    return {key: torch.stack([s[key] for s in samples]) for key in ("tokens", "labels", "loss_mask")}


def fingerprint(data: TrainData, first_samples: int) -> dict:
    """Evidence of which data a run read: hashes of the indexed files, a hash of the first training samples' ids,
    and their tokens per byte against the canonical validation set's (> 1 means the scheme expanded the text)."""
    sample_ids = [data.train[i]["tokens"].numpy() for i in range(min(first_samples, len(data.train)))]
    h = hashlib.sha256()
    for ids in sample_ids:
        h.update(ids.astype(np.int64).tobytes())
    sample_tokens = int(sum(ids.size for ids in sample_ids))
    sample_bytes = int(sum(data.byte_table[ids].sum() for ids in sample_ids))
    val_tokens, val_bytes = dataset_bytes(data.validation_prefix, data.byte_table)
    train_tpb = sample_tokens / max(sample_bytes, 1)
    val_tpb = val_tokens / max(val_bytes, 1)
    return {
        "first_samples": len(sample_ids),
        "first_samples_sha256": h.hexdigest(),
        "first_samples_tokens": sample_tokens,
        "first_samples_bytes": sample_bytes,
        "train_tokens_per_byte": train_tpb,
        "validation_tokens": val_tokens,
        "validation_bytes": val_bytes,
        "validation_tokens_per_byte": val_tpb,
        "expansion_vs_validation": train_tpb / val_tpb if val_tpb else None,
        "indexes": {str(p): _file_sha256(idx_path(p)) for p in [*data.prefixes, data.validation_prefix]},
        "done_markers": {str(p): _file_sha256(done_marker(p)) for p in data.prefixes},
    }


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
