"""Score tables with Wilson 95% CIs and paired model comparisons, as Markdown and CSV.

Groups, per model, mode and prompt language: a whole benchmark (`pacute`, `hierarchical`: its tasks pooled),
each task (`pacute-affixation`, `hierarchical-level2`: the category or level) and each subcategory within a
task. Comparisons pair two models on the items both answered (same id and fingerprint), for benchmarks and
tasks, on the primary metric of each mode (MCQ acc_norm, GEN exact): McNemar's score-test p with Tango's 95%
interval, which inverts it, and Bonferroni over the model pairs of one group (adjusted p and simultaneous interval), so
every interval excludes 0 exactly when its p is below 0.05 (`stats`).

    rows = score_rows(results); pairs = comparison_rows(results)
    write_tables(rows, pairs, "results/analysis")   # scores.{md,csv}, comparisons.{md,csv}
"""

from __future__ import annotations

import csv
import itertools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from morphcpt.analysis.results import METRICS, PRIMARY_METRIC, ModelInfo, TaskResult, models_in_order
from morphcpt.analysis.stats import bonferroni, mcnemar_score, paired_difference, wilson_ci

KINDS = ("benchmark", "task", "subcategory")


@dataclass(frozen=True)
class ScoreRow:
    model: str
    scheme: str | None
    step: int | None
    mode: str
    language: str
    benchmark: str
    group: str
    kind: str  # benchmark | task | subcategory
    metric: str
    n: int
    mean: float
    low: float
    high: float
    chance: float | None  # MCQ: expected accuracy of guessing


@dataclass(frozen=True)
class ComparisonRow:
    model_a: str
    model_b: str
    mode: str
    language: str
    benchmark: str
    group: str
    kind: str
    metric: str
    n: int  # items both models answered
    mean_a: float
    mean_b: float
    diff: float  # mean_a - mean_b
    low: float  # Tango's 95% interval, inverting McNemar's score test
    high: float
    a_only: int  # items only model A got right
    b_only: int
    p_mcnemar: float
    family: int  # model pairs compared on this group: the Bonferroni factor
    low_adjusted: float  # simultaneous interval at 1 - 0.05 / family
    high_adjusted: float
    p_adjusted: float  # McNemar p, Bonferroni-adjusted over the model pairs of this group


GroupKey = tuple[str, str, str, str, str]  # (mode, language, benchmark, group, kind)


