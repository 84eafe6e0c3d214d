"""Megatron indexed datasets (`<prefix>.bin` + `<prefix>.idx`): token dtype, atomic writing, reading.

Writing produces, byte for byte, what megatron-core's `IndexedDatasetBuilder` writes for the same documents (a test
compares them), without importing megatron-core (seconds of a preprocessing job's start-up); it adds what the
builder lacks: a dtype chosen from the vocabulary size, a range check so that no id can wrap (numpy casts int64
262143 to uint16 65535 without a word), and atomic finalisation. `megatron.core` is imported only when a dataset
is opened with `open_dataset`.

    with IndexedWriter("out/vanilla/chunk_01_text_document", vocab_size=262144) as writer:
        writer.add([2, 651, 1])
    dataset = open_dataset("out/vanilla/chunk_01_text_document")   # megatron-core IndexedDataset
    for ids in iter_documents("out/vanilla/chunk_01_text_document"): ...   # numpy only, no megatron import
"""

from __future__ import annotations

import array
import fcntl
import hashlib
import os
import secrets
import socket
import struct
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

# The .idx layout megatron-core 0.16 writes and reads (all little-endian):
#   9 bytes  magic b"MMIDIDX\x00\x00"
#   <Q       version, always 1
#   <B       dtype code of the .bin tokens: 1 uint8, 2 int8, 3 int16, 4 int32, 5 int64, 6 float64, 7 float32, 8 uint16
#   <Q       S, the number of sequences
#   <Q       D, the number of document indices (documents + 1)
#   S  x int32  sequence lengths, in tokens
#   S  x int64  byte offset of each sequence in the .bin
#   D  x int64  document indices: document i is sequences [doc[i], doc[i+1]); doc[0] == 0
#   (S x int8 sequence modes, only for multimodal datasets; never written here)
# The .bin is the tokens of all sequences back to back, in the dtype above. We write one sequence per document.
IDX_MAGIC = b"MMIDIDX\x00\x00"
_DTYPE_CODES = {
    1: np.uint8,
    2: np.int8,
    3: np.int16,
    4: np.int32,
    5: np.int64,
    6: np.float64,
    7: np.float32,
    8: np.uint16,
}
# Megatron's own threshold: below it uint16 (half the disk), above it int32 (Gemma 3 has 262,144 pieces).
UINT16_VOCAB_LIMIT = 65500


def dtype_for_vocab(size: int) -> np.dtype:
    """Token dtype for a vocabulary of `size` ids: uint16 under 65,500 ids, int32 otherwise."""
    if size < 1:
        raise ValueError(f"vocabulary size must be positive, got {size}")
    return np.dtype(np.uint16 if size < UINT16_VOCAB_LIMIT else np.int32)


def bin_path(prefix: str | Path) -> Path:
    return Path(f"{prefix}.bin")


def idx_path(prefix: str | Path) -> Path:
    return Path(f"{prefix}.idx")


def dataset_exists(prefix: str | Path) -> bool:
    return bin_path(prefix).exists() and idx_path(prefix).exists()


def remove_dataset(prefix: str | Path) -> None:
    """Delete a dataset and every temporary file a writer of it left (call it only while holding `output_lock`,
    or another writer's files in progress go too)."""
    prefix = Path(prefix)
    for path in (bin_path(prefix), idx_path(prefix), *temporary_files(prefix)):
        path.unlink(missing_ok=True)


def temporary_files(prefix: str | Path) -> list[Path]:
    """Temporary files of writers of `prefix`, finished or not: `<prefix>.{bin,idx}.<writer>.tmp`."""
    prefix = Path(prefix)
    if not prefix.parent.is_dir():
        return []
    names = (f"{prefix.name}.bin", f"{prefix.name}.idx")
    return sorted(
        p
        for p in prefix.parent.iterdir()
        if p.name.endswith(".tmp") and any(p.name.startswith(n + ".") for n in names)
    )


class OutputLocked(RuntimeError):
    """Another process is writing the same output."""


