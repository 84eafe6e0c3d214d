"""Parsers for the localisation formats the sample data is built from (`sample_data.py`): Mozilla's .properties
and Fluent (.ftl) files, gettext .mo catalogues and Chromium's .pak files. Each yields or returns (key, value) pairs
in file order. Build-time only, like `sample_data.py`."""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator


def parse_properties(text: str) -> Iterator[tuple[str, str]]:
    """Java-style .properties as Mozilla uses them: `key = value`, backslash escapes and continuations."""
    logical: list[str] = []
    for raw in text.splitlines():
        line = raw.lstrip() if logical else raw
        if not logical and (not line.strip() or line.lstrip().startswith(("#", "!"))):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            logical.append(line[:-1])
            continue
        logical.append(line)
        joined = "".join(logical)
        logical = []
        key, sep, value = joined.partition("=")
        if sep:
            yield key.strip(), _unescape_properties(value.strip())


_PROPERTIES_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)")


def _unescape_properties(value: str) -> str:
    def replace(match: re.Match[str]) -> str:
        code = match.group(1)
        if code.startswith("u") and len(code) == 5:
            return chr(int(code[1:], 16))
        return {"n": "\n", "t": "\t", "r": "\r"}.get(code, code)

    return _PROPERTIES_ESCAPE.sub(replace, value)


_FTL_ENTRY = re.compile(r"^(-?[a-zA-Z][\w-]*)\s*=\s?(.*)$")
_FTL_ATTRIBUTE = re.compile(r"^\s+\.([a-zA-Z][\w-]*)\s*=\s?(.*)$")


def parse_ftl(text: str) -> Iterator[tuple[str, str]]:
    """Fluent (.ftl): messages `id = value`, terms `-id = value`, attributes `.attr = value`.

    Indented lines continue the current value (joined with newlines, as Fluent does); select expressions stay
    in the value verbatim and are unpacked later by `ftl_variants`.
    """
    current_key: str | None = None
    message_id = ""
    lines: list[str] = []

    def flush() -> Iterator[tuple[str, str]]:
        if current_key is not None:
            value = "\n".join(line.strip() for line in lines).strip()
            if value:
                yield current_key, value

    for raw in text.splitlines():
        if raw.startswith("#") or not raw.strip():
            continue
        entry = _FTL_ENTRY.match(raw)
        attribute = _FTL_ATTRIBUTE.match(raw)
        if entry:
            yield from flush()
            message_id = entry.group(1)
            current_key, lines = message_id, [entry.group(2)]
        elif attribute:
            yield from flush()
            current_key, lines = f"{message_id}.{attribute.group(1)}", [attribute.group(2)]
        elif raw[0].isspace() and current_key is not None:
            lines.append(raw)
    yield from flush()


_FTL_VARIANT = re.compile(r"^\*?\[[^\]]+\]\s*(.*)$")


def ftl_variants(value: str) -> list[str]:
    """The variant texts of a select expression (`{ $n -> [one] … *[other] … }`), else the value itself."""
    if "->" not in value:
        return [value]
    return [m.group(1) for line in value.splitlines() if (m := _FTL_VARIANT.match(line.strip()))]


_FTL_TERM_REF = re.compile(r"\{\s*(-[a-zA-Z][\w-]*)(?:\.[\w-]+)?(?:\([^)]*\))?\s*\}")
_FTL_STRING_LITERAL = re.compile(r'\{\s*"((?:[^"\\]|\\.)*)"\s*\}')


def resolve_ftl_terms(value: str, terms: dict[str, str]) -> str:
    """Replace term references (`{ -brand-short-name }`) and string literals by their text.

    Terms are constants (product names), so resolving them yields the sentence a user reads. Variables and
    message references stay as placeholders and make `clean_string` drop the string.
    """
    value = _FTL_STRING_LITERAL.sub(lambda m: m.group(1).replace('\\"', '"').replace("\\\\", "\\"), value)
    return _FTL_TERM_REF.sub(lambda m: terms.get(m.group(1), m.group(0)), value)


def read_mo(data: bytes) -> list[tuple[str, str]]:
    """(msgid, msgstr) pairs of a compiled gettext catalogue; plural forms are split into their variants."""
    magic = struct.unpack("<I", data[:4])[0]
    order = "<" if magic == 0x950412DE else ">"
    _revision, count, originals_at, translations_at = struct.unpack(f"{order}4I", data[4:20])

    def string_at(table: int, index: int) -> str:
        length, offset = struct.unpack(f"{order}2I", data[table + 8 * index : table + 8 * index + 8])
        return data[offset : offset + length].decode("utf-8")

    pairs = []
    for index in range(count):
        original = string_at(originals_at, index)
        if not original:  # the header entry
            continue
        for variant in string_at(translations_at, index).split("\0"):
            pairs.append((original.split("\0")[0], variant))
    return pairs


def read_pak(data: bytes) -> dict[int, bytes]:
    """Resources of a Chromium .pak file (format version 5), by resource id.

    Layout: uint32 version, uint8 encoding, 3 bytes padding, uint16 resource count, uint16 alias count, then
    (count + 1) entries of (uint16 id, uint32 offset), the last one a sentinel giving the end of the data.
    Aliases (ids sharing another id's data) are skipped: their text is a duplicate.
    """
    version = struct.unpack("<I", data[:4])[0]
    if version != 5:
        raise ValueError(f"unsupported .pak version {version}")
    count = struct.unpack("<H", data[8:10])[0]
    entries = [struct.unpack("<HI", data[12 + 6 * i : 18 + 6 * i]) for i in range(count + 1)]
    return {entries[i][0]: data[entries[i][1] : entries[i + 1][1]] for i in range(count)}
