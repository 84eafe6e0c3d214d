"""Split a JSONL corpus into byte-balanced chunks for PBS array jobs (stage 2 of the data pipeline).

    python training/nemo/data/split_jsonl.py --input data/corpora/seapile-v2-filipino.jsonl \
        --output-dir data/chunks --num-chunks 20 [--holdout-lines 2000]

Writes chunk_01.jsonl … chunk_20.jsonl (+ validation.jsonl with --holdout-lines) and manifest.json.
Library code: `morphcpt.corpus.split`.
"""

import sys

from morphcpt.corpus.split import main

if __name__ == "__main__":
    sys.exit(main())
