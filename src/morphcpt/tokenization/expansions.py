"""The StochasTok split table: every way an ordinary piece splits into two pieces of the same vocabulary.

For each ordinary piece (not special, not a byte) and each cut of its string into two non-empty parts, the cut
is an expansion pair when both parts are themselves ordinary pieces ("▁magluto" -> "▁mag" + "luto"). Splitting
a token into a pair never changes the text, which is what makes StochasTok and Patok lossless.

The table is stored as CSR arrays (pairs of id `i` are `left[offsets[i]:offsets[i+1]]`, same for `right`) and
cached on disk as `.npz`, keyed by `Vocabulary.fingerprint`, so integer ids survive a round trip (the reference
implementation's JSON cache turned them into strings and silently expanded nothing after a reload). A cache that
is unreadable, inconsistent or made for another vocabulary is rebuilt and replaced atomically.

    table = load_or_build_split_table(vocab)      # cached in morphcpt's cache folder, or cache_dir=...
"""

from __future__ import annotations

import logging
import os
import tempfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from morphcpt.tokenization.vocabulary import Vocabulary

log = logging.getLogger(__name__)
CACHE_FORMAT = 1


@dataclass(frozen=True)
class SplitTable:
    """Expansion pairs per id in CSR form; `fingerprint` names the vocabulary it was built for."""

    offsets: np.ndarray  # int64, size + 1
    left: np.ndarray  # int32, one entry per pair
    right: np.ndarray  # int32
    fingerprint: str

    @property
    def size(self) -> int:
        return len(self.offsets) - 1

    def pairs(self, i: int) -> list[tuple[int, int]]:
        lo, hi = self.offsets[i], self.offsets[i + 1]
        return list(zip(self.left[lo:hi].tolist(), self.right[lo:hi].tolist(), strict=True))

    def num_splittable(self) -> int:
        return int(np.count_nonzero(np.diff(self.offsets)))


