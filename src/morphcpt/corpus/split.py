"""Split a large JSONL corpus into N chunks of nearly equal size in bytes, for one PBS array task each.

Streaming and constant memory: chunk boundaries are found by seeking to k/N of the file and moving to the next line
start, then byte ranges are copied block by block. So every chunk is a contiguous run of whole lines and the chunks
concatenate back to the input exactly: nothing is lost, duplicated or reordered. Lines are not parsed here (a bad
line is the reader's business later). Chunks are `chunk_01.jsonl` … (zero-padded to at least two digits); when the
input has fewer lines than chunks, the surplus chunks are empty files, so an array `1-N` still finds every index.

`--holdout-lines K` moves the last K lines to `validation.jsonl` instead: the canonical held-out validation set
(see `morphcpt.preprocess`). `manifest.json` lists every file with its line count, bytes, sha256 and the 0-based
corpus index of its first line. Each file is written under a temporary name and renamed when complete; the
manifest is written last, so a folder with a manifest is a finished split.

    python -m morphcpt.corpus.split --input corpus.jsonl --output-dir data/chunks [--num-chunks 20] [--holdout-lines 2000]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
from pathlib import Path

from morphcpt.jsonio import read_json

MANIFEST = "manifest.json"
VALIDATION_NAME = "validation"
_BLOCK = 1 << 20


def chunk_name(index: int, num_chunks: int) -> str:
    """`chunk_07` for index 7: zero-padded to the width of `num_chunks`, at least two digits."""
    return f"chunk_{index:0{max(2, len(str(num_chunks)))}d}"


def _next_line_start(handle, offset: int, end: int) -> int:
    """The first line start at or after `offset` (a line starts at 0 or just after a newline), at most `end`."""
    if offset <= 0:
        return 0
    handle.seek(offset - 1)
    position = offset - 1
    while position < end:
        block = handle.read(min(_BLOCK, end - position))
        newline = block.find(b"\n")
        if newline >= 0:
            return min(position + newline + 1, end)
        position += len(block)
    return end


def _holdout_start(handle, size: int, lines: int) -> int:
    """Offset where the last `lines` lines begin (a final line without newline counts as a line)."""
    if lines <= 0:
        return size
    # A trailing newline terminates the last line; it does not start another one.
    position = size - 1 if size and _byte_at(handle, size - 1) == b"\n" else size
    found = 0
    while position > 0:
        start = max(0, position - _BLOCK)
        handle.seek(start)
        block = handle.read(position - start)
        cursor = len(block)
        while True:
            newline = block.rfind(b"\n", 0, cursor)
            if newline < 0:
                break
            found += 1
            if found == lines:
                return start + newline + 1
            cursor = newline
        position = start
    total = found + 1 if size else 0
    if total == lines:
        raise HoldoutTooLarge(
            f"cannot hold out all {lines} lines of the input: none would be left for the chunks"
        )
    raise HoldoutTooLarge(f"cannot hold out {lines} lines: the input has only {total}")


class HoldoutTooLarge(ValueError):
    """--holdout-lines asks for more lines than the input has."""


def _byte_at(handle, offset: int) -> bytes:
    handle.seek(offset)
    return handle.read(1)


def _copy_range(handle, start: int, end: int, target: Path, first_line: int) -> dict:
    """Copy bytes [start, end) to `target` atomically; return its manifest entry."""
    digest = hashlib.sha256()
    newlines = 0
    last = b""
    tmp = target.with_name(target.name + ".tmp")
    handle.seek(start)
    with open(tmp, "wb") as out:
        remaining = end - start
        while remaining:
            block = handle.read(min(_BLOCK, remaining))
            remaining -= len(block)
            digest.update(block)
            newlines += block.count(b"\n")
            last = block[-1:]
            out.write(block)
    os.replace(tmp, target)
    lines = newlines + (1 if last not in (b"", b"\n") else 0)
    return {
        "name": target.stem,
        "file": target.name,
        "lines": lines,
        "bytes": end - start,
        "sha256": digest.hexdigest(),
        "first_line": first_line,
    }


def split_jsonl(
    input_path: str | Path, output_dir: str | Path, num_chunks: int, holdout_lines: int = 0
) -> dict:
    """Split `input_path` into `num_chunks` byte-balanced chunks (+ optional held-out tail); return the manifest."""
    if num_chunks < 1:
        raise ValueError(f"--num-chunks must be at least 1, got {num_chunks}")
    if holdout_lines < 0:
        raise ValueError(f"--holdout-lines must be 0 or more, got {holdout_lines}")
    input_path, output_dir = Path(input_path), Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = output_dir / MANIFEST
    size = input_path.stat().st_size
    with open(input_path, "rb") as handle:
        data_end = _holdout_start(handle, size, holdout_lines)
        manifest_path.unlink(missing_ok=True)  # a half-redone folder must not look finished
        stale = remove_stale(output_dir, num_chunks, holdout_lines > 0)
        bounds = [_next_line_start(handle, data_end * k // num_chunks, data_end) for k in range(num_chunks)]
        bounds.append(data_end)
        chunks, first_line = [], 0
        for k in range(num_chunks):
            entry = _copy_range(
                handle,
                bounds[k],
                bounds[k + 1],
                output_dir / f"{chunk_name(k + 1, num_chunks)}.jsonl",
                first_line,
            )
            chunks.append(entry)
            first_line += entry["lines"]
        validation = None
        if holdout_lines:
            validation = _copy_range(
                handle, data_end, size, output_dir / f"{VALIDATION_NAME}.jsonl", first_line
            )
    manifest = {
        "input": str(input_path.resolve()),
        "input_bytes": size,
        "num_chunks": num_chunks,
        "holdout_lines": holdout_lines,
        "chunks": chunks,
        "validation": validation,
        "removed_stale": stale,
    }
    tmp = manifest_path.with_name(MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2) + "\n")
    os.replace(tmp, manifest_path)
    return manifest


def remove_stale(output_dir: Path, num_chunks: int, validation: bool) -> list[str]:
    """Delete what an earlier split left in `output_dir` that this one will not write: chunks past `num_chunks`
    (or numbered with another width), `validation.jsonl` when nothing is held out, and temporary files. Left
    there, a stale chunk would be preprocessed and trained on (and a stale validation set picked up by the jobs).
    Only files named as this module names them are touched. Returns the names removed."""
    keep = {f"{chunk_name(k, num_chunks)}.jsonl" for k in range(1, num_chunks + 1)}
    if validation:
        keep.add(f"{VALIDATION_NAME}.jsonl")
    ours = re.compile(rf"(chunk_\d+|{VALIDATION_NAME})\.jsonl(\.tmp)?|{re.escape(MANIFEST)}\.tmp")
    removed = sorted(
        path.name
        for path in output_dir.iterdir()
        if path.is_file() and ours.fullmatch(path.name) and path.name not in keep
    )
    for name in removed:
        (output_dir / name).unlink()
    return removed


def manifest_entry(chunk_path: str | Path) -> dict | None:
    """The manifest entry of a chunk (or validation) file, from the `manifest.json` beside it, if any."""
    chunk_path = Path(chunk_path)
    manifest_path = chunk_path.parent / MANIFEST
    if not manifest_path.exists():
        return None
    manifest = read_json(manifest_path, keys=("chunks",), fix="split the corpus again into this folder")
    entries = [*manifest["chunks"], *([manifest["validation"]] if manifest.get("validation") else [])]
    return next((entry for entry in entries if entry["file"] == chunk_path.name), None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", required=True, help="JSONL corpus to split")
    parser.add_argument("--output-dir", required=True, help="folder for chunk_NN.jsonl and manifest.json")
    parser.add_argument(
        "--num-chunks", type=int, default=20, help="number of chunks, the PBS array size (default: 20)"
    )
    parser.add_argument(
        "--holdout-lines",
        type=int,
        default=2000,
        help="move the last K lines to validation.jsonl, the canonical validation set every scheme shares "
        "(default: 2000; 0 for none)",
    )
    args = parser.parse_args(argv)
    try:
        manifest = split_jsonl(args.input, args.output_dir, args.num_chunks, args.holdout_lines)
    except HoldoutTooLarge as error:
        parser.error(f"{error} (set --holdout-lines smaller, or 0 for no validation set)")
    except ValueError as error:
        parser.error(str(error))
    if manifest["removed_stale"]:
        print(f"removed files of an earlier split: {', '.join(manifest['removed_stale'])}")
    empty = [entry["file"] for entry in manifest["chunks"] if entry["lines"] == 0]
    if empty:
        print(f"note: {len(empty)} chunk(s) are empty (fewer lines than chunks); training skips them")
    for entry in [*manifest["chunks"], *([manifest["validation"]] if manifest["validation"] else [])]:
        print(f"{entry['file']}: {entry['lines']} lines, {entry['bytes']} bytes")
    print(f"manifest: {Path(args.output_dir) / MANIFEST}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
