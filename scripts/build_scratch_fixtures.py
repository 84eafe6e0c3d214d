"""Build the small multi-format corpus of the "new language from scratch" walk-through (`data/scratch/`).

    python scripts/build_scratch_fixtures.py [--output-dir data/scratch]

Build-time only: it cuts the shipped Filipino sample (`data/sample/tl_sample.jsonl`) by origin into one file per
format, and takes English prose paragraphs from this repository's README and module docstrings, so `prepare_corpus.py` has a txt, a
csv, a parquet and a jsonl source in two languages. Deterministic: the same inputs give the same files. Provenance
and licences: data/NOTICE.
"""

import argparse
import ast
import csv
import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from morphcpt import paths

LIMITS = {"firefox-esr-l10n-tl": 160, "chromium-l10n-fil": 200, "phjokes": 224}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", type=Path, default=paths.DATA_DIR / "scratch")
    out = parser.parse_args().output_dir
    out.mkdir(parents=True, exist_ok=True)
    by_source: dict[str, list[str]] = {name: [] for name in LIMITS}
    for line in paths.SAMPLE_CORPUS.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        texts = by_source.get(row["source"])
        if texts is not None and len(texts) < LIMITS[row["source"]]:
            texts.append(re.sub(r"\n\s*\n+", "\n", row["text"]).strip())
    # txt, one document per blank-line-separated block
    (out / "tl_ui.txt").write_text("\n\n".join(by_source["firefox-esr-l10n-tl"]) + "\n", encoding="utf-8")
    # csv with the text in a column called "body"
    with open(out / "tl_chromium.csv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "body", "origin"])
        for number, text in enumerate(by_source["chromium-l10n-fil"], start=1):
            writer.writerow([number, text, "chromium-l10n-fil"])
    # parquet with a "text" column
    table = pa.table({"text": by_source["phjokes"], "origin": ["phjokes"] * len(by_source["phjokes"])})
    pq.write_table(table, out / "tl_jokes.parquet", row_group_size=64)
    # jsonl of English prose: paragraphs of the README and of the library's module docstrings that are neither
    # code, tables, lists nor headings
    texts = [(paths.REPO_ROOT / "README.md").read_text(encoding="utf-8")]
    for module in sorted(paths.PACKAGE_DIR.rglob("*.py")):
        docstring = ast.get_docstring(ast.parse(module.read_text(encoding="utf-8")))
        texts.append(docstring or "")
    paragraphs = [
        " ".join(block.split())
        for text in texts
        for block in re.sub(r"```.*?```", "", text, flags=re.S).split("\n\n")
        if len(block) > 120 and not re.match(r"\s*([#|`-]|\d+[.–]|python |morphcpt |    )", block)
    ]
    with open(out / "en_docs.jsonl", "w", encoding="utf-8") as handle:
        for text in paragraphs:
            handle.write(json.dumps({"text": text}, ensure_ascii=False) + "\n")
    for path in sorted(out.iterdir()):
        print(f"{path}: {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
