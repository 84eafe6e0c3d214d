"""One Markdown report from an evaluation results folder, answering the research question from the numbers.

    python scripts/analyze_inference_results.py --results-dir results/ [--output-dir results/analysis]

Writes `scores.{md,csv}`, `comparisons.{md,csv}`, `plots/*.png` and `report.md`, which links them. The question:
does continued pretraining with morphology-aware tokenization (patok) beat vanilla CPT (baseline) and
StochasTok on Filipino morphology — above all on hierarchical Level 2, morpheme decomposition? The report
says so only where a paired test, Holm-adjusted over its headline comparisons, finds a difference at 5%; near
chance, or without a significant difference, it says that instead. An EEVE model (vocabulary expansion, the
fourth arm) is compared with the baseline and with Patok in the same Holm family.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from morphcpt.analysis.results import (
    PRIMARY_METRIC,
    ModelInfo,
    assign_roles,
    incomplete_benchmarks,
    load_results,
    models_in_order,
    role_of,
)
from morphcpt.analysis.stats import holm
from morphcpt.analysis.tables import (
    ComparisonRow,
    ScoreRow,
    cell,
    comparison_rows,
    markdown_table,
    p_text,
    score_rows,
    write_tables,
)
from morphcpt.errors import reported
from morphcpt.evaluate.runner import RESULTS_DIR

log = logging.getLogger(__name__)
ALPHA = 0.05
# Where the question is asked, most important first: Level 2 is morpheme decomposition.
FOCUS_GROUPS = ("hierarchical-level2", "hierarchical", "pacute-affixation", "pacute")
QUESTIONS = (
    ("patok", "baseline"),
    ("stochastok", "baseline"),
    ("patok", "stochastok"),
    ("eeve", "baseline"),  # the fourth arm: own Filipino tokens instead of re-cut ones
    ("patok", "eeve"),
)
ROLE_NAMES = {
    "base": "base model",
    "baseline": "baseline (vanilla CPT)",
    "stochastok": "StochasTok CPT",
    "patok": "Patok CPT",
    "eeve": "EEVE (expanded vocabulary)",
}


@dataclass(frozen=True)
class Finding:
    role_a: str
    role_b: str
    row: ComparisonRow  # oriented so that A is role_a
    p_adjusted: float

    @property
    def significant(self) -> bool:
        return self.p_adjusted < ALPHA

    def sentence(self) -> str:
        r = self.row
        numbers = (
            f"{100 * r.diff:+.1f} pp (95% CI {100 * r.low:+.1f} to {100 * r.high:+.1f}), McNemar "
            f"{p_phrase(r.p_mcnemar)}, Holm-adjusted {p_phrase(self.p_adjusted)}, n = {r.n}"
        )
        a, b = ROLE_NAMES[self.role_a], ROLE_NAMES[self.role_b]
        if self.significant:
            return f"{a} is significantly {'better' if r.diff > 0 else 'worse'} than {b}: {numbers}."
        return f"No significant difference between {a} and {b}: {numbers}; this does not show that {a} beats {b}."


def p_phrase(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def _oriented(
    rows: Sequence[ComparisonRow], a: str, b: str, group: str, mode: str, language: str
) -> ComparisonRow | None:
    for row in rows:
        if (row.group, row.mode, row.language, row.metric) != (group, mode, language, PRIMARY_METRIC[mode]):
            continue
        if (row.model_a, row.model_b) == (a, b):
            return row
        if (row.model_a, row.model_b) == (b, a):
            return replace(
                row,
                model_a=a,
                model_b=b,
                mean_a=row.mean_b,
                mean_b=row.mean_a,
                diff=-row.diff,
                low=-row.high,
                high=-row.low,
                a_only=row.b_only,
                b_only=row.a_only,
            )
    return None


def headline_findings(
    comparisons: Sequence[ComparisonRow], roles: dict[str, ModelInfo], language: str
) -> list[tuple[str, str, Finding]]:
    """(group, mode, finding) for each research-question pair present, Holm-adjusted together."""
    found = []
    for group in FOCUS_GROUPS:
        for mode in ("mcq", "gen"):
            for role_a, role_b in QUESTIONS:
                if role_a in roles and role_b in roles:
                    row = _oriented(
                        comparisons, roles[role_a].name, roles[role_b].name, group, mode, language
                    )
                    if row is not None:
                        found.append((group, mode, role_a, role_b, row))
    adjusted = holm([row.p_mcnemar for *_, row in found])
    return [(g, m, Finding(a, b, row, p)) for (g, m, a, b, row), p in zip(found, adjusted, strict=True)]


def _score(scores: Sequence[ScoreRow], model: str, group: str, mode: str, language: str) -> ScoreRow | None:
    return next(
        (
            s
            for s in scores
            if (s.model, s.group, s.mode, s.language, s.metric)
            == (model, group, mode, language, PRIMARY_METRIC[mode])
        ),
        None,
    )


def _paragraph(
    scores: Sequence[ScoreRow],
    here: list[Finding],
    roles: dict[str, ModelInfo],
    group: str,
    mode: str,
    language: str,
) -> str:
    metric = PRIMARY_METRIC[mode]
    title = "hierarchical Level 2 (morpheme decomposition)" if group == "hierarchical-level2" else group
    levels = [
        (role, s)
        for role in ("baseline", "stochastok", "patok", "eeve")
        if role in roles and (s := _score(scores, roles[role].name, group, mode, language)) is not None
    ]
    listing = "; ".join(f"{ROLE_NAMES[role]} {cell(s)}%" for role, s in levels)
    lines = [f"On {title}, {mode.upper()} {metric} (95% CI): {listing}."]
    at_chance = [role for role, s in levels if s.chance is not None and s.low <= s.chance]
    if levels and len(at_chance) == len(levels):
        lines.append(
            f"Every model's interval includes guessing ({100 * levels[0][1].chance:.1f}%): none of them shows the "
            "skill, so this comparison cannot tell the schemes apart."
        )
    elif at_chance:
        lines.append(
            "Not distinguishable from guessing: " + ", ".join(ROLE_NAMES[r] for r in at_chance) + "."
        )
    return " ".join(lines + [f.sentence() for f in here])


def _verdict(here: list[Finding]) -> str:
    by_pair = {(f.role_a, f.role_b): f for f in here}
    versus_base, versus_stochastok = by_pair.get(("patok", "baseline")), by_pair.get(("patok", "stochastok"))
    if versus_base is None:
        return "Without a Patok/baseline pair the main question stays open."
    if versus_base.significant and versus_base.row.diff < 0:
        return "**Answer: no** — Patok is worse than vanilla CPT here."
    if not versus_base.significant:
        return "**Answer: not shown** — the difference between Patok and vanilla CPT is not significant here."
    if versus_stochastok is None:
        return "**Answer: yes against vanilla CPT** — there is no StochasTok model to compare with."
    if versus_stochastok.significant and versus_stochastok.row.diff > 0:
        return "**Answer: yes** — Patok beats both vanilla CPT and StochasTok here."
    return (
        "**Answer: partly** — Patok beats vanilla CPT but not StochasTok, so the gain may come from varied "
        "segmentation in general rather than from morpheme boundaries."
    )


def answer(
    scores: Sequence[ScoreRow],
    findings: list[tuple[str, str, Finding]],
    roles: dict[str, ModelInfo],
    language: str,
) -> str:
    """The research question answered in plain sentences: the first focus group with findings (Level 2 when
    it was evaluated) in each mode, a verdict from its first mode, then what else reached significance."""
    if not findings:
        present = ", ".join(ROLE_NAMES[r] for r in roles) or "none"
        return (
            "These results cannot answer the research question: it needs at least two of baseline (vanilla CPT), "
            f"StochasTok and Patok models evaluated on the same items (roles found: {present}). "
            "Pairwise comparisons of whatever models there are stand in comparisons.md."
        )
    group, first_mode = findings[0][0], findings[0][1]
    paragraphs = []
    for mode in ("mcq", "gen"):
        here = [f for g, m, f in findings if (g, m) == (group, mode)]
        if here:
            paragraphs.append(_paragraph(scores, here, roles, group, mode, language))
    paragraphs.append(_verdict([f for g, m, f in findings if (g, m) == (group, first_mode)]))
    elsewhere = [
        f"{g} {m.upper()}: {ROLE_NAMES[f.role_a]} − {ROLE_NAMES[f.role_b]} {100 * f.row.diff:+.1f} pp "
        f"(Holm {p_phrase(f.p_adjusted)})"
        for g, m, f in findings
        if g != group and f.significant
    ]
    paragraphs.append(
        "Elsewhere, significant: " + "; ".join(elsewhere) + "."
        if elsewhere
        else "No other headline comparison is significant."
    )
    return "\n\n".join(paragraphs)


def _models_table(models: Sequence[ModelInfo], roles: dict[str, ModelInfo]) -> str:
    speaking = {m.name: role for role, m in roles.items()}
    body = [
        [
            m.name,
            ROLE_NAMES.get(role_of(m) or "", "—") + (" ✓" if m.name in speaking else ""),
            m.scheme or "—",
            "—" if m.step is None else str(m.step),
            m.path or "—",
        ]
        for m in models
    ]
    return markdown_table(["model", "role", "scheme", "step", "path"], body)


def _findings_table(findings: list[tuple[str, str, Finding]]) -> str:
    body = [
        [
            group,
            mode.upper(),
            PRIMARY_METRIC[mode],
            f"{ROLE_NAMES[f.role_a]} − {ROLE_NAMES[f.role_b]}",
            str(f.row.n),
            f"{100 * f.row.mean_a:.1f} vs {100 * f.row.mean_b:.1f}",
            f"{100 * f.row.diff:+.1f} [{100 * f.row.low:+.1f}, {100 * f.row.high:+.1f}]",
            p_text(f.row.p_mcnemar),
            p_text(f.p_adjusted),
            "yes" if f.significant else "no",
        ]
        for group, mode, f in findings
    ]
    return markdown_table(
        [
            "group",
            "mode",
            "metric",
            "comparison",
            "n",
            "accuracy %",
            "difference pp [95% CI]",
            "McNemar p",
            "Holm p",
            f"significant at {ALPHA}",
        ],
        body,
    )


def build_report(
    results_dir: Path | str, output_dir: Path | str | None = None, *, n_boot: int = 10_000, plots: bool = True
) -> Path:
    results_dir = Path(results_dir)
    output_dir = Path(output_dir) if output_dir is not None else results_dir / "analysis"
    results = load_results(results_dir)
    models = models_in_order(results)
    names = [m.name for m in models]
    roles = {role: m for role, m in assign_roles(results).items() if role != "base"}
    scores = score_rows(results)
    comparisons = comparison_rows(results, n_boot=n_boot)
    tables = write_tables(scores, comparisons, names, output_dir)
    plot_files: list[Path] = []
    plot_note = "Plots not drawn (--no-plots).\n"
    if plots:
        try:
            from morphcpt.analysis.plots import write_plots

            plot_files = write_plots(scores, names, output_dir / "plots")
            plot_note = "No plottable results.\n"
        except ImportError:
            plot_note = "Plots skipped: matplotlib is not installed (`pip install 'morphcpt[plots]'`).\n"
    languages = sorted({r.language for r in results}, key=lambda lang: lang != "en")
    sections = [
        "# morphcpt evaluation report\n",
        f"Results: `{results_dir}` ({len(results)} result files, {len(models)} models), analysed "
        f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}.\n",
        _models_table(models, roles) + "\n",
    ]
    for (benchmark, mode), missing in incomplete_benchmarks(results).items():
        sections.append(
            f"**Warning: {benchmark} {mode.upper()} is incomplete** — no results for {', '.join(missing)}; its "
            "pooled score covers only the subsets evaluated and is not comparable with the full benchmark's.\n"
        )
    for language in languages:
        findings = headline_findings(comparisons, roles, language)
        heading = "## Answer to the research question" + (
            "" if language == "en" else f" (prompts: {language})"
        )
        sections += [heading + "\n", answer(scores, findings, roles, language) + "\n"]
        if findings:
            sections += [
                f"Headline comparisons ({len(findings)}, McNemar p Holm-adjusted together):\n",
                _findings_table(findings) + "\n",
            ]
    sections.append("## Plots\n")
    sections += [f"![{p.stem}](plots/{p.name})\n" for p in plot_files] or [plot_note]
    sections += [
        "## Tables\n",
        "\n".join(f"- [{name}]({name})" for name in tables) + "\n",
        "## Method\n",
        'MCQ: each option scored as the log-probability of `" " + option` after `<bos>` + prompt; acc takes '
        "the highest sum, acc_norm the highest sum divided by the option's length in characters (lm-eval's "
        "definition; independent of tokenization, the primary metric); scores within 1e-4 of the best are tied "
        "and broken by a seeded random pick. GEN: greedy decoding, first line, exact match after normalisation "
        "(primary), also prefix and contains on word boundaries. Intervals: Wilson score intervals of each "
        f"proportion. Paired comparisons on identical items: McNemar's exact test and a paired "
        f"bootstrap of the difference ({n_boot} resamples); Holm's adjustment over each family of comparisons.\n",
    ]
    report = output_dir / "report.md"
    report.write_text("\n".join(sections), encoding="utf-8")
    return report


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    parser.add_argument("--output-dir", type=Path, help="default: <results-dir>/analysis")
    parser.add_argument("--n-boot", type=int, default=10_000, help="bootstrap resamples")
    parser.add_argument("--no-plots", dest="plots", action="store_false", help="tables and report only")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    args = build_parser().parse_args(argv)
    with reported("analyze"):
        report = build_report(args.results_dir, args.output_dir, n_boot=args.n_boot, plots=args.plots)
    print(report)
    return 0
