"""Generate the Filipino morphology benchmarks (PACUTE-style and hierarchical, MCQ and GEN) with quality gates.

    python scripts/generate_benchmarks.py --output-dir data/benchmarks --seed 0
    python scripts/generate_benchmarks.py pacute.affixation=70 hierarchical.level5=100   # other sizes

Library code: morphcpt.bench.generate (configuration: src/morphcpt/conf/benchmarks.yaml).
"""

import sys

from morphcpt.bench.generate import main

if __name__ == "__main__":
    sys.exit(main())
