"""Prepare one pretraining corpus from several sources: txt, jsonl, json, csv/tsv, parquet, Hugging Face datasets.

    python scripts/prepare_corpus.py "data/scratch/tl_ui.txt?txt=block" "data/scratch/tl_chromium.csv?column=body" \
        data/scratch/tl_jokes.parquet "data/scratch/en_docs.jsonl?lang=en" --lang tl \
        --output outputs/scratch/corpus.jsonl [--max-tokens 10M|100M|1B|10B|N] [--tokenizer DIR]

Normalises (NFC, line ends, control characters), drops exact duplicates, samples deterministically to a token
budget and writes `<output>.manifest.json`. Library code: `morphcpt.corpus.assemble` (also `morphcpt prepare`).
"""

import sys

from morphcpt.corpus.assemble import main

if __name__ == "__main__":
    sys.exit(main())
