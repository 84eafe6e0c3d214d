"""Prepare one pretraining corpus (JSONL) from several sources: normalise, drop exact duplicates, sample to a token
budget, write a manifest. The first step of training a model for a new language from scratch.

    python scripts/prepare_corpus.py "data/scratch/tl_ui.txt?txt=block" "data/scratch/en_docs.jsonl?lang=en" \
        "data/scratch/tl_chromium.csv?column=body" data/scratch/tl_jokes.parquet --lang tl \
        --output outputs/scratch/corpus.jsonl [--max-tokens 10M|100M|1B|10B|N] [--tokenizer DIR] [--seed 0]

Sources and their settings (`lang`, `weight`, `max_tokens`, `column`, `txt`, `type`, `config`, `split`) are
described in `morphcpt.corpus.sources`. Every document is normalised to Unicode NFC, its line ends to `\\n`,
and control characters other than tab and newline are removed; each of these is counted per source. Exact
duplicates (after normalisation, across all sources) are kept once, the first time they are seen.

Token budgets. Tokens are counted with `--tokenizer` (the target tokenizer: exact) or estimated from UTF-8 bytes
(`--bytes-per-token`, default 4) before a tokenizer exists. `--max-tokens` caps the whole corpus: a source's own
`max_tokens` is taken first; what is left is shared by `weight` when any source has one (default weight 1), else
sampled uniformly from the remaining sources together (each keeps its natural share). A source with less than its
share, or a budget larger than the sources hold, is an error that says how much there is. The sample is
deterministic: documents are taken in the order of a seeded hash of their text (see `corpus.budget`), and the
output is written in that order (`--order shuffle`, the default, so a held-out tail represents every source) or in
reading order (`--order source`).

Output: `{"text", "source", "lang"}` per line (`lang` only when tagged), written under a temporary name and
renamed; and `<output>.manifest.json` with, per source, records read, bad records by reason (with where the first
ones are), normalisation counts, duplicates, documents and tokens available and selected, and the totals.
Memory: about 100 bytes per document read (sampling keys and offsets); the texts wait in a spool file beside the
output, not in memory.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import unicodedata
from array import array
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from morphcpt.corpus.budget import (
    DEFAULT_BYTES_PER_TOKEN,
    TokenCounter,
    document_key,
    format_count,
    parse_count,
    select_within_budget,
)
from morphcpt.corpus.sources import (
    REASONS,
    SourceError,
    SourceSpec,
    expand_files,
    file_type,
    read_source,
    source_bytes,
)

MAX_EXAMPLES = 5
ORDERS = ("shuffle", "source")
# C0 and C1 control characters except tab and newline (carriage returns are turned into newlines first).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class PrepareError(ValueError):
    """The corpus cannot be prepared as asked (empty source, budget beyond what the sources hold, ...)."""


@dataclass
class SourceStats:
    name: str
    settings: dict[str, str]  # as given on the command line (`?key=value&...`)
    lang: str | None
    weight: float | None
    max_tokens: int | None
    records: int = 0
    bad_records: dict[str, int] = field(default_factory=dict)
    bad_examples: dict[str, list[str]] = field(default_factory=dict)
    nfc_normalised: int = 0  # documents that NFC changed
    line_ends_normalised: int = 0  # documents with \r\n or \r turned into \n
    control_chars_removed: int = 0  # characters
    documents_with_control_chars: int = 0
    duplicates: int = 0
    documents: int = 0  # usable, unique documents (available for sampling)
    tokens: int = 0
    bytes: int = 0
    selected_documents: int = 0
    selected_tokens: int = 0
    selected_bytes: int = 0
    skipped: list[str] = field(
        default_factory=list
    )  # files left out: read by an earlier source, or our output

    def add_bad(self, reason: str, where: str) -> None:
        self.bad_records[reason] = self.bad_records.get(reason, 0) + 1
        examples = self.bad_examples.setdefault(reason, [])
        if len(examples) < MAX_EXAMPLES:
            examples.append(where)

    @property
    def bad_total(self) -> int:
        return sum(self.bad_records.values())


@dataclass
class PrepareConfig:
    sources: list[str]
    output: Path
    max_tokens: str | None = None
    tokenizer: Path | None = None
    bytes_per_token: float = DEFAULT_BYTES_PER_TOKEN
    seed: int = 0
    lang: str | None = None  # language tag of sources that set none
    column: str = "text"  # text column of sources that set none
    txt: str = "file"  # txt mode of sources that set none
    order: str = "shuffle"
    strict: bool = False  # a bad record is an error (file and line) instead of a count
    progress: bool = True


def normalise(text: str, stats: SourceStats) -> str:
    """NFC, `\\n` line ends, no control characters but tab and newline; counted in `stats`."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        stats.line_ends_normalised += 1
    text, removed = _CONTROL.subn("", text)
    if removed:
        stats.control_chars_removed += removed
        stats.documents_with_control_chars += 1
    nfc = unicodedata.normalize("NFC", text)
    if nfc != text:
        stats.nfc_normalised += 1
    return nfc


