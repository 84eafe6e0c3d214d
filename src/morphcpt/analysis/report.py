"""One Markdown report from an evaluation results folder, answering the research question from the numbers.

    python scripts/analyze_inference_results.py --results-dir results/ [--output-dir results/analysis]

Writes `scores.{md,csv}`, `comparisons.{md,csv}`, `plots/*.png` and `report.md`, which links them. The question:
does continued pretraining with morphology-aware tokenization (patok) beat vanilla CPT (baseline) and
StochasTok on Filipino morphology — above all on hierarchical Level 2, morpheme decomposition? An EEVE model
(vocabulary expansion, the fourth arm) is compared with the baseline and with Patok too.

The first screen is the answer: at most three sentences and one table (arm, metric, accuracy with its interval,
difference from the baseline with its interval and adjusted p) for the first focus group evaluated (Level 2
when it was). Its comparisons are one family, each a test with the interval that inverts it, Bonferroni over the
family, so an interval excludes 0 exactly when its adjusted p < 0.05: over items and seeds when an arm has
several seeds (`replicates`), else McNemar's score test with Tango's interval over items (`stats`). The other
focus groups form a second, exploratory family below. The report says "better" or "worse" only where the
adjusted p < 0.05; near chance, or without such a difference, it says that instead.

The "Design" section says what the comparison could detect: arms, seeds, items, the test, its false-positive
rate simulated at this design and the variances these results show, and the smallest difference it detects with
80% power (`morphcpt.analysis.power`).

The report is a list of sections, one function each (`section_*`), assembled by `build_report`.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from morphcpt.analysis.answer import (
    ALPHA,
    FOCUS_GROUPS,
    PRIMARY_METRIC,
    ROLE_NAMES,
    Finding,
    answer_sentences,
    answer_table,
    arm_scores,
    at_chance,
    confidence_text,
    findings,
    group_title,
    p_phrase,
    primary_group,
)
from morphcpt.analysis.evidence import build_evidence
from morphcpt.analysis.replicates import SeedDifference
from morphcpt.analysis.results import (
    ModelInfo,
    assign_roles,
    incomplete_benchmarks,
    load_results,
    models_in_order,
    not_generated_subsets,
    role_of,
)
from morphcpt.analysis.tables import (
    comparison_rows,
    markdown_table,
    p_text,
    percent,
    score_rows,
    write_tables,
)
from morphcpt.errors import reported
from morphcpt.evaluate.runner import RESULTS_DIR

log = logging.getLogger(__name__)
# ------------------------------------------------------------------------------------------------- sections


def section_answer(evidence, roles, language: str) -> str:
    """The first screen: the answer in at most three sentences and one table."""
    heading = "## Answer" + ("" if language == "en" else f" (prompts: {language})")
    group = primary_group(evidence, language)
    if group is None:
        present = ", ".join(ROLE_NAMES[r] for r in roles) or "none"
        return (
            f"{heading}\n\nThese results cannot answer the research question: it needs at least two of baseline "
            f"(vanilla CPT), StochasTok and Patok models evaluated on the same items (roles found: {present}). "
            "Pairwise comparisons of whatever models there are stand in comparisons.md.\n"
        )
    primary = findings(evidence, language, [group])
    text = " ".join(answer_sentences(evidence, primary, language))
    return f"{heading}\n\n{text}\n\n{answer_table(evidence, primary, language)}\n"


def section_notes(results) -> str:
    """Subsets the results lack: a warning where a pooled score is not the whole benchmark, a calm note where
    the generated benchmarks can never hold the subset."""
    lines = []
    for (benchmark, mode), missing in incomplete_benchmarks(results).items():
        lines.append(
            f"**Warning: {benchmark} {mode.upper()} is incomplete** — no results for {', '.join(missing)}; its "
            "pooled score covers only the subsets evaluated and is not comparable with the full benchmark's.\n"
        )
    for benchmark, subsets in not_generated_subsets(results).items():
        lines.append(
            f"Not evaluated: {', '.join(f'{benchmark}-{s}' for s in subsets)}, which the benchmark generator cannot "
            "make (generated sets record why in manifest.json); its pooled scores cover the other subsets. To "
            'score it, add the official files (docs/evaluation.md, "Official files").\n'
        )
    return "\n".join(lines)


def section_details(evidence, language: str) -> str:
    """Everything behind the answer: per mode the scores and each comparison in words, then the exploratory
    family (the other focus groups) and the table of every headline comparison."""
    heading = "## Details" + ("" if language == "en" else f" (prompts: {language})")
    group = primary_group(evidence, language)
    if group is None:
        return ""
    primary = findings(evidence, language, [group])
    parts = [heading + "\n"]
    for mode in ("mcq", "gen"):
        here = [f for f in primary if f.mode == mode]
        if not here:
            continue
        levels = arm_scores(evidence, group, mode, language)
        listing = "; ".join(f"{ROLE_NAMES[role]} {s.cell()}%" for role, s in levels)
        lines = [f"On {group_title(group)}, {mode.upper()} {PRIMARY_METRIC[mode]} (95% CI): {listing}."]
        guessing = at_chance(levels)
        if levels and len(guessing) == len(levels):
            lines.append(
                f"Every model's interval includes guessing ({percent(levels[0][1].chance)}%): none of them shows "
                "the skill, so this comparison cannot tell the schemes apart."
            )
        elif guessing:
            lines.append(
                "Not distinguishable from guessing: " + ", ".join(ROLE_NAMES[r] for r in guessing) + "."
            )
        parts.append(" ".join(lines) + "\n\n" + "\n".join(f"- {f.sentence()}" for f in here) + "\n")
    others = [g for g in FOCUS_GROUPS if g != group]
    secondary = findings(evidence, language, others)
    elsewhere = [
        f"{f.group} {f.mode.upper()}: {ROLE_NAMES[f.role_a]} − {ROLE_NAMES[f.role_b]} {f.interval()}, adjusted "
        f"{p_phrase(f.p_adjusted)}"
        for f in secondary
        if f.significant
    ]
    family = f"{len(secondary)} comparisons on {', '.join(others)}, Bonferroni among themselves"
    parts.append(
        f"Exploratory ({family}): significant: " + "; ".join(elsewhere) + ".\n"
        if elsewhere
        else f"Exploratory ({family}): no other headline comparison is significant.\n"
    )
    parts += [
        f"Headline comparisons ({len(primary)} in the answer's family, {len(secondary)} exploratory):\n",
        _findings_table(primary + secondary) + "\n",
    ]
    return "\n".join(parts)


def _findings_table(found: list[Finding]) -> str:
    body = [
        [
            f.group,
            f.mode.upper(),
            PRIMARY_METRIC[f.mode],
            f"{ROLE_NAMES[f.role_a]} − {ROLE_NAMES[f.role_b]}",
            str(f.difference.n),
            f"{100 * f.mean_a:.1f} vs {100 * f.mean_b:.1f}",
            f"{100 * f.difference.diff:+.1f} [{100 * f.difference.low:+.1f}, {100 * f.difference.high:+.1f}]",
            confidence_text(f.difference.confidence),
            ("t " if isinstance(f.difference, SeedDifference) else "McNemar ") + p_text(f.difference.p_value),
            p_text(f.p_adjusted),
            "yes" if f.significant else "no",
        ]
        for f in found
    ]
    return markdown_table(
        [
            "group",
            "mode",
            "metric",
            "comparison",
            "n",
            "accuracy %",
            "difference pp [CI]",
            "CI level",
            "p",
            "adjusted p",
            f"significant at {ALPHA}",
        ],
        body,
    )


def section_design(evidence, language: str) -> str:
    """Arms, seeds, items, the test, its simulated false-positive rate and the smallest difference it detects."""
    from morphcpt.analysis import power

    group = primary_group(evidence, language)
    if group is None:
        return ""
    primary = findings(evidence, language, [group])
    family, mode = primary[0].family, primary[0].mode
    alpha = ALPHA / family
    arms = "; ".join(
        f"{ROLE_NAMES[role]}: {k} seed{'s' if k > 1 else ''}" for role, k in evidence.seeds.items()
    )
    items = ", ".join(
        f"{f.mode.upper()} {f.difference.n}"
        for f in primary
        if (f.role_a, f.role_b) == (primary[0].role_a, primary[0].role_b)
    )
    lines = [
        "## Design\n",
        f"- Arms: {arms}.",
        f"- Items on {group_title(group)}: {items} (the same items for every run).",
        f"- Comparisons in the answer's family: {family}, each at alpha {ALPHA} / {family} = {alpha:.4f}.",
    ]
    if evidence.seeded:
        v = power.variances_from(evidence, group, mode, language)
        spreads = "; ".join(
            f"{ROLE_NAMES[role].split(' (')[0]} "
            + ", ".join(
                f"{100 * x:.1f}"
                for x in evidence.runs_table([role], group, mode, language)[0][role].mean(axis=1)
            )
            for role in evidence.sets
            if evidence.runs_table([role], group, mode, language) is not None
        )
        lines.append(f"- Test: {evidence.method}; the interval inverts it (docs/replicates-and-power.md).")
        lines.append(f"- Run accuracies ({mode.upper()} {PRIMARY_METRIC[mode]}, %): {spreads}.")
        if v is not None:
            seed_sd, upper_sd = 100 * v.seed**0.5, 100 * v.seed_upper().seed ** 0.5
            fpr = power.reject_rate(v, v.seeds, v.items, 0.0, ALPHA)
            detect, detect_upper = (
                power.mdd(v, v.seeds, v.items, alpha),
                power.mdd(v.seed_upper(), v.seeds, v.items, alpha),
            )
            lines += [
                f"- **Seed variance** ({mode.upper()}, pairs {', '.join(v.pairs)}): a run's accuracy varies by "
                f"{seed_sd:.2f} pp from its seed beyond item churn (80% upper bound {upper_sd:.2f} pp, "
                f"{v.seed_df} df); churn {v.churn:.3f}, arm-by-item variance {v.tau2:.4f}.",
                f"- Simulated false-positive rate of this test at this design and these variances: {100 * fpr:.1f}% "
                f"at alpha {ALPHA} ({power.DRAWS:,} simulated experiments; across realistic regimes: "
                "benchmarks/RESULTS.md).",
                f"- Minimum detectable difference (80% power, alpha {alpha:.4f}): {_pp(detect)} pp "
                f"({_pp(detect_upper)} pp with the seed variance at its upper bound). Plan the main run with "
                "`python -m morphcpt.analysis.power --pilot <results>`.",
            ]
    else:
        lines += [
            f"- Test: {evidence.method}.",
            "- **Seed variance: unknown** (one run per arm). A seed effect on a run's accuracy of a few points makes "
            "an item-level test reject a true null far more often than 5% (benchmarks/RESULTS.md); run two or "
            "more seeds per arm (`submit_pipeline.py --seeds 2`) to measure it.",
        ]
    return "\n".join(lines) + "\n"


def _pp(value: float) -> str:
    return "more than 100" if value == float("inf") else f"{100 * value:.1f}"


def section_models(models: Sequence[ModelInfo], roles: dict[str, ModelInfo]) -> str:
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
    return "## Models\n\n" + markdown_table(["model", "role", "scheme", "step", "path"], body) + "\n"


def section_plots(plot_files: Sequence[Path], note: str) -> str:
    return "## Plots\n\n" + ("\n".join(f"![{p.stem}](plots/{p.name})\n" for p in plot_files) or note)


def section_tables(tables: dict[str, Path]) -> str:
    return "## Tables\n\n" + "\n".join(f"- [{name}]({name})" for name in tables) + "\n"


def section_method() -> str:
    return (
        "## Method\n\n"
        'MCQ: each option scored as the log-probability of `" " + option` after `<bos>` + prompt (options that '
        "carry their own leading space, as in langgame, follow the prompt as written); acc takes the highest sum, "
        "acc_norm the highest sum divided by the option's length in characters (lm-eval's definition; "
        "independent of tokenization, the primary metric); scores within 1e-4 of the best are tied and broken by a "
        "seeded random pick. GEN: greedy decoding, first line, exact match after normalisation (primary), also "
        "prefix and contains on word boundaries. One run per arm: accuracies with Wilson 95% intervals; two "
        "models on the same items compared with McNemar's score test on the items only one got right (no "
        "continuity correction) and Tango's score interval, which inverts that test (unconditional: it does not "
        "collapse to a point when the models rarely disagree). Several seeds per arm: an arm's accuracy is the "
        "mean over its seeds, and arms are compared with a t test over items and seeds whose variance adds the "
        "arm-by-item, seed and churn parts (Satterthwaite degrees of freedom), with the interval that inverts it "
        "(docs/replicates-and-power.md). Families of comparisons: Bonferroni, adjusted p = p × m with "
        "simultaneous intervals at 1 − 0.05/m, so an interval excludes 0 exactly when its adjusted p < 0.05. "
        "Holm's step-down would reject at least as often, but the intervals that agree with its decisions stop "
        "at 0 for every comparison it rejects, so it is not used.\n"
    )


def build_report(
    results_dir: Path | str, output_dir: Path | str | None = None, *, plots: bool = True
) -> Path:
    results_dir = Path(results_dir)
    output_dir = Path(output_dir) if output_dir is not None else results_dir / "analysis"
    results = load_results(results_dir)
    models = models_in_order(results)
    roles = {role: m for role, m in assign_roles(results).items() if role != "base"}
    scores = score_rows(results)
    comparisons = comparison_rows(results)
    evidence = build_evidence(results, scores, comparisons, roles)
    tables = write_tables(scores, comparisons, [m.name for m in models], output_dir)
    plot_files: list[Path] = []
    plot_note = "Plots not drawn (--no-plots).\n"
    if plots:
        try:
            from morphcpt.analysis.plots import write_plots

            plot_files = write_plots(scores, [m.name for m in models], output_dir / "plots")
            plot_note = "No plottable results.\n"
        except ImportError:
            plot_note = "Plots skipped: matplotlib is not installed (`pip install 'morphcpt[plots]'`).\n"
    languages = sorted({r.language for r in results}, key=lambda lang: lang != "en")
    sections = [
        "# morphcpt evaluation report\n",
        f"Results: `{results_dir}` ({len(results)} result files, {len(models)} models), analysed "
        f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}.\n",
        *(section_answer(evidence, roles, language) for language in languages),
        section_notes(results),
        section_design(evidence, languages[0]),
        *(section_details(evidence, language) for language in languages),
        section_models(models, roles),
        section_plots(plot_files, plot_note),
        section_tables(tables),
        section_method(),
    ]
    report = output_dir / "report.md"
    report.write_text("\n".join(s for s in sections if s), encoding="utf-8")
    return report


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    parser.add_argument("--output-dir", type=Path, help="default: <results-dir>/analysis")
    parser.add_argument("--no-plots", dest="plots", action="store_false", help="tables and report only")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    args = build_parser().parse_args(argv)
    with reported("analyze"):
        report = build_report(args.results_dir, args.output_dir, plots=args.plots)
    print(report)
    return 0
