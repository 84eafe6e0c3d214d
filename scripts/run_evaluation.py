#!/usr/bin/env python
"""Evaluate exported models on the Filipino morphology benchmarks (MCQ log-likelihood and/or greedy GEN).

    python scripts/run_evaluation.py --models outputs/export/vanilla outputs/export/stochastok outputs/export/patok \
        --benchmarks pacute hierarchical --eval-mode both [--benchmark-dir data/benchmarks] [--output-dir results/] \
        [--limit N] [--batch-size 32] [--device auto] [--export-lm-eval DIR]

Results land in `<output-dir>/<model>/<task>_<mode>.json`; an interrupted run resumes where it stopped.
`python scripts/analyze_inference_results.py` turns them into tables, plots and a report.
"""

import logging
import sys

from morphcpt.evaluate.runner import build_parser, config_from_args, run_evaluation


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    config = config_from_args(build_parser().parse_args())
    for path in run_evaluation(config):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
