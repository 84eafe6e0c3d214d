#!/usr/bin/env python
"""Tables, paired significance tests, plots and a Markdown report from evaluation results.

    python scripts/analyze_inference_results.py --results-dir results/ [--output-dir results/analysis] [--no-plots]

Writes scores.{md,csv}, comparisons.{md,csv}, plots/*.png and report.md, which answers the research question
(baseline vs StochasTok vs Patok, above all on hierarchical Level 2) from the numbers.
"""

import logging
import sys

from morphcpt.analysis.report import build_parser, build_report
from morphcpt.errors import reported


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    args = build_parser().parse_args()
    with reported("analyze_inference_results.py"):
        print(build_report(args.results_dir, args.output_dir, plots=args.plots))
    return 0


if __name__ == "__main__":
    sys.exit(main())
