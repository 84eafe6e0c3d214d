"""`python -m morphcpt.bench [--output-dir DIR] [--seed N] [key=value ...]`: generate the benchmarks."""

import sys

from morphcpt.bench.generate import main

sys.exit(main())
