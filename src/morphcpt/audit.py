"""Compare the schemes' preprocessed datasets side by side (stage 5 of the data pipeline).

    python -m morphcpt.audit data/processed [--max-documents 2000] [--json audit.json]

For every scheme folder under the output folder (not `validation/`) and the chunks every scheme has completed:
documents, tokens, tokens per document, expansion relative to vanilla (tokens / vanilla tokens - 1), the share of
documents whose ids differ from vanilla's, and how well token boundaries fall on morpheme boundaries inside
words (precision: share of in-word token boundaries that are morpheme boundaries; recall: share of morpheme
boundaries that are token boundaries; see `morphcpt.tokenization.alignment`), once against the analyser patok
cuts at and once against the hand-written gold set (`data/gold`, on the gold words the data holds). Documents are compared by index,
so every scheme must hold the same documents as vanilla (same chunks, same counts), which preprocessing
guarantees for the same input. Alignment is measured on the first `max_documents` documents of each chunk.
"text altered" counts documents whose ids decode to another text than the source: the chunk's JSONL file named in
the marker, read again exactly as preprocessing read it (vanilla is checked too: a tokenizer can lose text, e.g. a
literal "▁"). It must be 0 for every scheme, since the schemes only change how a text is cut into tokens. When the
source file is gone or changed since preprocessing, the audit says so and compares with vanilla's decoding
instead. The table ends with one short document shown token by token in every
scheme: the one where some scheme's tokens hit the most morpheme boundaries beyond vanilla's.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from morphcpt import indexed
from morphcpt.corpus.reader import DEFAULT_MAX_CHARS, iter_documents
from morphcpt.jsonio import read_json
from morphcpt.preprocess import VALIDATION_DIR

BASELINE = "vanilla"
_ORDER = {"vanilla": 0, "stochastok": 1, "patok": 2}
EXAMPLE_MIN_TOKENS, EXAMPLE_TOKENS = 12, 40  # the token-level example shows a short document whole


def completed_chunks(folder: Path) -> dict[str, dict]:
    """Completion markers of a scheme folder, by chunk name."""
    return {
        marker.name.removesuffix(".done.json"): read_json(marker)
        for marker in sorted(folder.glob("*.done.json"))
    }


def audit(
    output_dir: str | Path,
    tokenizer: str | None = None,
    language: str = "fil",
    max_documents: int | None = 2000,
) -> dict:
    """Per-scheme statistics over the chunks all schemes completed: {"chunks": [...], "rows": [{...}, ...]}."""
    from morphcpt.morphology import get_language_pack
    from morphcpt.morphology.gold import GoldSegmentation
    from morphcpt.tokenization.alignment import Alignment, morpheme_boundary_alignment
    from morphcpt.tokenization.vocabulary import Vocabulary

    output_dir = Path(output_dir)
    folders = {
        path.name: completed_chunks(path)
        for path in output_dir.iterdir()
        if path.is_dir() and path.name != VALIDATION_DIR and list(path.glob("*.done.json"))
    }
    if BASELINE not in folders:
        raise FileNotFoundError(
            f"{output_dir} has no completed {BASELINE} chunks; the audit compares against them"
        )
    # A scheme with its own tokenizer (eeve) has other ids for the same text: it cannot be compared id by id.
    base_tokenizers = {c["key"]["tokenizer_fingerprint"] for c in folders[BASELINE].values()}
    own_tokenizer = sorted(
        s
        for s, chunks in folders.items()
        if {c["key"]["tokenizer_fingerprint"] for c in chunks.values()} - base_tokenizers
    )
    for name in own_tokenizer:
        del folders[name]
    schemes = sorted(folders, key=lambda name: (_ORDER.get(name, len(_ORDER)), name))
    chunks = sorted(set.intersection(*(set(folders[s]) for s in schemes)))
    fingerprints = {folders[s][c]["key"]["tokenizer_fingerprint"] for s in schemes for c in chunks}
    if len(fingerprints) > 1:
        raise ValueError(f"the schemes under {output_dir} were tokenized with different tokenizers")
    vocab = Vocabulary.load(tokenizer or folders[BASELINE][chunks[0]]["config"]["tokenizer"])
    pack = get_language_pack(language)
    gold = GoldSegmentation.load()  # hand-segmented words: a measure patok was not built against

    totals = {
        s: {"documents": 0, "tokens": 0, "changed": 0, "text_differs": 0, "alignment": Alignment()}
        for s in schemes
    }
    on_gold = dict.fromkeys(schemes, Alignment())
    example = None
    compared_with: dict[str, str] = {}
    for chunk in chunks:
        source = source_texts(folders[BASELINE][chunk])
        compared_with[chunk] = "source" if source is not None else BASELINE
        baseline_prefix = output_dir / BASELINE / folders[BASELINE][chunk]["prefix"]
        readers = {s: indexed.iter_documents(output_dir / s / folders[s][chunk]["prefix"]) for s in schemes}
        counts = {s: folders[s][chunk]["documents"] for s in schemes}
        if len(set(counts.values())) > 1:
            raise ValueError(
                f"{chunk}: schemes hold different numbers of documents {counts}; rerun preprocessing"
            )
        for index, baseline in enumerate(indexed.iter_documents(baseline_prefix)):
            text = next(source, None) if source is not None else vocab.decode(baseline.tolist())
            documents, alignments = {}, {}
            for scheme in schemes:
                ids = baseline if scheme == BASELINE else next(readers[scheme])
                documents[scheme] = ids
                row = totals[scheme]
                row["documents"] += 1
                row["tokens"] += len(ids)
                row["changed"] += not np.array_equal(ids, baseline)
                # No scheme may change the text: any document decoding differently is a defect.
                checked = source is not None or scheme != BASELINE
                row["text_differs"] += checked and vocab.decode(ids.tolist()) != text
                if max_documents is None or index < max_documents:
                    alignments[scheme] = morpheme_boundary_alignment(vocab, ids.tolist(), pack)
                    row["alignment"] += alignments[scheme]
                    on_gold[scheme] += morpheme_boundary_alignment(vocab, ids.tolist(), gold)
            score = _example_score(documents, alignments)
            if score is not None and (example is None or score > example["score"]):
                example = {
                    "chunk": chunk,
                    "document": index,
                    "score": score,
                    "pieces": {s: [vocab.pieces[i] for i in ids] for s, ids in documents.items()},
                }

    vanilla_tokens = totals[BASELINE]["tokens"]
    rows = []
    for scheme in schemes:
        row = totals[scheme]
        alignment = row["alignment"]
        rows.append(
            {
                "scheme": scheme,
                "documents": row["documents"],
                "tokens": row["tokens"],
                "tokens_per_doc": row["tokens"] / max(row["documents"], 1),
                "expansion": row["tokens"] / max(vanilla_tokens, 1) - 1.0,
                "changed_share": row["changed"] / max(row["documents"], 1),
                "text_differs": row["text_differs"],
                "boundary_precision": alignment.precision,
                "boundary_recall": alignment.recall,
                "gold_precision": on_gold[scheme].precision,
                "gold_recall": on_gold[scheme].recall,
                "gold_boundaries": on_gold[scheme].morpheme_boundaries,
            }
        )
    skipped = sorted(set().union(*(set(folders[s]) for s in schemes)) - set(chunks))
    return {
        "output_dir": str(output_dir),
        "chunks": chunks,
        "skipped_chunks": skipped,
        "own_tokenizer": own_tokenizer,
        "rows": rows,
        "example": example,
        "text_compared_with": compared_with,
    }


def source_texts(marker: dict) -> Iterator[str] | None:
    """The texts of a chunk's documents in order, read from the JSONL file its marker names, exactly as
    preprocessing read it; None when that file is gone or is no longer the one preprocessed."""
    config = marker.get("config", {})
    path = Path(config.get("input") or "")
    if not path.is_file() or indexed.file_digest(path)["sha256"] != marker.get("key", {}).get("input_sha256"):
        return None
    records = iter_documents(
        path, text_key=config.get("text_key", "text"), max_chars=config.get("max_chars", DEFAULT_MAX_CHARS)
    )
    return (part for record in records for part in record.parts)


def _example_score(documents: dict[str, np.ndarray], alignments: dict) -> int | None:
    """How well a document shows the schemes apart: the most morpheme boundaries any scheme's tokens hit beyond
    vanilla's. None unless the document is short and every scheme cut it differently."""
    if not alignments or not EXAMPLE_MIN_TOKENS <= len(documents[BASELINE]) <= EXAMPLE_TOKENS:
        return None
    if len({ids.tobytes() for ids in documents.values()}) < len(documents):
        return None
    return max(a.matched for a in alignments.values()) - alignments[BASELINE].matched


