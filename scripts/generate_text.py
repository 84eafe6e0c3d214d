"""Generate text with an exported model: --prompt, --prompts-file or --interactive (streamed), on CPU or GPU.

    python scripts/generate_text.py --model outputs/scratch/exports/scratch-tiny --prompt "Ang mga" \
        [--max-new-tokens 64 --temperature 0.8 --top-k 50 --top-p 0.95 --repetition-penalty 1.1 --seed 0]

Prints tokens/s. Library code: `morphcpt.evaluate.generate_text` (also `morphcpt generate`).
"""

import sys

from morphcpt.evaluate.generate_text import main

if __name__ == "__main__":
    sys.exit(main())
