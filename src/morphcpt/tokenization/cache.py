"""An on-disk cache for what is derived from a tokenizer, so a preprocessing job starts in about a second.

Loading the 262,144-piece Gemma 3 tokenizer through transformers, reading its pieces and building the schemes'
tables takes 15-20 s, which is most of a 30 MB chunk's job. Everything derived from a tokenizer is therefore kept
under `$MORPHCPT_CACHE_DIR` (default `~/.cache/morphcpt`) and reused by every later job:

    <root>/vocab/<files key>.pkl            the `Vocabulary` (pieces, specials, byte pieces, the Rust encoder)
    <root>/split_tables/split_table_<fingerprint>.npz    StochasTok's split table (`expansions.py`)
    <root>/patok/<fingerprint>.npz          Patok's per-piece tables

A vocabulary is found by the sha256 of the tokenizer's files (no tokenizer needs loading to look it up); the
tables by `Vocabulary.fingerprint`. Entries are written atomically (temporary file, then rename), so the twenty
array tasks of one chunk set can start together on a shared file system; an entry that cannot be read is rebuilt.
`MORPHCPT_CACHE_DIR=off` turns the cache off.
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

# The files AutoTokenizer reads from a tokenizer folder: what they hold decides everything derived from it.
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer.model",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
)


def cache_root() -> Path | None:
    """The cache folder, or None when `MORPHCPT_CACHE_DIR=off`."""
    value = os.environ.get("MORPHCPT_CACHE_DIR", "")
    if value.lower() == "off":
        return None
    return Path(value).expanduser() if value else Path.home() / ".cache" / "morphcpt"


def files_key(folder: Path, version: int) -> str:
    """sha256 of the tokenizer files in `folder` (names and contents) and of the cache `version`."""
    digest = hashlib.sha256(f"morphcpt-vocab-{version}".encode())
    for name in TOKENIZER_FILES:
        path = folder / name
        if path.is_file():
            digest.update(name.encode() + b"\0")
            with open(path, "rb") as handle:
                while block := handle.read(1 << 20):
                    digest.update(block)
    return digest.hexdigest()


def read_pickle(path: Path) -> Any | None:
    """The object pickled at `path`, or None when it is missing or unreadable (then it is rebuilt)."""
    try:
        with open(path, "rb") as handle:
            return pickle.load(handle)
    except FileNotFoundError:
        return None
    except Exception as error:  # a truncated or foreign file: rebuild it
        log.warning("cache entry %s unreadable (%s); rebuilding it", path, error)
        return None


def write_atomic(path: Path, write) -> None:
    """Call `write(handle)` on a temporary file beside `path`, then rename it to `path`. A cache that cannot be
    written (a read-only home) only costs speed: it is logged, never raised."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    except OSError as error:
        log.warning("cannot write the cache entry %s (%s); continuing without it", path, error)
        return
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_pickle(path: Path, obj: Any) -> None:
    write_atomic(path, lambda handle: pickle.dump(obj, handle, protocol=pickle.HIGHEST_PROTOCOL))
