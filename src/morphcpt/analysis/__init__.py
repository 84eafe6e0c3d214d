"""Analysis of evaluation results: score tables with Wilson CIs, paired model comparisons, plots, and one Markdown
report that answers the research question from the numbers: one pre-registered primary comparison on the plan's
primary metric (`plan`, `conf/analysis.yaml`), over items and seeds, with the base model and a forgetting check.

    python -m morphcpt.analysis --results-dir results/ [--output-dir results/analysis]
"""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    # Imported on call, so importing the package (for `stats`, say) stays cheap.
    from morphcpt.analysis.report import main as run

    return run(argv)
