"""Where the suite finds its shipped assets and writes its outputs.

Shipped data (sample corpus, sample tokenizer, lexicons) lives in the repository's `data/` folder; set
`MORPHCPT_DATA_DIR` to use another copy (for example when the package is installed outside the repository).
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parents[1]
CONF_DIR = PACKAGE_DIR / "conf"
DATA_DIR = Path(os.environ.get("MORPHCPT_DATA_DIR", REPO_ROOT / "data")).resolve()
SAMPLE_CORPUS = DATA_DIR / "sample" / "tl_sample.jsonl"
SAMPLE_TOKENIZER_DIR = DATA_DIR / "tokenizer"
LEXICON_DIR = DATA_DIR / "lexicon"
OUTPUTS_DIR = REPO_ROOT / "outputs"
