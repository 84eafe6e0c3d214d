"""Sources of raw text for corpus preparation: local files (txt, jsonl, json, csv/tsv, parquet) and Hugging Face
datasets, each read as a stream of records that say where they came from.

A source is written on the command line as a location with optional settings in URL query form:

    "data/scratch/tl_ui.txt?txt=block&lang=tl"         a file; txt=file (default: one document per file) or block
    "data/more/*.jsonl?lang=tl&weight=2"                a glob or a folder (every known file inside)
    "data/scratch/tl_chromium.csv?column=body"          csv/tsv/parquet/jsonl/json: the text column (default text)
    "hf:wikimedia/wikipedia?config=20231101.nl&split=train&lang=nl&max_tokens=1B"   streamed from the Hub

Quote every source: `?`, `*` and `&` mean something to the shell.

Settings: `lang` (language tag written on every document), `weight` (share of the global token budget),
`max_tokens` (this source's own budget), `column`, `txt` (file | block), `type` (force a file type: txt, jsonl,
json, csv, tsv, parquet), and for `hf:` sources `config`, `split` (default train). Only `hf:` sources use the
network (through the `datasets` library, streaming).

A file that cannot be read as its type raises `SourceError` naming the file (and the line where there is one).
A record that cannot become a document (invalid UTF-8 or JSON, no text, a non-string, an empty text) is yielded
with the reason instead of a text, and counted by the caller, as preprocessing counts bad lines.
"""

from __future__ import annotations

import csv
import glob
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import parse_qsl

from morphcpt.corpus.reader import REASONS as LINE_REASONS
from morphcpt.corpus.reader import parse_line

FILE_TYPES = {
    ".txt": "txt",
    ".text": "txt",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
}
TXT_MODES = ("file", "block")
SETTINGS = ("lang", "weight", "max_tokens", "column", "txt", "type", "config", "split")
REASONS = {**LINE_REASONS, "null_text": "the text value is null"}
HF_PREFIX = "hf:"


class SourceError(ValueError):
    """A source that cannot be read at all: unknown type, missing column, bad file, nothing in it."""


@dataclass(frozen=True)
class RawRecord:
    """One record of a source: its text, or the reason it has none; `where` is `file:line` or `id:row`."""

    where: str
    text: str | None = None
    reason: str | None = None
    nbytes: int = 0  # bytes read from the source for this record (progress)
    lang: str | None = None  # the record's language tag: a JSONL line's `lang`, else the source's `lang=`


@dataclass
class SourceSpec:
    """One `SOURCE` argument, parsed. `name` identifies it in the manifest."""

    location: str
    lang: str | None = None
    weight: float | None = None
    max_tokens: str | None = None
    column: str = "text"
    txt: str = "file"
    type: str | None = None
    config: str | None = None
    split: str = "train"
    options: dict = field(default_factory=dict)

    @property
    def is_hub(self) -> bool:
        return self.location.startswith(HF_PREFIX)

    @property
    def name(self) -> str:
        return self.location

    @classmethod
    def parse(cls, text: str) -> SourceSpec:
        location, _, query = text.partition("?")
        if not location:
            raise SourceError(f"empty source in {text!r}")
        settings = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)))
        unknown = sorted(set(settings) - set(SETTINGS))
        if unknown:
            raise SourceError(f"{text}: unknown setting(s) {unknown}; known: {', '.join(SETTINGS)}")
        spec = cls(location=location, options=settings)
        for key, value in settings.items():
            setattr(spec, key, value)
        if spec.weight is not None:
            try:
                spec.weight = float(spec.weight)
            except ValueError:
                raise SourceError(f"{text}: weight must be a number, got {spec.weight!r}") from None
            if spec.weight <= 0:
                raise SourceError(f"{text}: weight must be positive, got {spec.weight}")
        if spec.txt not in TXT_MODES:
            raise SourceError(f"{text}: txt must be one of {TXT_MODES}, got {spec.txt!r}")
        if spec.type is not None and spec.type not in set(FILE_TYPES.values()):
            raise SourceError(f"{text}: type must be one of {sorted(set(FILE_TYPES.values()))}")
        return spec


