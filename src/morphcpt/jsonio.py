"""The one way the suite reads and writes its JSON files (markers, manifests, tokenizer and run records).

    data = read_json(marker, fix="delete it and rerun preprocessing for that chunk", keys=("documents",))
    write_json(path, data)                  # atomic: a reader never sees half a file
    check_json_files(tokenizer_folder)      # every *.json in a folder parses, or JSONFileError naming the file

A file that is missing, empty, cut off, not UTF-8, not JSON, not the kind of value expected (an object, a
list) or without a key the caller needs raises `JSONFileError` (a `UserError`): one sentence naming the file,
what it is and how to get a good one again, instead of a bare `JSONDecodeError` that names nothing. A missing
file raises `JSONFileMissing`, which is also a `FileNotFoundError`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from morphcpt.errors import UserError

_NOTHING = object()

# What well-known files are and how to get a good one again (a caller's own `what`/`fix` come first).
_KNOWN: dict[str, tuple[str, str]] = {
    "tokenizer.json": ("the tokenizer's vocabulary and merges", "copy or build the tokenizer folder again"),
    "tokenizer_config.json": ("the tokenizer's settings", "copy or build the tokenizer folder again"),
    "special_tokens_map.json": ("the tokenizer's special tokens", "copy or build the tokenizer folder again"),
    "added_tokens.json": ("the tokenizer's added tokens", "copy or build the tokenizer folder again"),
    "eeve_expansion.json": (
        "the record of an EEVE-expanded tokenizer",
        "build the expanded tokenizer again (python -m morphcpt.tokenization.eeve) into an empty folder",
    ),
    "config.json": ("the model's configuration", "export or download the model folder again"),
    "generation_config.json": (
        "the model's generation settings",
        "export or download the model folder again",
    ),
    "morphcpt_metadata.json": ("an export's metadata", "export the run again (morphcpt export)"),
}


class JSONFileError(UserError, ValueError):
    """A JSON file the suite needs cannot be used; the message names it and the way on."""


class JSONFileMissing(JSONFileError, FileNotFoundError):
    """A JSON file the suite needs is not there (`filename` names it, as for any FileNotFoundError)."""

    def __str__(self) -> str:  # the message, not OSError's "[Errno None] None: 'file'"
        return str(self.args[0])


def _describe(path: Path, what: str | None, fix: str | None) -> tuple[str, str]:
    known_what, known_fix = _KNOWN.get(path.name, ("", ""))
    if path.name.endswith(".done.json"):
        known_what, known_fix = (
            "a completion marker",
            "delete it and rerun the step that wrote it (the step is then redone)",
        )
    what = what or known_what
    fix = fix or known_fix or "restore it, or rerun the step that wrote it"
    return (f" ({what})" if what else ""), fix


def _problem(raw: bytes, error: Exception) -> str:
    if not raw.strip():
        return "is empty"
    if isinstance(error, UnicodeDecodeError) and error.reason == "unexpected end of data":
        # cut inside a multi-byte character (the cut fell within a non-ASCII path or word): a cut file too
        return (
            f"ends early (after {len(raw):,} bytes, inside a multi-byte character): it was cut off, probably "
            "while it was being written"
        )
    if isinstance(error, UnicodeDecodeError):
        return f"is not UTF-8 text (byte {error.start})"
    if isinstance(error, RecursionError):
        return "nests too deeply to read"
    if isinstance(error, json.JSONDecodeError):
        text = error.doc.strip()
        unclosed = (
            text[:1] in "{[" and text[-1:] != {"{": "}", "[": "]"}[text[:1]] and error.msg != "Extra data"
        )
        if unclosed or error.pos >= len(text):
            return (
                f"ends early (after {len(raw):,} bytes): it was cut off, probably while it was being written"
            )
        return f"is not valid JSON ({error.msg}: line {error.lineno}, column {error.colno})"
    return f"cannot be read as JSON ({error})"


def read_json(
    path: str | Path,
    *,
    what: str | None = None,
    fix: str | None = None,
    expect: type | tuple[type, ...] | None = dict,
    keys: tuple[str, ...] = (),
    default: Any = _NOTHING,
) -> Any:
    """The parsed content of `path`, or `JSONFileError` saying what is wrong, what the file is and the fix.

    `expect`: the type the top-level value must have (None: any); `keys`: keys an object must hold;
    `default`: returned when the file does not exist (otherwise a missing file is `JSONFileMissing`)."""
    path = Path(path)
    label, how = _describe(path, what, fix)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        if default is not _NOTHING:
            return default
        missing = JSONFileMissing(f"{path}{label} is missing; {how}")
        missing.filename = str(path)  # as a FileNotFoundError from open() would say
        raise missing from None
    except OSError as error:
        raise JSONFileError(f"{path}{label} cannot be read ({error.strerror}); {how}") from None
    try:
        value = json.loads(raw.decode("utf-8-sig"))
    except (ValueError, RecursionError) as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise JSONFileError(f"{path}{label} {_problem(raw, error)}; {how}") from None
    if expect is not None and not isinstance(value, expect):
        wanted = " or ".join(_kind(t) for t in (expect if isinstance(expect, tuple) else (expect,)))
        raise JSONFileError(f"{path}{label} holds {_kind(type(value))} where {wanted} was expected; {how}")
    missing = [key for key in keys if key not in value]
    if missing:
        raise JSONFileError(f"{path}{label} lacks {', '.join(map(repr, missing))}; {how}")
    return value


def _kind(kind: type) -> str:
    names = {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number"}
    return names.get(kind, "null" if kind is type(None) else kind.__name__)


def write_json(path: str | Path, data: Any, indent: int | None = 2) -> None:
    """Write `data` to `path` atomically (a temporary file beside it, then a rename)."""
    path = Path(path)
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def check_json_files(folder: str | Path) -> None:
    """Every `*.json` directly in `folder` parses, or `JSONFileError` for the first that does not.

    Libraries that read a folder (transformers' tokenizers and models) fail on a cut-off file with an error
    naming nothing; calling this when they fail turns that into a sentence naming the file."""
    folder = Path(folder)
    if folder.is_dir():
        for path in sorted(folder.glob("*.json")):
            read_json(path, expect=None)
