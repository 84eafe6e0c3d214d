"""`python -m morphcpt.analysis …`: the same as `scripts/analyze_inference_results.py`."""

import sys

from morphcpt.analysis import main

sys.exit(main())
