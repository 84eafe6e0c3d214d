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
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from morphcpt.analysis import power
from morphcpt.analysis.answer import (
    ALPHA,
    ROLE_NAMES,
    Families,
    Finding,
    arm_levels,
    at_chance,
    confidence_text,
    families,
    group_title,
    p_phrase,
    short,
)
from morphcpt.analysis.evidence import ARMS, Evidence
from morphcpt.analysis.first_screen import Detectable, answer_sentences, answer_table, detectable, forgetting
from morphcpt.analysis.item_scores import FALLBACK, UNITS, fmt, metrics_of
from morphcpt.analysis.plan import AnalysisPlan, load_plan
from morphcpt.analysis.results import (
    ModelInfo,
    assign_roles,
    final_results,
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
    score_rows,
    write_tables,
)
from morphcpt.errors import reported
from morphcpt.evaluate.runner import RESULTS_DIR

log = logging.getLogger(__name__)
# ------------------------------------------------------------------------------------------------- sections


def section_answer(
    evidence, plan: AnalysisPlan, fam: Families | None, detect: Detectable | None, language
) -> str:
    """The first screen: the answer in at most three sentences, one table (base model and arms), forgetting."""
    heading = "## Answer" + ("" if language == "en" else f" (prompts: {language})")
    if fam is None:
        present = ", ".join(ROLE_NAMES[r] for r in evidence.runs if r in ROLE_NAMES) or "none"
        return (
            f"{heading}\n\nThese results cannot answer the research question: it needs at least two of baseline "
            f"(vanilla CPT), StochasTok and Patok models evaluated on the same items (roles found: {present}). "
            "Pairwise comparisons of whatever models there are stand in comparisons.md.\n"
        )
    warning = ""
    if plan.requested is not None:
        warning = (
            f"**Note: the primary metric was pre-registered as {plan.primary}** ({plan.recorded}); {plan.requested} "
            "was asked for now: the answer stays on the recorded primary (the asked metric's signal and noise are in "
            "Design, its scores in scores.md).\n\n"
        )
    text = " ".join(answer_sentences(evidence, fam, plan, detect))
    return (
        f"{heading}\n\n{warning}{text}\n\n{answer_table(evidence, fam, language)}\n\n"
        f"{forgetting(evidence, plan, language)}"
    )


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


def section_details(evidence, fam: Families | None, plan: AnalysisPlan, language: str) -> str:
    """Everything behind the answer: each family's comparisons in words, then one table of them all."""
    heading = "## Details" + ("" if language == "en" else f" (prompts: {language})")
    if fam is None:
        return ""
    parts = [heading + "\n"]
    for metric in dict.fromkeys((fam.metric, FALLBACK[fam.mode])):
        levels = arm_levels(evidence, fam.group, fam.mode, language, metric, ("base", *ARMS))
        listing = "; ".join(f"{ROLE_NAMES[role]} {s.cell()}" for role, s in levels)
        lines = [f"On {group_title(fam.group)}, {fam.mode.upper()} {metric} (95% CI): {listing}."]
        guessing = at_chance([(r, s) for r, s in levels if r != "base"])
        if metric == FALLBACK[fam.mode] and guessing:
            lines.append(
                "Accuracy not distinguishable from guessing: "
                + ", ".join(ROLE_NAMES[r] for r in guessing)
                + "."
            )
        parts.append(" ".join(lines) + "\n")
    for name, found in (
        ("Primary (pre-registered, tested alone at 0.05)", [fam.primary] if fam.primary else []),
        (f"Secondary ({len(fam.secondary)} comparisons, Bonferroni among themselves)", fam.secondary),
    ):
        if found:
            parts.append(f"{name}:\n\n" + "\n".join(f"- {f.sentence()}" for f in found) + "\n")
    significant = [
        f"{f.group} {f.mode.upper()} {f.metric}: {ROLE_NAMES[f.role_a]} − {ROLE_NAMES[f.role_b]} {f.interval()}, "
        f"adjusted {p_phrase(f.p_adjusted)}"
        for f in fam.exploratory
        if f.significant
    ]
    groups = sorted({f"{f.group} {f.mode.upper()}" for f in fam.exploratory})
    family = f"{len(fam.exploratory)} comparisons on {', '.join(groups) or 'no other group'}, Bonferroni among themselves"
    if fam.left_out:
        family += f"; left out because their items overlap a group already counted: {', '.join(fam.left_out)}"
    parts.append(
        f"Exploratory ({family}): significant: " + "; ".join(significant) + ".\n"
        if significant
        else f"Exploratory ({family}): no comparison is significant.\n"
    )
    found = [f for f in (fam.primary, *fam.secondary, *fam.exploratory) if f is not None]
    parts += [f"All {len(found)} comparisons:\n", _findings_table(found) + "\n"]
    return "\n".join(parts)