@contextmanager
def output_lock(prefix: str | Path) -> Iterator[Path]:
    """Hold an exclusive lock on `<prefix>.lock` while writing one output, or fail at once if another process
    holds it (two runs on the same output would otherwise publish each other's half-written files).

    The lock is `flock` on an open file: the kernel releases it when the process dies, so a killed run never
    leaves a stale lock behind (the file stays; it is reused). On network file systems flock must be supported
    (NFS emulates it; Lustre needs the `flock` mount option).
    """
    path = Path(f"{prefix}.lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise OutputLocked(
                f"{prefix} is being written by {holder} (lock {path}); wait for it to finish, or stop it, "
                "then rerun (a finished output is skipped)"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
        handle.flush()
        yield path


def file_digest(path: str | Path) -> dict:
    """{"bytes", "sha256"} of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return {"bytes": Path(path).stat().st_size, "sha256": digest.hexdigest()}


def dataset_digest(prefix: str | Path) -> dict:
    """Sizes and checksums of a dataset's two files, as a completion marker records them."""
    return {"bin": file_digest(bin_path(prefix)), "idx": file_digest(idx_path(prefix))}


def verify_dataset(prefix: str | Path, recorded: dict | None, checksums: bool = True) -> str | None:
    """None when `<prefix>.{bin,idx}` match the sizes (and checksums) `recorded` by `dataset_digest`, else why not."""
    if not recorded:
        return "the marker records no sizes or checksums (written by an older version)"
    for kind, path in (("bin", bin_path(prefix)), ("idx", idx_path(prefix))):
        if not path.exists():
            return f"{path} is missing"
        size = path.stat().st_size
        if size != recorded[kind]["bytes"]:
            return f"{path} has {size} bytes, the marker recorded {recorded[kind]['bytes']}"
        if checksums and file_digest(path)["sha256"] != recorded[kind]["sha256"]:
            return f"{path} does not match the checksum its marker recorded"
    return None


def write_index(path: Path, dtype: np.dtype, lengths: np.ndarray) -> None:
    """The `.idx` of one-sequence-per-document tokens (layout above), byte for byte what megatron-core's
    `IndexedDatasetBuilder.finalize` writes for the same documents (a test compares the two)."""
    code = next(c for c, t in _DTYPE_CODES.items() if np.dtype(t) == dtype)
    pointers = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1].astype(np.int64) * dtype.itemsize, out=pointers[1:])
    documents = np.arange(len(lengths) + 1, dtype=np.int64)
    with open(path, "wb") as handle:
        handle.write(IDX_MAGIC)
        handle.write(struct.pack("<Q", 1))
        handle.write(struct.pack("<B", code))
        handle.write(struct.pack("<Q", len(lengths)))
        handle.write(struct.pack("<Q", len(documents)))
        handle.write(lengths.astype("<i4", copy=False).tobytes(order="C"))
        handle.write(pointers.astype("<i8", copy=False).tobytes(order="C"))
        handle.write(documents.astype("<i8", copy=False).tobytes(order="C"))


def _tmp(path: Path, tag: str) -> Path:
    return path.with_name(f"{path.name}.{tag}.tmp")


