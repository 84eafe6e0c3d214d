"""The report's first screen: the answer in at most three sentences, one table with the base model and every arm,
the forgetting check on control tasks, and what the design could have detected.

    fam = answer.families(evidence, plan, "en")
    detect = detectable(evidence, fam, plan, "en")
    text = " ".join(answer_sentences(evidence, fam, plan, detect))

The verdict rests on the pre-registered primary comparison alone (Patok − vanilla CPT, Level 2, the plan's primary
metric, alpha 0.05); Patok − StochasTok, from the secondary family, decides "yes" against "partly". With one run
per arm and nothing to pool a seed variance from, a significant difference is said of these *runs*, not the arms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from morphcpt.analysis import power
from morphcpt.analysis.answer import (
    ALPHA,
    ROLE_NAMES,
    Families,
    Finding,
    arm_levels,
    at_chance,
    confidence_text,
    group_title,
    p_phrase,
    short,
)
from morphcpt.analysis.evidence import ARMS
from morphcpt.analysis.item_scores import FALLBACK, UNITS, fmt, unit_scale
from morphcpt.analysis.replicates import components
from morphcpt.analysis.tables import markdown_table, p_text, percent


@dataclass(frozen=True)
class Detectable:
    """The primary comparison's minimum detectable difference at 80 % power, at this design and these variances."""

    metric: str
    mdd: float  # in the metric's unit (a proportion for pp metrics)
    accuracy_pp: float | None  # the same as a gain of acc_norm (shift.py), where a conversion exists
    fpr: float  # simulated false-positive rate of the test at its own level
    test: str
    seeds_a: int
    seeds_b: int
    run_df: int
    items: int
    variances: power.Variances

    def text(self) -> str:
        unit = UNITS[self.metric]
        value = (
            "more than the scale allows"
            if math.isinf(self.mdd)
            else f"{fmt(self.metric, self.mdd, False)} {unit}"
        )
        extra = "" if self.accuracy_pp is None else f" (about {100 * self.accuracy_pp:.1f} pp of acc_norm)"
        return f"{value} of {self.metric}{extra}"


def detectable(evidence, fam: Families, plan, language: str) -> Detectable | None:
    """What the primary comparison could detect (80 % power, alpha of its family) at this design: seeds of the two
    arms, items, run variance pooled over the arms (the test actually used), variances these results show."""
    f = fam.primary
    if f is None:
        return None
    found = evidence.table([f.role_a, f.role_b], f.group, f.mode, language, f.metric)
    a, b = found[0][f.role_a], found[0][f.role_b]
    pooled = evidence.pooled(f.group, f.mode, language, f.metric)
    n = a.shape[1]
    if pooled.df >= 1:
        parts = components(a, b)
        v = power.Variances(
            tau2=max(parts.item - parts.h * pooled.churn, 0.0),
            seed=max(pooled.run - pooled.churn / n, 0.0),
            churn=pooled.churn,
            items=n,
            seeds=a.shape[0],
            seed_df=pooled.df,
            metric=f.metric,
            arms=pooled.arms,
        )
    else:  # one run per arm: only the item-level variance is known; the seed part is unseen (and not counted)
        v = power.Variances(float((a[0] - b[0]).var(ddof=1)), 0.0, 0.0, n, 1, 0, metric=f.metric, arms=2)
    alpha = ALPHA / f.family
    kwargs = {"seeds_b": b.shape[0], "run_df": pooled.df}
    mdd = power.mdd(v, a.shape[0], n, alpha, **kwargs)
    fpr = power.reject_rate(v, a.shape[0], n, 0.0, alpha, **kwargs)
    pp = power.accuracy_pp(evidence, f.group, language, f.metric, mdd) if f.metric != "acc_norm" else None
    return Detectable(f.metric, mdd, pp, fpr, f.test, a.shape[0], b.shape[0], pooled.df, n, v)