def _spec(text: str, cfg: PrepareConfig) -> SourceSpec:
    spec = SourceSpec.parse(text)
    spec.lang = spec.lang if spec.lang is not None else cfg.lang
    spec.column = spec.options.get("column", cfg.column)
    spec.txt = spec.options.get("txt", cfg.txt)
    return spec


class _Spool:
    """Documents as JSONL in a temporary file beside the output, with per-document arrays for sampling."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.handle = open(path, "wb")  # noqa: SIM115 (closed in close())
        self.offsets, self.lengths = array("q"), array("q")
        self.keys, self.tokens, self.nbytes, self.source = array("Q"), array("q"), array("q"), array("i")
        self.seen: set[int] = set()

    def add(self, line: bytes, key: int, tokens: int, nbytes: int, source: int) -> None:
        self.offsets.append(self.handle.tell())
        self.lengths.append(len(line))
        self.handle.write(line)
        self.keys.append(key)
        self.tokens.append(tokens)
        self.nbytes.append(nbytes)
        self.source.append(source)

    def close(self) -> None:
        self.handle.close()


def _own_files(output: Path) -> set[Path]:
    """What a run writes beside its output (the output, its manifest, the spool and temporary files)."""
    names = [output, manifest_path(output), output.with_name(output.name + ".spool")]
    names += [output.with_name(output.name + ".tmp"), manifest_path(output).with_suffix(".tmp")]
    return {path.resolve() for path in names}


def source_files(
    cfg: PrepareConfig, specs: list[SourceSpec]
) -> tuple[list[list[Path] | None], list[list[str]]]:
    """Each source's files to read (None: a Hub source) and the ones left out, with why: a file an earlier source
    reads the same way (same type, column and txt mode: its documents would all be duplicates, and the source
    "empty"), and this run's own output and manifest (an output inside an input folder, read back on a rerun)."""
    own, seen = _own_files(cfg.output), {}
    files, skipped = [], []
    for spec in specs:
        if spec.is_hub:
            files.append(None)
            skipped.append([])
            continue
        keep, left = [], []
        for path in expand_files(spec):
            key = (path.resolve(), file_type(path, spec), spec.column, spec.txt)
            if key[0] in own:
                left.append(f"{path} (the output of this run)")
            elif key in seen:
                left.append(f"{path} (already read by {seen[key]})")
            else:
                seen[key] = spec.name
                keep.append(path)
        files.append(keep)
        skipped.append(left)
    return files, skipped


def _read_all(cfg: PrepareConfig, specs: list[SourceSpec], spool: _Spool, counter: TokenCounter):
    stats = []
    files, skipped = source_files(cfg, specs)
    for index, spec in enumerate(specs):
        budget = parse_count(spec.max_tokens) if spec.max_tokens is not None else None
        st = SourceStats(spec.name, spec.options, spec.lang, spec.weight, budget, skipped=skipped[index])
        stats.append(st)
        if files[index] == [] and skipped[index]:  # every file of it is read by an earlier source
            continue
        bar = tqdm(
            total=source_bytes(spec, files[index]),
            unit="B",
            unit_scale=True,
            desc=spec.name[-40:],
            disable=not cfg.progress,
        )
        with bar:
            for record in read_source(spec, files[index]):
                st.records += 1
                bar.update(record.nbytes)
                text, reason = record.text, record.reason
                if text is not None:
                    text = normalise(text, st)
                    if not text.strip():
                        reason = "empty_text"
                    else:
                        try:
                            encoded = text.encode("utf-8")
                        except UnicodeEncodeError:
                            reason = "invalid_text"
                if reason is not None:
                    if cfg.strict:
                        raise SourceError(f"{record.where}: {reason} ({REASONS[reason]})")
                    st.add_bad(reason, record.where)
                    continue
                key = document_key(cfg.seed, text)
                if key in spool.seen:
                    st.duplicates += 1
                    continue
                spool.seen.add(key)
                tokens = counter(text, len(encoded))
                row = {"text": text, "source": spec.name} | ({"lang": spec.lang} if spec.lang else {})
                spool.add(
                    (json.dumps(row, ensure_ascii=False) + "\n").encode(), key, tokens, len(encoded), index
                )
                st.documents += 1
                st.tokens += tokens
                st.bytes += len(encoded)
        if st.documents == 0:
            bad = ", ".join(f"{k} {v}" for k, v in sorted(st.bad_records.items())) or "none"
            raise PrepareError(
                f"{spec.name}: empty source, no usable documents ({st.records} records read; "
                f"bad: {bad}; duplicates of earlier documents: {st.duplicates})"
            )
    return stats