class IndexedWriter:
    """Write documents to `<prefix>.{bin,idx}`; the files appear only when `close()` succeeds.

    Both files are written under temporary names unique to this writer (`<prefix>.bin.<pid>-<random>.tmp`), so
    a second writer never deletes or publishes this one's files; on success the `.bin` is renamed first and the
    `.idx` last, so a visible `.idx` always has its complete `.bin`. On an exception inside `with`, the temporary
    files are removed. Two writers of one prefix must still not run at once (the last renames would mix their
    files): `morphcpt.preprocess` holds `output_lock` around the writer.
    """

    def __init__(self, prefix: str | Path, vocab_size: int) -> None:
        self.prefix = Path(prefix)
        self.vocab_size = vocab_size
        self.dtype = dtype_for_vocab(vocab_size)
        self.prefix.parent.mkdir(parents=True, exist_ok=True)
        tag = f"{os.getpid()}-{secrets.token_hex(4)}"
        self._tmp_bin, self._tmp_idx = _tmp(bin_path(self.prefix), tag), _tmp(idx_path(self.prefix), tag)
        self._bin = open(self._tmp_bin, "wb")  # noqa: SIM115 (closed in close/abort)
        self._lengths = array.array("i")  # int32 per sequence (one sequence per document): 4 bytes a document
        self.documents = 0
        self.tokens = 0

    def add(self, ids: Sequence[int] | np.ndarray) -> None:
        """Append one document (a sequence of token ids, bos/eos included by the caller)."""
        tokens = np.asarray(ids)
        self.add_many(tokens, [tokens.size])

    def add_many(self, tokens: np.ndarray, lengths: Sequence[int] | np.ndarray) -> None:
        """Append several documents given back to back in `tokens`, `lengths[i]` ids each, in one write."""
        tokens, lengths = np.asarray(tokens), np.asarray(lengths, dtype=np.int64)
        if tokens.ndim != 1 or not np.issubdtype(tokens.dtype, np.integer):
            raise ValueError(f"a document must be a 1-D integer sequence, got {tokens.dtype} {tokens.shape}")
        if lengths.ndim != 1 or (lengths.size and lengths.min() < 0) or int(lengths.sum()) != tokens.size:
            raise ValueError(
                f"document lengths (sum {int(lengths.sum())}) do not add up to {tokens.size} ids"
            )
        if tokens.size and (tokens.min() < 0 or tokens.max() >= self.vocab_size):
            raise ValueError(
                f"token id out of range [0, {self.vocab_size}): min {tokens.min()}, max {tokens.max()}"
            )
        self._bin.write(tokens.astype(self.dtype, copy=False).tobytes(order="C"))
        self._lengths.extend(lengths.astype(np.int32).tolist())
        self.documents += lengths.size
        self.tokens += tokens.size

    def close(self) -> None:
        self._bin.close()
        write_index(self._tmp_idx, self.dtype, np.frombuffer(self._lengths, dtype=np.int32))
        os.replace(self._tmp_bin, bin_path(self.prefix))
        os.replace(self._tmp_idx, idx_path(self.prefix))

    def abort(self) -> None:
        self._bin.close()
        self._tmp_bin.unlink(missing_ok=True)
        self._tmp_idx.unlink(missing_ok=True)

    def __enter__(self) -> IndexedWriter:
        return self

    def __exit__(self, exc_type, exc, traceback) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def open_dataset(prefix: str | Path):
    """megatron-core's `IndexedDataset` over `<prefix>.{bin,idx}` (memory-mapped)."""
    from megatron.core.datasets.indexed_dataset import IndexedDataset

    return IndexedDataset(str(prefix), mmap=True)


def read_index(prefix: str | Path) -> dict:
    """Parse a `.idx` file (layout above) with numpy only: dtype, sequence lengths/offsets, document indices."""
    raw = np.memmap(idx_path(prefix), dtype=np.uint8, mode="r")
    if bytes(raw[:9]) != IDX_MAGIC:
        raise ValueError(f"{idx_path(prefix)} is not a Megatron index (bad magic)")
    (version,) = struct.unpack("<Q", bytes(raw[9:17]))
    (code,) = struct.unpack("<B", bytes(raw[17:18]))
    sequences, doc_count = struct.unpack("<QQ", bytes(raw[18:34]))
    if version != 1 or code not in _DTYPE_CODES:
        raise ValueError(f"{idx_path(prefix)}: unsupported version {version} or dtype code {code}")
    offset = 34
    lengths = np.frombuffer(raw, dtype=np.int32, count=sequences, offset=offset)
    offset += 4 * sequences
    pointers = np.frombuffer(raw, dtype=np.int64, count=sequences, offset=offset)
    offset += 8 * sequences
    documents = np.frombuffer(raw, dtype=np.int64, count=doc_count, offset=offset)
    return {
        "dtype": np.dtype(_DTYPE_CODES[code]),
        "lengths": lengths,
        "pointers": pointers,
        "documents": documents,
    }


def iter_documents(prefix: str | Path) -> Iterator[np.ndarray]:
    """Each document's token ids, in order (memory-mapped, numpy only)."""
    index = read_index(prefix)
    tokens = np.memmap(bin_path(prefix), dtype=index["dtype"], mode="r") if index["lengths"].size else None
    lengths, pointers, docs = index["lengths"], index["pointers"], index["documents"]
    itemsize = index["dtype"].itemsize
    for first, last in zip(docs[:-1], docs[1:], strict=True):
        if first == last:
            yield np.empty(0, dtype=index["dtype"])
            continue
        start = pointers[first] // itemsize
        end = pointers[last - 1] // itemsize + lengths[last - 1]
        yield tokens[start:end]