def expand_files(spec: SourceSpec) -> list[Path]:
    """The files of a local source (a file, a folder's known files, or a glob), sorted; errors when none."""
    location = spec.location
    path = Path(location)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in FILE_TYPES)
    elif path.exists():
        files = [path]
    elif glob.has_magic(location):
        files = sorted(Path(p) for p in glob.glob(location, recursive=True) if Path(p).is_file())
    else:
        raise SourceError(f"{location}: no such file or folder")
    if not files:
        raise SourceError(f"{location}: matches no readable files (known types: {', '.join(FILE_TYPES)})")
    return files


def file_type(path: Path, spec: SourceSpec) -> str:
    if spec.type:
        return spec.type
    kind = FILE_TYPES.get(path.suffix.lower())
    if kind is None:
        raise SourceError(
            f"{path}: unknown file type {path.suffix or '(no extension)'!r}; known: {', '.join(FILE_TYPES)} "
            "(or force one with ?type=jsonl)"
        )
    return kind


def _value(where: str, value: object, nbytes: int) -> RawRecord:
    if value is None:
        return RawRecord(where, reason="null_text", nbytes=nbytes)
    if not isinstance(value, str):
        return RawRecord(where, reason="non_string_text", nbytes=nbytes)
    return RawRecord(where, text=value, nbytes=nbytes)


def read_txt(path: Path, mode: str) -> Iterator[RawRecord]:
    """`file`: the whole file is one document; `block`: blank-line-separated blocks are documents."""
    raw = path.read_bytes()
    if mode == "file":
        try:
            yield RawRecord(f"{path}:1", text=raw.decode("utf-8-sig"), nbytes=len(raw))
        except UnicodeDecodeError as err:
            line = raw[: err.start].count(b"\n") + 1
            yield RawRecord(f"{path}:{line}", reason="invalid_utf8", nbytes=len(raw))
        return
    block: list[bytes] = []
    start = 1
    lines = raw.splitlines(keepends=True)
    for number, line in enumerate([*lines, b""], start=1):
        if line.strip() and number <= len(lines):
            if not block:
                start = number
            block.append(line)
            continue
        if block:
            data = b"".join(block)
            try:
                text = data.decode("utf-8-sig" if start == 1 else "utf-8").rstrip("\r\n")
                yield RawRecord(f"{path}:{start}", text=text, nbytes=len(data))
            except UnicodeDecodeError:
                yield RawRecord(f"{path}:{start}", reason="invalid_utf8", nbytes=len(data))
            block = []


def read_jsonl(path: Path, column: str) -> Iterator[RawRecord]:
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")
            parsed = parse_line(raw, column)
            where = f"{path}:{number}"
            if isinstance(parsed, tuple):
                yield RawRecord(where, reason=parsed[0], nbytes=len(raw))
            else:
                yield RawRecord(where, text=parsed, nbytes=len(raw), lang=_line_lang(raw))


def _line_lang(raw: bytes) -> str | None:
    """The `lang` tag of a JSONL line that has one (as `prepare` writes them); parsed only when it is there."""
    if b'"lang"' not in raw:
        return None
    lang = json.loads(raw).get("lang")
    return lang if isinstance(lang, str) else None


def read_json(path: Path, column: str) -> Iterator[RawRecord]:
    """A JSON array of strings or of objects, or an object holding such an array under `data` or `rows`."""
    raw = path.read_bytes()
    try:
        value = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise SourceError(f"{path}:{line}: not valid UTF-8") from None
    except json.JSONDecodeError as err:
        raise SourceError(f"{path}:{err.lineno}: invalid JSON ({err.msg}, column {err.colno})") from None
    if isinstance(value, dict):
        value = next((value[k] for k in ("data", "rows") if isinstance(value.get(k), list)), value)
    if not isinstance(value, list):
        raise SourceError(f"{path}: expected a JSON array of records (or an object with a 'data' array)")
    share = len(raw) // max(len(value), 1)
    for index, item in enumerate(value):
        where = f"{path}:[{index}]"
        if isinstance(item, dict):
            if column not in item:
                yield RawRecord(where, reason="missing_text", nbytes=share)
            else:
                yield _value(where, item[column], share)
        elif isinstance(item, str):
            yield RawRecord(where, text=item, nbytes=share)
        else:
            yield RawRecord(where, reason="not_object", nbytes=share)