def _findings_table(found: list[Finding]) -> str:
    body = [
        [
            f.family_name,
            f.group,
            f.mode.upper(),
            f.metric,
            f"{ROLE_NAMES[f.role_a]} − {ROLE_NAMES[f.role_b]}",
            str(f.difference.n),
            f"{fmt(f.metric, f.difference.diff)} [{fmt(f.metric, f.difference.low)}, {fmt(f.metric, f.difference.high)}]",
            confidence_text(f.difference.confidence),
            f"{f.test} {p_text(f.difference.p_value)}",
            p_text(f.p_adjusted),
            "yes" if f.significant else "no",
        ]
        for f in found
    ]
    return markdown_table(
        [
            "family",
            "group",
            "mode",
            "metric",
            "comparison",
            "n",
            "difference [CI]",
            "CI level",
            "test, p",
            "adjusted p",
            f"significant at {ALPHA}",
        ],
        body,
    )


def section_design(
    evidence, plan: AnalysisPlan, fam: Families | None, detect: Detectable | None, language
) -> str:
    """Arms, seeds, items, the plan, signal and noise per metric, the primary test with its simulated
    false-positive rate and the smallest difference it detects."""
    if fam is None:
        return ""
    arms = "; ".join(
        f"{ROLE_NAMES[role]}: {k} seed{'s' if k > 1 else ''}" for role, k in evidence.seeds.items()
    )
    recorded = (
        f"recorded in {plan.recorded}"
        if plan.recorded
        else "packaged default, conf/analysis.yaml; not recorded for these results"
    )
    lines = [
        "## Design\n",
        f"- Arms: {arms}" + ("; base model: 1 run" if "base" in evidence.runs else "") + ".",
        f"- Plan: primary metric {plan.primary} ({recorded}); primary comparison {short(plan.primary_pair[0])} − "
        f"{short(plan.primary_pair[1])} on {plan.primary_group}, alone at alpha {plan.alpha}; each item averaged over "
        f"a run's last {plan.last_checkpoints} checkpoint{'s' if plan.last_checkpoints > 1 else ''} "
        f"({evidence.checkpoints_used} found).",
    ]
    if fam.metric != plan.primary:
        lines.append(
            f"- **The primary metric {plan.primary} is not in these results** (result files written before it): "
            f"the answer falls back to {fam.metric}."
        )
    f = fam.primary
    if f is not None:
        lines.append(
            f"- Items on {group_title(fam.group)}: {f.difference.n} ({fam.mode.upper()}, the same for every run)."
        )
        pooled = evidence.pooled(fam.group, fam.mode, language, fam.metric)
        lines.append(
            f"- Primary test: {f.test}"
            + (
                f", run and churn variances pooled over {pooled.arms} arms ({pooled.df} df)"
                if f.test == "t over items and seeds"
                else " (one run per arm, nothing to pool: the seed variance is unseen)"
            )
            + "; the interval inverts it (docs/replicates-and-power.md)."
        )
    runs = [
        f"{short(role)} " + ", ".join(fmt(fam.metric, x, False) for x in found[0][role].mean(axis=1))
        for role in ARMS
        if (found := evidence.table([role], fam.group, fam.mode, language, fam.metric)) is not None
    ]
    if runs:
        lines.append(f"- Run means ({fam.mode.upper()} {fam.metric}): {'; '.join(runs)}.")
    if detect is not None:
        v = detect.variances
        seeded = f is not None and not f.runs_only
        lines += [
            f"- Variances ({fam.metric}): arm × item {v.tau2:.4g}, seed {v.seed:.4g} (a run's mean moves by "
            f"{fmt(fam.metric, math.sqrt(v.seed), False, 2)} {UNITS[fam.metric]} from its seed), churn {v.churn:.4g}."
            if seeded
            else f"- Variances ({fam.metric}): per-item difference {v.tau2:.4g}; seed and churn not estimated "
            "(the test is item-level).",
            f"- Simulated false-positive rate of this test at its own level ({ALPHA}), this design and these "
            f"variances: {100 * detect.fpr:.1f}% ({power.DRAWS:,} simulated experiments; across regimes: "
            "benchmarks/RESULTS.md).",
            f"- Minimum detectable difference (80% power): {detect.text()}. Plan the main run with "
            "`python -m morphcpt.analysis.power --pilot <results>`.",
        ]
        if f is not None and f.runs_only and evidence.seeded:
            lines.append(
                "- Nothing varied between the runs of these arms on these items, so the test fell back to seed 0's "
                "item-level one (a zero-width interval would read as certainty)."
            )
        elif f is not None and f.runs_only:
            lines.append(
                "- **Seed variance: unknown** (one run per arm). A seed effect of a few points makes an item-level "
                "test reject a true null far more often than 5% (benchmarks/RESULTS.md); run two or more seeds per "
                "arm (`submit_pipeline.py --seeds 3`)."
            )
    snr = [
        r for m in metrics_of(fam.mode) if (r := evidence.signal_and_noise(fam.group, fam.mode, language, m))
    ]
    if snr:
        cell = lambda x: "—" if x is None else f"{x:.4g}"  # noqa: E731
        lines += [
            f"\nSignal and noise on {group_title(fam.group)} {fam.mode.upper()} (signal: sd of the arms' means; noise: "
            "sd of a run's mean over seeds and over its last checkpoints; the primary is chosen by this ratio on the "
            "pilot, before the main run):\n",
            markdown_table(
                ["metric", "signal", "noise: seeds", "noise: checkpoints", "SNR"],
                [
                    [
                        r["metric"],
                        cell(r["signal"]),
                        cell(r["seed_sd"]),
                        cell(r["checkpoint_sd"]),
                        cell(r["snr"]),
                    ]
                    for r in snr
                ],
            ),
        ]
    return "\n".join(lines) + "\n"


