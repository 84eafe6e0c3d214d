"""Read a JSONL corpus without ever crashing on a bad line, and without losing anything silently.

Each physical line is decoded on its own (the file is iterated as bytes, so one invalid byte costs one line, not
the file). A line that cannot become a document is skipped and counted under one reason in `ReadReport`, with the
line numbers of its first few occurrences; `strict=True` raises `BadLineError` on the first one instead. A text
longer than `max_chars` is cut into parts at whitespace (newlines preferred) so that no tokenizer call sees an
unbounded string; the parts concatenate back to the text exactly and are counted too.

    from morphcpt.corpus import ReadReport, iter_documents
    report = ReadReport()
    for record in iter_documents("chunk_01.jsonl", report=report):
        ...  # record.line (1-based), record.parts (the text, cut if it was too long)
    print(report.as_dict())
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_MAX_CHARS = 100_000
MAX_EXAMPLES = 5
_BOM = b"\xef\xbb\xbf"

# Why a line was skipped. The keys are what reports and `done.json` markers show.
REASONS = {
    "invalid_utf8": "the line is not valid UTF-8",
    "blank_line": "the line is empty or whitespace",
    "invalid_json": "the line is not valid JSON",
    "unparsable_json": "the JSON nests too deep or holds a number too long to parse",
    "not_object": "the JSON value is not an object",
    "missing_text": "the object has no text field",
    "non_string_text": "the text field is not a string",
    "invalid_text": "the text holds lone surrogates (not encodable as UTF-8)",
    "empty_text": "the text is empty or whitespace only",
}


class BadLineError(ValueError):
    """Raised in strict mode on the first line that cannot become a document."""


@dataclass
class ReadReport:
    """What reading a file found: lines, documents, skipped lines by reason, and long texts that were cut."""

    lines: int = 0
    documents: int = 0
    bad_lines: dict[str, int] = field(default_factory=dict)
    bad_examples: dict[str, list[int]] = field(default_factory=dict)
    split_lines: int = 0
    split_parts: int = 0

    @property
    def bad_total(self) -> int:
        return sum(self.bad_lines.values())

    def add_bad(self, reason: str, line: int) -> None:
        self.bad_lines[reason] = self.bad_lines.get(reason, 0) + 1
        examples = self.bad_examples.setdefault(reason, [])
        if len(examples) < MAX_EXAMPLES:
            examples.append(line)

    def as_dict(self) -> dict:
        return {
            "lines": self.lines,
            "documents": self.documents,
            "bad_total": self.bad_total,
            "bad_lines": dict(sorted(self.bad_lines.items())),
            "bad_examples": dict(sorted(self.bad_examples.items())),
            "split_lines": self.split_lines,
            "split_parts": self.split_parts,
        }


@dataclass(frozen=True)
class Record:
    """One usable line: its 1-based line number and its text, cut into parts when longer than max_chars."""

    line: int
    parts: tuple[str, ...]

    @property
    def text(self) -> str:
        return "".join(self.parts)


def split_long_text(text: str, max_chars: int) -> list[str]:
    """Cut `text` into parts of at most `max_chars` characters whose concatenation is `text`.

    A cut goes just after a newline when one lies in the second half of the window (keeps paragraphs whole),
    else just after the last space or tab, else at `max_chars` (a text without whitespace has no better place).
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be positive, got {max_chars}")
    parts: list[str] = []
    start = 0
    while len(text) - start > max_chars:
        window = text[start : start + max_chars]
        newline = window.rfind("\n")
        if newline >= max_chars // 2:
            cut = newline + 1
        else:
            space = max(window.rfind(" "), window.rfind("\t"), newline)
            cut = space + 1 if space > 0 else max_chars
        parts.append(window[:cut])
        start += cut
    parts.append(text[start:])
    return parts


def parse_line(raw: bytes, text_key: str = "text") -> str | tuple[str]:
    """The text of one JSONL line, or `(reason,)` when the line cannot become a document."""
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return ("invalid_utf8",)
    if not decoded.strip():
        return ("blank_line",)
    try:
        value = json.loads(decoded)
    except json.JSONDecodeError:
        return ("invalid_json",)
    except (RecursionError, ValueError):  # nested ~1,000 deep; an integer past Python's 4,300-digit limit
        return ("unparsable_json",)
    if not isinstance(value, dict):
        return ("not_object",)
    if text_key not in value:
        return ("missing_text",)
    text = value[text_key]
    if not isinstance(text, str):
        return ("non_string_text",)
    if not text.strip():
        return ("empty_text",)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return ("invalid_text",)
    return text


def iter_documents(
    path: str | Path,
    *,
    text_key: str = "text",
    max_chars: int = DEFAULT_MAX_CHARS,
    strict: bool = False,
    report: ReadReport | None = None,
) -> Iterator[Record]:
    """Yield every usable line of a JSONL file as a `Record`, counting the rest in `report`."""
    report = report if report is not None else ReadReport()
    with open(path, "rb") as handle:
        for line, raw in enumerate(handle, start=1):
            report.lines += 1
            if line == 1 and raw.startswith(_BOM):
                raw = raw[len(_BOM) :]
            text = parse_line(raw, text_key)
            if isinstance(text, tuple):
                reason = text[0]
                if strict:
                    raise BadLineError(f"{path}:{line}: {reason} ({REASONS[reason]})")
                report.add_bad(reason, line)
                continue
            parts = split_long_text(text, max_chars) if len(text) > max_chars else [text]
            if len(parts) > 1:
                report.split_lines += 1
                report.split_parts += len(parts)
            report.documents += len(parts)
            yield Record(line, tuple(parts))