def _verdict(fam: Families) -> str:
    main = fam.primary
    versus_stochastok = next(
        (f for f in fam.secondary if (f.role_a, f.role_b) == ("patok", "stochastok")), None
    )
    if main is None:
        return "**Answer: open** — without both a Patok and a baseline model the main question stays open"
    subject = "this Patok run" if main.runs_only else "Patok"
    against = "this vanilla CPT run" if main.runs_only else "vanilla CPT"
    if main.significant and main.difference.diff < 0:
        return f"**Answer: no** — {subject} is worse than {against}"
    if not main.significant:
        return f"**Answer: not shown** — the difference between {subject} and {against} is not significant"
    if versus_stochastok is None:
        return (
            f"**Answer: yes against vanilla CPT** — {subject} beats {against}; there is no StochasTok model"
        )
    if versus_stochastok.significant and versus_stochastok.difference.diff > 0:
        return f"**Answer: yes** — {subject} beats both {against} and StochasTok"
    return (
        f"**Answer: partly** — {subject} beats {against} but not StochasTok, so the gain may come from varied "
        "segmentation in general rather than from morpheme boundaries"
    )


def _methods(found: list[Finding]) -> str:
    used = {}
    for f in found:
        used.setdefault(f.test, []).append(f"{short(f.role_a)} − {short(f.role_b)}")
    phrases = {
        "t over items and seeds": "a t test over items and seeds (seed variance pooled over every arm)",
        "McNemar": "McNemar's score test over items (one run each: seed variance unseen)",
        "paired t over items": "a paired t test over items (one run each: seed variance unseen)",
    }
    if len(used) == 1:
        return f"each difference is {phrases[next(iter(used))]}"
    return "; ".join(f"{', '.join(pairs)}: {phrases[test]}" for test, pairs in used.items())


def answer_sentences(evidence, fam: Families, plan, detect: Detectable | None) -> list[str]:
    """At most three sentences: the verdict with its number, Patok against StochasTok, the method."""
    main = fam.primary
    label = f"{fam.mode.upper()} {fam.metric}"
    if fam.metric == plan.primary:
        label += " (pre-registered primary)"
    else:
        label += f" (the planned primary {plan.primary} is not in these results: fallback)"
    levels = arm_levels(evidence, fam.group, fam.mode, "en", FALLBACK[fam.mode])
    verdict = _verdict(fam)
    if main is not None:
        first = (
            f"{verdict} on {group_title(fam.group)}, {label}: Patok − vanilla CPT {main.interval()}, "
            f"{p_phrase(main.difference.p_value)}, tested alone at {ALPHA}"
        )
        if levels and len(at_chance(levels)) == len(levels):  # significant or not: read it against guessing
            first += f"; every arm's accuracy interval includes guessing ({percent(levels[0][1].chance)}%)"
        if not main.significant and detect is not None:
            first += (
                f"; at this design ({detect.seeds_a} and {detect.seeds_b} runs, {detect.items} items) the test "
                f"detects {detect.text()} with 80% power, and a smaller true difference would mostly go unseen"
            )
        first += "."
    else:
        first = f"{verdict} on {group_title(fam.group)}, {label}."
    sentences = [first]
    other = next((f for f in fam.secondary if (f.role_a, f.role_b) == ("patok", "stochastok")), None)
    if other is not None:
        sentences.append(
            f"Patok − StochasTok: {other.interval()}, adjusted {p_phrase(other.p_adjusted)} over the "
            f"{other.family} secondary comparisons ({'significant' if other.significant else 'not significant'})."
        )
    seeds = ", ".join(f"{short(r)} {k}" for r, k in evidence.seeds.items())
    window = (
        f"; each item's score is averaged over a run's last {evidence.checkpoints_used} checkpoints"
        if evidence.checkpoints_used > 1
        else ""
    )
    found = [f for f in (main, *fam.secondary) if f is not None]
    sentences.append(
        f"Seeds per arm: {seeds}{window}; {_methods(found)}, with the interval that inverts it; the secondary "
        f"family is Bonferroni-adjusted (simultaneous {confidence_text(1 - ALPHA / max(1, len(fam.secondary)))} "
        "intervals)."
    )
    return sentences


