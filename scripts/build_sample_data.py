"""Rebuild the shipped sample data: data/sample/*.jsonl, data/lexicon/* and the sample tokenizer data/tokenizer.

Needs build-time sources that are not project dependencies (the script names what is missing):

    apt-get install -y firefox-esr-l10n-tl login tesseract-ocr tesseract-ocr-fil
    apt-get download chromium-l10n && dpkg-deb -x chromium-l10n_*.deb /tmp/chromium-l10n
    pip install phjokes wordfreq tglstemmer
    python scripts/build_sample_data.py --chromium-locales /tmp/chromium-l10n/usr/lib/chromium/locales

data/NOTICE records the sources, their licences and the versions the shipped files were built from.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sample_data import CHROMIUM_LOCALES, DEFAULT_SEED, MissingSourceError, build_sample  # beside this script

from morphcpt import paths
from morphcpt.tokenization.train_tokenizer import count_tokens, train_sentencepiece_tokenizer


def main() -> None:
    parser = argparse.ArgumentParser(description="Rebuild the shipped sample corpus, lexicon and tokenizer.")
    parser.add_argument("--data-dir", type=Path, default=paths.DATA_DIR)
    parser.add_argument("--chromium-locales", type=Path, default=CHROMIUM_LOCALES)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--vocab-size", type=int, default=4096)
    parser.add_argument("--skip-tokenizer", action="store_true", help="rebuild only the corpus and lexicon")
    args = parser.parse_args()

    try:
        stats = build_sample(args.data_dir, chromium_locales=args.chromium_locales, seed=args.seed)
    except MissingSourceError as err:
        sys.exit(f"error: {err}")
    if not args.skip_tokenizer:
        tokenizer_dir = train_sentencepiece_tokenizer(
            stats["sample"], args.data_dir / "tokenizer", args.vocab_size
        )
        stats["tokenizer"] = str(tokenizer_dir)
        stats["tokens"] = count_tokens(stats["sample"], tokenizer_dir)[1]
    print(json.dumps(stats, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