def section_curve(evidence, fam: Families | None, language: str, plot_file: Path | None) -> str:
    """Accuracy and the primary metric of each arm along its evaluated checkpoints (mean over seeds)."""
    if fam is None:
        return ""
    metrics = list(dict.fromkeys((fam.metric, FALLBACK[fam.mode])))
    curves = {
        (role, m): evidence.curve(role, fam.group, fam.mode, language, m)
        for role in ("base", *ARMS)
        for m in metrics
    }
    if max((sum(s != math.inf for s, _ in c) for c in curves.values()), default=0) < 2:
        return ""  # no run was evaluated at two or more checkpoints
    steps = sorted({s for c in curves.values() for s, _ in c if s != math.inf})
    body = []
    for (role, m), points in curves.items():
        if points:
            at = dict(points)
            body.append([ROLE_NAMES[role], m, *(fmt(m, at[s], False) if s in at else "" for s in steps)])
    text = markdown_table(["model", "metric", *(f"step {s:g}" for s in steps)], body)
    picture = f"\n\n![curve](plots/{plot_file.name})" if plot_file else ""
    return f"## Along the checkpoints\n\n{group_title(fam.group)} {fam.mode.upper()}, mean over seeds:\n\n{text}{picture}\n"


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
        "independent of tokenization); gold_prob is the gold option's share of a softmax over the options' per-byte "
        "log-likelihoods, gold_margin the gold's per-byte log-likelihood minus the best distractor's; GEN: greedy "
        "decoding, first line, exact match after normalisation, also prefix and contains on word boundaries, and "
        "gold_bpb, the gold answer's bits per byte. The primary metric and comparison are fixed before the main run "
        "(conf/analysis.yaml, a results folder's analysis_plan.json). An arm's score is the mean over its seeds of "
        "each run's per-item score averaged over its last k checkpoints. Arms are compared with a t test over items "
        "and seeds whose variance adds the arm-by-item, seed and churn parts, the seed and churn parts pooled over "
        "every arm (Satterthwaite degrees of freedom), with the interval that inverts it "
        "(docs/replicates-and-power.md); with one run per arm and nothing to pool, McNemar's score test with "
        "Tango's interval (right/wrong scores) or a paired t over items (continuous ones), which cannot see the seed "
        "variance. The primary comparison is tested alone at 0.05; the secondary and exploratory families are each "
        "Bonferroni-adjusted (p × m, simultaneous intervals at 1 − 0.05/m), so an interval excludes 0 exactly when "
        "its adjusted p < 0.05. Holm's step-down would reject at least as often, but the intervals that agree with "
        "its decisions stop at 0 for every comparison it rejects, so it is not used.\n"
    )