def grouped_predictions(results: Sequence[TaskResult]) -> dict[str, dict[GroupKey, list[dict]]]:
    """model name -> group -> that model's predictions in the group."""
    groups: dict[str, dict[GroupKey, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for result in results:
        base = (result.mode, result.language, result.benchmark)
        mine = groups[result.model.name]
        mine[(*base, result.benchmark, "benchmark")].extend(result.predictions)
        mine[(*base, result.task, "task")].extend(result.predictions)
        for prediction in result.predictions:
            mine[(*base, f"{result.task}/{prediction['subcategory'] or '-'}", "subcategory")].append(
                prediction
            )
    return groups


def _chance(predictions: Sequence[dict]) -> float | None:
    if "options" not in predictions[0]:
        return None
    return sum(p["options"].count(p["answer"]) / len(p["options"]) for p in predictions) / len(predictions)


def _group_order(key: GroupKey) -> tuple:
    mode, language, benchmark, group, kind = key
    task, _, sub = group.partition("/")
    return (mode != "mcq", language, benchmark, kind != "benchmark", task, sub)


def score_rows(results: Sequence[TaskResult]) -> list[ScoreRow]:
    models = {m.name: m for m in models_in_order(list(results))}
    rows = []
    for name, groups in grouped_predictions(results).items():
        model: ModelInfo = models[name]
        for key in sorted(groups, key=_group_order):
            mode, language, benchmark, group, kind = key
            predictions = groups[key]
            for metric in METRICS[mode]:
                mean, low, high = wilson_ci([float(p[metric]) for p in predictions])
                rows.append(
                    ScoreRow(
                        name,
                        model.scheme,
                        model.step,
                        mode,
                        language,
                        benchmark,
                        group,
                        kind,
                        metric,
                        len(predictions),
                        mean,
                        low,
                        high,
                        _chance(predictions),
                    )
                )
    return rows


def comparison_rows(
    results: Sequence[TaskResult],
    *,
    kinds: Sequence[str] = ("benchmark", "task"),
    alpha: float = 0.05,
) -> list[ComparisonRow]:
    """Every pair of models (later role minus earlier) on every shared benchmark and task group."""
    order = [m.name for m in models_in_order(list(results))]
    groups = grouped_predictions(results)
    found: list[tuple] = []
    for b_name, a_name in itertools.combinations(order, 2):
        shared_keys = set(groups[a_name]) & set(groups[b_name])
        for key in sorted(shared_keys, key=_group_order):
            mode, language, benchmark, group, kind = key
            if kind not in kinds:
                continue
            metric = PRIMARY_METRIC[mode]
            a = {p["id"]: (p["fingerprint"], float(p[metric])) for p in groups[a_name][key]}
            b = {p["id"]: (p["fingerprint"], float(p[metric])) for p in groups[b_name][key]}
            shared = sorted(i for i in a.keys() & b.keys() if a[i][0] == b[i][0])
            if shared:
                found.append(
                    (a_name, b_name, key, metric, [a[i][1] for i in shared], [b[i][1] for i in shared])
                )
    family: dict[tuple, int] = defaultdict(int)
    for _, _, (mode, language, _, group, _), metric, _, _ in found:
        family[(mode, language, group, metric)] += 1
    rows: list[ComparisonRow] = []
    for a_name, b_name, (mode, language, benchmark, group, kind), metric, xs, ys in found:
        test = mcnemar_score(xs, ys)
        m = family[(mode, language, group, metric)]
        single = paired_difference(test.a_only, test.b_only, test.n, confidence=1 - alpha)
        joint = paired_difference(test.a_only, test.b_only, test.n, confidence=1 - alpha / m)
        rows.append(
            ComparisonRow(
                a_name,
                b_name,
                mode,
                language,
                benchmark,
                group,
                kind,
                metric,
                test.n,
                sum(xs) / len(xs),
                sum(ys) / len(ys),
                single.diff,
                single.low,
                single.high,
                test.a_only,
                test.b_only,
                test.p_value,
                m,
                joint.low,
                joint.high,
                bonferroni(test.p_value, m),
            )
        )
    return rows


# ------------------------------------------------------------------------------------------------------ output


def percent(value: float) -> str:
    return f"{100 * value:.1f}"


def cell(row: ScoreRow) -> str:
    return f"{percent(row.mean)} [{percent(row.low)}, {percent(row.high)}]"


def p_text(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def markdown_table(header: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines)


def scores_markdown(rows: Sequence[ScoreRow], models: Sequence[str]) -> str:
    """One table per mode, language and metric: groups down, models across, `mean [95% CI]` in percent."""
    parts = ["# Scores\n", "Accuracy in percent with Wilson 95% confidence intervals; n = items.\n"]
    by_table: dict[tuple, dict[tuple, dict[str, ScoreRow]]] = defaultdict(lambda: defaultdict(dict))
    for row in rows:
        by_table[(row.mode, row.language, row.metric)][(row.benchmark, row.group, row.kind)][row.model] = row
    for (mode, language, metric), groups in sorted(
        by_table.items(), key=lambda kv: (kv[0][0] != "mcq", kv[0])
    ):
        present = [m for m in models if any(m in g for g in groups.values())]
        header = ["group", "n", "chance", *present] if mode == "mcq" else ["group", "n", *present]
        body = []
        for (_, group, kind), per_model in groups.items():
            first = next(iter(per_model.values()))
            label = {
                "benchmark": f"**{group}**",
                "task": group,
                "subcategory": f"&nbsp;&nbsp;{group.partition('/')[2]}",
            }[kind]
            line = [label, str(first.n)]
            if mode == "mcq":
                line.append(percent(first.chance) if first.chance is not None else "")
            body.append(line + [cell(per_model[m]) if m in per_model else "" for m in present])
        parts.append(f"## {mode.upper()} {metric} (prompts: {language})\n\n{markdown_table(header, body)}\n")
    return "\n".join(parts)


def comparisons_markdown(rows: Sequence[ComparisonRow]) -> str:
    header = [
        "group",
        "mode",
        "metric",
        "A",
        "B",
        "n",
        "A %",
        "B %",
        "A−B (pp) [95% CI]",
        "A only",
        "B only",
        "McNemar p",
        "pairs",
        "A−B [simultaneous CI]",
        "adjusted p",
    ]
    body = [
        [
            r.group,
            r.mode,
            r.metric,
            r.model_a,
            r.model_b,
            str(r.n),
            percent(r.mean_a),
            percent(r.mean_b),
            f"{100 * r.diff:+.1f} [{100 * r.low:+.1f}, {100 * r.high:+.1f}]",
            str(r.a_only),
            str(r.b_only),
            p_text(r.p_mcnemar),
            str(r.family),
            f"[{100 * r.low_adjusted:+.1f}, {100 * r.high_adjusted:+.1f}]",
            p_text(r.p_adjusted),
        ]
        for r in rows
    ]
    intro = (
        "# Paired comparisons\n\nSame items for both models. A−B: difference in accuracy (percentage points). "
        "McNemar: the score test on the items only one model got right (no continuity correction); its 95% CI is "
        "Tango's score interval, which inverts the same test, so it excludes 0 exactly when p < 0.05. Each model "
        "here is one training run: with several seeds per arm, the report compares arms over items and seeds. Adjusted: Bonferroni over the model pairs compared "
        "on the group (`pairs`): p × pairs, with the simultaneous interval at 1 − 0.05 / pairs, which excludes 0 "
        "exactly when the adjusted p < 0.05.\n"
    )
    return f"{intro}\n{markdown_table(header, body)}\n"


def _write_csv(path: Path, rows: Sequence) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        if not rows:
            return
        writer = csv.DictWriter(handle, fieldnames=list(asdict(rows[0])))
        writer.writeheader()
        writer.writerows(asdict(r) for r in rows)


def write_tables(
    scores: Sequence[ScoreRow],
    comparisons: Sequence[ComparisonRow],
    models: Sequence[str],
    out_dir: Path | str,
) -> dict[str, Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {
        "scores.csv": out_dir / "scores.csv",
        "scores.md": out_dir / "scores.md",
        "comparisons.csv": out_dir / "comparisons.csv",
        "comparisons.md": out_dir / "comparisons.md",
    }
    _write_csv(files["scores.csv"], scores)
    _write_csv(files["comparisons.csv"], comparisons)
    files["scores.md"].write_text(scores_markdown(scores, models), encoding="utf-8")
    files["comparisons.md"].write_text(comparisons_markdown(comparisons), encoding="utf-8")
    return files