def plan_budgets(stats: list[SourceStats], max_tokens: int | None) -> dict[int | None, int | None]:
    """Token budget per source index (None: take it whole); the key None holds the pooled budget of the sources
    sampled together (when no source has a weight). Raises PrepareError when the sources hold too little."""
    for st in stats:
        if st.max_tokens is not None and st.max_tokens > st.tokens:
            raise PrepareError(
                f"{st.name}: max_tokens={format_count(st.max_tokens)} but the source holds only "
                f"{st.tokens:,} tokens ({st.documents:,} unique documents)"
            )
    budgets: dict[int | None, int | None] = {i: st.max_tokens for i, st in enumerate(stats)}
    weighted = any(st.weight is not None for st in stats)
    if max_tokens is None:
        if weighted:
            raise PrepareError("weight= shares a global budget: give --max-tokens too (or use max_tokens=)")
        return budgets
    total = sum(st.tokens for st in stats)
    if max_tokens > total:
        per_source = "; ".join(f"{st.name}: {st.tokens:,}" for st in stats)
        raise PrepareError(
            f"--max-tokens {format_count(max_tokens)} ({max_tokens:,}) is more than the sources hold: "
            f"{total:,} tokens ({format_count(total)}) after normalisation and deduplication ({per_source})"
        )
    fixed = sum(st.max_tokens for st in stats if st.max_tokens is not None)
    rest = max_tokens - fixed
    if rest < 0:
        raise PrepareError(
            f"the sources' own max_tokens add up to {fixed:,}, more than --max-tokens {max_tokens:,}"
        )
    free = [i for i, st in enumerate(stats) if st.max_tokens is None]
    if weighted:
        weights = {i: stats[i].weight if stats[i].weight is not None else 1.0 for i in free}
        for i in free:
            share = int(rest * weights[i] / sum(weights.values()))
            if share > stats[i].tokens:
                raise PrepareError(
                    f"{stats[i].name}: its weight asks for {share:,} tokens of --max-tokens but it holds only "
                    f"{stats[i].tokens:,}; lower its weight or the budget"
                )
            budgets[i] = share
    elif free:
        budgets[None] = rest
        for i in free:
            budgets[i] = -1  # pooled
    return budgets


def select(spool: _Spool, budgets: dict[int | None, int | None]) -> np.ndarray:
    """Boolean mask over the spooled documents: every source within its budget (see `plan_budgets`)."""
    keys = np.frombuffer(spool.keys, dtype=np.uint64)
    tokens = np.frombuffer(spool.tokens, dtype=np.int64)
    source = np.frombuffer(spool.source, dtype=np.int32)
    keep = np.zeros(len(keys), dtype=bool)
    pooled = np.zeros(len(keys), dtype=bool)
    for index, budget in budgets.items():
        if index is None:
            continue
        members = source == index
        if budget is None:
            keep |= members
        elif budget == -1:
            pooled |= members
        else:
            keep[members] = select_within_budget(keys[members], tokens[members], budget)
    if budgets.get(None) is not None:
        keep[pooled] = select_within_budget(keys[pooled], tokens[pooled], budgets[None])
    return keep


def _write_output(cfg: PrepareConfig, spool: _Spool, keep: np.ndarray) -> str:
    indices = np.flatnonzero(keep)
    if cfg.order == "shuffle":
        keys = np.frombuffer(spool.keys, dtype=np.uint64)
        indices = indices[np.argsort(keys[indices], kind="stable")]
    tmp = cfg.output.with_name(cfg.output.name + ".tmp")
    digest = hashlib.sha256()
    with open(spool.path, "rb") as source, open(tmp, "wb") as out:
        for index in indices:
            source.seek(spool.offsets[index])
            line = source.read(spool.lengths[index])
            digest.update(line)
            out.write(line)
    os.replace(tmp, cfg.output)
    return digest.hexdigest()


def manifest_path(output: Path) -> Path:
    return output.with_name(output.name + ".manifest.json")