def build_report(
    results_dir: Path | str,
    output_dir: Path | str | None = None,
    *,
    plots: bool = True,
    primary: str | None = None,
    last_checkpoints: int | None = None,
) -> Path:
    results_dir = Path(results_dir)
    output_dir = Path(output_dir) if output_dir is not None else results_dir / "analysis"
    plan = load_plan(results_dir, primary=primary, last_checkpoints=last_checkpoints)
    every = load_results(results_dir)
    results = final_results(every)  # the tables show each model's last checkpoint
    models = models_in_order(results)
    roles = {role: m for role, m in assign_roles(results).items() if role != "base"}
    scores = score_rows(results)
    comparisons = comparison_rows(results)
    evidence = Evidence(every, plan.last_checkpoints)
    tables = write_tables(scores, comparisons, [m.name for m in models], output_dir)
    languages = sorted({r.language for r in results}, key=lambda lang: lang != "en")
    fams = {language: families(evidence, plan, language) for language in languages}
    fam = fams[languages[0]]
    detect = detectable(evidence, fam, plan, languages[0]) if fam is not None else None
    plot_files: list[Path] = []
    curve_file = None
    plot_note = "Plots not drawn (--no-plots).\n"
    if plots:
        try:
            from morphcpt.analysis.plots import write_curve, write_plots

            plot_files = write_plots(scores, [m.name for m in models], output_dir / "plots")
            if fam is not None:
                curve_file = write_curve(evidence, fam, languages[0], output_dir / "plots")
            plot_note = "No plottable results.\n"
        except ImportError:
            plot_note = "Plots skipped: matplotlib is not installed (`pip install 'morphcpt[plots]'`).\n"
    sections = [
        "# morphcpt evaluation report\n",
        f"Results: `{results_dir}` ({len(every)} result files, {len(models)} models), analysed "
        f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}.\n",
        *(
            section_answer(evidence, plan, fams[lang], detect if lang == languages[0] else None, lang)
            for lang in languages
        ),
        section_notes(results),
        section_design(evidence, plan, fam, detect, languages[0]),
        section_curve(evidence, fam, languages[0], curve_file),
        *(section_details(evidence, fams[lang], plan, lang) for lang in languages),
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
    parser.add_argument(
        "--primary", help="primary metric where none is recorded (a recorded one wins; the report says so)"
    )
    parser.add_argument(
        "--last-checkpoints", type=int, help="average each item over a run's last k checkpoints"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    args = build_parser().parse_args(argv)
    with reported("analyze"):
        report = build_report(
            args.results_dir,
            args.output_dir,
            plots=args.plots,
            primary=args.primary,
            last_checkpoints=args.last_checkpoints,
        )
    print(report)
    return 0
