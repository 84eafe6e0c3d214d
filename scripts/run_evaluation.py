#!/usr/bin/env python
"""Evaluate models on the Filipino morphology benchmarks (MCQ log-likelihood and/or greedy GEN).

    python scripts/run_evaluation.py --models outputs/export/vanilla outputs/export/stochastok outputs/export/patok \
        --benchmarks pacute hierarchical --eval-mode both [--benchmark-dir data/benchmarks] [--output-dir results/] \
        [--limit N] [--batch-size 32] [--device auto] [--export-lm-eval DIR]

`--models` takes exported folders and Hub ids, and training runs: a run folder, its checkpoints/ or one
step_…/iter_… checkpoint (exported first when no export of it exists; morphcpt.evaluate.resolve).
Results land in `<output-dir>/<model>/<task>_<mode>.json`; an interrupted run resumes where it stopped.
`python scripts/analyze_inference_results.py` turns them into tables, plots and a report.
"""

import sys

from morphcpt.evaluate.runner import main

if __name__ == "__main__":
    sys.exit(main())
