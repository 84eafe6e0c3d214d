"""Stream the Filipino part of SEA-PILE v2 to JSONL (stage 1 of the data pipeline).

    python scripts/download_seapile.py --output data/corpora/seapile-v2-filipino.jsonl --language fil [--limit N]
    python scripts/download_seapile.py --output x.jsonl --language fil --from-parquet /path/to/parquet/shards

Needs HF_TOKEN for the Hub (the dataset is gated); resumable. Library code: `morphcpt.corpus.download`.
"""

import sys

from morphcpt.corpus.download import main

if __name__ == "__main__":
    sys.exit(main())
