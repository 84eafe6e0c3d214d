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
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist

from morphcpt.errors import UserError
from morphcpt.indexed import bin_path, dataset_exists, idx_path, read_index, verify_dataset
from morphcpt.jsonio import JSONFileError, read_json
from morphcpt.plan.schema import DataPlan, LoopPlan

log = logging.getLogger(__name__)

BYTES_PER_READ = 1 << 24  # tokens per slice when summing a whole .bin
FINGERPRINT_SAMPLES = 16  # training samples hashed into a run's data fingerprint


class DataNotReady(UserError, FileNotFoundError):
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
        # GPTDataset masks the loss on labels equal to pad and zeroes such inputs: a pad that is also eos or bos
        # (GPT-2 style tokenizers, `import-tokenizer` without a pad) becomes -1, an id no token has.
        self.pad = vocab.pad_id if vocab.pad_id not in (vocab.eos_id, vocab.bos_id) else -1
        self.unique_identifiers = {"vocabulary": vocab.fingerprint}


def ensure_process_group(device: torch.device | None = None) -> bool:
    """Create a 1-process group when torch.distributed is not initialised: a GPTDataset blend needs one (gloo), and
    so does FSDP2 even on one rank (nccl on a GPU `device`). True when this call created it (the caller destroys
    it when done)."""
    if dist.is_initialized():
        return False
    backend = "nccl" if device is not None and device.type == "cuda" else "gloo"
    dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)
    return True


def done_marker(prefix: Path) -> Path:
    """Preprocessing's completion marker of a chunk: `<dir>/<chunk>.done.json` beside `<chunk>_text_document`."""
    return prefix.with_name(prefix.name.removesuffix("_text_document") + ".done.json")


def read_marker(prefix: Path) -> dict:
    """A chunk's completion marker, read once here for every reader (JSONFileError naming the fix if broken)."""
    return read_json(
        done_marker(prefix),
        keys=("documents",),
        fix="delete it and rerun preprocessing for this chunk (it is redone)",
    )


def check_ready(data: DataPlan) -> None:
    """Every chunk of the scheme is completely preprocessed and the validation set exists, or say what is not.

    A chunk whose files no longer have the sizes its marker recorded (overwritten, truncated) counts as not
    ready: reading it would crash training, or worse, train on the wrong tokens."""
    problems = []
    for prefix, what in [
        *((p, "") for p in data.chunk_prefixes()),
        (data.validation_prefix(), "validation set "),
    ]:
        if not dataset_exists(prefix):
            problems.append(f"missing {what}{prefix}.{{bin,idx}}")
        elif not done_marker(prefix).exists():
            problems.append(f"incomplete {what}{prefix} (no {done_marker(prefix).name})")
        else:
            try:
                files = read_marker(prefix).get("files")
            except JSONFileError as error:
                problems.append(str(error))
                continue
            if files and (problem := verify_dataset(prefix, files, False)):
                problems.append(f"altered {what}{prefix}: {problem}")
    if problems:
        listing = "\n  ".join(
            problems[:10] + ([f"... and {len(problems) - 10} more"] if len(problems) > 10 else [])
        )
        raise DataNotReady(
            f"data for scheme {data.scheme!r} under {data.root} is not ready:\n  {listing}\n"
            f"Run preprocessing for scheme={data.scheme} and the validation set (morphcpt preprocess, or the "
            "preprocess_data PBS jobs)."
        )


class TokenizerMismatch(UserError, ValueError):
    """The data was tokenized with another tokenizer than the one training uses."""


def check_tokenizer(prefixes: Iterable[Path], vocab) -> None:
    """Every dataset was tokenized with `vocab` (same fingerprint recorded in its marker), or refuse, naming both.

    Ids from another tokenizer of the same size would train silently on the wrong pieces (and save the wrong
    tokenizer with the model); from a larger one they index past the embedding."""
    ours = vocab.fingerprint
    name = getattr(vocab, "source", "") or "the training tokenizer"
    wrong = []
    for prefix in prefixes:
        marker = read_marker(prefix)
        theirs = marker.get("key", {}).get("tokenizer_fingerprint")
        if theirs != ours:
            source = marker.get("config", {}).get("tokenizer", "an unrecorded tokenizer")
            wrong.append(f"{prefix}: tokenized with {source} (fingerprint {str(theirs)[:12]})")
    if wrong:
        listing = "\n  ".join(wrong[:10] + ([f"... and {len(wrong) - 10} more"] if len(wrong) > 10 else []))
        raise TokenizerMismatch(
            f"the data was tokenized with another tokenizer than training uses, {name} "
            f"({vocab.size} ids, fingerprint {ours[:12]}):\n  {listing}\n"
            "Preprocess again with the training tokenizer, or set model.tokenizer to the one the data used."
        )


def usable_chunks(data: DataPlan) -> tuple[list[Path], list[float]]:
    """The scheme's chunk prefixes and blend weights, without empty chunks (0 documents in their marker).

    Splitting into more chunks than the corpus has lines makes empty chunks; megatron-core cannot open an empty
    dataset, so they are left out of the blend with a note. No document at all is an error."""
    prefixes, weights = [], []
    for prefix, weight in zip(data.chunk_prefixes(), data.blend_weights(), strict=True):
        if read_marker(prefix)["documents"] > 0:
            prefixes.append(prefix)
            weights.append(weight)
        else:
            log.warning("%s holds no documents; left out of the training blend", prefix)
    if not prefixes:
        raise DataNotReady(
            f"every chunk of scheme {data.scheme!r} under {data.root} is empty: nothing to train on"
        )
    if read_marker(data.validation_prefix())["documents"] == 0:
        raise DataNotReady(f"the validation set {data.validation_prefix()} holds no documents")
    return prefixes, weights


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
    """GPTDataset blend of the scheme's non-empty chunks (steps x global batch samples) + one epoch of validation,
    after checking that every dataset is complete and was tokenized with `vocab`."""
    from megatron.core.datasets.blended_megatron_dataset_builder import BlendedMegatronDatasetBuilder
    from megatron.core.datasets.gpt_dataset import GPTDataset, GPTDatasetConfig

    check_ready(data)
    prefixes, weights = usable_chunks(data)
    check_tokenizer([*prefixes, data.validation_prefix()], vocab)
    ensure_process_group()
    config = GPTDatasetConfig(
        random_seed=data.seed,
        sequence_length=loop.seq_length,
        blend_per_split=[
            ([str(p) for p in prefixes], weights),
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