def prepare(cfg: PrepareConfig) -> dict:
    """Run the whole preparation; returns the manifest (also written beside the output)."""
    if cfg.order not in ORDERS:
        raise PrepareError(f"--order must be one of {ORDERS}, got {cfg.order!r}")
    if not cfg.sources:
        raise PrepareError("no sources given")
    specs = [_spec(text, cfg) for text in cfg.sources]
    max_tokens = parse_count(cfg.max_tokens) if cfg.max_tokens is not None else None
    counter = (
        TokenCounter.from_tokenizer(cfg.tokenizer)
        if cfg.tokenizer
        else TokenCounter.estimate(cfg.bytes_per_token)
    )
    cfg.output.parent.mkdir(parents=True, exist_ok=True)
    spool = _Spool(cfg.output.with_name(cfg.output.name + ".spool"))
    try:
        stats = _read_all(cfg, specs, spool, counter)
        spool.close()
        keep = select(spool, plan_budgets(stats, max_tokens))
        source = np.frombuffer(spool.source, dtype=np.int32)
        tokens = np.frombuffer(spool.tokens, dtype=np.int64)
        nbytes = np.frombuffer(spool.nbytes, dtype=np.int64)
        for index, st in enumerate(stats):
            chosen = keep & (source == index)
            st.selected_documents = int(chosen.sum())
            st.selected_tokens = int(tokens[chosen].sum())
            st.selected_bytes = int(nbytes[chosen].sum())
        sha256 = _write_output(cfg, spool, keep)
    finally:
        spool.close()
        spool.path.unlink(missing_ok=True)
    languages: dict[str, dict[str, int]] = {}
    for st in stats:
        row = languages.setdefault(st.lang or "untagged", {"documents": 0, "tokens": 0})
        row["documents"] += st.selected_documents
        row["tokens"] += st.selected_tokens
    manifest = {
        "output": str(cfg.output),
        "sha256": sha256,
        "documents": sum(st.selected_documents for st in stats),
        "tokens": sum(st.selected_tokens for st in stats),
        "bytes": sum(st.selected_bytes for st in stats),
        "max_tokens": max_tokens,
        "token_count": counter.method,
        "seed": cfg.seed,
        "order": cfg.order,
        "languages": languages,
        "sources": [asdict(st) | {"bad_total": st.bad_total} for st in stats],
    }
    tmp = manifest_path(cfg.output).with_suffix(".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    os.replace(tmp, manifest_path(cfg.output))
    return manifest


def summary(manifest: dict) -> str:
    """A few lines for the console: per source read/bad/duplicates/selected, then the total."""
    lines = []
    for st in manifest["sources"]:
        lines.append(
            f"  {st['name']}: {st['records']:,} records, {st['bad_total']:,} bad, {st['duplicates']:,} duplicates, "
            f"{st['nfc_normalised']:,} NFC-normalised, {st['control_chars_removed']:,} control chars removed; "
            f"{st['selected_documents']:,}/{st['documents']:,} documents, "
            f"{st['selected_tokens']:,}/{st['tokens']:,} tokens taken"
        )
    lines.append(
        f"{manifest['output']}: {manifest['documents']:,} documents, {manifest['tokens']:,} tokens "
        f"({manifest['token_count']}), {manifest['bytes']:,} bytes; manifest {manifest_path(Path(manifest['output']))}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="prepare_corpus",
        description=__doc__.split("\n\n")[0],
        epilog="SOURCE: a file, folder, glob or hf:owner/name, with ?lang=..&weight=..&max_tokens=..&column=.."
        "&txt=file|block&type=..&config=..&split=.. (see morphcpt.corpus.sources)",
    )
    parser.add_argument("sources", nargs="+", metavar="SOURCE")
    parser.add_argument("--output", type=Path, required=True, help="the corpus JSONL to write")
    parser.add_argument("--max-tokens", default=None, help="token budget: 10M, 100M, 1B, 10B or any number")
    parser.add_argument(
        "--tokenizer", type=Path, default=None, help="count tokens with this tokenizer folder"
    )
    parser.add_argument("--bytes-per-token", type=float, default=DEFAULT_BYTES_PER_TOKEN)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lang", default=None, help="language tag of sources that set no lang=")
    parser.add_argument("--column", default="text", help="text column of sources that set no column=")
    parser.add_argument(
        "--txt",
        choices=("file", "block"),
        default="file",
        help="one document per file or per blank-line block",
    )
    parser.add_argument("--order", choices=ORDERS, default="shuffle")
    parser.add_argument("--strict", action="store_true", help="fail on the first bad record (file and line)")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    cfg = PrepareConfig(
        sources=args.sources,
        output=args.output,
        max_tokens=args.max_tokens,
        tokenizer=args.tokenizer,
        bytes_per_token=args.bytes_per_token,
        seed=args.seed,
        lang=args.lang,
        column=args.column,
        txt=args.txt,
        order=args.order,
        strict=args.strict,
        progress=not args.no_progress,
    )
    try:
        manifest = prepare(cfg)
    except (PrepareError, SourceError, FileNotFoundError, ValueError) as err:
        parser.exit(2, f"prepare_corpus: error: {err}\n")
    for st in manifest["sources"]:
        for path in st["skipped"]:
            note = "left out of the sources: the output" if "the output of this run" in path else "skipped"
            print(f"prepare_corpus: warning: {st['name']}: {note}: {path}", file=sys.stderr)
    print(summary(manifest))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
