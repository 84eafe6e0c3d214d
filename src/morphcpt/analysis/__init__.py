"""Analysis of evaluation results: score tables with Wilson CIs, paired model comparisons (McNemar, paired
bootstrap), plots, and one Markdown report that answers the research question from the numbers.

    python -m morphcpt.analysis --results-dir results/ [--output-dir results/analysis]
"""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    # Imported on call, so importing the package (for `stats`, say) stays cheap.
    from morphcpt.analysis.report import main as run

    return run(argv)