def format_table(result: dict) -> str:
    """The audit as a fixed-width text table, one row per scheme."""
    columns = [
        ("scheme", "scheme", "{}"),
        ("documents", "docs", "{:,}"),
        ("tokens", "tokens", "{:,}"),
        ("tokens_per_doc", "tok/doc", "{:.1f}"),
        ("expansion", "vs vanilla", "{:+.2%}"),
        ("changed_share", "docs changed", "{:.1%}"),
        ("text_differs", "text altered", "{:,}"),
        ("boundary_precision", "morph-bound prec", "{:.1%}"),
        ("boundary_recall", "morph-bound recall", "{:.1%}"),
        ("gold_precision", "gold prec", "{:.1%}"),
        ("gold_recall", "gold recall", "{:.1%}"),
    ]
    cells = [[title for _, title, _ in columns]]
    cells += [[fmt.format(row[key]) for key, _, fmt in columns] for row in result["rows"]]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    lines = [
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(line, widths, strict=True))
        )
        for line in cells
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    note = f"{len(result['chunks'])} chunk(s) compared: {', '.join(result['chunks'])}"
    fallback = [c for c, what in result.get("text_compared_with", {}).items() if what != "source"]
    note += (
        f"\ntext altered: against vanilla's decoding for {', '.join(fallback)} (source JSONL gone or changed)"
        if fallback
        else "\ntext altered: against the source JSONL of every chunk"
    )
    if result["skipped_chunks"]:
        note += f"; not in every scheme (skipped): {', '.join(result['skipped_chunks'])}"
    if result.get("own_tokenizer"):
        note += f"; own tokenizer, not compared id by id: {', '.join(result['own_tokenizer'])}"
    lines = [note, *lines]
    example = result.get("example")
    if example:
        lines.append(
            f"\nThe same text in each scheme ({example['chunk']}, document {example['document']}; "
            "'|' separates tokens, ▁ marks a word start):"
        )
        for scheme, pieces in example["pieces"].items():
            lines.append(f"  {scheme:<11} " + "|".join(pieces).replace("\n", "\\n"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "output_dir", help="preprocessing output folder (holds vanilla/, stochastok/, patok/ ...)"
    )
    parser.add_argument("--tokenizer", default=None, help="default: the one recorded in vanilla's markers")
    parser.add_argument("--language", default="fil", help="language pack for morpheme boundaries")
    parser.add_argument("--max-documents", type=int, default=2000, help="per chunk, for the boundary measure")
    parser.add_argument("--json", default=None, help="also write the audit as JSON here")
    args = parser.parse_args(argv)
    result = audit(args.output_dir, args.tokenizer, args.language, args.max_documents)
    print(format_table(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