def build_split_table(vocab: Vocabulary) -> SplitTable:
    """Enumerate every two-part cut of every ordinary piece whose parts are both ordinary pieces."""
    pieces = vocab.pieces
    excluded = vocab.special_ids | vocab.byte_values.keys()
    ordinary_ids = [i for i in range(vocab.size) if i not in excluded]
    get = {pieces[i]: i for i in ordinary_ids}.get
    counts = [0] * vocab.size
    left: list[int] = []
    right: list[int] = []
    for i in ordinary_ids:  # ascending ids, so the pairs come out in CSR order
        piece = pieces[i]
        before = len(left)
        for k in range(1, len(piece)):
            a = get(piece[:k])
            if a is not None:
                b = get(piece[k:])
                if b is not None:
                    left.append(a)
                    right.append(b)
        counts[i] = len(left) - before
    offsets = np.zeros(vocab.size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return SplitTable(
        offsets=offsets,
        left=np.asarray(left, dtype=np.int32),
        right=np.asarray(right, dtype=np.int32),
        fingerprint=vocab.fingerprint,
    )


def cache_path(cache_dir: str | Path, vocab: Vocabulary) -> Path:
    return Path(cache_dir) / f"split_table_{vocab.fingerprint[:32]}.npz"


def load_split_table(path: Path, vocab: Vocabulary) -> SplitTable | None:
    """The cached table at `path` if it is readable, consistent and made for `vocab`; None otherwise."""
    try:
        with np.load(path, allow_pickle=False) as data:
            table = SplitTable(
                offsets=data["offsets"].astype(np.int64, copy=False),
                left=data["left"].astype(np.int32, copy=False),
                right=data["right"].astype(np.int32, copy=False),
                fingerprint=str(data["fingerprint"]),
            )
            fmt = int(data["format"])
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:
        log.warning("split table cache %s unreadable (%s); rebuilding", path, err)
        return None
    consistent = (
        fmt == CACHE_FORMAT
        and table.fingerprint == vocab.fingerprint
        and table.size == vocab.size
        and table.offsets[0] == 0
        and bool(np.all(np.diff(table.offsets) >= 0))
        and table.offsets[-1] == len(table.left) == len(table.right)
        and (len(table.left) == 0 or (min(table.left.min(), table.right.min()) >= 0))
        and (len(table.left) == 0 or (max(table.left.max(), table.right.max()) < vocab.size))
    )
    if not consistent:
        log.warning("split table cache %s does not match this vocabulary; rebuilding", path)
        return None
    return table


def save_split_table(table: SplitTable, path: Path) -> None:
    """Write `table` to `path` atomically (temporary file in the same folder, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(
                f,
                offsets=table.offsets,
                left=table.left,
                right=table.right,
                fingerprint=np.array(table.fingerprint),
                format=np.array(CACHE_FORMAT),
            )
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_or_build_split_table(vocab: Vocabulary, cache_dir: str | Path | None = None) -> SplitTable:
    """The split table of `vocab`, from the cache in `cache_dir` (default: morphcpt's cache folder, see
    `morphcpt.tokenization.cache`) when valid; built (and cached) otherwise."""
    if cache_dir is None:
        from morphcpt.tokenization.cache import cache_root

        root = cache_root()
        if root is None:
            return build_split_table(vocab)
        cache_dir = root / "split_tables"
    path = cache_path(cache_dir, vocab)
    table = load_split_table(path, vocab) if path.exists() else None
    if table is None:
        table = build_split_table(vocab)
        save_split_table(table, path)
    return table


class Expander:
    """StochasTok expansion with one split table (held as Python lists: per-element access is the hot path)."""

    def __init__(self, table: SplitTable) -> None:
        self._offsets: list[int] = table.offsets.tolist()
        self._counts: list[int] = np.diff(table.offsets).tolist()  # pairs per id
        self._left: list[int] = table.left.tolist()
        self._right: list[int] = table.right.tolist()

    def expand(
        self,
        ids: list[int],
        attempts: int,
        rng: np.random.Generator,
        frozen: Iterable[int] | None = None,
    ) -> list[int]:
        """Make `attempts` split attempts on `ids`, StochasTok's way.

        Each attempt picks a uniformly random token of the current (growing) list; if it has expansion pairs
        and is not frozen (`frozen`: input positions never split), it is replaced by a uniformly chosen pair,
        otherwise the attempt is spent. Picking a uniform position is the same as picking a uniform token, so
        tokens live in slots (a split reuses the slot for its left half and appends the right half after a
        linked-list `next` pointer): O(1) per attempt whatever the length.
        """
        n = len(ids)
        if n == 0 or attempts <= 0:
            return list(ids)
        offsets, counts, left, right = self._offsets, self._counts, self._left, self._right
        tok = list(ids)
        nxt = [*range(1, n), -1]
        fixed = set(frozen) if frozen is not None else None
        anchors: set[int] = set()  # input positions followed by inserted tokens
        draws = iter(rng.random(2 * attempts).tolist())
        size = n  # len(tok), kept by hand: this loop is the hot path
        for u_pos, u_pair in zip(draws, draws, strict=True):  # two draws per attempt: position, pair
            j = int(u_pos * size)
            t = tok[j]
            count = counts[t]
            if count == 0 or (fixed is not None and j in fixed):
                continue
            p = offsets[t] + int(u_pair * count)
            tok[j] = left[p]
            nxt.append(nxt[j])
            nxt[j] = size
            tok.append(right[p])
            size += 1
            if j < n:
                anchors.add(j)
        if len(tok) == n:
            return tok
        out: list[int] = []
        prev = 0
        for a in sorted(anchors):
            out.extend(tok[prev : a + 1])
            j = nxt[a]
            while j >= n:
                out.append(tok[j])
                j = nxt[j]
            prev = a + 1
        out.extend(tok[prev:n])
        return out
