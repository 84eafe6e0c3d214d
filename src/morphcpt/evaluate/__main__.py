"""`python -m morphcpt.evaluate …`: the same as `scripts/run_evaluation.py`."""

import sys

from morphcpt.evaluate import main

sys.exit(main())