def answer_table(evidence, fam: Families, language: str) -> str:
    """Base model and arms on the answer's group: the primary metric, acc_norm, guessing, the difference from the
    baseline (with its family's interval and adjusted p) and from the base model (95 %)."""
    metric, mode, group = fam.metric, fam.mode, fam.group
    accuracy = FALLBACK[mode]
    by_pair = {(f.role_a, f.role_b): f for f in [fam.primary, *fam.secondary] if f is not None}
    body = []
    for role, level in arm_levels(evidence, group, mode, language, metric, ("base", *ARMS)):
        acc = evidence.level(role, group, mode, language, accuracy) if metric != accuracy else None
        f = by_pair.get((role, "baseline"))
        versus = (
            "—"
            if f is None
            else f"{fmt(metric, f.difference.diff)} [{fmt(metric, f.difference.low)}, {fmt(metric, f.difference.high)}]"
        )
        base = None if role == "base" else evidence.difference(role, "base", group, mode, language, metric)
        versus_base = (
            "—"
            if base is None
            else f"{fmt(metric, base[0].diff)} [{fmt(metric, base[0].low)}, {fmt(metric, base[0].high)}]"
        )
        row = [
            ROLE_NAMES[role],
            level.cell() + ("" if level.seeds == 1 else f" ({level.seeds} seeds)"),
        ]
        if metric != accuracy:
            row.append("—" if acc is None else acc.cell())
        row += [
            "—" if level.chance is None else percent(level.chance),
            versus,
            "—" if f is None else p_text(f.p_adjusted) + ("" if f.family == 1 else f" (of {f.family})"),
            versus_base,
        ]
        body.append(row)
    unit = "pp" if unit_scale(metric) == 100 else UNITS[metric]
    header = ["model", f"{mode.upper()} {metric} [95% CI]"]
    if metric != accuracy:
        header.append(f"{accuracy} % [95% CI]")
    header += ["guessing %", f"vs baseline, {unit} [CI]", "p (adjusted)", f"vs base model, {unit} [95% CI]"]
    return markdown_table(header, body)


def forgetting(evidence, plan, language: str) -> str:
    """Each arm against the base model on the control tasks (accuracy): flagged where it loses more than the
    plan's margin, as upstream's CPT lost multi-digit addition (88.5 % -> 0 %)."""
    margin = plan.forgetting_margin
    lines = []
    for task in plan.control_tasks:
        for mode in ("mcq", "gen"):
            metric = FALLBACK[mode]
            base = evidence.level("base", task, mode, language, metric)
            if base is None:
                continue
            cells, flagged = [], []
            for role in ARMS:
                found = evidence.difference(role, "base", task, mode, language, metric)
                if found is None:
                    continue
                diff = found[0]
                cells.append(
                    f"{short(role)} {100 * diff.diff:+.1f} [{100 * diff.low:+.1f}, {100 * diff.high:+.1f}]"
                )
                if diff.diff < -margin:
                    flagged.append(short(role))
            if not cells:
                continue
            flag = (
                f" **Forgetting: {', '.join(flagged)} lose{'s' if len(flagged) == 1 else ''} more than "
                f"{100 * margin:g} pp against the base model.**"
                if flagged
                else f" No arm loses more than {100 * margin:g} pp."
            )
            lines.append(
                f"- {task} {mode.upper()} {metric}: base model {base.cell()}%; CPT − base, pp [95% CI]: "
                + "; ".join(cells)
                + "."
                + flag
            )
    if not lines:
        tasks = ", ".join(plan.control_tasks) or "none"
        return (
            f"Forgetting check: not run — no base model and arms evaluated on the control tasks ({tasks}).\n"
        )
    return "Forgetting check (control tasks, each arm against the base model):\n\n" + "\n".join(lines) + "\n"