def read_csv(path: Path, column: str, delimiter: str) -> Iterator[RawRecord]:
    csv.field_size_limit(sys.maxsize)
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle, delimiter=delimiter)
        try:
            header = next(reader, None)
            if header is None:
                raise SourceError(f"{path}: empty file (no header row)")
            if column not in header:
                raise SourceError(
                    f"{path}: no column {column!r}; columns: {', '.join(header)} (choose with ?column=NAME)"
                )
            index = header.index(column)
            line = reader.line_num
            for row in reader:
                where = f"{path}:{line + 1}"
                nbytes = len(delimiter.join(row).encode()) + 1
                line = reader.line_num
                if not row:
                    continue
                if len(row) != len(header):
                    raise SourceError(f"{where}: {len(row)} fields where the header has {len(header)}")
                yield RawRecord(where, text=row[index], nbytes=nbytes)
        except csv.Error as err:
            raise SourceError(
                f"{path}:{reader.line_num}: malformed {delimiter!r}-separated row ({err})"
            ) from None
        except UnicodeDecodeError:
            raise SourceError(f"{path}:{reader.line_num + 1}: not valid UTF-8") from None


def read_parquet(path: Path, column: str) -> Iterator[RawRecord]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as err:
        raise SourceError(f"{path}: not a readable parquet file ({err})") from None
    names = parquet.schema_arrow.names
    if column not in names:
        raise SourceError(
            f"{path}: no column {column!r}; columns: {', '.join(names)} (choose with ?column=NAME)"
        )
    row = 0
    share = path.stat().st_size // max(parquet.metadata.num_rows, 1)  # progress in file bytes, not text bytes
    for group in range(parquet.num_row_groups):
        values = parquet.read_row_group(group, columns=[column]).column(column).to_pylist()
        for value in values:
            row += 1
            yield _value(f"{path}:row {row}", value, share)


def read_hub(spec: SourceSpec) -> Iterator[RawRecord]:
    """Stream a Hugging Face dataset (`hf:owner/name`) with `datasets`, row by row; the only network access."""
    try:
        import datasets
    except ImportError:
        raise SourceError(
            f"{spec.location}: reading a Hugging Face dataset needs the datasets library "
            "(pip install 'morphcpt[hf]')"
        ) from None
    dataset_id = spec.location.removeprefix(HF_PREFIX)
    stream = datasets.load_dataset(dataset_id, spec.config, split=spec.split, streaming=True)
    for row, item in enumerate(stream, start=1):
        where = f"{spec.location}:row {row}"
        if not isinstance(item, dict) or spec.column not in item:
            if row == 1:
                columns = ", ".join(item) if isinstance(item, dict) else type(item).__name__
                raise SourceError(f"{spec.location}: no column {spec.column!r}; columns: {columns}")
            yield RawRecord(where, reason="missing_text")
            continue
        value = item[spec.column]
        yield _value(where, value, len(value) if isinstance(value, str) else 0)


def read_source(spec: SourceSpec, files: list[Path] | None = None) -> Iterator[RawRecord]:
    """Every record of a source, file by file in name order (`files`: only these of its files)."""
    records = _records(spec, files)
    if spec.lang is None:
        yield from records
        return
    for record in records:
        yield record if record.lang is not None else replace(record, lang=spec.lang)


def _records(spec: SourceSpec, files: list[Path] | None) -> Iterator[RawRecord]:
    if spec.is_hub:
        yield from read_hub(spec)
        return
    for path in expand_files(spec) if files is None else files:
        kind = file_type(path, spec)
        if kind == "txt":
            yield from read_txt(path, spec.txt)
        elif kind == "jsonl":
            yield from read_jsonl(path, spec.column)
        elif kind == "json":
            yield from read_json(path, spec.column)
        elif kind in ("csv", "tsv"):
            yield from read_csv(path, spec.column, "," if kind == "csv" else "\t")
        else:
            yield from read_parquet(path, spec.column)


def source_bytes(spec: SourceSpec, files: list[Path] | None = None) -> int | None:
    """Total bytes of a local source's files (the progress bar's total); None for Hub sources."""
    if spec.is_hub:
        return None
    return sum(path.stat().st_size for path in (expand_files(spec) if files is None else files))
